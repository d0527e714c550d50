"""Figures computed once over results, which every artifact then shows: a case's verdict over its runs
(`--runs`), stability and pass@k / pass^k, the comparison with a baseline report (`--baseline`), and the run's
exit code. Reporters only read what is computed here."""

from __future__ import annotations

import copy
import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .bounds import stored
from .errors import EXIT_FAILED, EXIT_OK
from .results import CaseResult
from .usage import Usage

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


def case_key(result: Mapping[str, Any]) -> tuple[str, str]:
    """A report result's (file or generator, id): what a case is known by across reports."""
    return (str(result.get("file") or result.get("source") or ""), str(result.get("id")))


def compare(current: Mapping[str, Any], baseline: Mapping[str, Any], *, path: str = "",
            partial: bool = False) -> dict[str, Any]:
    """How this run differs from an earlier one, case by case (keyed by file and id): regressions (passed then,
    not now), fixes, still failing, new and removed cases, and pass-rate and duration changes. `introduced` lists
    the failing cases the baseline did not see fail as they are — new, with another definition under a reused id,
    or skipped then: the change brought them, and `fail-on: regression` fails on them as on regressions. A
    `partial` run (one shard) cannot tell removed cases from other shards' cases: it reports none."""
    before, now = _by_key(baseline), _by_key(current)
    _match_moved(before, now)
    groups: dict[str, list[dict[str, Any]]] = {"regressions": [], "fixes": [], "still_failing": [], "new": [],
                                               "removed": [], "introduced": []}
    changes: list[dict[str, Any]] = []
    for key, result in now.items():
        old = before.get(key)
        if old is None:
            groups["new"].append(_entry(result, None))
            if _passed(result) is False:
                groups["introduced"].append(_entry(result, None))
            continue
        was, is_ = _passed(old), _passed(result)
        if is_ is False and not was and (was is None or _redefined(result, old)):
            groups["introduced"].append(_entry(result, old))
        if was is None or is_ is None:          # skipped then or now: nothing to compare
            continue
        if was and not is_:
            groups["regressions"].append(_entry(result, old))
        elif is_ and not was:
            groups["fixes"].append(_entry(result, old))
        elif not is_:
            groups["still_failing"].append(_entry(result, old))
        change = _change(result, old)
        if change:
            changes.append(change)
    if not partial:
        groups["removed"] = [_entry(old, old) for key, old in before.items() if key not in now]
    summary, base_summary = _mapping(current.get("summary")), _mapping(baseline.get("summary"))
    meta = _mapping(baseline.get("metadata"))
    base_rate = base_summary.get("pass_rate")
    if partial:      # a shard: the baseline's pass rate over the cases this shard ran
        base_rate = _pass_rate([before[key] for key in now if key in before])
    return {
        "baseline": {"path": path, "started_at": meta.get("started_at"), "version": meta.get("version"),
                     **({"partial": True} if partial else {})},
        **{name: items for name, items in groups.items()},
        "counts": {name: len(items) for name, items in groups.items()},
        "pass_rate": _delta(base_rate, summary.get("pass_rate")),
        "duration_ms": _delta(base_summary.get("duration_ms"), summary.get("duration_ms")),
        "changes": changes,
    }


def _by_key(report: Mapping[str, Any]) -> dict[tuple[str, str], Mapping[str, Any]]:
    """A report's results by case key; the first of a duplicate id wins (the second is an invalid entry)."""
    found: dict[tuple[str, str], Mapping[str, Any]] = {}
    for result in report.get("results") or []:
        if isinstance(result, Mapping):
            found.setdefault(case_key(result), result)
    return found


def _match_moved(before: dict[tuple[str, str], Mapping[str, Any]],
                 now: dict[tuple[str, str], Mapping[str, Any]]) -> None:
    """A case whose suite file was renamed or moved is still the same case: an id found once among the cases that
    disappeared and once among those that appeared is matched across (the old entry is keyed by its new place)."""
    gone = [key for key in before if key not in now]
    fresh = [key for key in now if key not in before]
    gone_ids = _unique_ids(gone)
    for key in fresh:
        if key[1] in gone_ids and _unique_ids(fresh).get(key[1]) == key:
            before[key] = {**before.pop(gone_ids[key[1]]), "moved_from": gone_ids[key[1]][0]}


def _unique_ids(keys: list[tuple[str, str]]) -> dict[str, tuple[str, str]]:
    counts: dict[str, int] = {}
    for _, case_id in keys:
        counts[case_id] = counts.get(case_id, 0) + 1
    return {case_id: key for key in keys for case_id in [key[1]] if counts[case_id] == 1}


def _redefined(result: Mapping[str, Any], old: Mapping[str, Any]) -> bool:
    """Whether the case under this key is another case than the baseline's: both reports give its definition
    digest, and they differ (an id reused for another case, or the case rewritten). Reports from before the
    digest cannot tell."""
    now, then = result.get("definition"), old.get("definition")
    return isinstance(now, str) and isinstance(then, str) and now != then


def failures_under_regression(comparison: Mapping[str, Any] | None) -> int | None:
    """How many cases fail a run under `fail-on: regression`: its regressions and the failures it introduced
    (`compare`); None without a comparison."""
    if not isinstance(comparison, Mapping):
        return None
    return sum(len(comparison.get(group) or []) for group in ("regressions", "introduced"))


