"""Standard mode: one request to the target, then every assertion (judges included) on its response."""

from __future__ import annotations

import asyncio

from ..assertions.base import EvalContext, evaluate_all, failure_message, may_wait, undecided
from ..cases.model import Case
from ..results import CaseResult
from ..timeouts import within
from .case_runner import CaseFailure, CaseRunner, CaseWork, response_trace


class StandardRunner(CaseRunner):
    """Runs one standard-mode case against the target."""

    async def execute(self, case: Case, result: CaseResult, work: CaseWork) -> None:
        request = self.request(case, case.messages, work.chat_context(), work)
        response, latency_ms = await self.call_target(request, work)
        result.output = response.subject()
        result.trace = response_trace(response)
        ctx = EvalContext(response=response, input=case.input, latency_ms=latency_ms, helpers=work.helpers,
                          deadline=work.deadline)
        if may_wait(case.assertions):
            try:
                verdicts = await within(evaluate_all(case.assertions, ctx), max(work.remaining(), 0.001))
            except asyncio.TimeoutError:
                raise work.timed_out("in assertions") from None
        else:       # static checks decide at once: no task and timer to guard them (a timeout could not cut them)
            verdicts = await evaluate_all(case.assertions, ctx)
        result.assertions = verdicts
        stuck = undecided(verdicts)
        if stuck is not None:
            raise CaseFailure("error", stuck.message, stuck.error_kind)
        failed = failure_message(verdicts)
        result.status, result.error = ("failed", failed) if failed else ("passed", None)
