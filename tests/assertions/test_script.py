"""The script assertion: a user's Python function, resolved at load time, judges the response."""

from __future__ import annotations

import asyncio
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agenttest.agents.base import AgentResponse, ToolExecution
from agenttest.assertions import AssertionResult, AssertionSpec, EvalContext, evaluate_all, prepare_assertion
from agenttest.errors import SuiteError
from fakes import gate

Check = Callable[..., AssertionResult]

CHECKS = '''
import json, sys, threading, fakes.gate

def is_polite(output):
    return "please" in output

def same_as_value(output, input, value):
    return {"pass": output == value, "message": f"compared {output!r} with {value!r}"}

def echo_args(output, input, value, response):
    return {"passed": True, "message": json.dumps([output, input, value, response["tools"][0]["name"]])}

async def async_check(output):
    return {"pass": output.startswith("ok")}

def no_pass_key(output):
    return {"message": "forgot pass"}

def string_pass(output):
    return {"pass": "true"}

def returns_number(output):
    return 1

def raises(output):
    raise ValueError("bad output")

def blank_message(output):
    return {"pass": False, "message": ""}

def exits(output):
    sys.exit("x")

def thread_name(output):
    return {"pass": True, "message": threading.current_thread().name}

def blocks(output):
    return fakes.gate.current.wait()

NOT_CALLABLE = 3
'''


@pytest.fixture
def suite_dir(tmp_path: Path) -> Path:
    """A suite directory with `checks.py` beside it and `helpers/more.py` under `src/`."""
    (tmp_path / "checks.py").write_text(textwrap.dedent(CHECKS))
    (tmp_path / "src" / "helpers").mkdir(parents=True)
    (tmp_path / "src" / "helpers" / "more.py").write_text("def always(output):\n    return True\n")
    return tmp_path


def run(check: Check, suite_dir: Path, ref: str, output: Any = "ok", *, use: bool = False, **fields: Any
        ) -> AssertionResult:
    assertion = {"type": "script", **({"use": f"scripts:{ref}"} if use else {"script": ref}), **fields}
    return check(assertion, output if isinstance(output, AgentResponse) else AgentResponse(content=output),
                 base_dir=suite_dir, input="the input")


def test_bool_result(check: Check, suite_dir: Path) -> None:
    result = run(check, suite_dir, "checks.is_polite", "please wait")
    assert (result.passed, result.message) == (True, "script assertion passed")
    result = run(check, suite_dir, "checks.is_polite", "wait")
    assert (result.passed, result.message, result.actual) == (False, "script assertion failed", False)


def test_object_result_with_message(check: Check, suite_dir: Path) -> None:
    result = run(check, suite_dir, "checks.same_as_value", "x", value="y")
    assert (result.passed, result.message, result.expected) == (False, "compared 'x' with 'y'", "y")
    assert run(check, suite_dir, "checks.same_as_value", "y", value="y").passed


def test_called_with_output_input_value_and_response(check: Check, suite_dir: Path) -> None:
    response = AgentResponse(content="out", tools=[ToolExecution(id="1", name="lookup")])
    result = run(check, suite_dir, "checks.echo_args", response, value={"k": 1})
    assert (result.passed, result.message) == (True, '["out", "the input", {"k": 1}, "lookup"]')


def test_async_function(check: Check, suite_dir: Path) -> None:
    result = run(check, suite_dir, "checks.async_check", "ok then")
    assert (result.passed, result.message) == (True, "script assertion passed")
    assert not run(check, suite_dir, "checks.async_check", "no").passed


def test_use_form_and_src_directory(check: Check, suite_dir: Path) -> None:
    assert run(check, suite_dir, "helpers.more.always", use=True).passed
    assert run(check, suite_dir, "checks.is_polite", "please", use=True).passed


