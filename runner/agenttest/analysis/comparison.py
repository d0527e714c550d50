"""The comparison of a run with a baseline report (`--baseline`), case by case: regressions, fixes, the failures a
change introduced, new and removed cases, pass-rate and duration changes."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import PurePosixPath
from typing import Any

from ..bounds import stored
from .noise import alpha_of, decide
from .outcome import report_pass_rate


def case_key(result: Mapping[str, Any]) -> tuple[str, str]:
    """A report result's (file or generator, id): what a case is known by across reports."""
    return (str(result.get("file") or result.get("source") or ""), str(result.get("id")))


def compare(current: Mapping[str, Any], baseline: Mapping[str, Any], *, path: str = "",
            partial: bool = False) -> dict[str, Any]:
    """How this run differs from an earlier one, case by case (keyed by file and id): regressions (passed then,
    not now, by more than chance: `noise.decide`), noise (passed then, not now, as chance explains), fixes, still
    failing, new and removed cases, and pass-rate and duration changes. Each regression and noise entry carries its
    `evidence`. `introduced` lists the failing cases the baseline did not see fail as they are — new, with another
    definition under a reused id, or skipped then: the change brought them, and `fail-on: regression` fails on them
    as on regressions. A `partial` run (one shard), or one that selected part of its suite (`--run`), cannot tell
    removed cases from the cases it left to others: it reports none, and the baseline's pass rate over its own."""
    partial = partial or bool(_mapping(_mapping(current.get("metadata")).get("options")).get("run"))
    before, now = _by_key(baseline), _by_key(current)
    _match_moved(before, now, partial)
    groups: dict[str, list[dict[str, Any]]] = {"regressions": [], "noise": [], "fixes": [], "still_failing": [],
                                               "new": [], "removed": [], "introduced": []}
    compared = {key: (before[key], result) for key, result in now.items()
                if key in before and _passed(before[key]) is not None and _passed(result) is not None}
    decisions = decide(compared, alpha_of(current))
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
        if key not in compared:          # skipped then or now: nothing to compare
            continue
        if key in decisions:
            decision = decisions[key]
            groups["regressions" if decision.regression else "noise"].append(
                {**_entry(result, old), **decision.fields()})
        elif is_ and not was:
            groups["fixes"].append(_entry(result, old))
        elif not is_:
            groups["still_failing"].append(_entry(result, old))
        change = _change(result, old)
        if change:
            changes.append(change)
    groups["introduced"] += [_entry(result, None) for result in _new_duplicates(current, baseline)]
    if not partial:
        groups["removed"] = [_entry(old, old) for key, old in before.items() if key not in now]
    return _comparison(current, baseline, groups, changes, path=path, partial=partial,
                       base_rate=_pass_rate([before[key] for key in now if key in before]) if partial else None)


def _comparison(current: Mapping[str, Any], baseline: Mapping[str, Any], groups: dict[str, list[dict[str, Any]]],
                changes: list[dict[str, Any]], *, path: str, partial: bool, base_rate: float | None) -> dict[str, Any]:
    """The comparison as report.json writes it; a shard's (`partial`) baseline pass rate is over its own cases."""
    summary, base_summary = _mapping(current.get("summary")), _mapping(baseline.get("summary"))
    meta = _mapping(baseline.get("metadata"))
    return {
        "baseline": {"path": path, "started_at": meta.get("started_at"), "version": meta.get("version"),
                     **({"partial": True} if partial else {})},
        **groups,
        "counts": {name: len(items) for name, items in groups.items()},
        "pass_rate": _delta(base_rate if partial else base_summary.get("pass_rate"), summary.get("pass_rate")),
        "duration_ms": _delta(base_summary.get("duration_ms"), summary.get("duration_ms")),
        "changes": changes,
    }


def baseline_results(baseline: Mapping[str, Any], keys: list[tuple[str, str]]) -> dict[tuple[str, str],
                                                                                    Mapping[str, Any]]:
    """The baseline's results by the keys of this run's cases as `compare` matches them (a case whose suite file
    moved under its new key): what the engine needs to know which cases to recheck."""
    before = _by_key(baseline)
    _match_moved(before, {key: {} for key in keys})
    return before


def _by_key(report: Mapping[str, Any]) -> dict[tuple[str, str], Mapping[str, Any]]:
    """A report's results by case key; the first of a duplicate id wins (the second is an invalid entry)."""
    found: dict[tuple[str, str], Mapping[str, Any]] = {}
    for result in report.get("results") or []:
        if isinstance(result, Mapping):
            found.setdefault(case_key(result), result)
    return found


def _new_duplicates(current: Mapping[str, Any], baseline: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The failing results that share a key with an earlier result of this run (a duplicate id: an invalid entry)
    beyond the duplicates the baseline had under that key: the change wrote them, so they are `introduced` — a
    second case under an id that passes must not go unnoticed under `fail-on: regression`."""
    def duplicates(report: Mapping[str, Any]) -> dict[tuple[str, str], list[Mapping[str, Any]]]:
        seen: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
        for result in report.get("results") or []:
            if isinstance(result, Mapping):
                seen.setdefault(case_key(result), []).append(result)
        return {key: results[1:] for key, results in seen.items() if len(results) > 1}

    before = duplicates(baseline)
    return [result for key, extra in duplicates(current).items() for result in extra[len(before.get(key, [])):]
            if _passed(result) is False]


def _match_moved(before: dict[tuple[str, str], Mapping[str, Any]],
                 now: dict[tuple[str, str], Mapping[str, Any]], partial: bool = False) -> None:
    """A case whose suite file was renamed or moved is still the same case: an id found once among the cases that
    disappeared and once among those that appeared is matched across (the old entry is keyed by its new place);
    then, in a whole run, among the rest, an id and its file's name found once each (suites that moved together,
    each numbering its cases T001…). A part of a run (a shard, `--run`) does not: what it did not run is not gone."""
    for mark in (_case_id,) if partial else (_case_id, _file_name_and_id):
        gone = _unique([key for key in before if key not in now], mark)
        for found, key in _unique([key for key in now if key not in before], mark).items():
            old = gone.get(found)
            if old is not None:
                before[key] = {**before.pop(old), "moved_from": old[0]}


def _case_id(key: tuple[str, str]) -> Any:
    return key[1]


def _file_name_and_id(key: tuple[str, str]) -> Any:
    return PurePosixPath(key[0]).name, key[1]


def _unique(keys: list[tuple[str, str]], mark: Callable[[tuple[str, str]], Any]) -> dict[Any, tuple[str, str]]:
    """The keys by their `mark`, those whose mark no other key shares."""
    counts = Counter(mark(key) for key in keys)
    return {found: key for key in keys if counts[found := mark(key)] == 1}


def _redefined(result: Mapping[str, Any], old: Mapping[str, Any]) -> bool:
    """Whether the case under this key is another case than the baseline's: both reports give its definition
    digest, and they differ (an id reused for another case, or the case rewritten). Reports from before the
    digest cannot tell."""
    now, then = result.get("definition"), old.get("definition")
    return isinstance(now, str) and isinstance(then, str) and now != then


def without_a_baseline(fetched: bool) -> str:
    """What `--fail-on regression` says when the run has no comparison: `fetched`, whether `--baseline auto` looked
    for one and found none."""
    why = "no baseline was found" if fetched else "--fail-on regression needs --baseline"
    return f"⚠ {why}: failing on any failure instead"


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
    # A removed case's fields come from the baseline file, whatever it holds: stored capped (docs/security.md).
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
    return report_pass_rate(sum(1 for r in ran if r.get("status") == "passed"), len(ran))


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
