"""`agenttest merge`: the report.json files of a run's shards (`--shard K/N`) joined into one report, with the same
counts, stability figures and comparison a single unsharded run would have given."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..analysis import compare, report_pass_rate, stability_summary
from ..analysis.stability import case_interval
from ..bounds import MAX_STORED_CHARS, json_safe, stored
from ..errors import UsageError
from ..files import MAX_NAMED_FILE_BYTES, read_regular_file
from ..options import shard_of
from ..results import Summary
from ..run_count import auto_limit, repeated
from ..usage import Usage
from ..validation import first_error
from .report_file import ReportFile


def read_report(path: Path, name: str | None = None) -> dict[str, Any]:
    """A report.json (a shard's, or a baseline), every field that merging and comparing read checked
    (`report_file.ReportFile`): UsageError naming the file (as `name`) and the first field that is wrong."""
    shown = name or str(path)
    try:
        data = json.loads(read_regular_file(path, MAX_NAMED_FILE_BYTES, follow_symlinks=True), parse_constant=_not_json)
    except FileNotFoundError:
        raise UsageError(f"{shown}: no such file") from None
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise UsageError(f"{shown}: not a report.json ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("results"), list) \
            or not isinstance(data.get("summary"), dict):
        raise UsageError(f"{shown}: not a report.json (no 'summary' and 'results')")
    try:
        ReportFile.model_validate(data)
    except ValidationError as exc:
        raise UsageError(f"{shown}: {first_error(exc, ReportFile)}") from None
    except RecursionError:
        raise UsageError(f"{shown}: nested too deeply to be a report.json") from None
    return data


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _merge_record(metadata: dict[str, Any], stamps: list[Mapping[str, Any]]) -> None:
    """`metadata.record` of the whole run: every shard's cassette files (each shard recorded its own cases), when
    they all recorded into the same directory; none otherwise."""
    records: list[Mapping[str, Any]] = [record for stamp in stamps
                                        if isinstance(record := stamp.get("record"), Mapping)]
    metadata.pop("record", None)
    directories = {str(record.get("directory")) for record in records}
    if len(records) == len(stamps) and len(directories) == 1:
        files = [name for record in records for name in record.get("files") or []]
        metadata["record"] = {"directory": directories.pop(), "files": sorted(set(files))}


def merge_reports(reports: Sequence[tuple[str, Mapping[str, Any]]],
                  baseline: tuple[str, Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """The report of one run made of its shards' reports (name, report.json dict). Refuses, with a UsageError that
    says why, reports of different agenttest versions or suites, of different runs per case, the same shard
    twice, missing shards, or an unsharded report among them."""
    check_reports(reports)
    first = reports[0][1]
    results = sorted((_bounded(r) for _, report in reports for r in report["results"]),
                     key=lambda r: r.get("position") or 0)
    for result in results:
        result.pop("position", None)
        if isinstance(result.get("stability"), dict):     # the interval from the counts, as the run made it
            result["stability"]["pass_rate_interval"] = case_interval(result["stability"])
    summary = _summary(reports, results)
    metadata = dict(first.get("metadata") or {})
    metadata.pop("shard", None)
    metadata["options"] = _run_options(first)
    stamps = [report.get("metadata") or {} for _, report in reports]
    metadata["started_at"] = min(str(m.get("started_at", "")) for m in stamps)
    metadata["completed_at"] = max(str(m.get("completed_at", "")) for m in stamps)
    metadata["shards"] = [name for name, _ in reports]
    _merge_record(metadata, stamps)
    merged: dict[str, Any] = {"summary": summary, "environment": first.get("environment") or {},
                              "results": results, "metadata": metadata,
                              "interrupted": any(report.get("interrupted") for _, report in reports)}
    errors = [str(report["error"]) for _, report in reports if report.get("error")]
    if errors:
        merged["error"] = "; ".join(dict.fromkeys(errors))
    warnings = [w for _, report in reports for w in report.get("warnings") or []]
    if warnings:
        merged["warnings"] = list(dict.fromkeys(stored(w) for w in warnings))
    replays = [report["replay"] for _, report in reports if isinstance(report.get("replay"), dict)]
    if replays:     # each shard compared the same cassettes: what any of them found
        merged["replay"] = _replay(replays)
    if repeated(summary.get("runs_per_case", 1)):
        merged["stability_results"] = [r["stability"] for r in results if isinstance(r.get("stability"), dict)]
    if baseline is not None:
        merged["comparison"] = compare(merged, baseline[1], path=baseline[0])
    return merged


def _bounded(result: Mapping[str, Any]) -> dict[str, Any]:
    """A shard's result as an artifact keeps any value (`bounds.stored`): a crafted report's 10 MB id or error, or
    its structures nested 10,000 deep, are cut as a run's own would be."""
    return {key: stored(value) if key in _VALUES or isinstance(value, str)
            else json_safe(value, cap=MAX_STORED_CHARS) for key, value in result.items()}


_VALUES = ("input", "output", "expected")        # kept whole up to MAX_STORED_JSON, then as the start of their JSON


def _replay(replays: list[dict[str, Any]]) -> dict[str, Any]:
    """The shards' `replay` as one: each compared the same cassettes; a change any of them found is said first."""
    merged = {key: value for key, value in replays[0].items() if key not in ("changed", "could_not_tell")}
    changed = sorted({str(name) for replay in replays for name in replay.get("changed") or []})
    why = next((replay["could_not_tell"] for replay in replays if replay.get("could_not_tell")), None)
    merged.update({"changed": changed} if changed or not why else {"could_not_tell": why})
    return merged


def check_reports(reports: Sequence[tuple[str, Mapping[str, Any]]]) -> None:
    if not reports:
        raise UsageError("merge: give the report.json of every shard")
    first_name, first = reports[0]
    version, suite = _meta(first).get("version"), _meta(first).get("suite")
    runs = first["summary"].get("runs_per_case", 1)
    shards: dict[int, str] = {}
    totals: set[int] = set()
    for name, report in reports:
        meta = _meta(report)
        if meta.get("version") != version:
            raise UsageError(f"merge: {name} was written by agenttest {meta.get('version')}, {first_name} by "
                             f"{version}; merge the reports of one run")
        if not meta.get("shard"):
            raise UsageError(f"merge: {name} is not the report of a shard (run with --shard K/N)")
        if meta.get("suite") != suite:
            raise UsageError(f"merge: {name} ran other cases than {first_name} (another suite, filter or version of "
                             "it); merge the shards of one run")
        if report["summary"].get("runs_per_case", 1) != runs:
            raise UsageError(f"merge: {name} ran each case {_times(report['summary'].get('runs_per_case', 1))}, "
                             f"{first_name} {_times(runs)}; merge the shards of one run")
        if report["summary"].get("agent_id") != first["summary"].get("agent_id"):
            raise UsageError(f"merge: {name} tested agent {report['summary'].get('agent_id')!r}, {first_name} "
                             f"{first['summary'].get('agent_id')!r}")
        different = sorted(key for key in set(_run_options(report)) | set(_run_options(first))
                           if _run_options(report).get(key) != _run_options(first).get(key))
        if different:
            raise UsageError(f"merge: {name} was run with other options than {first_name} "
                             f"({', '.join(different)}); merge the shards of one run")
        try:
            index, total = shard_of(str(meta["shard"]))
        except ValueError as exc:
            raise UsageError(f"merge: {name}: shard {meta['shard']!r}: {exc}") from None
        if index in shards:
            raise UsageError(f"merge: {name} and {shards[index]} are both shard {index}")
        shards[index] = name
        totals.add(total)
    if len(totals) > 1:
        raise UsageError(f"merge: the reports split the suite differently ({', '.join(f'N={n}' for n in totals)})")
    total = totals.pop()
    missing = [str(index) for index in range(1, total + 1) if index not in shards]
    if missing:
        raise UsageError(f"merge: shard {', '.join(missing)} of {total} is missing: the counts would be wrong")


def _times(count: Any) -> str:
    if auto_limit(count) is not None:
        return f"with --runs {count}"
    return "once" if count == 1 else f"{count} times"


# Options that differ between the shards of one run without making them different runs.
_PER_SHARD = ("shard", "output_dir", "output", "junit", "summary", "record", "replay", "cache", "no_cache",
              "parallel", "verbose", "annotations", "max_annotations", "job_summary", "fail_on")


def _run_options(report: Mapping[str, Any]) -> dict[str, Any]:
    """The options that made the run what it is (those a shard may set for itself left out)."""
    options = _meta(report).get("options")
    return {key: value for key, value in (options.items() if isinstance(options, Mapping) else [])
            if key not in _PER_SHARD}


def _meta(report: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = report.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def _summary(reports: Sequence[tuple[str, Mapping[str, Any]]], results: list[dict[str, Any]]) -> dict[str, Any]:
    """The counts recomputed over every shard's results; the duration is the longest shard's (they ran side by
    side); usage is summed."""
    first = reports[0][1]["summary"]
    duration = max(int(report["summary"].get("duration_ms") or 0) for _, report in reports)
    counts = Summary.from_statuses([str(r.get("status")) for r in results], duration)
    summary: dict[str, Any] = {
        "total": counts.total, "passed": counts.passed, "failed": counts.failed, "skipped": counts.skipped,
        "errors": counts.errors, "timeouts": counts.timeouts, "duration_ms": duration,
        "agent_id": first.get("agent_id"), "connector": first.get("connector", ""),
        "runs_per_case": first.get("runs_per_case", 1),
    }
    if first.get("agent_path"):
        summary["agent_path"] = first["agent_path"]
    if repeated(summary["runs_per_case"]):
        rows = [r["stability"] for r in results if isinstance(r.get("stability"), dict)]
        summary.update(stability_summary(rows, summary["runs_per_case"]))
    summary["pass_rate"] = report_pass_rate(counts.passed, counts.total - counts.skipped)
    usage = Usage.total(report["summary"].get("usage") for _, report in reports)
    if usage.roles:
        summary["usage"] = usage.to_dict()
    costs = [report["summary"]["cost"] for _, report in reports if isinstance(report["summary"].get("cost"), dict)]
    if costs:
        roles = {role for cost in costs for role in cost}
        summary["cost"] = {role: round(sum(float(cost.get(role) or 0) for cost in costs), 6) for role in sorted(roles)}
    budgets = [report["summary"]["budget"] for _, report in reports
               if isinstance(report["summary"].get("budget"), dict)]
    if budgets:       # each shard had the budget; a shard that spent it left cases unchecked
        spent = next((b["spent"] for b in budgets if b.get("spent")), None)
        merged: dict[str, Any] = {k: v for k, v in budgets[0].items() if k in ("max_tokens", "max_cost")}
        for key in ("tokens", "cost_usd"):       # what the shards used, together
            used = [b[key] for b in budgets if isinstance(b.get(key), (int, float)) and not isinstance(b[key], bool)]
            if used:
                merged[key] = round(sum(used), 6) if key == "cost_usd" else int(sum(used))
        if any(b.get("estimated") is True for b in budgets):     # built on estimated tokens in some shard
            merged["estimated"] = True
        summary["budget"] = {**merged, **({"spent": spent} if spent else {})}
    return summary
