"""The JSON Schema of a test case (for `agenttest schema`) is valid and accepts the documented cases; it refuses a
wrong option of an assertion at its field, as the loader does."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jsonschema
import pytest
from jsonschema.exceptions import best_match

from agenttest.assertions import REGISTRY
from agenttest.cases import Case
from agenttest.cases.schema import case_json_schema

DOCUMENTED = [
    {"id": "T001", "input": "Hello from T001", "before": "env_test.Before", "after": "env_test.After",
     "assert": {"type": "contains", "value": "Hello"}},
    {"id": "basic-planning", "input": "I want to design a SaaS admin dashboard.",
     "assert": [{"type": "contains", "value": "design"}, {"type": "not_contains", "value": "error"}]},
    {"id": "T001-snake-game", "input": "Create a simple Snake game", "timeout": "5m",
     "assert": {"type": "contains", "value": "game"}},
    {"id": "fast-model", "input": "Quick question",
     "options": {"connector": "deepseek.v3", "skip": {"history": True, "trace": True}}},
    {"id": "T003", "input": {"role": "user", "content": [{"type": "text", "text": "Analyze this image"},
                                                         {"type": "image", "source": "file://test.png"}]}},
    {"id": "T005", "input": "Skip this", "skip": True},
    {"id": "expense-turn2", "input": [{"role": "user", "content": "I want to submit an expense"}],
     "assertions": [{"type": "tool_called", "name": "create_expense"}]},
    {"id": "T1", "input": "x", "assert": "equals", "expected": None},
]
WITH_OPTIONS = [     # what the loader accepts of assertions' options, the schema accepts too
    {"id": "judged-three-times", "input": "What is the expense policy?",
     "assert": {"type": "agent", "use": "agents:workers.test.validator", "value": "It names the 'categories'",
                "options": {"samples": 3, "threshold": 0.5, "metadata": {"tone": "plain"}, "connector": None}}},
    {"id": "options-null", "input": "x", "assert": {"type": "agent", "use": "agents:v", "value": "c", "options": None}},
    {"id": "yao-options", "input": "x",
     "assert": [{"type": "contains", "value": "a", "options": {"ignore_case": True, "metadata": {"k": 1}}},
                {"type": "regex", "value": "a", "options": {"connector": "c"}}]},
    {"id": "unordered", "input": "x", "assert": {"type": "tool_sequence", "value": ["a", "b"],
                                                  "options": {"mode": "unordered"}}},
]


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    schema = case_json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


@pytest.mark.parametrize("case", DOCUMENTED + WITH_OPTIONS, ids=[case["id"] for case in DOCUMENTED + WITH_OPTIONS])
def test_documented_cases_validate(validator: jsonschema.Draft202012Validator, case: dict[str, Any]) -> None:
    assert list(validator.iter_errors(case)) == []


@pytest.mark.parametrize("case", [
    {"input": "x"},
    {"id": "T1", "input": "x", "asert": {}},
    {"id": "T1", "input": "x", "options": {"conector": "c"}},
    {"id": "T1", "input": "x", "assert": {"type": "regex", "vaule": "a"}},
    {"id": "T1", "input": "x", "tags": "smoke"},
])
def test_schema_refuses_what_the_loader_refuses(validator: jsonschema.Draft202012Validator,
                                                case: dict[str, Any]) -> None:
    assert list(validator.iter_errors(case)) != []


# A wrong option: the schema points at its field (an unknown one at `options`, naming it), the loader names it.
WRONG_OPTIONS = [
    {"type": "agent", "use": "agents:v", "value": "c", "options": {"samples": 0}},
    {"type": "agent", "use": "agents:v", "value": "c", "options": {"threshold": True}},
    {"type": "agent", "use": "agents:v", "value": "c", "options": {"treshold": 0.5}},
    {"type": "contains", "value": "a", "options": {"ignore_case": "yes"}},
    {"type": "not_contains", "value": "a", "options": {"ignore_case": None}},
    {"type": "tool_sequence", "value": ["a"], "options": {"mode": "loose"}},
]


@pytest.mark.parametrize("assertion", WRONG_OPTIONS, ids=[f"{a['type']}-{next(iter(a['options']))}"
                                                          for a in WRONG_OPTIONS])
def test_a_wrong_option_is_refused_at_its_field(validator: jsonschema.Draft202012Validator,
                                                error_of: Callable[[Any], str], assertion: dict[str, Any]) -> None:
    [key] = assertion["options"]
    case = {"id": "T1", "input": "x", "assert": assertion}
    error = best_match(validator.iter_errors(case))
    assert error is not None
    if error.validator == "additionalProperties":
        assert list(error.absolute_path) == ["assert", "options"] and f"'{key}'" in error.message
    else:
        assert list(error.absolute_path) == ["assert", "options", key]
    assert f"'{key}'" in error_of(case) or f"options.{key}:" in error_of(case)


def test_every_option_of_every_assertion_type_is_documented_in_the_schema() -> None:
    schema = case_json_schema()
    models = {kind.options for kind in REGISTRY.values() if kind.options is not None}
    assert {model.__name__ for model in models} >= {"JudgeOptions", "SubstringOptions", "SequenceOptions"}
    for model in models:
        properties = schema["$defs"][model.__name__]["properties"]
        assert sorted(properties) == sorted(model.model_fields)
        assert all(field.get("description") for field in properties.values()), model.__name__


@pytest.mark.parametrize("case", WITH_OPTIONS, ids=[case["id"] for case in WITH_OPTIONS])
def test_the_loader_accepts_the_options_the_schema_accepts(load_one: Callable[[Any], Any],
                                                           case: dict[str, Any]) -> None:
    assert isinstance(load_one(case), Case)
