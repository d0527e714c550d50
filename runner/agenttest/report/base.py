"""What reporters receive — the run's start, each case, the finished report — and how the engine is handed them:
`Reporting` (the reporters behind one `Reporters`, the files they write, the baseline). The engine imports this
module of the report package and no other.

Reporters listen; they do not steer. Adding an artifact means adding a Reporter, never touching the engine.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol, TextIO

from ..analysis import compare, report_pass_rate, stability_summary
from ..cases.model import Case, InvalidCase
from ..github.log import write_line
from ..result_log import ResultLog
from ..results import CaseResult, Summary
from ..run_count import repeated
from ..usage import Usage


@dataclass
class RunInfo:
    """Known when the run starts, before any case is called."""

    agent_id: str
    connector: str
    inputs: list[str]
    total: int                                  # selected cases, skipped included
    started_at: str                             # RFC 3339 with offset
    options: dict[str, Any] = field(default_factory=dict)
    environment: dict[str, Any] = field(default_factory=dict)
    agent_path: str | None = None
    warnings: list[str] = field(default_factory=list)      # things in the suites worth fixing; the cases are valid
    replay: dict[str, Any] | None = None        # --replay: the cassettes, and whether the change changed them


@dataclass
class Report:
    """The finished run. `results` are in input order."""

    info: RunInfo
    results: list[CaseResult] | ResultLog
    summary: Summary
    completed_at: str
    interrupted: bool = False
    error: str | None = None
    version: str = ""
    usage: Usage = field(default_factory=Usage)     # calls and tokens by role, generators included
    runs: int | str = 1                             # --runs: runs per case, or `auto:MAX`
    shard: str | None = None                        # --shard K/N
    suite: dict[str, Any] | None = None             # what was selected before sharding: count and digest
    baseline: dict[str, Any] | None = None          # --baseline: the earlier report.json
    baseline_path: str | None = None
    baseline_source: dict[str, Any] | None = None   # --baseline auto: the run it came from, or why there is none
    spending: dict[str, Any] | None = None          # cost by role (when prices are known) and the budget
    traceback: str | None = None                    # of a BeforeAll/AfterAll hook that raised: the user's frames
    record: dict[str, Any] | None = None            # --record: the directory and the cassette files in it

    @cached_property
    def data(self) -> dict[str, Any]:
        """`to_dict()` built once: every reporter reads the same report.json dict."""
        return self.to_dict()

    def to_dict(self) -> dict[str, Any]:
        """Yao's report shape (summary, environment, results, metadata) plus our additions."""
        summary: dict[str, Any] = {
            "total": self.summary.total,
            "passed": self.summary.passed,
            "failed": self.summary.failed,
            "skipped": self.summary.skipped,
            "errors": self.summary.errors,
            "timeouts": self.summary.timeouts,
            "duration_ms": self.summary.duration_ms,
            "agent_id": self.info.agent_id,
        }
        if self.info.agent_path:
            summary["agent_path"] = self.info.agent_path
        summary["connector"] = self.info.connector
        summary["runs_per_case"] = self.runs
        rows, dicts = self._results()
        if repeated(self.runs):
            summary.update(stability_summary(rows, self.runs))
        summary["pass_rate"] = report_pass_rate(self.summary.passed, self.summary.total - self.summary.skipped)
        if self.usage.roles:
            summary["usage"] = self.usage.to_dict()
        summary.update(self.spending or {})
        out: dict[str, Any] = {
            "summary": summary,
            "environment": self.info.environment,
            "results": dicts,
            "metadata": {
                "started_at": self.info.started_at,
                "completed_at": self.completed_at,
                "version": self.version,
                "input_file": ", ".join(self.info.inputs),
                "output_file": self.info.options.get("output") or "",
                "options": self.info.options,
            },
            "interrupted": self.interrupted,
        }
        if self.suite is not None:
            out["metadata"]["suite"] = self.suite
        if self.baseline_source is not None:
            out["metadata"]["baseline"] = self.baseline_source
        if self.shard:
            out["metadata"]["shard"] = self.shard
        if self.record is not None:
            out["metadata"]["record"] = self.record
        if repeated(self.runs):
            out["stability_results"] = rows
        if self.baseline is not None:   # a shard (or a --run) sees only its cases: which were removed, `merge` says
            out["comparison"] = compare(out, self.baseline, path=self.baseline_path or "", partial=bool(self.shard))
        if self.error:
            out["error"] = self.error
        if self.traceback:
            out["trace"] = {"traceback": self.traceback}
        if self.info.warnings:
            out["warnings"] = self.info.warnings
        if self.info.replay is not None:
            out["replay"] = self.info.replay
        return out

    def _results(self) -> tuple[list[dict[str, Any]], Sequence[dict[str, Any]]]:
        """The stability rows (--runs) and the results as report.json holds them: a run's read as they are built."""
        results = self.results
        if isinstance(results, ResultLog):
            return results.stability_rows(), results.dicts()
        return [r.stability for r in results if r.stability is not None], [r.to_dict() for r in results]


