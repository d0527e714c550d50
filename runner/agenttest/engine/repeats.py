"""`--runs N`: every case N times, each run a unit of work of its own; a case's runs become its one result (its
verdict over them, `analysis.case_verdict`) as soon as the last of them finishes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..analysis import case_verdict
from ..cases.model import Case, InvalidCase
from ..results import CaseResult

Entry = Case | InvalidCase


@dataclass(frozen=True)
class Unit:
    """One run of one entry: the entry's position in the plan, the entry, and the run's number (from 1)."""

    index: int
    entry: Entry
    run: int


class Repeats:
    """The units of a plan — a case's runs one after another, so they run side by side under `--parallel` — and
    the collection of their results back into one result per entry. Invalid and skipped cases run once."""

    def __init__(self, entries: list[Entry], runs: int, min_pass_rate: float) -> None:
        self.entries = entries
        self.min_pass_rate = min_pass_rate
        self.units = [Unit(index, entry, run) for index, entry in enumerate(entries)
                      for run in range(1, (runs if _repeated(entry) else 1) + 1)]
        self._expected = {index: (runs if _repeated(entry) else 1) for index, entry in enumerate(entries)}
        self._results: dict[int, dict[int, CaseResult]] = {index: {} for index in range(len(entries))}
        self._started: set[int] = set()
        self._verdicts: dict[int, CaseResult] = {}

    def first_start(self, unit: Unit) -> bool:
        """Whether this is the first run of its entry to start."""
        if unit.index in self._started:
            return False
        self._started.add(unit.index)
        return True

    def finished(self, unit: Unit, result: CaseResult) -> CaseResult | None:
        """Record one run's result; the entry's verdict once its last run is in, else None."""
        runs = self._results[unit.index]
        runs[unit.run] = result
        if len(runs) < self._expected[unit.index]:
            return None
        verdict = case_verdict([runs[number] for number in sorted(runs)], self.min_pass_rate)
        self._verdicts[unit.index] = verdict
        return verdict

    def results(self, missing: Callable[[Entry], CaseResult]) -> list[CaseResult]:
        """One result per entry, in plan order (`missing` for an entry none of whose runs reported)."""
        return [self._verdicts.get(index) or missing(entry) for index, entry in enumerate(self.entries)]


def _repeated(entry: Entry) -> bool:
    return isinstance(entry, Case) and entry.skip is None
