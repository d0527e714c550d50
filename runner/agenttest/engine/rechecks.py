"""`--recheck N`: after the cases, each case that passed in the baseline and does not now — when either side ran it
once — runs again, up to N times, and stops at its first pass (docs/decisions.md).

A recheck is a run like any other, through the same runners: the budget stops it, cassettes record and replay it
(it is a run of its own number, after the case's runs), its usage counts, and the helper cache serves it as it
serves any run after the first (never; nor ever the target). What the rechecks found is stored on the case's result
(`recheck`), so that the comparison (`analysis.compare`) stays a function of the two reports: a run, its shards
merged, and a report read later decide alike.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..agents.meter import Meter
from ..analysis import baseline_results, needs_recheck
from ..analysis.stability import run_detail
from ..cases.model import Case, InvalidCase
from ..report.base import Reporters
from ..results import CaseResult
from ..usage import Usage
from .case_runner import CaseInterrupted
from .schedule import Scheduler

# Runs one case once more: the case and the number of the run (its rechecks follow its runs: 2, 3 after one run).
RunOne = Callable[[Case, int], Awaitable[CaseResult]]


@dataclass
class Recheck:
    """One case to recheck: its verdict over its runs, and what its rechecks did so far."""

    case: Case
    result: CaseResult
    after: int                  # the runs the case made: its rechecks are the runs after these
    outcomes: list[CaseResult] = field(default_factory=list)
    stopped: str | None = None  # why the rechecks stopped before a pass or the limit (a spent budget, an interrupt)
    cut: list[Usage] = field(default_factory=list)      # what a recheck cut short by an interrupt had used

    def done(self, limit: int) -> CaseResult:
        """The case's result, with the record of its rechecks (`recheck`) and their usage counted in."""
        passed = any(outcome.status == "passed" for outcome in self.outcomes)
        record: dict[str, Any] = {
            "limit": limit, "runs": len(self.outcomes), "passed": passed,
            "outcomes": [run_detail(self.after + number, outcome) for number, outcome in enumerate(self.outcomes, 1)]}
        if self.stopped and not passed:
            record["stopped"] = self.stopped
        self.result.rechecked(record, Usage.total([*(outcome.usage for outcome in self.outcomes), *self.cut]))
        return self.result


def to_recheck(entries: Sequence[Case | InvalidCase], results: Sequence[CaseResult],
               baseline: Mapping[str, Any]) -> list[Recheck]:
    """The cases of this run (`entries`, with their `results` in the same order) to recheck against `baseline`, a
    report.json dict: those that passed in it and do not now, when either side ran them once."""
    matched = baseline_results(baseline, [result.key for result in results])
    found = []
    for entry, result in zip(entries, results, strict=True):
        old = matched.get(result.key)
        if isinstance(entry, Case) and old is not None and needs_recheck(old, result.to_dict()):
            found.append(Recheck(entry, result, after=len(result.runs or []) or 1))
    return found


class Rechecker:
    """Rechecks cases side by side (`parallel`), each one's rechecks one after another until one passes, `limit`
    are done, or the run stops them (a spent budget, an interrupt: `scheduler`)."""

    def __init__(self, rechecks: list[Recheck], run_one: RunOne, limit: int, *, parallel: int, meter: Meter,
                 reporters: Reporters) -> None:
        self.rechecks = rechecks
        self.limit = limit
        self._run_one = run_one
        self._meter = meter
        self._reporters = reporters
        self.scheduler: Scheduler[Recheck] = Scheduler(
            rechecks, run_one=self._recheck, skipped=self._skipped, parallel=parallel,
            on_finish=lambda result, recheck: reporters.case_rechecked(result))

    async def run(self) -> None:
        """Recheck every case; a budget spent before or during the rechecks stops those not yet started."""
        self._reporters.rechecks_started([recheck.result for recheck in self.rechecks], self.limit)
        told = self._meter.on_spent
        self._meter.on_spent = self.scheduler.stop
        if self._meter.spent:
            self.scheduler.stop(self._meter.spent)
        try:
            await self.scheduler.run()
        finally:
            self._meter.on_spent = told

    async def _recheck(self, recheck: Recheck) -> CaseResult:
        try:
            for attempt in range(1, self.limit + 1):
                if self._meter.spent:
                    recheck.stopped = self._meter.spent
                    break
                outcome = await self._run_one(recheck.case, recheck.after + attempt)
                outcome.bound()
                recheck.outcomes.append(outcome)
                if outcome.status == "passed":
                    break
        except asyncio.CancelledError as exc:
            partial = getattr(exc, "result", None)
            if isinstance(partial, CaseResult):
                recheck.cut.append(partial.usage)
            recheck.stopped = "interrupted"
            raise CaseInterrupted(recheck.done(self.limit)) from None
        return recheck.done(self.limit)

    def _skipped(self, recheck: Recheck, reason: str) -> CaseResult:
        recheck.stopped = reason
        return recheck.done(self.limit)
