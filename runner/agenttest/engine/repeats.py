"""`--runs N|auto[:MAX]`: each case's runs, each a unit of work of its own; a case's runs become its one result (its
verdict over them, `analysis.case_verdict`) as soon as the last of them finishes.

With `auto`, a case runs three times, then on while `statistics.stopping_reason` finds its verdict at
`--min-pass-rate` undecided — as many runs at a time as no outcome of fewer could decide it
(`statistics.runs_before_stop`), so that they run side by side and the case makes exactly the runs it would have
made one at a time — up to MAX. Why it stopped goes on its stability row (`stopped`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..analysis import case_verdict
from ..analysis.stability import outside_the_agent, outside_the_replay
from ..cases.model import Case, InvalidCase
from ..result_log import ResultLog
from ..results import CaseResult
from ..run_count import FIRST_RUNS, RunCount, auto_limit
from ..statistics import StopReason, runs_before_stop, stopping_reason

Entry = Case | InvalidCase


@dataclass(frozen=True, slots=True)
class Unit:
    """One run of one entry: the entry's position in the plan, the entry, and the run's number (from 1)."""

    index: int
    entry: Entry
    run: int


class Repeats:
    """The units of a plan — a case's runs one after another, so they run side by side under `--parallel` — and
    the collection of their results back into one result per entry. Invalid and skipped cases run once. Under
    `auto`, a case whose runs leave its verdict open asks for more: `added()` hands them to the scheduler."""

    def __init__(self, entries: list[Entry], runs: RunCount, min_pass_rate: float, *, lean: bool = False,
                 replaying: bool = False) -> None:
        # The plan's own list: in a lean run an entry's place is emptied once its verdict is kept (`keep`).
        self.entries: list[Entry | None] = entries  # type: ignore[assignment]
        self.min_pass_rate = min_pass_rate
        self.apart = outside_the_replay if replaying else outside_the_agent    # runs a verdict does not count
        self.limit = auto_limit(runs)
        first = FIRST_RUNS if self.limit is not None else int(runs)
        self._planned = [first if _repeated(entry) else 1 for entry in entries]     # each entry's runs, by index
        # An entry's runs so far, until its verdict (then dropped: the verdict is what the run keeps of it).
        self._results: dict[int, dict[int, CaseResult]] = {}
        self._started = bytearray(len(entries))       # 1: a run of the entry at that index started
        self.log = ResultLog(len(entries), lean=lean)
        self._added: list[Unit] = []

    def units(self) -> list[Unit]:
        """Every entry's first runs, in plan order: the scheduler's to run (and to let go of as they finish)."""
        return [Unit(index, entry, run) for index, entry in enumerate(self.entries) if entry is not None
                for run in range(1, self._planned[index] + 1)]

    def first_start(self, unit: Unit) -> bool:
        """Whether this is the first run of its entry to start."""
        if self._started[unit.index]:
            return False
        self._started[unit.index] = 1
        return True

    def finished(self, unit: Unit, result: CaseResult) -> CaseResult | None:
        """Record one run's result; the entry's verdict once its last run is in, else None (under `auto`, also
        when its runs asked for more: see `added`)."""
        if self.limit is None and self._planned[unit.index] == 1:
            return result       # a case run once is its own verdict (`case_verdict`), and asks for no more
        runs = self._results.setdefault(unit.index, {})
        runs[unit.run] = result
        planned = self._planned[unit.index]
        if len(runs) < planned:
            return None
        ordered = [runs[number] for number in sorted(runs)]
        reason, more = self._next_runs(unit.entry, ordered)
        if more:
            self._planned[unit.index] = planned + more
            self._added.extend(Unit(unit.index, unit.entry, run) for run in range(planned + 1, planned + more + 1))
            return None
        del self._results[unit.index]
        verdict = case_verdict(ordered, self.min_pass_rate, self.apart)
        if reason is not None and verdict.stability is not None:
            verdict.stability["stopped"] = reason
        return verdict

    def keep(self, unit: Unit, verdict: CaseResult) -> None:
        """Keep the verdict of `unit`'s entry, its reporters told. A lean log lets the entry go: nothing after the
        cases reads it."""
        self.log.put(unit.index, verdict)
        if self.log.lean:
            self.entries[unit.index] = None

    def added(self) -> list[Unit]:
        """The runs asked for since the last call, to be scheduled next."""
        added, self._added = self._added, []
        return added

    def results(self, missing: Callable[[Entry], CaseResult]) -> ResultLog:
        """One result per entry, in plan order (`missing` for an entry none of whose runs reported)."""
        for index in self.log.missing():
            entry = self.entries[index]
            assert entry is not None, "an entry is let go only once its verdict is kept"
            self.log.put(index, missing(entry))
        return self.log

    def _next_runs(self, entry: Entry, runs: Sequence[CaseResult]) -> tuple[StopReason | None, int]:
        """Under `auto`: why the case is done, or how many more runs it needs. (None, 0) otherwise, and for a case
        whose runs were cut short (an interrupt, --fail-fast, a spent budget): it has no verdict to decide.

        The rule sees the runs that count (those that failed outside the agent do not, as in its verdict); those
        that do not still use up the case's MAX."""
        if self.limit is None or not _repeated(entry) or not all(run.ran for run in runs):
            return None, 0
        counted = [run for run in runs if not self.apart(run)]
        passed = sum(1 for run in counted if run.status == "passed")
        if len(runs) >= self.limit:
            return "limit", 0
        if not counted:                 # every run failed outside the agent, alike: an error, and no verdict to find
            return "agreed", 0
        bar, most = self.min_pass_rate / 100, self.limit - (len(runs) - len(counted))
        reason = stopping_reason(passed, len(counted), bar, most=most)
        if reason is not None:
            return reason, 0
        return None, min(runs_before_stop(passed, len(counted), bar, most=most), self.limit - len(runs))


def _repeated(entry: Entry) -> bool:
    return isinstance(entry, Case) and entry.skip is None
