"""ctrf.json: the results in the Common Test Report Format (ctrf-io), read by the CTRF reporters and actions.

Statuses map as CTRF expects: passed, failed (assertions failed, errors and timeouts alike, with `rawStatus`
keeping ours), skipped. Strings go through `escape.xml_text` as in junit.xml (secrets masked, ANSI stripped,
control characters and lone surrogates made visible), so the file is valid UTF-8 whatever the agent sent.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

from ..files import json_chunks
from ..github.links import SourceLinks
from ..result_log import statuses_and_files
from .artifact import Content, FileReporter
from .base import ReportLike
from .escape import preview, xml_text
from .verdicts import case_title, failure_body, failure_type, first_reason, is_failing

SPEC_VERSION = "0.0.0"
# A test's change against the baseline (report.json's `comparison`): the first of these groups that names it.
_CHANGES = (("regressions", "regression"), ("noise", "noise"), ("introduced", "introduced"), ("fixes", "fix"),
            ("still_failing", "still_failing"), ("new", "new"))
_STATUS = {"passed": "passed", "failed": "failed", "error": "failed", "timeout": "failed", "skipped": "skipped"}


class CtrfWriter(FileReporter):
    """Writes ctrf.json when the run finishes."""

    def __init__(self, path: Path, links: SourceLinks, errors: TextIO | None = None) -> None:
        super().__init__(errors)
        self.path = path
        self.links = links

    def files(self, report: ReportLike) -> Iterable[tuple[Path, Content]]:
        return [(self.path, json_chunks(_document(report.data, self.links)))]


def render_ctrf(report: Mapping[str, Any], links: SourceLinks | None = None) -> dict[str, Any]:
    """The CTRF document of a report.json dict."""
    document = _document(report, links or SourceLinks.from_environment())
    document["results"]["tests"] = list(document["results"]["tests"])
    return document


def _document(report: Mapping[str, Any], links: SourceLinks) -> dict[str, Any]:
    """The CTRF document, its tests an iterator: each is built as it is written, never all at once."""
    summary = report.get("summary") or {}
    metadata = report.get("metadata") or {}
    results: Sequence[Mapping[str, Any]] = report.get("results") or []   # never held all at once
    start = _epoch_ms(metadata.get("started_at"))
    stop = _epoch_ms(metadata.get("completed_at")) or start + int(summary.get("duration_ms") or 0)
    changes = _changes(report)
    tests: Iterator[dict[str, Any]] = (_test(result, links, changes.get((result.get("file"), result.get("id"))))
                                       for result in results)
    counts = dict.fromkeys(("passed", "failed", "skipped", "other"), 0)
    suites: set[str] = set()
    for status, file in statuses_and_files(results):
        counts[_STATUS.get(str(status), "other")] += 1
        path = links.display(file)
        if path:
            suites.add(path)
    del counts["other"]
    document: dict[str, Any] = {
        "reportFormat": "CTRF",
        "specVersion": SPEC_VERSION,
        "generatedBy": "agenttest",
        "results": {
            "tool": {"name": "agenttest", "version": xml_text(metadata.get("version"))},
            "summary": {
                "tests": len(results), **counts, "pending": 0, "other": 0, "suites": len(suites),
                "start": start, "stop": stop, "duration": int(summary.get("duration_ms") or 0),
                "extra": {"errors": summary.get("errors", 0), "timeouts": summary.get("timeouts", 0),
                          "pass_rate": summary.get("pass_rate"), "interrupted": bool(report.get("interrupted")),
                          **_stability_extra(summary), **_baseline_extra(report)},
            },
            "tests": tests,
            "environment": {"appName": xml_text(summary.get("agent_id")),
                            "extra": {"connector": xml_text(summary.get("connector"))}},
        },
    }
    if metadata.get("completed_at"):
        document["timestamp"] = metadata["completed_at"]
    return document


def _test(result: Mapping[str, Any], links: SourceLinks, change: dict[str, Any] | None = None) -> dict[str, Any]:
    status = str(result.get("status"))
    test: dict[str, Any] = {
        "name": xml_text(case_title(result)) or "?",
        "status": _STATUS.get(status, "other"),
        "duration": int(result.get("duration_ms") or 0),
        "rawStatus": status,
        "type": "agent",
    }
    path = links.display(result.get("file"))
    if path:
        test["filePath"] = path
        test["suite"] = [path]
    if result.get("line"):
        test["line"] = int(result["line"])
    if is_failing(result):
        test["message"] = xml_text(first_reason(dict(result)))
        test["trace"] = xml_text(failure_body(dict(result)))
        test["extra"] = {"failure_type": failure_type(dict(result))}
    elif status == "skipped" and result.get("error"):
        test["message"] = xml_text(preview(result["error"], 500))
    if result.get("tags"):
        test["tags"] = [xml_text(tag) for tag in result["tags"]]
    stability = result.get("stability")
    if isinstance(stability, Mapping):      # --runs: CTRF's flaky flag, and the runs behind it
        test["flaky"] = bool(stability.get("flaky"))
        test.setdefault("extra", {}).update(runs=stability.get("runs"), passed_runs=stability.get("passed"),
                                            pass_rate=stability.get("pass_rate"),
                                            pass_rate_interval=stability.get("pass_rate_interval"))
        if stability.get("stopped"):
            test["extra"]["stopped"] = stability["stopped"]
    if change is not None:          # --baseline: what changed, and for a drop its evidence
        test.setdefault("extra", {})["baseline"] = change
    return test


def _changes(report: Mapping[str, Any]) -> dict[tuple[Any, Any], dict[str, Any]]:
    """Each compared test's change against the baseline by (file, id), with what it was and the evidence of a
    drop (`analysis.noise`), as report.json's comparison gives them."""
    comparison = report.get("comparison")
    found: dict[tuple[Any, Any], dict[str, Any]] = {}
    if not isinstance(comparison, Mapping):
        return found
    for group, change in _CHANGES:
        for entry in comparison.get(group) or []:
            key = (entry.get("file"), entry.get("id")) if isinstance(entry, Mapping) else None
            if key is None or key in found:
                continue
            found[key] = {"change": change, **{name: xml_text(entry[name]) if isinstance(entry[name], str) else
                                               entry[name] for name in ("was", "evidence", "p_value",
                                                                        "adjusted_p_value")
                                               if entry.get(name) is not None}}
    return found


def _baseline_extra(report: Mapping[str, Any]) -> dict[str, Any]:
    """With --baseline: the report compared with and how many tests changed which way, as CTRF's extra fields."""
    comparison = report.get("comparison")
    if not isinstance(comparison, Mapping):
        return {}
    counts = comparison.get("counts") if isinstance(comparison.get("counts"), Mapping) else {}
    baseline = comparison.get("baseline") if isinstance(comparison.get("baseline"), Mapping) else {}
    return {"baseline": {"path": xml_text(baseline.get("path")), **counts}}


def _stability_extra(summary: Mapping[str, Any]) -> dict[str, Any]:
    """With runs: the summary's runs and the overall pass rate with its interval, as CTRF's extra fields."""
    if "total_runs" not in summary:
        return {}
    keys = ("runs_per_case", "total_runs", "overall_pass_rate", "overall_pass_rate_interval", "stopped")
    return {key: summary[key] for key in keys if key in summary}


def _epoch_ms(timestamp: Any) -> int:
    try:
        return int(datetime.fromisoformat(str(timestamp)).timestamp() * 1000)
    except ValueError:
        return 0
