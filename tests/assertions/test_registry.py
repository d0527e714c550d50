"""The registry's typed options: one declaration gives the load-time check, its message and the printed schema."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Callable
from typing import Annotated, Any

import pytest
from jsonschema import Draft202012Validator
from pydantic import Field

from agenttest.agents.base import AgentResponse
from agenttest.assertions import REGISTRY, AssertionResult, AssertionSpec, evaluate_all, prepare_assertion
from agenttest.assertions.base import AssertionType, EvalContext, Verdict
from agenttest.assertions.options import AssertionOptions, when_invalid
from agenttest.cases.schema import case_json_schema
from agenttest.errors import SuiteError

Check = Callable[..., AssertionResult]


class ProbeOptions(AssertionOptions):
    """`options` of the `probe` assertion."""

    limit: Annotated[int, Field(ge=1), when_invalid("expected a whole number from 1")] = Field(
        1, description="how many")


def _probe(spec: AssertionSpec, ctx: EvalContext) -> Verdict:
    options: ProbeOptions = spec.typed_options
    return Verdict(len(ctx.text) <= options.limit, f"limit {options.limit}")


@pytest.fixture
def probe(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(REGISTRY, "probe", AssertionType("probe", _probe, options=ProbeOptions))


@pytest.mark.usefixtures("probe")
def test_a_declared_option_is_checked_named_and_printed_from_its_declaration() -> None:
    spec = AssertionSpec(type="probe", options={"limit": 0})
    with pytest.raises(SuiteError) as caught:
        prepare_assertion(spec)
    assert (caught.value.where.field, caught.value.message) == ("options.limit", "expected a whole number from 1, "
                                                                                  "got 0")
    schema = case_json_schema()
    assert schema["$defs"]["ProbeOptions"]["properties"]["limit"]["description"] == "how many"
    validator = Draft202012Validator(schema)
    assert not validator.is_valid({"id": "T1", "input": "x", "assert": {"type": "probe", "options": {"limit": 0}}})
    assert validator.is_valid({"id": "T1", "input": "x", "assert": {"type": "probe", "options": {"limit": 2}}})


def test_options_are_read_once_when_the_suite_loads() -> None:
    spec = AssertionSpec(type="contains", value="HELLO", options={"ignore_case": True})
    prepare_assertion(spec)
    spec.options["ignore_case"] = False     # what evaluation reads was fixed at load
    [result] = asyncio.run(evaluate_all([spec], EvalContext(AgentResponse(content="hello"))))
    assert result.passed


def test_a_type_keeps_ignoring_options_it_does_not_know(check: Check) -> None:
    # Yao reads options.connector and options.metadata of any assertion: suites written for it still load.
    assert check({"type": "contains", "value": "a", "options": {"metadata": {"k": 1}, "connector": "c"}}, "a").passed
    assert check({"type": "regex", "value": "a", "options": {"whatever": 1}}, "a").passed


@pytest.mark.parametrize(("options", "field", "message"), [
    ({"samples": 3, "treshold": 7}, "options.treshold", "unknown option 'treshold' for an agent assertion (did you "
                                                        "mean 'threshold'?) (options: connector, metadata, "
                                                        "threshold, samples)"),
    ({"metadata": {"k": 1}, "threshold": [1]}, "options.threshold", "expected a number from 0 to 1, got array"),
    ({"connector": ""}, "options.connector", "expected a connector name, got \"\""),
])
def test_the_first_problem_of_the_options_is_said_at_its_field(options: dict[str, Any], field: str,
                                                               message: str) -> None:
    spec = AssertionSpec(type="agent", value="polite", use="agents:v", options=options)
    with pytest.raises(SuiteError) as caught:
        prepare_assertion(spec)
    assert (caught.value.where.field, caught.value.message) == (field, message)


@pytest.mark.parametrize(("options", "metadata", "threshold"), [
    ({"metadata": {1: "x"}}, {1: "x"}, None),         # from the Python API, keys as given (JSON makes them strings)
    ({"metadata": []}, None, None),                    # an empty value has always meant no metadata
    ({"metadata": 0, "threshold": 1}, None, 1.0),
])
def test_the_judge_options_accept_what_they_always_did(options: dict[str, Any], metadata: Any,
                                                       threshold: float | None) -> None:
    spec = AssertionSpec(type="agent", value="polite", use="agents:v", options=options)
    prepare_assertion(spec)
    assert (spec.typed_options.metadata, spec.typed_options.threshold) == (metadata, threshold)
    assert type(spec.typed_options.threshold) is type(threshold)


def _in_a_fresh_interpreter(code: str) -> str:
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_the_built_in_types_load_when_first_named_and_the_whole_table_lists_them_all() -> None:
    out = _in_a_fresh_interpreter("""
import sys
from agenttest.assertions.base import LAZY_TYPES, REGISTRY
loaded = lambda: sorted(m for m in set(LAZY_TYPES.values()) if f"agenttest.assertions.{m}" in sys.modules)
print(loaded())
print("latency" in REGISTRY, REGISTRY["tool_called"].name, loaded())
print(set(LAZY_TYPES) <= set(sorted(REGISTRY)), loaded())
""")
    assert out.splitlines() == ["[]", "True tool_called ['timing', 'tools']",
                                "True ['judge', 'script', 'structured', 'timing', 'tools']"]


def test_a_type_registered_under_a_built_in_name_replaces_it_though_its_module_loads_later() -> None:
    out = _in_a_fresh_interpreter("""
from agenttest.assertions.base import REGISTRY, AssertionType
REGISTRY["latency"] = AssertionType("latency", lambda spec, ctx: None)
import agenttest.assertions.timing
print(REGISTRY["latency"].evaluate.__module__, len(REGISTRY) > 10)
""")
    assert out == "__main__ True"
