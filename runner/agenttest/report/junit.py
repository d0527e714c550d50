"""junit.xml: one <testsuite> per suite file, one <testcase> per case, for every CI system's test view.

Conforms to the Jenkins xUnit plugin's `junit-10.xsd` with the optional testcase `file`/`line` attributes that
annotation reporters read (`tests/report/data/junit-10-with-location.xsd`), the profile pytest's junitxml writes:
  <testsuites name tests failures errors time>
    <testsuite name=PATH tests failures errors skipped time timestamp hostname file=PATH>
      <properties> agenttest.version, agent, connector, runs, pass_rate (with runs: total_runs, overall_pass_rate,
                   overall_pass_rate_interval) </properties>   (the first suite only; with several agents, each
                   suite's as agent:<suite>)
      <testcase classname=PATH.WITH.DOTS name="ID: name" time file=PATH line=1-BASED>
        <failure message=FIRST-REASON type=ASSERTION-TYPE>verdicts, input, output</failure>  (failed)
        <rerunFailure|rerunError message type><stackTrace/></…>  (--runs: the other failing runs of a failure)
        <flakyFailure|flakyError message type><stackTrace/></…>  (--runs: failing runs of a case that passed)
        <error message type=ERROR-KIND>…</error>                                           (error, timeout)
        <skipped message=REASON/>                                                          (skipped)
        <system-out>transcript</system-out>                                                (multi-turn cases)
Like pytest's `bin_xml_escape`, every string goes through one function (`escape.xml_text`, inside
`xml_attribute` and `xml_content`): characters XML 1.0 forbids are replaced by a visible `#xNN`, ANSI codes are
stripped and secrets masked. No CDATA is written. The text is written directly, one testcase at a time, laid out
as ElementTree's `indent` would: a tree of 10,000 testcases took ~0.3 s and ~10 MB more to build and serialize.
"""

from __future__ import annotations

import itertools
import socket
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any, TextIO

from ..analysis import case_key, pass_rate_text
from ..analysis.outcome import interval_text
from ..github.environment import runner_name
from ..github.links import SourceLinks
from .artifact import Content, FileReporter
from .base import ReportLike
from .escape import one_line, preview, xml_attribute, xml_content
from .verdicts import Drop, case_title, drops, failure_body, failure_type, first_reason, transcript

BODY_CHARS = 64 * 1024          # per failure body and per <system-out>: keeps the file readable by every parser
DIRECT_SUITE = "agenttest"      # the suite of cases given on the command line (no file)
_INDENT = "  "


class JUnitWriter(FileReporter):
    """Writes junit.xml when the run finishes, one testcase at a time."""

    def __init__(self, path: Path, links: SourceLinks, errors: TextIO | None = None) -> None:
        super().__init__(errors)
        self.path = path
        self.links = links

    def files(self, report: ReportLike) -> Iterable[tuple[Path, Content]]:
        pieces = _document(report.data, self.links, _hostname())
        return [(self.path, (piece.encode("utf-8", "replace") for piece in pieces))]


def render_junit(report: Mapping[str, Any], links: SourceLinks | None = None, hostname: str | None = None) -> str:
    """The JUnit XML document of a report.json dict."""
    return "".join(_document(report, links or SourceLinks.from_environment(), hostname or _hostname()))


def _hostname() -> str:
    return runner_name() or socket.gethostname()


def _document(report: Mapping[str, Any], links: SourceLinks, hostname: str) -> Iterator[str]:
    """The document as text, in pieces, laid out as ElementTree's `indent` lays it out (two spaces a level). The
    results are read once, each testcase written as it is read: what is held until its suite is written is the text
    of its testcases, never the results (a run's are built as they are read: `result_log.ResultDicts`)."""
    summary = report.get("summary") or {}
    metadata = report.get("metadata") or {}
    results: Sequence[dict[str, Any]] = report.get("results") or []
    judged = drops(report)

    suites: dict[str, _Suite] = {}
    for result in results:      # by suite file; generated cases by their generator; direct messages together
        name = links.display(result.get("file")) or result.get("source") or DIRECT_SUITE
        suite = suites.get(name)
        if suite is None:
            suite = suites[name] = _Suite(name, bool(result.get("file")))
        suite.add(result, judged.get(case_key(result)))
    if not suites:
        suites[DIRECT_SUITE] = _Suite(DIRECT_SUITE, False)

    yield '<?xml version="1.0" encoding="UTF-8"?>\n'
    yield _start("testsuites", 0, name="agenttest", tests=len(results),
                 failures=sum(suite.failures for suite in suites.values()),
                 errors=sum(suite.errors for suite in suites.values()),
                 time=_seconds(summary.get("duration_ms"))) + ">\n"
    for index, suite in enumerate(suites.values()):
        yield from _suite(suite, summary, metadata, hostname, report, first=index == 0)
    yield "</testsuites>\n"


