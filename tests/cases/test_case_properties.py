"""Property tests: whatever a suite file holds, loading never raises and every entry sits at its line."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agenttest.cases import Case, InvalidCase, Suite, load_suite

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])

json_scalars = st.none() | st.booleans() | st.integers(-(10**20), 10**20) | st.text(max_size=10) | st.floats(
    allow_nan=False, allow_infinity=False)
json_values = st.recursive(json_scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
    st.text(max_size=6), inner, max_size=3), max_leaves=6)
assertion_types = st.sampled_from(["contains", "not_contains", "regex", "equals", "json_path", "type", "tool_called",
                                   "tool_result", "tool_sequence", "latency", "json_schema", "", "nope"])
assertions = st.fixed_dictionaries({"type": assertion_types}, optional={
    "value": json_values, "pattern": json_scalars, "name": json_scalars, "path": json_scalars,
    "negate": json_scalars, "options": json_values})
# Case-shaped entries: an id and an input, then a few keys (known, misspelt or unknown), often with good values.
ids = st.text(min_size=1, max_size=3)
case_ids = st.one_of(ids, ids, ids, st.none(), st.integers(), st.just(""))
case_like = st.fixed_dictionaries({"id": case_ids, "input": st.text(max_size=8) | json_values}, optional={
    "assert": assertions | st.lists(assertions, max_size=2) | assertion_types | json_scalars,
    "options": st.dictionaries(st.sampled_from(["connector", "skip", "mode", "search", "metadata", "x"]),
                               json_values, max_size=2),
    "skip": st.booleans() | json_values,
    "timeout": st.sampled_from(["30s", "1m30s", "0s", "5 minutes", ""]) | json_values,
    "tags": st.lists(st.text(max_size=5), max_size=2) | json_values,
    **{key: json_values for key in ("expected", "asert", "simulator")},
})
entries = json_values | case_like


def _load(content: str | bytes, name: str = "suite.jsonl") -> Suite:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        path = root / name
        if isinstance(content, str):
            path.write_text(content, encoding="utf-8", newline="")
        else:
            path.write_bytes(content)
        suite = load_suite([name], cwd=root, repo_root=root)
    assert suite.files == [name]
    for entry in suite.entries:
        assert isinstance(entry, (Case, InvalidCase))
        assert entry.file == name
        assert isinstance(entry.line, int) and entry.line >= 1
        if isinstance(entry, InvalidCase):
            assert entry.message.startswith("invalid test case: ")
    return suite


def _meaningful_lines(text: str) -> list[int]:
    """The lines that each give one entry in a JSONL file: not blank, not a `//` comment."""
    text = text.removeprefix("\ufeff")
    return [n for n, line in enumerate(text.split("\n"), start=1)
            if line.strip() and not line.strip().startswith("//")]


def _is_array_file(text: str) -> bool:
    lines = _meaningful_lines(text)
    return bool(lines) and text.removeprefix("\ufeff").split("\n")[lines[0] - 1].lstrip(" \t\r").startswith("[")


@SETTINGS
@given(st.text(st.characters(codec="utf-8")))
def test_arbitrary_text_loads_with_one_entry_per_line(text: str) -> None:
    suite = _load(text)
    lines = [entry.line for entry in suite.entries]
    if _is_array_file(text):
        assert lines == sorted(lines)
        assert all(line <= text.count("\n") + 1 for line in lines)
    else:
        assert lines == _meaningful_lines(text)


@SETTINGS
@given(st.lists(st.one_of(st.text(st.characters(codec="utf-8", exclude_characters="\n"), max_size=30),
                          entries.map(json.dumps), st.sampled_from(["", "  ", "// note", "\t// x", "#"])),
                max_size=12),
       st.sampled_from(["\n", "\r\n"]), st.booleans())
def test_mixed_lines_keep_their_line_numbers(lines: list[str], newline: str, bom: bool) -> None:
    text = ("\ufeff" if bom else "") + newline.join(lines)
    suite = _load(text)
    if not _is_array_file(text):
        assert [entry.line for entry in suite.entries] == _meaningful_lines(text)


@SETTINGS
@given(st.lists(entries, max_size=10).filter(lambda values: not values or not isinstance(values[0], list)))
def test_json_values_as_lines(values: list[Any]) -> None:
    suite = _load("".join(json.dumps(value) + "\n" for value in values))
    assert [entry.line for entry in suite.entries] == list(range(1, len(values) + 1))
    for value, entry in zip(values, suite.entries, strict=True):
        if not isinstance(value, dict):
            assert isinstance(entry, InvalidCase)
            assert entry.message.startswith("invalid test case: expected a JSON object, got ")
        elif isinstance(entry, Case):
            assert entry.raw == value
            assert entry.id == value["id"]


@SETTINGS
@given(st.lists(st.tuples(entries, st.integers(0, 2), st.booleans()), max_size=10), st.booleans())
def test_json_values_as_an_array_file(items: list[tuple[Any, int, bool]], trailing_comma: bool) -> None:
    text, starts, line = "[\n", [], 2
    for i, (value, blank_lines, indent) in enumerate(items):
        text += "\n" * blank_lines + ("// c\n" if blank_lines == 2 else "")
        line += blank_lines + (1 if blank_lines == 2 else 0)
        starts.append(line)
        element = json.dumps(value, indent=2 if indent else None)
        text += element + ("," if i < len(items) - 1 or trailing_comma else "") + "\n"
        line += element.count("\n") + 1
    text += "]\n"
    suite = _load(text, name="suite.json")
    assert [entry.line for entry in suite.entries] == starts
    for value, entry in zip((value for value, _, _ in items), suite.entries, strict=True):
        if isinstance(entry, Case):
            assert entry.raw == value


@SETTINGS
@given(st.binary(max_size=200))
def test_arbitrary_bytes_load_without_raising(data: bytes) -> None:
    lines = [entry.line for entry in _load(data).entries]
    assert lines == sorted(lines)
    assert all(line <= data.count(b"\n") + 1 for line in lines)
