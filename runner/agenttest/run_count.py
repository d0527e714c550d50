"""`--runs N|auto[:MAX]`: how many times each case runs, as the option, report.json's `summary.runs_per_case` and
`metadata.options.runs` write it — a whole number, or `auto:MAX` (`auto` alone is `auto:10`).

Pure: the option's validation, the engine and every reader of a report share it.
"""

from __future__ import annotations

from typing import Any

from .statistics import FIRST_RUNS, MOST_RUNS

LARGEST_MAX = 1000      # a bound on MAX: far above what anyone runs a case, and the stopping rule stays cheap

RunCount = int | str    # N, or "auto:MAX"


def parse_runs(value: Any) -> RunCount:
    """The option's value as the run takes it: a whole number of runs of at least 1, or `auto:MAX` with MAX from
    3 to 1000. Text is read too (the command line, the Action's input): `"5"` is 5, `"auto"` is `"auto:10"`.
    ValueError saying what is wrong otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ValueError(f"expected a whole number of runs or auto[:MAX], got {value!r}")
    if isinstance(value, int):
        return _count(value)
    text = value.strip()
    if text.lstrip("+-").isdigit():
        return _count(int(text))
    word, colon, limit = text.partition(":")
    if word.lower() != "auto" or (colon and not limit.strip().isdigit()):
        raise ValueError(f"expected N (a whole number of runs) or auto[:MAX] (e.g. auto:5), got {value!r}")
    most = int(limit) if colon else MOST_RUNS
    if not FIRST_RUNS <= most <= LARGEST_MAX:
        raise ValueError(f"{text}: MAX must be from {FIRST_RUNS} (the runs every case makes first) to "
                         f"{LARGEST_MAX}, got {most}")
    return f"auto:{most}"


def _count(runs: int) -> int:
    if runs < 1:
        raise ValueError(f"must be at least 1, got {runs}")
    return runs


def auto_limit(runs: Any) -> int | None:
    """MAX of `auto:MAX` (a report's `runs_per_case` included); None for a fixed number of runs."""
    if isinstance(runs, str) and runs.startswith("auto:") and runs[5:].isdigit():
        return int(runs[5:])
    return None


def most_runs(runs: Any) -> int:
    """The most runs a case makes: N, or MAX of `auto:MAX`; 1 for anything else (an old or damaged report)."""
    limit = auto_limit(runs)
    if limit is not None:
        return limit
    return runs if isinstance(runs, int) and not isinstance(runs, bool) and runs >= 1 else 1


def repeated(runs: Any) -> bool:
    """Whether cases run more than once, so that the report has stability figures."""
    return auto_limit(runs) is not None or most_runs(runs) > 1

