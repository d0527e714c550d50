"""Standard mode: build the request, call the agent within the case's time, check the reply, run the hooks."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

from ..agents.base import Agent, AgentRequest, AgentResponse
from ..assertions.base import EvalContext, evaluate_all, failure_message
from ..cases.model import Case
from ..durations import format_duration
from ..errors import AgentCallError, HookError
from ..results import CaseResult
from .context import RunContext
from .hooks import Hooks

# After hooks of cancelled cases get this long, so Ctrl-C still finishes within seconds.
AFTER_HOOK_GRACE = 2.0


@dataclass
class CaseRunner:
    """Runs one standard-mode case against one agent."""

    agent: Agent
    context: RunContext
    hooks: Hooks
    timeout: float
    connector: str | None = None

    async def run(self, case: Case) -> CaseResult:
        """One case: Before hook, agent call and assertions all within the case's timeout; then the After hook."""
        started = time.monotonic()
        result = base_result(case)
        if case.skip is not None:
            result.status, result.error = "skipped", case.skip or "skip: true"
            return result
        timeout = case.timeout if case.timeout is not None else self.timeout
        deadline = started + timeout
        before_data: Any = None
        try:
            if case.before:
                before_data = await asyncio.wait_for(
                    self.hooks.call(case.before, case.base_dir, self.context.hook_context(case), case_dict(case)),
                    _remaining(deadline))
            await self._call_and_check(case, result, deadline, timeout)
        except asyncio.TimeoutError:     # the Before hook used up the case's time
            result.status, result.error = "timeout", f"timeout after {format_duration(timeout)} (in the before hook)"
        except HookError as exc:
            result.status, result.error, result.error_kind = "error", f"before hook: {exc.message}", "hook"
        except asyncio.CancelledError:
            result.status, result.error, result.ran = "skipped", "interrupted", False
            await self._after(case, result, before_data, grace=AFTER_HOOK_GRACE)
            raise
        result.duration_ms = round((time.monotonic() - started) * 1000)
        await self._after(case, result, before_data, grace=timeout)
        return result

    async def _call_and_check(self, case: Case, result: CaseResult, deadline: float, timeout: float) -> None:
        request = self.build_request(case, deadline)
        call_started = time.monotonic()
        try:
            response = await asyncio.wait_for(self.agent.call(request), _remaining(deadline))
        except asyncio.TimeoutError:
            result.status, result.error = "timeout", f"timeout after {format_duration(timeout)}"
            return
        except AgentCallError as exc:
            result.status, result.error, result.error_kind = "error", f"agent error: {exc.message}", exc.kind
            return
        except Exception as exc:  # a provider bug must cost one case, not the run
            result.status, result.error = "error", f"agent error: {type(exc).__name__}: {exc}"
            result.error_kind = "agent"
            return
        latency_ms = (time.monotonic() - call_started) * 1000
        record_response(result, response)
        ctx = EvalContext(response=response, input=case.input, latency_ms=latency_ms)
        try:
            verdicts = await asyncio.wait_for(evaluate_all(case.assertions, ctx), max(_remaining(deadline), 0.001))
        except asyncio.TimeoutError:
            result.status, result.error = "timeout", f"timeout after {format_duration(timeout)} (in assertions)"
            return
        result.assertions = verdicts
        failed = failure_message(verdicts)
        result.status, result.error = ("failed", failed) if failed else ("passed", None)

    def build_request(self, case: Case, deadline: float | None = None) -> AgentRequest:
        return AgentRequest(agent=self.agent.id, messages=case.messages, options=request_options(case, self.connector),
                            context=self.context.request_context(case), deadline=deadline)

    async def _after(self, case: Case, result: CaseResult, before_data: Any, grace: float) -> None:
        """After always runs, for at most `grace` seconds (the case's timeout; a short grace when interrupted);
        its failure is reported on the case, never swallowed."""
        if not case.after:
            return
        call = self.hooks.call(case.after, case.base_dir, self.context.hook_context(case), case_dict(case),
                               result_dict(result), before_data)
        try:
            await asyncio.wait_for(call, grace)
        except (HookError, asyncio.TimeoutError) as exc:
            message = (f"after hook: {exc.message}" if isinstance(exc, HookError)
                       else f"after hook: timeout after {format_duration(grace)}")
            if result.status in ("passed", "skipped"):
                result.status, result.error, result.error_kind = "error", message, "hook"
            else:
                result.error = f"{result.error}; {message}" if result.error else message


def base_result(case: Case) -> CaseResult:
    return CaseResult(id=case.id, name=case.name, status="error", input=case.input, expected=case.expected,
                      has_expected=case.has_expected, options=case.options or None, file=case.file, line=case.line,
                      tags=list(case.tags), metadata=None)


def request_options(case: Case, connector_override: str | None) -> dict[str, Any]:
    """The request's `options`: history is always skipped (each case is independent); CLI > case connector."""
    options: dict[str, Any] = {key: value for key, value in case.options.items() if key != "skip"}
    options["skip"] = {**(case.options.get("skip") or {}), "history": True}
    connector = connector_override or case.options.get("connector")
    if connector:
        options["connector"] = connector
    return options


def record_response(result: CaseResult, response: AgentResponse) -> None:
    result.output = response.subject()
    result.usage = response.usage or None
    trace = {
        "model": response.model,
        "finish_reason": response.finish_reason,
        "tool_calls": [call.to_dict() for call in response.tool_calls],
        "tools": [tool.to_dict() for tool in response.tools],
        "awaiting_input": response.awaiting_input or None,
    }
    result.trace = {key: value for key, value in trace.items() if value} or None


def case_dict(case: Case) -> dict[str, Any]:
    """What hooks see of a case."""
    return {"id": case.id, "name": case.name, "input": case.input, "metadata": case.metadata,
            "assert": case.raw.get("assert", case.raw.get("assertions")), "tags": case.tags,
            "file": case.file, "line": case.line}


def result_dict(result: CaseResult) -> dict[str, Any]:
    """What After/AfterAll hooks see of a result."""
    return {"id": result.id, "status": result.status, "duration_ms": result.duration_ms, "output": result.output,
            "error": result.error, "assertions": [a.to_dict() for a in result.assertions]}


def _remaining(deadline: float) -> float:
    return max(deadline - time.monotonic(), 0.0)
