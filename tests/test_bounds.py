"""The limits on untrusted values: depth, strict-JSON numbers, and what artifacts store of a value."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agenttest.bounds import (
    DEPTH_MARKER,
    MAX_DEPTH,
    MAX_STORED_CHARS,
    depth,
    from_python,
    json_safe,
    stored,
    too_deep,
)
from agenttest.files import json_line, json_text


def nested(levels: int) -> Any:
    value: Any = "bottom"
    for _ in range(levels):
        value = {"d": [value]} if levels % 2 else [value]
    return value


def test_depth_is_counted_without_recursion_however_deep() -> None:
    assert depth("x") == 0 and depth([]) == 1 and depth({"a": [1]}) == 2
    assert depth(nested(100_000)) == MAX_DEPTH + 1        # counted up to the limit, no RecursionError
    assert not too_deep(nested(MAX_DEPTH)) and too_deep(nested(MAX_DEPTH + 1))


def test_too_deep_trusts_a_text_with_few_brackets_and_walks_any_other() -> None:
    """A JSON text with no more brackets than the limit cannot nest deeper; one with more (brackets in strings
    count too) is walked."""
    deep, shallow = nested(MAX_DEPTH + 1), nested(MAX_DEPTH)
    assert too_deep(deep, text=json.dumps(deep)) and not too_deep(shallow, text=json.dumps(shallow))
    assert not too_deep({"a": "[" * 500}, text=json.dumps({"a": "[" * 500}))
    assert not too_deep(deep, text="{}")       # the text is the value's: its brackets are all it can open


def test_a_cycle_is_too_deep_rather_than_an_endless_walk() -> None:
    loop: dict[str, Any] = {}
    loop["self"] = loop
    assert too_deep(loop)
    assert json.loads(json_line(loop))                    # written, cut with the marker


def test_a_python_value_gets_the_string_keys_json_would_give_it() -> None:
    plain = {"a": [1, {"b": 2.5}], "c": None}
    assert from_python(plain) is plain                     # nothing to change: not copied
    mixed = {1: "a", None: "b", False: [{2.5: "c"}], "s": (1, 2)}
    fixed = from_python(mixed)
    assert fixed == {"1": "a", "null": "b", "false": [{"2.5": "c"}], "s": [1, 2]}
    assert json.dumps(fixed, sort_keys=True)               # sorted dumps (assertions, reports) no longer break
    assert mixed == {1: "a", None: "b", False: [{2.5: "c"}], "s": (1, 2)}    # the agent's own value untouched


def test_what_json_cannot_carry_is_named() -> None:
    with pytest.raises(ValueError, match="integer of more than 4,300 digits"):
        from_python({"data": [1, {"n": 10**5000}]})
    with pytest.raises(ValueError, match="integer of more than"):
        from_python(-(10**5000))
    with pytest.raises(ValueError, match="key of type tuple"):
        from_python({"data": {(1, 2): "x"}})
    assert from_python(10**4000) == 10**4000               # long, but writable
    loop: dict[str, Any] = {}
    loop["self"] = loop
    loop[1] = loop
    assert from_python(loop) is loop                       # too deep: left for too_deep to refuse, no endless walk


def test_json_safe_cuts_deep_parts_and_spells_odd_numbers() -> None:
    safe = json_safe({"n": [math.inf, -math.inf, math.nan, 1.5], "deep": nested(5000), 3: "key"})
    assert safe["n"] == ["Infinity", "-Infinity", "NaN", 1.5] and safe["3"] == "key"
    text = json.dumps(safe, allow_nan=False)
    assert DEPTH_MARKER in text and depth(safe) <= MAX_DEPTH + 1


def test_a_plain_value_is_not_copied() -> None:
    value = {"a": [1, "two", {"three": None}]}
    assert json_safe(value) is value


def test_artifact_json_is_strict_and_the_common_case_unchanged() -> None:
    assert json_line({"a": 1}) == '{"a":1}\n'
    for text in (json_line({"x": [math.inf, math.nan]}), json_text({"x": nested(3000)})):
        json.loads(text, parse_constant=lambda name: (_ for _ in ()).throw(AssertionError(name)))


def test_stored_cuts_long_strings_and_large_structures_saying_how_large() -> None:
    assert stored("short") == "short" and stored(7) == 7 and stored(None) is None
    cut = stored("x" * 100_000)
    assert len(cut) < MAX_STORED_CHARS + 60 and cut.endswith("… [cut: 100,000 characters in all]")
    rows = [{"n": i, "text": "y" * 50} for i in range(20_000)]
    kept = stored(rows)
    assert isinstance(kept, str) and kept.startswith('[{"n": 0') and "characters of JSON in all]" in kept
    assert stored({"a": "b" * 40_000})["a"].endswith("… [cut: 40,000 characters in all]")


@given(st.recursive(st.none() | st.booleans() | st.floats() | st.text(max_size=5),
                    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=3), children,
                                                                                     max_size=3), max_leaves=30))
def test_any_value_becomes_strict_json(value: Any) -> None:
    json.loads(json_line(value), parse_constant=lambda name: (_ for _ in ()).throw(AssertionError(name)))


@given(st.recursive(st.none() | st.booleans() | st.floats() | st.integers() | st.text(max_size=5),
                    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=3), children,
                                                                                     max_size=3), max_leaves=30))
def test_stored_is_what_json_safe_gives_for_a_small_value(value: Any) -> None:
    kept = stored(value)
    assert json.dumps(kept, allow_nan=False) == json.dumps(json_safe(value, cap=MAX_STORED_CHARS), allow_nan=False)


def _needs_copy_reference(value: Any, limit: int, cap: int | None, level: int = 0) -> bool:
    """What `_needs_copy` must answer, written the plain recursive way."""
    if isinstance(value, tuple):
        return True
    if isinstance(value, dict):
        return level >= limit or any(not isinstance(key, str) for key in value) or any(
            _needs_copy_reference(child, limit, cap, level + 1) for child in value.values())
    if isinstance(value, list):
        return level >= limit or any(_needs_copy_reference(child, limit, cap, level + 1) for child in value)
    if isinstance(value, float):
        return not math.isfinite(value)
    return isinstance(value, str) and cap is not None and len(value) > cap


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12),
                    lambda children: st.lists(children, max_size=3) | st.tuples(children)
                    | st.dictionaries(st.text(max_size=3) | st.integers(0, 3), children, max_size=3), max_leaves=30),
       st.integers(1, 6), st.sampled_from([None, 4, 10]))
def test_the_copy_check_answers_as_the_plain_recursive_walk(value: Any, limit: int, cap: int | None) -> None:
    from agenttest.bounds import _needs_copy
    assert _needs_copy(value, limit, cap) == _needs_copy_reference(value, limit, cap)
