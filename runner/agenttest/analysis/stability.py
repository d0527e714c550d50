"""A case's verdict over its runs (`--runs`), and how stable it was: stability rows and classes, the intervals of
the pass rates, pass@k and pass^k, the summary's stability figures."""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ..results import CaseResult
from ..run_count import auto_limit, most_runs
from ..statistics import Proportion, clustered_interval, wilson_interval
from ..usage import Usage
from .outcome import interval_text, one_place

# Runs that failed for reasons outside the agent (τ²-bench leaves them out of pass^k) are not counted there.
NOT_THE_AGENT = ("infra",)


def outside_the_agent(run: CaseResult) -> bool:
    """Whether a run failed outside the agent (a connection refused, a DNS failure): counted apart, not as a
    failure."""
    return run.error_kind in NOT_THE_AGENT


def outside_the_replay(run: CaseResult) -> bool:
    """`outside_the_agent` in a replay: a recorded infra error still is; a replay's own miss (or a cassette it cannot
    read, an agent changed since) is not — the recording does not hold the run, which no chance explains — and
    counts against the case."""
    error = run.error or ""         # `replay: …` (agents/replay.py), as a case reports it: `agent error: replay: …`
    return outside_the_agent(run) and not (error.startswith("replay: ") or ": replay: " in error[:40])


def stability_class(pass_rate: float) -> str:
    """`stable` (100 %), `mostly_stable` (≥ 80), `unstable` (≥ 50), `highly_unstable` (Yao's classes)."""
    if pass_rate >= 100:
        return "stable"
    if pass_rate >= 80:
        return "mostly_stable"
    if pass_rate >= 50:
        return "unstable"
    return "highly_unstable"


def stability_label(passed: int, counted: int) -> str:
    """The stability class as a reader should take it: Yao calls a case that failed every one of its runs
    `highly_unstable`, but it is the steadiest failure there is: `stably failing` (with two runs or more)."""
    if passed == 0 and counted >= 2:
        return "stably failing"
    return stability_class(100.0 * passed / counted if counted else 0.0).replace("_", " ")


def case_verdict(runs: Sequence[CaseResult], min_pass_rate: float = 100.0,
                 apart: Callable[[CaseResult], bool] = outside_the_agent) -> CaseResult:
    """One case's result over its runs. A single run is its own result. Over several, the case passes when at
    least `min_pass_rate` percent of its counted runs pass — runs that failed outside the agent (infra) are not
    counted, as in pass^k; the result shown is a run that explains the verdict (the first failing one for a failed
    case, the first passing one otherwise), with every run listed and the stability figures. A case whose runs
    were cut short (an interrupt, --fail-fast, a spent budget) has no verdict: it is `skipped`, saying so."""
    if len(runs) == 1:
        return runs[0]
    ran = [run for run in runs if run.ran]
    if not ran:                      # the run stopped before this case: skipped, as a single run would be
        return runs[0]
    counted = [run for run in ran if not apart(run)]
    passed = [run for run in counted if run.status == "passed"]
    failing = [run for run in counted if run.status != "passed"]
    complete = len(ran) == len(runs)
    pass_rate = 100.0 * len(passed) / len(counted) if counted else 0.0
    counts = bool(counted) and pass_rate >= min_pass_rate
    shown = (passed or ran)[0] if counts else (failing or ran)[0]
    import statistics  # the standard one (with fractions and decimal): loaded by a case of several runs

    result = copy.copy(shown)
    result.usage = Usage.total(run.usage for run in runs)
    result.runs = [run_detail(number, run) for number, run in enumerate(runs, start=1)]
    result.stability = stability_row(result, runs, min_pass_rate, apart)
    result.duration_ms = round(statistics.fmean(run.duration_ms for run in ran))
    if not complete:
        reason = next(run.error for run in runs if not run.ran) or "not run"
        result.status, result.error_kind = "skipped", None
        result.error = f"only {len(ran)} of {len(runs)} runs ran ({reason}): no verdict"
        result.stability["counted_as"] = "skipped"
    elif not counted:                # every run failed outside the agent: an error of that kind, not a verdict
        result.error = f"every run failed outside the agent: {shown.error}"
    elif counts:
        result.status, result.error, result.error_kind = "passed", None, None
    else:
        note = f"{len(passed)} of {len(counted)} runs passed ({_percent(pass_rate)}, " \
               f"{interval_text(result.stability['pass_rate_interval'])}, below --min-pass-rate " \
               f"{_percent(min_pass_rate)})"
        result.error = f"{note}: {shown.error}" if shown.error else note
    return result


