"""Validating entries into Cases: every key of SPEC §5, and the exact message of every invalid case."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from case_files import Load, LoadOne, jsonl, write

from agenttest.assertions.base import REGISTRY, AssertionSpec, AssertionType, Verdict
from agenttest.cases import Case, InvalidCase
from agenttest.errors import SuiteError, Where

ErrorOf = Callable[[Any], str]
VALID_TYPES = ("agent, contains, equals, json_path, json_schema, latency, not_contains, regex, script, tool_called, "
               "tool_result, tool_sequence, type")


def _case(load_one: LoadOne, entry: dict[str, Any]) -> Case:
    result = load_one(entry)
    assert isinstance(result, Case), result
    return result


# -- a full valid case ---------------------------------------------------------------------------------------------


def test_every_standard_key_is_kept(repo: Path, load_one: LoadOne) -> None:
    entry = {
        "id": "T1", "name": "Greeting", "description": "docs only", "mode": "static", "input": "Hello",
        "assert": [{"type": "contains", "value": "hi", "message": "should greet", "options": {"ignore_case": True}},
                   {"type": "regex", "value": "(?i)hello", "negate": True}],
        "expected": {"a": 1},
        "options": {"connector": "gpt", "skip": {"history": True, "trace": False}, "mode": "chat", "search": False,
                    "metadata": {"k": "v"}, "disable_global_prompts": True},
        "user": "u1", "team": "t1", "metadata": {"scenario": "x"}, "skip": "flaky upstream", "timeout": "1m30s",
        "before": "env_test.Before", "after": "env_test.After", "tags": ["smoke", "greeting"],
    }
    case = _case(load_one, entry)
    assert (case.id, case.name, case.input, case.expected, case.has_expected) == ("T1", "Greeting", "Hello",
                                                                                  {"a": 1}, True)
    assert case.messages == [{"role": "user", "content": "Hello"}]
    assert case.options == entry["options"]
    assert (case.user, case.team, case.metadata) == ("u1", "t1", {"scenario": "x"})
    assert (case.skip, case.timeout, case.before, case.after) == ("flaky upstream", 90.0, "env_test.Before",
                                                                  "env_test.After")
    assert case.tags == ("smoke", "greeting")
    assert (case.file, case.line, case.base_dir, case.raw) == ("tests/suite.jsonl", 1, repo / "tests", entry)
    contains, regex = case.assertions
    assert (contains.type, contains.value, contains.message, contains.options) == (
        "contains", "hi", "should greet", {"ignore_case": True})
    assert (regex.type, regex.negate, regex.base_dir) == ("regex", True, repo / "tests")
    assert regex.prepared is not None  # prepared once at load time


def test_minimal_case_defaults(load_one: LoadOne) -> None:
    case = _case(load_one, {"id": "T1", "input": "x"})
    assert (case.assertions, case.expected, case.has_expected, case.name, case.options, case.user, case.team,
            case.metadata, case.skip, case.timeout, case.before, case.after, case.tags) == (
        [], None, False, None, {}, None, None, None, None, None, None, None, ())


def test_null_means_not_given(load_one: LoadOne) -> None:
    case = _case(load_one, {"id": "T1", "input": "x", "name": None, "assert": None, "options": {"connector": None},
                            "skip": None, "timeout": None, "tags": None})
    assert (case.assertions, case.options, case.skip, case.timeout, case.tags) == ([], {}, None, None, ())


def test_expected_null_is_a_real_expectation(load_one: LoadOne) -> None:
    case = _case(load_one, {"id": "T1", "input": "x", "expected": None})
    assert (case.expected, case.has_expected) == (None, True)
    assert [(a.type, a.value) for a in case.assertions] == [("equals", None)]


@pytest.mark.parametrize(("skip", "reason"), [(True, ""), (False, None), ("not ready", "not ready")])
def test_skip_is_a_bool_or_a_reason(load_one: LoadOne, skip: Any, reason: str | None) -> None:
    assert _case(load_one, {"id": "T1", "input": "x", "skip": skip}).skip == reason


@pytest.mark.parametrize(("timeout", "seconds"), [("300ms", 0.3), ("30s", 30.0), ("2h", 7200.0), ("1.5s", 1.5)])
def test_timeout_is_a_go_duration(load_one: LoadOne, timeout: str, seconds: float) -> None:
    assert _case(load_one, {"id": "T1", "input": "x", "timeout": timeout}).timeout == seconds


# -- assertion forms -----------------------------------------------------------------------------------------------


def _assertions(load_one: LoadOne, written: Any, key: str = "assert") -> list[AssertionSpec]:
    return _case(load_one, {"id": "T1", "input": "x", key: written}).assertions


def test_assert_as_object_array_or_type_name(load_one: LoadOne) -> None:
    [one] = _assertions(load_one, {"type": "contains", "value": "a"})
    assert (one.type, one.value) == ("contains", "a")
    assert [a.type for a in _assertions(load_one, [{"type": "contains", "value": "a"}, {"value": 3}])] == [
        "contains", "equals"]
    [shorthand] = _assertions(load_one, "equals")
    assert (shorthand.type, shorthand.value) == ("equals", None)
    assert _assertions(load_one, []) == []


def test_assertions_is_an_alias_of_assert(load_one: LoadOne) -> None:
    [one] = _assertions(load_one, [{"type": "contains", "value": "a"}], key="assertions")
    assert (one.type, one.value) == ("contains", "a")


@pytest.mark.parametrize("no_assert", [{}, {"assert": None}, {"assertions": None}])
def test_expected_without_assert_is_an_equals_assertion(repo: Path, load_one: LoadOne,
                                                        no_assert: dict[str, Any]) -> None:
    case = _case(load_one, {"id": "T1", "input": "x", "expected": {"a": [1, 2]}, **no_assert})
    assert case.assertions == [AssertionSpec(type="equals", value={"a": [1, 2]}, base_dir=repo / "tests")]
    assert (case.expected, case.has_expected) == ({"a": [1, 2]}, True)


@pytest.mark.parametrize("written", [
    {"assert": {"type": "contains", "value": "a"}},
    {"assertions": [{"type": "contains", "value": "a"}]},
    {"assert": [{"type": "contains", "value": "a"}], "assertions": None},
])
def test_expected_is_ignored_when_there_is_an_assert(load_one: LoadOne, written: dict[str, Any]) -> None:
    case = _case(load_one, {"id": "T1", "input": "x", "expected": "b", **written})
    assert [(a.type, a.value) for a in case.assertions] == [("contains", "a")]
    assert (case.expected, case.has_expected) == ("b", True)  # still reported


def test_an_empty_assert_also_leaves_expected_out(load_one: LoadOne) -> None:
    """Yao's rule is about `assert` being given, not about it holding assertions: the case passes on any reply."""
    assert _case(load_one, {"id": "T1", "input": "x", "assert": [], "expected": "b"}).assertions == []


