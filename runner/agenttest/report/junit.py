"""junit.xml: one <testsuite> per suite file, one <testcase> per case, for every CI system's test view.

Conforms to the Jenkins xUnit plugin's `junit-10.xsd` with the optional testcase `file`/`line` attributes that
annotation reporters read (`shared/data/junit-10-with-location.xsd`), the profile pytest's junitxml writes:
  <testsuites name tests failures errors time>
    <testsuite name=PATH tests failures errors skipped time timestamp hostname file=PATH>
      <properties> agenttest.version, agent, connector, runs, pass_rate </properties>   (the first suite only;
                   with several agents, each suite's as agent:<suite>)
      <testcase classname=PATH.WITH.DOTS name="ID: name" time file=PATH line=1-BASED>
        <failure message=FIRST-REASON type=ASSERTION-TYPE>verdicts, input, output</failure>  (failed)
        <rerunFailure|rerunError message type><stackTrace/></…>  (--runs: the other failing runs of a failure)
        <flakyFailure|flakyError message type><stackTrace/></…>  (--runs: failing runs of a case that passed)
        <error message type=ERROR-KIND>…</error>                                           (error, timeout)
        <skipped message=REASON/>                                                          (skipped)
        <system-out>transcript</system-out>                                                (multi-turn cases)
Like pytest's `bin_xml_escape`, every string goes through one function (`escape.xml_text`): characters XML 1.0
forbids are replaced by a visible `#xNN`, ANSI codes are stripped and secrets masked. No CDATA is written.
"""

from __future__ import annotations

import os
import socket
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping
from pathlib import Path, PurePosixPath
from typing import Any, TextIO

from ..analysis import pass_rate_text
from .artifact import FileReporter
from .base import ReportLike
from .escape import one_line, preview, xml_text
from .github import SourceLinks
from .verdicts import case_title, failure_body, failure_type, first_reason, transcript

BODY_CHARS = 64 * 1024          # per failure body and per <system-out>: keeps the file readable by every parser
DIRECT_SUITE = "agenttest"      # the suite of cases given on the command line (no file)


class JUnitWriter(FileReporter):
    """Writes junit.xml when the run finishes."""

    def __init__(self, path: Path, links: SourceLinks, errors: TextIO | None = None) -> None:
        super().__init__(errors)
        self.path = path
        self.links = links

    def files(self, report: ReportLike) -> Iterable[tuple[Path, str]]:
        return [(self.path, render_junit(report.data, self.links))]


def render_junit(report: Mapping[str, Any], links: SourceLinks | None = None, hostname: str | None = None) -> str:
    """The JUnit XML document of a report.json dict."""
    links = links or SourceLinks.from_environment()
    hostname = hostname or os.environ.get("RUNNER_NAME") or socket.gethostname()
    summary = report.get("summary") or {}
    metadata = report.get("metadata") or {}
    results = list(report.get("results") or [])

    suites: dict[str, list[dict[str, Any]]] = {}
    for result in results:       # by suite file; generated cases by their generator; direct messages together
        name = links.display(result.get("file")) or result.get("source") or DIRECT_SUITE
        suites.setdefault(name, []).append(result)
    if not suites:
        suites[DIRECT_SUITE] = []

    root = _element("testsuites", name="agenttest", tests=len(results),
                    failures=_count(results, "failed"), errors=_count(results, "error", "timeout"),
                    time=_seconds(summary.get("duration_ms")))
    for index, (suite_name, suite_results) in enumerate(suites.items()):
        root.append(_suite(suite_name, suite_results, summary, metadata, hostname, links, report, first=index == 0))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _suite(name: str, results: list[dict[str, Any]], summary: Mapping[str, Any], metadata: Mapping[str, Any],
           hostname: str, links: SourceLinks, report: Mapping[str, Any], first: bool) -> ET.Element:
    skipped = _count(results, "skipped")
    suite = _element("testsuite", name=name, tests=len(results), failures=_count(results, "failed"),
                     errors=_count(results, "error", "timeout"), skipped=skipped,
                     time=_seconds(sum(r.get("duration_ms") or 0 for r in results)),
                     timestamp=metadata.get("started_at"), hostname=hostname,
                     file=name if results and results[0].get("file") else None)
    # The run's properties, once: readers such as xunitparser keep one property set for the whole file and
    # refuse a name seen twice. A run over several agents names each suite's agent under a name of its own.
    properties = ET.SubElement(suite, "properties")
    values: dict[str, Any] = {}
    if first:
        values = {
            "agenttest.version": metadata.get("version"),
            "agent": summary.get("agent_id"),
            "connector": summary.get("connector"),
            "runs": summary.get("runs_per_case", 1),
            "pass_rate": pass_rate_text(summary.get("pass_rate")),
            "interrupted": "true" if report.get("interrupted") else None,
        }
    agent = next((r["agent_id"] for r in results if r.get("agent_id")), None)
    if agent and agent != summary.get("agent_id"):
        values[f"agent:{name}"] = agent
    for key, value in values.items():
        if value not in (None, ""):
            properties.append(_element("property", name=key, value=value))
    if not len(properties):
        suite.remove(properties)

    classname = _classname(name)
    seen: set[str] = set()
    for result in results:
        suite.append(_testcase(result, classname, seen, links))
    if report.get("error"):
        ET.SubElement(suite, "system-err").text = xml_text(report["error"])
    return suite


