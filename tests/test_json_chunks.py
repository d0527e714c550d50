"""report.json and ctrf.json are written in pieces (`files.json_chunks`), the values of an array several at a time
(issue #27): the bytes must be those of each value written alone and laid out in its place — as agenttest wrote them
before (bfa850b, written out here) — whatever the values hold: secrets in some of them, NaN, lone surrogates,
nesting orjson cannot write, keys that are no strings, and arrays from iterators, longer than a batch or not."""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from agenttest.files import json_chunks, json_text
from isolation import fresh_registries

SECRET = "sk-chunk-secret-77"


def _alone(value: Any, depth: int) -> bytes:
    """A value as `json_text` writes it alone, indented to its place."""
    text = json_text(value).encode("utf-8", "surrogatepass")[:-1]
    return text.replace(b"\n", b"\n" + b"  " * depth) if depth else text


def _pieces_at_bfa850b(value: Any, depth: int) -> Iterator[bytes]:
    if isinstance(value, dict) and depth < 2 and all(isinstance(key, str) for key in value):
        items: Iterable[tuple[Any, Any]] = value.items()
        opening, closing = b"{", b"}"
    elif isinstance(value, (list, tuple, Iterator)) and depth < 3:
        items = ((None, item) for item in value)
        opening, closing = b"[", b"]"
    else:
        yield _alone(value, depth)
        return
    inside = b"\n" + b"  " * (depth + 1)
    empty = True
    for key, item in items:
        yield (opening if empty else b",") + inside + (b"" if key is None else _alone(key, 0) + b": ")
        empty = False
        yield from _pieces_at_bfa850b(item, depth + 1)
    yield opening + closing if empty else b"\n" + b"  " * depth + closing


def _at_bfa850b(data: Any) -> bytes:
    return b"".join(_pieces_at_bfa850b(data, 0)) + b"\n"


def _result(index: int) -> dict[str, Any]:
    """A result as report.json holds one; a few hold what sends a value down the slow path, each in a batch of
    its own (a batch that orjson cannot write is written value by value whatever else it holds)."""
    result: dict[str, Any] = {"id": f"c{index}", "status": "passed", "output": f"ok case {index} ✓",
                              "score": index / 7, "tags": [], "assertions": [{"passed": True, "details": {}}]}
    if index in (1, 70, 75):
        result["output"] = f"the key is {SECRET}"
    if index in (2, 80):
        result["score"] = math.nan
    if index in (3, 150):
        result["by_number"] = {1: "one", 2: "two"}
    if index == 130:
        result["output"] = "half \ud800 a pair"
    if index == 140:
        deep: Any = "bottom"
        for _ in range(300):
            deep = [deep]
        result["deep"] = deep
    return result


def _shapes(values: list[Any]) -> list[Any]:
    return [{"results": values}, {"results": {"tests": iter(values)}}, values, [values, values[:3], *values[3:4]],
            {"summary": {"total": len(values)}, "results": list(values), "metadata": {}}, {"results": []}, []]


def test_arrays_are_written_as_each_of_their_values_alone() -> None:
    for registered in ((), (SECRET,)):
        with fresh_registries(*registered):
            for count in (0, 1, 63, 64, 65, 200):
                values = [_result(index) for index in range(count)]
                for shape, again in zip(_shapes(values), _shapes(values), strict=True):
                    assert b"".join(json_chunks(shape)) == _at_bfa850b(again), (registered, count)


_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-2**63, 2**64 - 1) | st.floats() | st.text(max_size=6)
    | st.just(SECRET),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=4), children, max_size=3),
    max_leaves=30)


@settings(max_examples=150)
@given(values=st.lists(_VALUES, max_size=140))
def test_any_values_are_written_as_each_alone(values: list[Any]) -> None:
    with fresh_registries(SECRET):
        for shape, again in zip(_shapes(values + [0] * 4), _shapes(values + [0] * 4), strict=True):
            assert b"".join(json_chunks(shape)) == _at_bfa850b(again)