def test_pattern_is_the_value_of_a_regex(load_one: LoadOne) -> None:
    [one] = _assertions(load_one, {"type": "regex", "pattern": "^a+$"})
    assert one.value == "^a+$"


def test_name_is_the_value_of_tool_called(load_one: LoadOne) -> None:
    [one] = _assertions(load_one, {"type": "tool_called", "name": "create_expense"})
    assert (one.type, one.value) == ("tool_called", "create_expense")


def test_assertion_fields_are_passed_through(load_one: LoadOne) -> None:
    [one] = _assertions(load_one, {"type": "json_path", "path": "a.b", "value": 1, "message": "m", "negate": False,
                                   "options": {"anything": [1, 2]}})
    assert (one.path, one.value, one.message, one.negate, one.options) == ("a.b", 1, "m", False,
                                                                           {"anything": [1, 2]})


# -- the catalogue of invalid cases ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("entry", "message"), [
    # required fields
    ({"input": "x"}, "missing required field 'id'"),
    ({"id": "", "input": "x"}, "missing required field 'id'"),
    ({"id": None, "input": "x"}, "missing required field 'id'"),
    ({"id": 5, "input": "x"}, "id: expected a string, got number"),
    ({"id": "T1"}, "missing required field 'input'"),
    ({"id": "T1", "input": None}, "missing required field 'input'"),
    # unknown keys, with a hint
    ({"id": "T1", "input": "x", "asert": {}}, "unknown key 'asert' (did you mean 'assert'?)"),
    ({"id": "T1", "input": "x", "assertion": []}, "unknown key 'assertion' (did you mean 'assertions'?)"),
    ({"id": "T1", "input": "x", "Input": "y"}, "unknown key 'Input' (did you mean 'input'? keys are case-sensitive)"),
    ({"id": "T1", "input": "x", "zzz": 1}, "unknown key 'zzz'"),
    ({"id": "T1", "inptu": "x"}, "unknown key 'inptu' (did you mean 'input'?); missing required field 'input'"),
    ({"id": "T1", "input": "x", "options": {"conector": "c"}},
     "options: unknown key 'conector' (did you mean 'connector'?)"),
    ({"id": "T1", "input": "x", "options": {"skip": {"histroy": True}}},
     "options.skip: unknown key 'histroy' (did you mean 'history'?)"),
    # types
    ({"id": "T1", "input": "x", "name": 3}, "name: expected a string, got number"),
    ({"id": "T1", "input": "x", "user": True}, "user: expected a string, got boolean"),
    ({"id": "T1", "input": "x", "team": []}, "team: expected a string, got array"),
    ({"id": "T1", "input": "x", "metadata": []}, "metadata: expected an object, got array"),
    ({"id": "T1", "input": "x", "tags": "smoke"}, "tags: expected an array, got string"),
    ({"id": "T1", "input": "x", "tags": ["a", 3]}, "tags[1]: expected a string, got number"),
    ({"id": "T1", "input": "x", "before": {}}, "before: expected a string, got object"),
    ({"id": "T1", "input": "x", "skip": 1}, "skip: expected true/false or a reason string, got number"),
    ({"id": "T1", "input": "x", "options": []}, "options: expected an object, got array"),
    ({"id": "T1", "input": "x", "options": {"skip": {"history": "yes"}}},
     "options.skip.history: expected true or false, got string"),
    ({"id": "T1", "input": "x", "options": {"search": 1}}, "options.search: expected true or false, got number"),
    ({"id": "T1", "input": "x", "options": {"metadata": "m"}}, "options.metadata: expected an object, got string"),
    ({"id": "T1", "input": "x", "options": {"disable_global_prompts": "no"}},
     "options.disable_global_prompts: expected true or false, got string"),
    ({"id": "T1", "input": "x", "options": {"connector": 1, "mode": 2}},
     "options.connector: expected a string, got number; options.mode: expected a string, got number"),
    # timeout (Yao silently ignores a bad one)
    ({"id": "T1", "input": "x", "timeout": "5 minutes"},
     "timeout: invalid duration '5 minutes' (use e.g. 300ms, 30s, 1m30s, 2h)"),
    ({"id": "T1", "input": "x", "timeout": "-1s"}, "timeout: invalid duration '-1s': must not be negative"),
    ({"id": "T1", "input": "x", "timeout": 30}, "timeout: expected a string, got number"),
    # dynamic cases
    ({"id": "T1", "simulator": {"use": "sim"}, "checkpoints": [{"id": "c", "assert": {"type": "contains"}}]},
     "checkpoints[0].assert: contains assertion needs a 'value' (a string, or a list of strings)"),
    ({"id": "T1", "simulator": {"use": "sim"}},
     'simulator: a dynamic case needs checkpoints (e.g. "checkpoints": [{"id": "greets", "assert": {"type": '
     '"contains", "value": "Hello"}}]): without them nothing would be checked'),
    ({"id": "T1", "input": "x", "checkpoints": [{"id": "c", "assert": "contains"}]},
     'simulator.use: a dynamic case needs a simulator: an agent id, or "scripted" with "replies"; or pass '
     "--simulator ID; checkpoints[0].assert: contains assertion needs a 'value' (a string, or a list of strings)"),
    ({"id": "T1", "simulator": {"use": "scripted"}, "checkpoints": [{"id": "c", "assert": "contains"}]},
     'simulator.replies: use "scripted" replays the user\'s turns listed in "replies"; give at least one; '
     "checkpoints[0].assert: contains assertion needs a 'value' (a string, or a list of strings)"),
    ({"id": "T1", "simulator": {"use": "sim", "replies": ["a"]}, "checkpoints": []},
     "checkpoints: empty; a dynamic case needs at least one checkpoint"),
    ({"id": "T1", "simulator": {"use": "sim"}, "checkpoints": [{"id": "c"}]},
     "checkpoints[0]: needs 'assert': what the agent's reply must satisfy to reach it"),
    ({"id": "T1", "simulator": {"use": "sim"}, "checkpoints": [{"id": "c", "asert": "x"}]},
     "checkpoints[0]: unknown key 'asert' (did you mean 'assert'?)"),
    ({"id": "T1", "simulator": {"use": "sim"}, "assert": "contains",
      "checkpoints": [{"id": "c", "assertion": {"type": "contains", "value": "a"}}]},
     "assert: not checked in a dynamic case (simulator + checkpoints); put what each reply must satisfy in a "
     "checkpoint's 'assert'"),
    ({"id": "T1", "simulator": {"use": "sim"}, "checkpoints": [
        {"id": "a", "after": ["b"], "assert": {"type": "contains", "value": "a"}},
        {"id": "b", "after": ["a"], "assert": {"type": "contains", "value": "b"}},
        {"id": "c", "after": ["z"], "assert": {"type": "contains", "value": "c"}}]},
     "checkpoints[2].after: unknown checkpoint 'z' (checkpoints: a, b, c); checkpoints: 'after' goes round in a "
     "circle (a → b → a): none of them could ever be reached"),
    ({"id": "T1", "simulator": {"use": "sim"}, "checkpoints": [
        {"id": "a", "after": ["a"], "assert": {"type": "contains", "value": "a"}},
        {"id": "a", "assert": {"type": "contains", "value": "b"}}]},
     "checkpoints[1].id: duplicate checkpoint id 'a' (first at checkpoints[0]); checkpoints: 'after' goes round "
     "in a circle (a → a): none of them could ever be reached"),
    ({"id": "T1", "simulator": {"use": "sim", "options": {"metadata": {"persona": 3}, "conector": "x"}},
      "checkpoints": [{"id": "c", "assert": {"type": "contains", "value": "a"}}]},
     "simulator.options: unknown key 'conector' (did you mean 'connector'?)"),
    ({"id": "T1", "simulator": {"use": "sim", "options": {"metadata": {"persona": 3}}},
      "checkpoints": [{"id": "c", "assert": {"type": "contains", "value": "a"}}]},
     "simulator.options.metadata.persona: expected a string, got number"),
    ({"id": "T1", "input": "x", "max_turns": 0}, "max_turns: must be at least 1, got 0"),
    ({"id": "T1", "simulator": {"use": "sim"}, "checkpoints": [
        {"id": "a", "required": False, "assert": {"type": "contains", "value": "a"}}]},
     "checkpoints: every checkpoint is optional (required: false), so the conversation could never fail; make at "
     "least one required"),
    ({"id": "T1", "simulator": {"use": "sim"}, "checkpoints": [{"id": "a", "assert": []}]},
     "checkpoints[0]: needs 'assert': what the agent's reply must satisfy to reach it"),
    ({"id": "T1", "input": "x", "timeout": "0s"}, "timeout: invalid timeout '0s': must be more than 0"),
    # judged assertions
    ({"id": "T1", "input": "x", "assert": {"type": "agent", "use": "agents:v", "value": "c", "path": "$.a"}},
     "assert.path: an agent assertion judges the whole reply; 'path' is not used (say in the criteria which part "
     "matters)"),
    ({"id": "T1", "input": "x", "assert": {"type": "agent", "use": "agents:v", "value": "c",
                                           "options": {"metadata": {"output": "fake"}}}},
     "assert.options.metadata.output: reserved: the judge is sent the case's output as 'output'; name this key "
     "otherwise"),
    ({"id": "T1", "input": "x", "assert": {"type": "agent", "use": "agents:v", "value": "c",
                                           "options": {"metadata": {"criteria": "d"}}}},
     "assert.options.metadata.criteria: the criteria are given twice ('value' and 'options.metadata.criteria'); "
     "keep one"),
    ({"id": "T1", "input": "x", "assert": {"type": "agent", "use": "agents:v", "value": "c",
                                           "options": {"samples": True}}},
     "assert.options.samples: expected a whole number from 1 to 15, got true"),
    ({"id": "T1", "input": "x", "assert": {"type": "agent", "value": "polite"}},
     "assert.use: agent assertion requires 'use': \"agents:ID\" naming the judge, or a default judge: "
     "defaults.judge in agenttest.yaml, or --judge ID"),
    ({"id": "T1", "input": "x", "assert": {"type": "agent", "use": "scripts:x.y", "value": "polite"}},
     "assert.use: agent assertion 'use' must start with 'agents:' (e.g. agents:workers.test.validator), got "
     "'scripts:x.y'"),
    ({"id": "T1", "input": "x", "assert": {"type": "agent", "use": "agents:v"}},
     "assert.value: agent assertion needs criteria: 'value', or 'options.metadata.criteria'"),
    ({"id": "T1", "input": "x", "assert": {"type": "agent", "use": "agents:v", "value": "c",
                                           "options": {"threshold": 2, "samples": 3}}},
     "assert.options.threshold: expected a number from 0 to 1, got 2"),
    ({"id": "T1", "input": "x", "assert": {"type": "agent", "use": "agents:v", "value": "c",
                                           "options": {"samples": 0}}},
     "assert.options.samples: expected a whole number from 1 to 15, got 0"),
    ({"id": "T1", "input": "x", "assert": {"type": "agent", "use": "agents:v", "value": "c",
                                           "options": {"sample": 3}}},
     "assert.options.sample: unknown option 'sample' for an agent assertion (did you mean 'samples'?) (options: "
     "connector, metadata, threshold, samples)"),
    # assertions
    ({"id": "T1", "input": "x", "assert": [], "assertions": []}, "use either 'assert' or 'assertions', not both"),
    ({"id": "T1", "input": "x", "assert": 5},
     "assert: expected an assertion object, an array of them or a type name, got number"),
    ({"id": "T1", "input": "x", "assert": [{"type": "contains", "value": "a"}, "regex"]},
     "assert[1]: expected an assertion object, got string"),
    ({"id": "T1", "input": "x", "assert": {"type": "contain", "value": "a"}},
     f"assert.type: unknown assertion type 'contain' (did you mean 'contains'? valid: {VALID_TYPES})"),
    ({"id": "T1", "input": "x", "assertions": [{"value": 1}, {"type": "zzzzqq"}]},
     f"assertions[1].type: unknown assertion type 'zzzzqq' (valid: {VALID_TYPES})"),
    ({"id": "T1", "input": "x", "assert": "equal"},
     f"assert: unknown assertion type 'equal' (did you mean 'equals'? valid: {VALID_TYPES})"),
    ({"id": "T1", "input": "x", "assert": {"type": "regex", "vaule": "a"}},
     "assert: unknown key 'vaule' (did you mean 'value'?)"),
    ({"id": "T1", "input": "x", "assert": [{"type": "regex", "value": "a", "negate": "yes"}]},
     "assert[0].negate: expected true or false, got string"),
    ({"id": "T1", "input": "x", "assert": {"type": 3}}, "assert.type: expected a string, got number"),
    ({"id": "T1", "input": "x", "assert": {"type": "contains", "value": "a", "options": []}},
     "assert.options: expected an object, got array"),
    ({"id": "T1", "input": "x", "assert": {"type": "regex", "value": "a", "pattern": "b"}},
     "assert: 'value' and 'pattern' are the same field; give only one"),
    ({"id": "T1", "input": "x", "assert": {"type": "contains", "pattern": "b"}},
     "assert: 'pattern' is an alias of 'value' only for type 'regex'; use 'value'"),
    ({"id": "T1", "input": "x", "assert": {"type": "contains", "name": "b"}},
     "assert: 'name' is an alias of 'value' only for type 'tool_called'; use 'value'"),
    # entry shape
    ("T1", "expected a JSON object, got string"),
])
def test_invalid_case_message(error_of: ErrorOf, entry: Any, message: str) -> None:
    assert error_of(entry) == f"invalid test case: {message}"