def _passed(result: Mapping[str, Any]) -> bool | None:
    status = result.get("status")
    return None if status == "skipped" else status == "passed"


def _entry(result: Mapping[str, Any], old: Mapping[str, Any] | None) -> dict[str, Any]:
    entry: dict[str, Any] = {"id": result.get("id"), "file": result.get("file"), "line": result.get("line"),
                             "status": result.get("status")}
    if old is not None and old is not result:
        entry["was"] = old.get("status")
        if old.get("moved_from"):
            entry["moved_from"] = old["moved_from"]
    if result.get("error"):
        entry["error"] = result["error"]
    # A removed case's fields come from the baseline file, whatever it holds: stored capped (README: untrusted input).
    return {key: stored(value) for key, value in entry.items()}


def _change(result: Mapping[str, Any], old: Mapping[str, Any]) -> dict[str, Any] | None:
    """A case's pass-rate change (with runs) or a duration that doubled or halved, else None."""
    change: dict[str, Any] = {}
    rate, old_rate = _rate(result), _rate(old)
    if rate is not None and old_rate is not None and rate != old_rate:
        change["pass_rate"] = _delta(old_rate, rate)
    duration, old_duration = _number(result.get("duration_ms")), _number(old.get("duration_ms"))
    if old_duration >= 100 and duration >= 100 and not 0.5 <= duration / old_duration <= 2:
        change["duration_ms"] = _delta(old_duration, duration)
    if not change:
        return None
    return {"id": result.get("id"), "file": result.get("file"), "line": result.get("line"), **change}


def _number(value: Any) -> float:
    """A count or duration from a report that may have been edited: anything but a finite number is 0."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return 0.0
    return float(value)


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _pass_rate(results: list[Mapping[str, Any]]) -> float | None:
    """passed / (total − skipped), in percent, as the summary computes it."""
    ran = [result for result in results if result.get("status") != "skipped"]
    return round(100.0 * sum(1 for r in ran if r.get("status") == "passed") / len(ran), 2) if ran else None


def _rate(result: Mapping[str, Any]) -> float | None:
    stability = result.get("stability")
    if isinstance(stability, Mapping) and isinstance(stability.get("pass_rate"), (int, float)) \
            and math.isfinite(stability["pass_rate"]):
        return float(stability["pass_rate"])
    passed = _passed(result)
    return None if passed is None else 100.0 if passed else 0.0


def _delta(before: Any, now: Any) -> dict[str, Any]:
    finite = [isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in (before, now)]
    before, now = (v if ok else None for v, ok in zip((before, now), finite, strict=True))
    return {"before": before, "now": now, "delta": round(now - before, 2) if all(finite) else None}


def run_ok(report: Mapping[str, Any]) -> bool:
    """Whether a finished run (a report.json dict) is a green one: every case passed or was skipped, nothing
    interrupted it, no hook failed around it, and it did not run out of budget."""
    summary = report.get("summary") or {}
    budget = summary.get("budget") if isinstance(summary.get("budget"), Mapping) else {}
    return not (summary.get("failed") or summary.get("errors") or summary.get("timeouts")
                or report.get("interrupted") or report.get("error") or budget.get("spent"))


def no_case_ran(report: Mapping[str, Any]) -> bool:
    """Whether every selected case was skipped (or none was selected): such a run has no pass rate, and is not a
    pass either."""
    summary = report.get("summary") or {}
    return int(summary.get("total") or 0) <= int(summary.get("skipped") or 0)


def conclusion(report: Mapping[str, Any]) -> str:
    """The run in one word, as the step output `conclusion` says it: `success` (cases ran and all passed),
    `failure`, or `skipped` (nothing failed because nothing ran)."""
    if not run_ok(report):
        return "failure"
    return "skipped" if no_case_ran(report) else "success"


def report_pass_rate(passed: int, ran: int) -> float | None:
    """report.json's `pass_rate`: passed / (total − skipped) in percent, None when no case ran."""
    return round(100.0 * passed / ran, 2) if ran else None


def pass_rate_text(rate: Any) -> str:
    """The pass rate as every artifact and output prints it: `85.7`, `100.0`; "" when there is none."""
    return _one_place(float(rate)) if isinstance(rate, (int, float)) and not isinstance(rate, bool) else ""


def _one_place(value: float) -> str:
    """A percentage to one place that never reads `100.0` below 100 nor `0.0` above 0: 3,999 of 4,000 is `99.9`,
    so a workflow that gates on `pass-rate == 100.0` does not pass a failing run."""
    text = f"{value:.1f}"
    if text == "100.0" and value < 100:
        return "99.9"
    if text == "0.0" and value > 0:
        return "0.1"
    return text


def exit_code(ok: bool, fail_on: str, regressions: int | None, *, spent: bool = False) -> int:
    """The run's exit code for a finished run: `failure` (default) fails on any case that did not pass;
    `regression` only on `regressions` — `failures_under_regression`: regressions against the baseline and the
    failures the change introduced (on any failure without a baseline) — and on a spent budget, which left cases
    unchecked; `never` does not fail."""
    if fail_on == "never":
        return EXIT_OK
    if fail_on == "regression" and regressions is not None:
        return EXIT_FAILED if regressions or spent else EXIT_OK
    return EXIT_OK if ok and not spent else EXIT_FAILED


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
    return f"{value:.0f}%" if value == int(value) else f"{_one_place(value)}%"
