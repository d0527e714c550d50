"""A finished run in a word and a number: whether it is green, its conclusion, its pass rate as every artifact prints
it, and its exit code."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ..errors import EXIT_FAILED, EXIT_OK


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


def report_pass_rate(passed: int, ran: int) -> float | None:
    """report.json's `pass_rate`: passed / (total − skipped) in percent, None when no case ran."""
    return round(100.0 * passed / ran, 2) if ran else None


def pass_rate_text(rate: Any) -> str:
    """The pass rate as every artifact and output prints it: `85.7`, `100.0`; "" when there is none."""
    return one_place(float(rate)) if isinstance(rate, (int, float)) and not isinstance(rate, bool) else ""


def interval_text(interval: Any, places: int = 0) -> str:
    """A `pass_rate_interval` as every artifact prints it, after the rate it belongs to: `95% CI 20–94%`; "" when
    there is none."""
    shown = interval_range(interval, places)
    return f"95% CI {shown}" if shown else ""


def interval_range(interval: Any, places: int = 0) -> str:
    """`[20.76, 93.86]` as `20–94%`: whole percent (or to `places`) rounded outward, so that it never reads surer
    than it is; "" for anything but two numbers."""
    if not isinstance(interval, (list, tuple)) or len(interval) != 2 \
            or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in interval):
        return ""
    scale = 10 ** places
    # to six places first: 89.55 is 8954.999999999998 hundredths in binary, and must not read 89.56
    low, high = (round(min(max(float(v), 0.0), 100.0) * scale, 6) for v in interval)
    return f"{math.floor(low) / scale:.{places}f}–{math.ceil(high) / scale:.{places}f}%"


def one_place(value: float) -> str:
    """A percentage to one place that never reads `100.0` below 100 nor `0.0` above 0: 3,999 of 4,000 is `99.9`,
    so a workflow that gates on `pass-rate == 100.0` does not pass a failing run."""
    text = f"{value:.1f}"
    if text == "100.0" and value < 100:
        return "99.9"
    if text == "0.0" and value > 0:
        return "0.1"
    return text