@pytest.mark.parametrize("timeout", ["", "  "])
def test_a_blank_timeout_is_an_invalid_duration(error_of: ErrorOf, timeout: str) -> None:
    assert error_of({"id": "T1", "input": "x", "timeout": timeout}).startswith(
        f"invalid test case: timeout: invalid duration {timeout!r}")


def test_every_problem_of_an_entry_is_reported_at_once(error_of: ErrorOf) -> None:
    message = error_of({"id": "T1", "input": 5, "assert": [{"type": "contains", "value": "a"},
                                                            {"type": "nope"}, 7]})
    assert message == (
        "invalid test case: input: expected a string, a message object or an array of messages, got number; "
        f"assert[1].type: unknown assertion type 'nope' (valid: {VALID_TYPES}); "
        "assert[2]: expected an assertion object, got number")


def test_invalid_case_keeps_id_file_line_and_input(load_text: Callable[..., Any]) -> None:
    suite = load_text('\n{"id": "T1", "input": [{"role": "user"}], "skip": 3}\n')
    [entry] = suite.entries
    assert isinstance(entry, InvalidCase)
    assert (entry.id, entry.file, entry.line, entry.input) == ("T1", "tests/suite.jsonl", 2, [{"role": "user"}])


# -- what assertion types report at load time ----------------------------------------------------------------------