class ReportLike(Protocol):
    """What the file reporters read: the report.json dict (a finished run's, or shards' merged by `merge`)."""

    @property
    def data(self) -> dict[str, Any]: ...


@dataclass
class MergedReport:
    """A report.json dict that did not come from a run of this process (`agenttest merge`)."""

    data: dict[str, Any]


class Reporter:
    """Base reporter: override what you need. Called from the engine's event loop thread, in order."""

    def problems(self) -> list[str]:
        """What this reporter could not do (an artifact it could not write), said on stderr as it happened."""
        return self.__dict__.setdefault("_problems", [])

    def problem(self, message: str, stream: TextIO | None = None) -> None:
        """Say on stderr (or `stream`) that something could not be written, and keep it for the exit code."""
        self.problems().append(message)
        write_line(stream or sys.stderr, f"✗ {message}")

    def run_started(self, info: RunInfo) -> None:
        """The run is about to call its first case."""

    def case_started(self, case: Case | InvalidCase) -> None:
        """A case was scheduled and is about to run (an invalid entry too: it becomes an `error` result)."""

    def case_finished(self, result: CaseResult) -> None:
        """A case finished (any status). Cases finish in completion order, not input order. What a reporter
        writes here may wait in its buffer for `flush`."""

    def flush(self) -> None:
        """What `case_started` and `case_finished` wrote goes out to its file or stream now. The engine calls it
        once it has told the reporters of the cases that finished together, before its loop waits again (and at
        least every 50 ms while cases finish without it waiting: a replay, an agent that never waits), so even a
        killed run keeps what finished — one write and flush a turn rather than one a case (issue #27)."""

    def rechecks_started(self, results: list[CaseResult], limit: int) -> None:
        """After the cases: these, which passed in the baseline and do not now, run again up to `limit` times
        (`--recheck`)."""

    def case_rechecked(self, result: CaseResult) -> None:
        """A case's rechecks are over: `result.recheck` says how they went."""

    def run_finished(self, report: Report) -> None:
        """The run ended (completed, failed fast, or interrupted). Write final artifacts here."""