@pytest.mark.parametrize(("ref", "message"), [
    ("checks.no_pass_key", "script checks.no_pass_key returned an object without a boolean 'pass'"),
    ("checks.string_pass", "script checks.string_pass returned an object without a boolean 'pass'"),
    ("checks.returns_number", 'script returned unexpected type: int (expected a bool or {"pass": bool, '
                              '"message": str})'),
    ("checks.raises", "script execution failed: checks.raises raised ValueError at {dir}/checks.py:26: bad output"),
    ("checks.blank_message", "script assertion failed"),
    ("checks.exits", "script execution failed: checks.exits raised RuntimeError at {dir}/checks.py:32: "
                     "called sys.exit('x')"),
])
def test_failures_explain_themselves(check: Check, suite_dir: Path, ref: str, message: str) -> None:
    result = run(check, suite_dir, ref)
    assert (result.passed, result.message) == (False, message.replace("{dir}", str(suite_dir)))


def test_a_sync_script_runs_in_its_own_thread(check: Check, suite_dir: Path) -> None:
    assert run(check, suite_dir, "checks.thread_name").message.startswith("agenttest-")


def test_a_blocking_sync_script_does_not_block_the_loop_and_is_abandoned_at_the_timeout(suite_dir: Path) -> None:
    spec = AssertionSpec(type="script", script="checks.blocks", base_dir=suite_dir)
    prepare_assertion(spec)

    async def main() -> None:
        with pytest.raises(asyncio.TimeoutError):     # only the timeout can end the wait: the script never returns
            await asyncio.wait_for(evaluate_all([spec], EvalContext(AgentResponse(content="ok"))), 0.2)

    with gate.closed() as blocked:
        asyncio.run(main())
        assert blocked.reached.wait(30)               # it was called, and is still blocked


def test_negate(check: Check, suite_dir: Path) -> None:
    result = run(check, suite_dir, "checks.is_polite", "rude", negate=True)
    assert (result.passed, result.message) == (True, "negated assertion passed")


@pytest.mark.parametrize(("ref", "message"), [
    ("checks.raises", "script execution failed: checks.raises raised ValueError at {dir}/checks.py:26: bad output"),
    ("checks.exits", "script execution failed: checks.exits raised RuntimeError at {dir}/checks.py:32: "
                     "called sys.exit('x')"),
    ("checks.no_pass_key", "script checks.no_pass_key returned an object without a boolean 'pass'"),
    ("checks.returns_number", 'script returned unexpected type: int (expected a bool or {"pass": bool, '
                              '"message": str})'),
])
def test_a_script_that_gives_no_verdict_fails_negated_too(check: Check, suite_dir: Path, ref: str,
                                                            message: str) -> None:
    """`negate` turns a verdict over; a script that raised or answered no bool gave none ("never leaks" held by a
    script that crashes on every reply would pass every case)."""
    result = run(check, suite_dir, ref, negate=True, message="the override is for a verdict")
    assert (result.passed, result.message) == (False, message.replace("{dir}", str(suite_dir)))


@pytest.mark.parametrize(("fields", "error"), [
    ({}, "script assertion requires a script name"),
    ({"use": "agents:judge"}, "script assertion 'use' must start with 'scripts:'"),
    ({"script": "nomodule"}, "script reference 'nomodule' must look like module.function"),
    ({"script": "checks..func"}, r"script reference 'checks\.\.func' must look like module.function"),
    ({"script": "checks/.func"}, r"script reference 'checks/\.func' must look like module.function"),
    ({"script": "missing.func"}, "script 'missing.func': no missing.py found"),
    ({"script": "checks.nope"}, "script 'nope' is not defined in"),
    ({"script": "checks.NOT_CALLABLE"}, "script 'NOT_CALLABLE' in .* is not callable"),
])
def test_unresolvable_references_are_load_errors(check: Check, suite_dir: Path, fields: dict[str, str],
                                                 error: str) -> None:
    with pytest.raises(SuiteError, match=error):
        check({"type": "script", **fields}, "x", base_dir=suite_dir)