def _testcase(result: dict[str, Any], classname: str, seen: set[str], links: SourceLinks) -> ET.Element:
    name = case_title(result)
    if name in seen:      # ids are unique per file, but an invalid duplicate is reported under the same id
        name = f"{name} (line {result.get('line')})"
    seen.add(name)
    case = _element("testcase", classname=classname, name=name, time=_seconds(result.get("duration_ms")),
                    file=links.display(result.get("file")) or None, line=result.get("line"))
    status = result.get("status")
    reruns = _other_failed_runs(result)
    if status == "failed":
        _append_text(case, "failure", failure_body(result, path=links.display(result.get("file"))),
                     message=first_reason(result), type=failure_type(result))
        _append_runs(case, reruns, "rerunFailure", "rerunError")
    elif status in ("error", "timeout"):
        _append_text(case, "error", failure_body(result, path=links.display(result.get("file"))),
                     message=first_reason(result), type=failure_type(result))
        _append_runs(case, reruns, "rerunFailure", "rerunError")
    elif status == "skipped":
        case.append(_element("skipped", message=one_line(result.get("error") or "skipped", 500)))
    else:   # passed over its runs, with some failing: Surefire's flaky test
        _append_runs(case, reruns, "flakyFailure", "flakyError")
    conversation = transcript(result)
    if conversation:
        _append_text(case, "system-out", conversation)
    return case


def _other_failed_runs(result: dict[str, Any]) -> list[dict[str, Any]]:
    """With --runs: the runs that did not pass, but the one the result shows (for a case that failed)."""
    runs = [run for run in result.get("runs") or [] if isinstance(run, dict) and run.get("ran", True)
            and run.get("status") not in ("passed", "skipped")]
    return runs[1:] if result.get("status") != "passed" else runs


def _append_runs(case: ET.Element, runs: list[dict[str, Any]], failure_tag: str, error_tag: str) -> None:
    """One Surefire rerun/flaky element per run: `type` is the run's status, the message and stack trace its
    error. Failures first, then errors, as Surefire orders them."""
    ordered = sorted(runs, key=lambda run: run.get("status") != "failed")
    for run in ordered:
        tag = failure_tag if run.get("status") == "failed" else error_tag
        message = f"run {run.get('run')}: {run.get('error') or run.get('status')}"
        element = _element(tag, message=one_line(message, 500), type=run.get("error_kind") or run.get("status"))
        ET.SubElement(element, "stackTrace").text = xml_text(preview(message, BODY_CHARS))
        case.append(element)


def _append_text(parent: ET.Element, tag: str, text: str, **attributes: Any) -> None:
    child = _element(tag, **attributes)
    child.text = xml_text(preview(text, BODY_CHARS, "; the full text is in report.json"))
    parent.append(child)


def _element(tag: str, **attributes: Any) -> ET.Element:
    """An element whose attribute values all went through `xml_text`; None values are left out."""
    return ET.Element(tag, {key: xml_text(value) for key, value in attributes.items() if value is not None})


def _classname(suite_name: str) -> str:
    """`examples/expense/tests/expense.jsonl` → `examples.expense.tests.expense`."""
    return str(PurePosixPath(suite_name).with_suffix("")).replace("/", ".").strip(".") or DIRECT_SUITE


def _count(results: list[dict[str, Any]], *statuses: str) -> int:
    return sum(1 for r in results if r.get("status") in statuses)


def _seconds(milliseconds: Any) -> str:
    return f"{(milliseconds or 0) / 1000:.3f}"