class Reporters:
    """The run's reporters as one listener: each event reaches every reporter, in order. One that breaks (our bug,
    or a full disk) is said on stderr, once, and the others still write their artifacts."""

    def __init__(self, reporters: Iterable[Reporter] = ()) -> None:
        self.reporters = list(reporters)
        self.started = False        # whether the run started (its artifacts are this run's from then on)
        # The reporters each event of every case reaches: those that listen to it (most let it pass; one that is
        # no Reporter and has no such method is not told either).
        self._listening = {event: [reporter for reporter in self.reporters
                                   if getattr(type(reporter), event, None) not in (None, getattr(Reporter, event))]
                           for event in ("case_started", "case_finished", "flush")}

    def run_started(self, info: RunInfo) -> None:
        self.started = True
        self._tell("run_started", lambda reporter: reporter.run_started(info))

    def case_started(self, case: Case | InvalidCase) -> None:
        self._tell("case_started", lambda reporter: reporter.case_started(case), self._listening["case_started"])

    def case_finished(self, result: CaseResult) -> None:
        self._tell("case_finished", lambda reporter: reporter.case_finished(result), self._listening["case_finished"])

    def rechecks_started(self, results: list[CaseResult], limit: int) -> None:
        self._tell("rechecks_started", lambda reporter: reporter.rechecks_started(results, limit))

    def case_rechecked(self, result: CaseResult) -> None:
        self._tell("case_rechecked", lambda reporter: reporter.case_rechecked(result))

    def flush(self) -> None:
        self._tell("flush", lambda reporter: reporter.flush(), self._listening["flush"])

    def run_finished(self, report: Report) -> None:
        self._tell("run_finished", lambda reporter: reporter.run_finished(report))

    def failed(self) -> bool:
        """Whether a reporter could not do its part (an artifact it could not write)."""
        return any(reporter.problems() for reporter in self.reporters)

    def _tell(self, event: str, call: Callable[[Reporter], None], reporters: list[Reporter] | None = None) -> None:
        for reporter in self.reporters if reporters is None else reporters:
            try:
                call(reporter)
            except Exception as exc:
                if not reporter.problems():       # once per reporter: the same failure would repeat for every case
                    reporter.problem(f"{type(reporter).__name__} failed on {event}: {type(exc).__name__}: {exc}")
                else:
                    reporter.problems().append(f"{event}: {type(exc).__name__}: {exc}")


@dataclass
class Reporting:
    """What the caller of a run hands the engine for its report — the engine builds no reporter and reads no file
    of its own: who listens, the files they will write (each with the option that named it, `--junit out.xml`:
    checked writable before any case runs), and the earlier report.json to compare with (`--baseline`)."""

    reporters: Reporters = field(default_factory=Reporters)
    files: list[tuple[Path, str]] = field(default_factory=list)
    baseline: dict[str, Any] | None = None
    baseline_path: str | None = None        # how the comparison names the baseline (default: `--baseline`'s value)
    # Where a baseline that is fetched (`--baseline auto`) came from, or why there is none: report.json's
    # `metadata.baseline`.
    baseline_source: dict[str, Any] | None = None
    # Called once the run is prepared and checked, before any case runs: finds the baseline and sets the three
    # fields above (the engine knows nothing of where a baseline comes from).
    find_baseline: Callable[[Reporting], Awaitable[None]] | None = None


def now() -> str:
    """The current time as reports write it: RFC 3339 with the local offset, as `datetime.now(zone).isoformat()`
    writes it (microseconds left out when 0). The text up to the second and the offset are worked out once a second
    (a run may cross a change of summer time, always at a whole second), the zone of each offset once: events.jsonl
    stamps every case."""
    global _SECOND
    second, micro = divmod(time.time_ns() // 1000, 1_000_000)   # as datetime.now rounds: down
    known, head, offset_text = _SECOND      # one tuple, read at once: a reporter's thread sees one second's parts
    if known != second:
        offset = time.localtime(second).tm_gmtoff
        zone = _ZONES.get(offset)
        if zone is None:
            zone = _ZONES[offset] = timezone(timedelta(seconds=offset))
        text = datetime.fromtimestamp(second, zone).isoformat()     # `2026-12-03T09:15:36+00:00`
        head, offset_text = text[:19], text[19:]
        _SECOND = (second, head, offset_text)
    return f"{head}.{micro:06d}{offset_text}" if micro else f"{head}{offset_text}"


_SECOND: tuple[int | None, str, str] = (None, "", "")     # the second `now` last wrote: its number, text, offset
_ZONES: dict[int, timezone] = {}
