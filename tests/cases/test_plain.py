"""Entries read without their models (cases/plain.py, issue #27): whatever an entry holds, the loader makes the
same of it either way — the same Case, the same message, the same warnings — and what plain.py accepts, the models
accept with the same values."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agenttest.cases.loader import Checks, build_case
from agenttest.cases.model import Case, InvalidCase
from agenttest.cases.plain import _ASSERTION_KEYS, _CASE_KEYS, CASE_FIELDS, plain_assertion, plain_case
from agenttest.cases.schema import AssertionEntry, CaseEntry

SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Values near every edge the models draw: empty and non-empty strings, durations good and bad, bounds of max_turns,
# booleans beside 0 and 1, floats, non-string keys, patterns that do not compile.
texts = st.sampled_from(["", "a", "T1", "ok case 1", "30s", "1m30s", "5 minutes", "0s", "^ok case \\d+$", "(",
                         "agents:judge", "judge", "x.y", "hooks.before"])
scalars = st.none() | st.booleans() | st.integers(-1, 1001) | st.sampled_from([0.5, 1.0, 2.0]) | texts
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
    texts, inner, max_size=3), max_leaves=6)
# What a generator (Python) may write too: keys that are no strings. (Not as an input: a dict input with such keys
# makes build_case raise, read either way — a separate bug.)
values = json_values | st.dictionaries(st.integers(0, 2), json_values, min_size=1, max_size=1)
types = st.sampled_from([None, "", "equals", "contains", "not_contains", "regex", "tool_called", "tool_sequence",
                         "json_path", "type", "latency", "agent", "nope"])
options = st.none() | texts | st.dictionaries(st.sampled_from(["ignore_case", "mode", "threshold", "samples",
                                                               "connector", "metadata", "other"]), scalars, max_size=2)
assertion = st.fixed_dictionaries({}, optional={
    "type": types | st.integers(0, 1), "value": values, "pattern": values, "name": values,
    "path": st.none() | texts | st.integers(0, 1), "message": st.none() | texts | st.booleans(),
    "negate": st.booleans() | st.none() | st.integers(0, 1) | texts, "options": options,
    "use": st.none() | texts, "script": st.none() | texts, "asert": scalars})
asserts = assertion | st.lists(assertion, max_size=3) | types | scalars
optional_texts = st.none() | texts | st.integers(0, 1) | st.booleans()
case = st.fixed_dictionaries({}, optional={
    "id": texts | st.none() | st.integers(0, 1), "input": json_values, "name": optional_texts,
    "description": values, "mode": values, "assert": asserts, "assertions": asserts, "expected": values,
    "options": st.none() | st.dictionaries(st.sampled_from(["connector", "mode", "search", "x"]), scalars, max_size=2),
    "user": optional_texts, "team": optional_texts, "metadata": st.none() | values,
    "skip": st.none() | st.booleans() | texts | st.integers(0, 1), "timeout": st.none() | texts | st.integers(0, 30),
    "before": optional_texts, "after": optional_texts,
    "tags": st.none() | st.lists(texts, max_size=3) | st.lists(scalars, max_size=2) | texts,
    "simulator": st.none() | st.just({"use": "scripted", "replies": ["hi"]}), "checkpoints": st.none() | st.just([]),
    "max_turns": st.none() | st.integers(-1, 1002) | st.booleans() | st.just(2.0), "turns": st.none(),
    "guards": st.none() | st.just([]), "final": st.none() | asserts, "interactive": st.none(), "inptu": scalars})



def _mostly(good: st.SearchStrategy[Any], bad: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """`good` nine times in ten, else `bad`."""
    return st.sampled_from(range(10)).flatmap(lambda draw: good if draw else bad)


# Entries close to the plain shapes, each key most often of its type: the plain reading is taken, or only just not.
plain_texts = st.none() | texts
good_assertion = st.fixed_dictionaries({"type": types}, optional={
    "value": values, "pattern": values, "path": plain_texts, "message": plain_texts, "negate": st.booleans(),
    "options": st.none() | st.dictionaries(st.sampled_from(["ignore_case", "mode", "threshold", "other"]), scalars,
                                           max_size=2), "use": plain_texts, "script": plain_texts})
near_plain = st.fixed_dictionaries({"id": _mostly(texts.filter(bool), scalars), "input": json_values}, optional={
    "assert": _mostly(good_assertion | st.lists(good_assertion, max_size=3), asserts),
    "assertions": _mostly(st.none(), asserts), "expected": values,
    **{key: _mostly(plain_texts, scalars) for key in ("name", "user", "team", "before", "after")},
    "description": values, "mode": values, "options": _mostly(st.none(), st.just({"mode": "x"})),
    "metadata": _mostly(st.none() | st.dictionaries(texts, values, max_size=2), values),
    "skip": _mostly(st.none() | st.booleans() | texts, scalars),
    "timeout": _mostly(st.sampled_from([None, "30s", "1m30s", "250ms"]), texts | scalars),
    "tags": _mostly(st.none() | st.lists(texts, max_size=3), values), "max_turns": _mostly(
        st.none() | st.integers(0, 1001), scalars), "final": _mostly(st.none(), asserts),
    **{key: _mostly(st.none(), scalars) for key in ("simulator", "checkpoints", "turns", "guards", "interactive")},
})
entries = near_plain | near_plain | case


def _built(value: Any, plain: bool, root: Path) -> tuple[Case | InvalidCase, list[str], list[Any]]:
    warnings: list[str] = []
    built = build_case(value, file="s.jsonl", line=1, base_dir=root, repo_root=root,
                       checks=Checks(plain=plain, default_judge="judge"), warnings=warnings)
    typed = [spec.typed_options for spec in built.assertion_specs()] if isinstance(built, Case) else []
    return built, warnings, typed


@SETTINGS
@given(entries)
def test_an_entry_loads_the_same_read_plainly_or_by_its_model(value: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        assert _built(value, True, Path(tmp)) == _built(value, False, Path(tmp))


@SETTINGS
@given(entries)
def test_what_is_read_plainly_the_model_reads_alike(value: dict[str, Any]) -> None:
    found = plain_case(value)
    if found is None:
        return
    entry = CaseEntry.model_validate(value)      # it does not refuse it
    assert found.model_fields_set == entry.model_fields_set
    assert {field: getattr(found, field) for field in CASE_FIELDS} == {field: getattr(entry, field)
                                                                     for field in CASE_FIELDS}
    assert (found.timeout_seconds, found.skip_reason) == (entry.timeout_seconds, entry.skip_reason)
    # What the model copies (the objects and lists it checks) is copied, what it keeps is kept, the same object.
    keys = {field: key for key, (field, _) in _CASE_KEYS.items()}
    assert {field: getattr(found, field) is value.get(keys[field]) for field in CASE_FIELDS} == {
        field: getattr(entry, field) is value.get(keys[field]) for field in CASE_FIELDS}


@SETTINGS
@given(assertion | good_assertion)
def test_an_assertion_read_plainly_is_the_one_its_model_reads(item: dict[str, Any]) -> None:
    found = plain_assertion(item)
    if found is None:
        return
    entry = AssertionEntry.model_validate(item)
    read = ("kind", "resolved_value", "path", "message", "negate", "options", "use", "script")
    assert {key: getattr(found, key) for key in read} == {key: getattr(entry, key) for key in read}


def test_the_plain_keys_are_the_models_keys() -> None:
    assert {field: key for key, (field, _) in _CASE_KEYS.items()} == {
        name: info.alias or name for name, info in CaseEntry.model_fields.items()}
    assert set(_ASSERTION_KEYS) == {info.alias or name for name, info in AssertionEntry.model_fields.items()}


@pytest.mark.parametrize("value", [
    {"id": "c0", "input": "case 0", "assert": [{"type": "contains", "value": "ok case 0"},
                                               {"type": "regex", "value": "^ok case \\d+$"}]},
    {"id": "T1", "name": "n", "input": [{"role": "user", "content": "hi"}], "assert": {"type": "regex",
     "pattern": "h", "negate": True, "message": "m", "options": {"ignore_case": True}}, "tags": ["a"],
     "timeout": "30s", "skip": "later", "metadata": {"k": 1}, "max_turns": 3, "options": None, "user": "u"},
])
def test_the_usual_entries_are_read_plainly(value: dict[str, Any]) -> None:
    assert plain_case(value) is not None
    assert all(plain_assertion(item) is not None for item in value["assert"]) if isinstance(value["assert"], list) \
        else plain_assertion(value["assert"]) is not None


@pytest.mark.parametrize("value", [
    {"id": "T1", "input": "x", "options": {"connector": "c"}},          # a nested model
    {"id": "T1", "input": "x", "tags": ("a",)},                          # a tuple the model may coerce
    {"id": "T1", "input": "x", "max_turns": True},                       # a boolean for a number
    {"id": "T1", "input": "x", "timeout": "5 minutes"},                  # a duration the model refuses
    {"id": "", "input": "x"},                                            # the id the model says is missing
    {"id": "T1", "input": "x", "inptu": "y"},                            # a key the model does not know
    {"id": "T1", "input": "x", "metadata": {1: "a"}},                    # a key that is no string
])
def test_anything_else_is_left_to_the_model(value: dict[str, Any]) -> None:
    assert plain_case(value) is None