def test_a_bad_regex_is_reported_with_its_assertion_index(error_of: ErrorOf) -> None:
    message = error_of({"id": "T1", "input": "x", "assert": [{"type": "contains", "value": "a"},
                                                             {"type": "regex", "value": "a("}]})
    assert message.startswith("invalid test case: assert[1]")
    assert "'a('" in message
    assert "missing ), unterminated subpattern at position 1" in message


@pytest.fixture
def probe_type(monkeypatch: pytest.MonkeyPatch) -> None:
    """A `probe` assertion type whose prepare step fails the way each test's value asks."""

    def prepare(spec: AssertionSpec) -> None:
        if spec.value == "field":
            raise SuiteError("must be positive", Where(field="value"))
        if spec.value == "plain":
            raise SuiteError("probe assertion needs a positive 'value'")
        if spec.value == "crash":
            raise ZeroDivisionError("division by zero")

    def evaluate(spec: AssertionSpec, ctx: Any) -> Verdict:
        return Verdict(True, "ok")

    monkeypatch.setitem(REGISTRY, "probe", AssertionType("probe", evaluate, prepare))


@pytest.mark.usefixtures("probe_type")
@pytest.mark.parametrize(("value", "message"), [
    ("field", "assert[1].value: must be positive"),
    ("plain", "assert[1]: probe assertion needs a positive 'value'"),
    ("crash", "assert[1]: cannot prepare the 'probe' assertion: ZeroDivisionError: division by zero"),
])
def test_prepare_errors_are_prefixed_with_the_assertion_field(error_of: ErrorOf, value: str, message: str) -> None:
    entry = {"id": "T1", "input": "x", "assert": [{"type": "probe", "value": "ok"}, {"type": "probe", "value": value}]}
    assert error_of(entry) == f"invalid test case: {message}"