class _Suite:
    """One testsuite: its testcases' text, and their counts."""

    def __init__(self, name: str, from_file: bool) -> None:
        self.name = name
        self.from_file = from_file          # whether its first result names a file
        self.testcases: list[str] = []
        self.failures = self.errors = self.skipped = self.duration_ms = 0
        self.agent: str | None = None       # the first agent one of its results names
        # Escaped once for the suite's testcases: their classname, and the file each of its cases from a file names.
        self._located = f' classname="{xml_attribute(_classname(name))}"', f' file="{xml_attribute(name)}"'
        self._seen: set[str] = set()

    def add(self, result: dict[str, Any], drop: Drop | None) -> None:
        status = result.get("status")
        self.failures += status == "failed"
        self.errors += status in ("error", "timeout")
        self.skipped += status == "skipped"
        self.duration_ms += result.get("duration_ms") or 0
        if self.agent is None and result.get("agent_id"):
            self.agent = result["agent_id"]
        path = self.name if result.get("file") else None
        self.testcases.append(_testcase(result, path, self._located, self._seen, drop))


def _suite(suite: _Suite, summary: Mapping[str, Any], metadata: Mapping[str, Any], hostname: str,
           report: Mapping[str, Any], first: bool) -> Iterator[str]:
    name = suite.name
    start = _start("testsuite", 1, name=name, tests=len(suite.testcases), failures=suite.failures,
                   errors=suite.errors, skipped=suite.skipped, time=_seconds(suite.duration_ms),
                   timestamp=metadata.get("started_at"), hostname=hostname,
                   file=name if suite.testcases and suite.from_file else None)
    # The run's properties, once: readers such as xunitparser keep one property set for the whole file and
    # refuse a name seen twice. A run over several agents names each suite's agent under a name of its own.
    values: dict[str, Any] = {}
    if first:
        values = {
            "agenttest.version": metadata.get("version"),
            "agent": summary.get("agent_id"),
            "connector": summary.get("connector"),
            "runs": summary.get("runs_per_case", 1),
            "pass_rate": pass_rate_text(summary.get("pass_rate")),
            # with runs: the mean of the cases' pass rates, and its interval with cases as clusters
            "total_runs": summary.get("total_runs"),
            "overall_pass_rate": pass_rate_text(summary.get("overall_pass_rate")),
            "overall_pass_rate_interval": interval_text(summary.get("overall_pass_rate_interval"), places=2),
            "interrupted": "true" if report.get("interrupted") else None,
        }
    if suite.agent and suite.agent != summary.get("agent_id"):
        values[f"agent:{name}"] = suite.agent
    properties = [_empty("property", 3, name=key, value=value) for key, value in values.items()
                  if value not in (None, "")]
    if not properties and not suite.testcases and not report.get("error"):
        yield start + " />\n"
        return
    yield start + ">\n"
    if properties:
        yield f"{_INDENT * 2}<properties>\n{''.join(properties)}{_INDENT * 2}</properties>\n"
    yield from suite.testcases
    if report.get("error"):
        yield _with_text("system-err", 2, report["error"])
    yield f"{_INDENT}</testsuite>\n"


