"""A case's verdict over its runs (`--runs`), and how stable it was: stability rows and classes, pass@k and pass^k,
the summary's stability figures."""

from __future__ import annotations

import copy
import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..results import CaseResult
from ..usage import Usage
from .outcome import one_place

# Runs that failed for reasons outside the agent (τ²-bench leaves them out of pass^k) are not counted there.
NOT_THE_AGENT = ("infra",)


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


def case_verdict(runs: Sequence[CaseResult], min_pass_rate: float = 100.0) -> CaseResult:
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
    counted = [run for run in ran if run.error_kind not in NOT_THE_AGENT]
    passed = [run for run in counted if run.status == "passed"]
    failing = [run for run in counted if run.status != "passed"]
    complete = len(ran) == len(runs)
    pass_rate = 100.0 * len(passed) / len(counted) if counted else 0.0
    counts = bool(counted) and pass_rate >= min_pass_rate
    shown = (passed or ran)[0] if counts else (failing or ran)[0]
    result = copy.copy(shown)
    result.usage = Usage.total(run.usage for run in runs)
    result.runs = [_run_detail(number, run) for number, run in enumerate(runs, start=1)]
    result.stability = stability_row(result, runs, min_pass_rate)
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
        note = f"{len(passed)} of {len(counted)} runs passed ({_percent(pass_rate)}, below --min-pass-rate " \
               f"{_percent(min_pass_rate)})"
        result.error = f"{note}: {shown.error}" if shown.error else note
    return result


def stability_row(result: CaseResult, runs: Sequence[CaseResult], min_pass_rate: float) -> dict[str, Any]:
    """The case's line of `stability_results` (Yao's fields, plus `flaky`, `counted_as`, `infra_errors`,
    `not_run`, `file`, `line`). Runs that failed outside the agent are counted apart, not as failures."""
    ran = [run for run in runs if run.ran]
    counted = [run for run in ran if run.error_kind not in NOT_THE_AGENT]
    passed = sum(1 for run in counted if run.status == "passed")
    pass_rate = 100.0 * passed / len(counted) if counted else 0.0
    durations = [run.duration_ms for run in ran] or [0]
    return {
        "id": result.id, "file": result.file, "line": result.line,
        "runs": len(ran), "passed": passed, "failed": len(counted) - passed,
        "pass_rate": round(pass_rate, 2), "stability_class": stability_class(pass_rate),
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


def stability_summary(rows: Sequence[Mapping[str, Any]], runs: int) -> dict[str, Any]:
    """The summary's stability fields (with `--runs`), over the cases that ran every run."""
    rows = [row for row in rows if row.get("counted_as") != "skipped"]
    at, hat = pass_at_k(rows, runs)
    return {
        "total_runs": sum(int(row["runs"]) for row in rows),
        "overall_pass_rate": round(statistics.fmean(float(row["pass_rate"]) for row in rows), 2) if rows else 0.0,
        "stable_cases": sum(1 for row in rows if row["stability_class"] == "stable"),
        "unstable_cases": sum(1 for row in rows if row["stability_class"] != "stable"),
        "flaky_cases": sum(1 for row in rows if row.get("flaky")),
        "pass_at_k": at,
        "pass_hat_k": hat,
    }


def _run_detail(number: int, run: CaseResult) -> dict[str, Any]:
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