def test_expected_is_prepared_like_any_assertion(monkeypatch: pytest.MonkeyPatch, error_of: ErrorOf) -> None:
    def prepare(spec: AssertionSpec) -> None:
        raise SuiteError(f"prepared {spec.type} with {spec.value!r}")

    monkeypatch.setitem(REGISTRY, "equals", AssertionType("equals", REGISTRY["equals"].evaluate, prepare))
    assert error_of({"id": "T1", "input": "x", "expected": 3}) == "invalid test case: expected: prepared equals with 3"


def test_assertion_base_dir_is_the_suite_directory(repo: Path, load: Load) -> None:
    write(repo / "suites/deep/schema.json", '{"type": "object"}')
    write(repo / "suites/deep/s.jsonl", jsonl({"id": "T1", "input": "x",
                                                "assert": {"type": "json_schema", "value": "schema.json"}}))
    [case] = load("suites/deep/s.jsonl").entries
    assert isinstance(case, Case), case
    assert case.assertions[0].base_dir == repo / "suites/deep"


# -- duplicate ids -------------------------------------------------------------------------------------------------


def test_duplicate_ids_in_one_file_make_the_later_ones_invalid(repo: Path, load: Load) -> None:
    write(repo / "tests/x.jsonl", jsonl({"id": "T0", "input": "x"}, {"id": "T0b", "input": "x"},
                                        {"id": "T1", "input": "x"}, {"id": "T1", "input": "y"}))
    write(repo / "tests/y.jsonl", jsonl({"id": "T1", "input": "z"}, {"id": "T1", "input": "w"}))
    _, _, t1, second, other_file, third = load("tests/x.jsonl", "tests/y.jsonl").entries
    assert isinstance(t1, Case) and t1.line == 3
    assert isinstance(second, InvalidCase) and isinstance(third, InvalidCase)
    assert (second.message, second.file, second.line, second.id, second.input) == (
        "invalid test case: duplicate id 'T1' (first defined at tests/x.jsonl:3)", "tests/x.jsonl", 4, "T1", "y")
    assert isinstance(other_file, Case) and other_file.key == ("tests/y.jsonl", "T1")   # another file: another case
    assert (third.message, third.file, third.line) == (
        "invalid test case: duplicate id 'T1' (first defined at tests/y.jsonl:1)", "tests/y.jsonl", 2)