def _testcase(result: dict[str, Any], path: str | None, located: tuple[str, str], seen: set[str],
              drop: Drop | None = None) -> str:
    """One testcase: `path` is its file's display path, `located` its suite's classname and file attributes;
    `drop`, when it passed in the baseline and does not now, says whether that is a regression or noise, and why."""
    name = case_title(result)
    if name in seen:      # ids are unique per file, but an invalid duplicate is reported under the same id
        line = result.get("line")
        if line is not None:
            name = f"{name} (line {line})"
        else:             # a generated case has no line: the first free number tells it apart
            name = next(f"{name} ({n})" for n in itertools.count(2) if f"{name} ({n})" not in seen)
    seen.add(name)
    seconds = _seconds(result.get("duration_ms"))
    start = f'{_INDENT * 2}<testcase{located[0]} name="{xml_attribute(name)}" time="{seconds}"'
    if path:
        start += located[1]
    if result.get("line") is not None:
        start += f' line="{xml_attribute(result["line"])}"'
    status = result.get("status")
    reruns = _other_failed_runs(result)
    children: list[str] = []
    if status in ("failed", "error", "timeout"):
        body, message = failure_body(result, path=path), first_reason(result)
        if drop is not None:        # against the baseline: a regression, or noise, and the evidence
            body, message = f"Compared with the baseline: {drop.verdict}\n\n{body}", f"{drop.verdict} — {message}"
        children.append(_body("failure" if status == "failed" else "error", body,
                              message=one_line(message, 500), type=failure_type(result)))
        children.extend(_runs(reruns, "rerunFailure", "rerunError"))
    elif status == "skipped":
        children.append(_empty("skipped", 3, message=one_line(result.get("error") or "skipped", 500)))
    else:   # passed over its runs, with some failing: Surefire's flaky test
        children.extend(_runs(reruns, "flakyFailure", "flakyError"))
    conversation = transcript(result)
    if conversation:
        children.append(_body("system-out", conversation))
    if not children:
        return start + " />\n"
    return f"{start}>\n{''.join(children)}{_INDENT * 2}</testcase>\n"


def _other_failed_runs(result: dict[str, Any]) -> list[dict[str, Any]]:
    """With --runs: the runs that did not pass, but the one the result shows (for a case that failed)."""
    runs = [run for run in result.get("runs") or [] if isinstance(run, dict) and run.get("ran", True)
            and run.get("status") not in ("passed", "skipped")]
    return runs[1:] if result.get("status") != "passed" else runs


def _runs(runs: list[dict[str, Any]], failure_tag: str, error_tag: str) -> Iterator[str]:
    """One Surefire rerun/flaky element per run: `type` is the run's status, the message and stack trace its
    error. Failures first, then errors, as Surefire orders them."""
    ordered = sorted(runs, key=lambda run: run.get("status") != "failed")
    for run in ordered:
        tag = failure_tag if run.get("status") == "failed" else error_tag
        message = f"run {run.get('run')}: {run.get('error') or run.get('status')}"
        start = _start(tag, 3, message=one_line(message, 500), type=run.get("error_kind") or run.get("status"))
        yield f"{start}>\n{_with_text('stackTrace', 4, preview(message, BODY_CHARS))}{_INDENT * 3}</{tag}>\n"


def _body(tag: str, text: str, **attributes: Any) -> str:
    """A testcase's child holding a long text (a failure, the transcript), cut to `BODY_CHARS`."""
    return _with_text(tag, 3, preview(text, BODY_CHARS, "; the full text is in report.json"), **attributes)


def _with_text(tag: str, level: int, text: Any, **attributes: Any) -> str:
    content = xml_content(text)
    start = _start(tag, level, **attributes)
    return f"{start}>{content}</{tag}>\n" if content else start + " />\n"


def _empty(tag: str, level: int, **attributes: Any) -> str:
    return _start(tag, level, **attributes) + " />\n"


def _start(tag: str, level: int, **attributes: Any) -> str:
    """An element's start tag without its `>`, indented to `level`. Every attribute value goes through
    `xml_attribute` (masked, cleaned, escaped); None values are left out."""
    written = "".join(f' {key}="{xml_attribute(value)}"' for key, value in attributes.items() if value is not None)
    return f"{_INDENT * level}<{tag}{written}"


def _classname(suite_name: str) -> str:
    """`examples/expense/tests/expense.jsonl` → `examples.expense.tests.expense`. Only a suite file's own suffix
    goes: a generator's name (`agents:gen.cases?focus=x`) is kept whole, so two generators stay apart."""
    path = PurePosixPath(suite_name)
    if path.suffix in _SUITE_SUFFIXES:
        path = path.with_suffix("")
    return str(path).replace("/", ".").strip(".") or DIRECT_SUITE


_SUITE_SUFFIXES = (".jsonl", ".json")


def _seconds(milliseconds: Any) -> str:
    return f"{(milliseconds or 0) / 1000:.3f}"