def stability_row(result: CaseResult, runs: Sequence[CaseResult], min_pass_rate: float,
                  apart: Callable[[CaseResult], bool] = outside_the_agent) -> dict[str, Any]:
    """The case's line of `stability_results` (Yao's fields, plus `flaky`, `counted_as`, `infra_errors`,
    `not_run`, `file`, `line`). Runs that failed outside the agent (`apart` says which) are counted apart, not as
    failures."""
    import statistics

    ran = [run for run in runs if run.ran]
    counted = [run for run in ran if not apart(run)]
    passed = sum(1 for run in counted if run.status == "passed")
    pass_rate = 100.0 * passed / len(counted) if counted else 0.0
    durations = [run.duration_ms for run in ran] or [0]
    return {
        "id": result.id, "file": result.file, "line": result.line,
        "runs": len(ran), "passed": passed, "failed": len(counted) - passed,
        "pass_rate": round(pass_rate, 2), "pass_rate_interval": percent_interval(wilson_interval(passed, len(counted))),
        "stability_class": stability_class(pass_rate),
        "stability_label": stability_label(passed, len(counted)),
        "flaky": 0 < passed < len(counted),
        "counted_as": "passed" if counted and pass_rate >= min_pass_rate else "failed",
        "infra_errors": len(ran) - len(counted),
        "avg_duration_ms": round(statistics.fmean(durations), 1), "min_duration_ms": min(durations),
        "max_duration_ms": max(durations), "std_deviation_ms": round(statistics.pstdev(durations), 1),
        "not_run": len(runs) - len(ran),
    }


def pass_at_k(rows: Iterable[Mapping[str, Any]], runs: int) -> tuple[dict[str, float], dict[str, float]]:
    """pass@k and pass^k for k = 1…runs, averaged over cases (τ-bench): with c of n runs passing, pass@k is
    1 − C(n−c, k)/C(n, k) (some of k runs passes) and pass^k is C(c, k)/C(n, k) (all k runs pass). Runs that
    failed outside the agent (infra) are left out of n; a case with fewer than k counted runs is left out at k."""
    import statistics

    at: dict[str, float] = {}
    hat: dict[str, float] = {}
    counted = [(int(row["runs"]) - int(row.get("infra_errors", 0)), int(row["passed"])) for row in rows
               if row.get("counted_as") != "skipped"]
    for k in range(1, runs + 1):
        usable = [(n, c) for n, c in counted if n >= k]
        if not usable:
            continue
        at[str(k)] = round(statistics.fmean(1 - math.comb(n - c, k) / math.comb(n, k) for n, c in usable), 4)
        hat[str(k)] = round(statistics.fmean(math.comb(c, k) / math.comb(n, k) for n, c in usable), 4)
    return at, hat


def stability_summary(rows: Sequence[Mapping[str, Any]], runs: int | str) -> dict[str, Any]:
    """The summary's stability fields (with `--runs N` or `auto:MAX`), over the cases that ran every run: the
    overall pass rate (the mean of the cases' pass rates) with its interval, cases as clusters of their runs
    (`statistics.clustered_interval`); under `auto`, how many cases stopped for each reason."""
    import statistics

    rows = [row for row in rows if row.get("counted_as") != "skipped"]
    at, hat = pass_at_k(rows, most_runs(runs))
    summary: dict[str, Any] = {
        "total_runs": sum(int(row["runs"]) for row in rows),
        "overall_pass_rate": round(statistics.fmean(float(row["pass_rate"]) for row in rows), 2) if rows else 0.0,
        "overall_pass_rate_interval": percent_interval(clustered_interval([_counted(row) for row in rows])),
        "stable_cases": sum(1 for row in rows if row["stability_class"] == "stable"),
        "unstable_cases": sum(1 for row in rows if row["stability_class"] != "stable"),
        "flaky_cases": sum(1 for row in rows if row.get("flaky")),
        "pass_at_k": at,
        "pass_hat_k": hat,
    }
    if auto_limit(runs) is not None:
        reasons = [row.get("stopped") for row in rows]
        summary["stopped"] = {reason: reasons.count(reason) for reason in STOP_REASONS if reason in reasons}
    return summary


STOP_REASONS = ("agreed", "interval", "curtailed", "limit")      # statistics.StopReason, in the order shown


def case_interval(row: Mapping[str, Any]) -> list[float]:
    """A stability row's `pass_rate_interval`, from its counts (`merge` recomputes it so)."""
    counted = _counted(row)
    return percent_interval(wilson_interval(counted.successes, counted.trials))


def percent_interval(interval: tuple[float, float]) -> list[float]:
    """An interval of a rate as report.json writes it, in percent like the pass rate, to two places rounded
    outward — a bound is never nearer the pass rate than the interval it comes from: (0.20766, 0.93851) is
    [20.76, 93.86]."""
    low, high = interval
    return [math.floor(low * 10_000) / 100, math.ceil(high * 10_000) / 100]


def _counted(row: Mapping[str, Any]) -> Proportion:
    """A row's passes of its runs that count (those that failed outside the agent left out)."""
    counted = max(0, int(row["runs"]) - int(row.get("infra_errors", 0)))
    return Proportion(min(int(row["passed"]), counted), counted)


def run_detail(number: int, run: CaseResult) -> dict[str, Any]:
    """One run of a case as the report keeps it: its number, status, duration, error (and kind), whether it ran."""
    detail: dict[str, Any] = {"run": number, "status": run.status, "duration_ms": run.duration_ms}
    if run.error:
        detail["error"] = run.error
    if run.error_kind:
        detail["error_kind"] = run.error_kind
    if not run.ran:
        detail["ran"] = False
    return detail


def _percent(value: float) -> str:
    return f"{value:.0f}%" if value == int(value) else f"{one_place(value)}%"