def test_an_invalid_first_definition_still_claims_its_id(load_text: Callable[..., Any]) -> None:
    suite = load_text(jsonl({"id": "T1", "input": 5}, {"id": "T1", "input": "x"}))
    assert [entry.message for entry in suite.entries] == [
        "invalid test case: input: expected a string, a message object or an array of messages, got number",
        "invalid test case: duplicate id 'T1' (first defined at tests/suite.jsonl:1)",
    ]


def test_cases_that_write_the_same_assertion_share_it(repo: Path, load: Load) -> None:
    """`{"type": …, "value": "…"}` written the same by many cases is prepared once and shared (one compiled regex,
    one object: ~110 bytes a case of a 10,000-case suite); any difference — type, value, the suite's directory — is
    an assertion of its own, and a shared one checks each case's reply as its own would."""
    regex = {"type": "regex", "value": r"^ok \d+$"}
    write(repo / "a/s.jsonl", jsonl(*[{"id": f"a{i}", "input": "x", "assert": [regex, {"type": "contains",
                                                                                          "value": f"{i}"}]}
                                      for i in range(3)],
                                    {"id": "other", "input": "x", "assert": [{"type": "regex", "value": "^ok$"}]},
                                    {"id": "kind", "input": "x", "assert": [{"type": "contains",
                                                                             "value": r"^ok \d+$"}]}))
    write(repo / "b/s.jsonl", jsonl({"id": "b0", "input": "x", "assert": [regex]}))
    cases = {case.id: case for case in load("a/s.jsonl", "b/s.jsonl").cases}
    assert cases["a0"].assertions[0] is cases["a1"].assertions[0] is cases["a2"].assertions[0]
    assert len({id(cases[f"a{i}"].assertions[1]) for i in range(3)}) == 3     # values differ
    assert cases["other"].assertions[0] is not cases["a0"].assertions[0]
    assert cases["kind"].assertions[0] is not cases["a0"].assertions[0]
    assert cases["b0"].assertions[0] is not cases["a0"].assertions[0]          # another directory
    assert cases["a0"].assertions[0] == AssertionSpec(type="regex", value=r"^ok \d+$", base_dir=repo / "a",
                                                      prepared=cases["a0"].assertions[0].prepared)
    assert cases["b0"].assertions[0].base_dir == repo / "b"


