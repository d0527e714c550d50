"""What running any case shares — standard or dynamic: the Before hook, the case's time, the After hook, calling
the target, counting usage — around the part each mode does itself (`CaseRunner.execute`)."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

from ..agents.base import Agent, AgentRequest, AgentResponse
from ..agents.cache import HelperCache
from ..agents.helpers import HelperCaller
from ..agents.pool import AgentPool
from ..cases.model import Case
from ..durations import format_duration
from ..errors import AgentCallError, HookError, UnsafeReference
from ..results import CaseResult, Status
from ..timeouts import within
from ..usage import Usage
from ..user_errors import collecting
from .context import RequestIdentity
from .hooks import Hooks
from .target import call_agent, target_request

# After hooks of cancelled cases get this long, so Ctrl-C still finishes within seconds.
AFTER_HOOK_GRACE = 2.0


class CaseInterrupted(asyncio.CancelledError):
    """A case cancelled by an interrupt, carrying what it had done (a conversation's turns so far)."""

    def __init__(self, result: CaseResult) -> None:
        super().__init__("interrupted")
        self.result = result


class CaseFailure(Exception):
    """The case ends here, with this status (`failed`, `error`, `timeout`), message and error kind."""

    def __init__(self, status: Status, message: str, kind: str | None = None) -> None:
        super().__init__(message)
        self.status: Status = status
        self.message = message
        self.kind = kind


@dataclass
class RunServices:
    """What every case of a run uses: the agents, who is talking, the hooks, the time limits, the helper cache."""

    pool: AgentPool
    target_id: str          # the run's agent: a case tests its own `target` when it has one
    context: RequestIdentity    # who is talking: every request and hook carries it
    hooks: Hooks
    timeout: float
    connector: str | None = None
    cache: HelperCache | None = None

    @property
    def target(self) -> Agent:
        return self.pool.get(self.target_id)


@dataclass
class CaseWork:
    """One case in progress: its deadline, the usage it counts, and the caller of its helpers."""

    deadline: float
    timeout: float
    run: int
    usage: Usage
    helpers: HelperCaller

    def chat_context(self) -> dict[str, Any]:
        """The case's request context (its helpers'), with a chat id of its own."""
        return RequestIdentity.again(self.helpers.context)

    def remaining(self) -> float:
        return max(self.deadline - time.monotonic(), 0.0)

    def timed_out(self, where: str = "") -> CaseFailure:
        waiting = self.helpers.waiting_for
        detail = ", ".join(part for part in (where, f"waiting for {waiting}" if waiting else "") if part)
        return CaseFailure("timeout", f"timeout after {format_duration(self.timeout)}"
                                      + (f" ({detail})" if detail else ""))


class CaseRunner:
    """Runs one case: Before hook, the mode's own work (`execute`) and the After hook, all but After within the
    case's timeout; counts usage by role on the result."""

    def __init__(self, services: RunServices) -> None:
        self.services = services

    async def run(self, case: Case, run: int = 1) -> CaseResult:
        """The case's result; the tracebacks of the user code (agent, hooks, scripts) that raised on the way are
        kept in its `trace.traceback`."""
        with collecting() as tracebacks:
            result = await self._run(case, run)
        if tracebacks:
            result.trace = {**(result.trace or {}), "traceback": "\n\n".join(dict.fromkeys(tracebacks))}
        return result

    async def _run(self, case: Case, run: int) -> CaseResult:
        started = time.monotonic()
        result = base_result(case)
        if case.skip is not None:
            result.status, result.error = "skipped", case.skip or "skip: true"
            return result
        services = self.services
        timeout = case.timeout if case.timeout is not None else services.timeout
        work = CaseWork(deadline=started + timeout, timeout=timeout, run=run, usage=result.usage,
                        helpers=HelperCaller(agents=services.pool, usage=result.usage,
                                             context=services.context.request_context(case, run),
                                             deadline=started + timeout, case=case.key,
                                             cache=services.cache if run == 1 else None))
        before_data: Any = None
        try:
            if case.before:
                try:
                    before_data = await within(
                        services.hooks.call(case.before, case.base_dir, services.context.hook_context(case),
                                            case_dict(case), agent_dir=case.agent_dir), work.remaining())
                except asyncio.TimeoutError:     # the Before hook used up the case's time
                    raise work.timed_out("in the before hook") from None
            await self.execute(case, result, work)
        except CaseFailure as failure:
            result.status, result.error, result.error_kind = failure.status, failure.message, failure.kind
        except HookError as exc:
            result.status, result.error, result.error_kind = "error", f"before hook: {exc.message}", _kind(exc)
        except asyncio.CancelledError:
            # A conversation keeps the turns it had; a case with nothing to show counts as never run.
            result.status, result.error, result.error_kind = "skipped", "interrupted", None
            result.ran = bool((result.metadata or {}).get("turns"))
            result.duration_ms = round((time.monotonic() - started) * 1000)
            await self._after(case, result, before_data, grace=AFTER_HOOK_GRACE)
            raise CaseInterrupted(result) from None
        result.duration_ms = round((time.monotonic() - started) * 1000)
        await self._after(case, result, before_data, grace=timeout)
        return result

    async def execute(self, case: Case, result: CaseResult, work: CaseWork) -> None:
        """The mode's own work: set the result's status, or raise CaseFailure."""
        raise NotImplementedError

    def request(self, case: Case, messages: list[dict[str, Any]], context: dict[str, Any],
                work: CaseWork) -> AgentRequest:
        """A request to the case's target (`target.target_request`): the run's `--connector` over the case's."""
        return target_request(case.target or self.services.target_id, messages, case.options, context,
                              connector=self.services.connector, deadline=work.deadline, case=case.key)

    async def call_target(self, request: AgentRequest, work: CaseWork, where: str = "") -> tuple[AgentResponse, float]:
        """The target's response and how long it took (ms), its usage counted. Raises CaseFailure: `timeout`, or
        `error` with the kind the agent's failure has (`agent`, `infra`, …); `where` (`at turn 3`) says when."""
        try:
            response, latency_ms = await call_agent(self.services.pool.get(request.agent), request, work.remaining())
        except (AgentCallError, asyncio.TimeoutError) as exc:
            work.usage.add("target", {})     # a call that failed or timed out is still a call made: no tokens
            if isinstance(exc, asyncio.TimeoutError):
                raise work.timed_out(f"{where}, waiting for the agent" if where else "") from None
            raise CaseFailure("error", f"agent error{f' {where}' if where else ''}: {exc.message}", exc.kind) from exc
        work.usage.add("target", response.usage)
        return response, latency_ms

    async def _after(self, case: Case, result: CaseResult, before_data: Any, grace: float) -> None:
        """After always runs, for at most `grace` seconds (the case's timeout; a short grace when interrupted);
        its failure is reported on the case, never swallowed."""
        if not case.after:
            return
        services = self.services
        call = services.hooks.call(case.after, case.base_dir, services.context.hook_context(case), case_dict(case),
                                   result_dict(result), before_data, agent_dir=case.agent_dir)
        try:
            await within(call, grace)
        except (HookError, asyncio.TimeoutError) as exc:
            message = (f"after hook: {exc.message}" if isinstance(exc, HookError)
                       else f"after hook: timeout after {format_duration(grace)}")
            if result.status in ("passed", "skipped"):
                result.status, result.error, result.error_kind = "error", message, _kind(exc)
            else:
                result.error = f"{result.error}; {message}" if result.error else message


def _kind(exc: BaseException) -> str:
    """A hook's failure: `invalid` when the suite names a file it may not read (docs/security.md), else
    `hook`."""
    return "invalid" if isinstance(exc, UnsafeReference) else "hook"


def base_result(case: Case) -> CaseResult:
    return CaseResult(id=case.id, name=case.name, status="error", input=case.input, expected=case.expected,
                      has_expected=case.has_expected, options=case.options or None, file=case.file, line=case.line,
                      tags=list(case.tags), metadata=None, source=case.source, agent_id=case.target,
                      definition=case.definition())


def response_trace(response: AgentResponse) -> dict[str, Any] | None:
    """What the report keeps of a response besides its subject: model, finish reason, tool calls, executions."""
    trace = {
        "model": response.model,
        "finish_reason": response.finish_reason,
        "tool_calls": [call.to_dict() for call in response.tool_calls],
        "tools": [tool.to_dict() for tool in response.tools],
        "awaiting_input": response.awaiting_input or None,
    }
    return {key: value for key, value in trace.items() if value} or None


def case_dict(case: Case) -> dict[str, Any]:
    """What hooks see of a case."""
    return {"id": case.id, "name": case.name, "input": case.input, "metadata": case.metadata,
            "assert": case.raw.get("assert", case.raw.get("assertions")), "tags": list(case.tags),
            "file": case.file, "line": case.line}


def result_dict(result: CaseResult) -> dict[str, Any]:
    """What After/AfterAll hooks see of a result."""
    return {"id": result.id, "status": result.status, "duration_ms": result.duration_ms, "output": result.output,
            "error": result.error, "assertions": [a.to_dict() for a in result.assertions]}
