"""The JSON Schema of a test case (for `agenttest schema`) is valid and accepts the documented cases."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

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


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    schema = case_json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


@pytest.mark.parametrize("case", DOCUMENTED, ids=[case["id"] for case in DOCUMENTED])
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