def test_a_runs_definition_digest_is_read_with_the_entry_and_is_the_digest_of_its_text(repo: Path) -> None:
    """A run works each case's definition digest out as its entry is read (`Checks.digests`): the same digest as
    from the entry's text parsed again (what `validate`, direct input and the Python API's cases still do)."""
    from agenttest.cases.loader import Checks, load_suite
    from agenttest.cases.model import definition_of

    entries = [{"id": "a", "input": "héllo ☃", "assert": [{"type": "contains", "value": "h"}], "tags": ["x"]},
               {"id": "b", "name": "doc only", "input": [{"role": "user", "content": "hi"}], "expected": None,
                "metadata": {"nested": {"z": 1, "a": [1.5, True, None]}}},
               {"id": "c", "input": "\ud83d\ude00 \\u", "description": "d", "metadata": {"k": 1e300}}]
    write(repo / "s.jsonl", jsonl(*entries))
    read = load_suite(["s.jsonl"], cwd=repo, repo_root=repo, checks=Checks(digests=True)).cases
    again = load_suite(["s.jsonl"], cwd=repo, repo_root=repo).cases
    assert [case.digest for case in again] == [None, None, None]
    assert [case.definition() for case in read] == [case.definition() for case in again] == [
        definition_of(json.loads(case.written)) for case in again]
    assert read[0].definition() != read[1].definition()
    written = {**entries[0], "id": "renamed", "name": "n", "tags": []}      # what only documents it is left out
    write(repo / "t.jsonl", jsonl(written))
    assert load_suite(["t.jsonl"], cwd=repo, repo_root=repo, checks=Checks(digests=True)).cases[0].definition() \
        == read[0].definition()
