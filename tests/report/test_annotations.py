"""Annotations: one per failing case at its JSONL line, capped, a closing line, printed once the log guard is
resumed."""

from __future__ import annotations

import io
import re
from pathlib import Path

from agenttest.github.annotations import AnnotationsReporter, annotation_lines
from agenttest.github.links import SourceLinks
from agenttest.github.log import guarded_log
from agenttest.report.base import Reporter
from agenttest.report.console import ConsoleReporter
from agenttest.results import CaseResult

from .conftest import HOSTILE, hostile_result, make_report, mixed_results
from .test_escape import runner_unescape_data, runner_unescape_property

COMMAND = re.compile(r"^::(\w[\w-]*)(?: ([^:]*))?::(.*)$")


def parse(line: str) -> tuple[str, dict[str, str], str]:
    """A workflow command as the runner's TryParseV2 reads it."""
    match = COMMAND.match(line)
    assert match, line
    props = dict(p.split("=", 1) for p in match.group(2).split(",")) if match.group(2) else {}
    return match.group(1), {k: runner_unescape_property(v) for k, v in props.items()}, runner_unescape_data(
        match.group(3))


def failing(count: int) -> list[CaseResult]:
    return [CaseResult(id=f"c{i}", status="failed", error="bad", file="suites/s.jsonl", line=i + 1)
            for i in range(count)]


def test_one_per_failing_case_then_the_closing_line(links: SourceLinks) -> None:
    lines = annotation_lines(make_report(mixed_results()).to_dict(), links)
    parsed = [parse(line) for line in lines]
    assert [p[0] for p in parsed] == ["error"] * 4
    assert [(p[1].get("file"), p[1].get("line")) for p in parsed] == [
        ("suites/a.jsonl", "2"), ("suites/a.jsonl", "4"), ("suites/b.jsonl", "1"), (None, None)]
    assert parsed[0][1]["title"] == "agenttest: fail (failed)"
    assert parsed[0][2] == "expected hello\n✗ contains: expected hello (expected hello; actual nope)"
    assert parsed[1][2] == "agent error: HTTP 503 from http://localhost:1/chat"
    assert parsed[3][2] == ("agenttest: 1 failed, 1 errored, 1 timed out of 6 cases "
                            "(see the job summary and junit.xml)")


def test_capped_with_the_last_saying_how_many_more(links: SourceLinks) -> None:
    report = make_report(failing(25)).to_dict()
    lines = annotation_lines(report, links, max_annotations=10)
    assert len(lines) == 10
    assert "and 16 more failing cases not annotated" in parse(lines[8])[2]
    assert "more failing" not in parse(lines[7])[2]
    assert parse(lines[9]) == ("error", {}, "agenttest: 25 failed of 25 cases; 16 failing cases not annotated "
                                            "(see the job summary and junit.xml)")
    assert len(annotation_lines(report, links, max_annotations=1)) == 1
    assert len(annotation_lines(make_report(failing(9)).to_dict(), links)) == 10
    assert all("more failing" not in line for line in annotation_lines(make_report(failing(9)).to_dict(), links))


def test_nothing_for_a_green_run(links: SourceLinks) -> None:
    assert annotation_lines(make_report(mixed_results()[:1]).to_dict(), links) == []


def test_a_run_failed_by_its_budget_closes_with_an_error_though_no_case_failed(links: SourceLinks) -> None:
    results = [CaseResult(id="a", status="passed", file="s.jsonl", line=1),
               CaseResult(id="b", status="skipped", error="not run: budget spent: 120 tokens of --max-tokens 100",
                          ran=False, file="s.jsonl", line=2)]
    report = make_report(results).to_dict()
    report["summary"]["budget"] = {"max_tokens": 100, "tokens": 120,
                                   "spent": "budget spent: 120 tokens of --max-tokens 100"}
    assert [parse(line) for line in annotation_lines(report, links)] == [
        ("error", {}, "agenttest: no case failed of 2 cases; budget spent: 120 tokens of --max-tokens 100: the cases "
                      "not yet started were skipped (see the job summary and junit.xml)")]


def test_paths_are_repository_relative(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "sub").mkdir()
    links = SourceLinks.from_environment(tmp_path / "sub", {})
    results = [CaseResult(id="a", status="failed", file="./evals/x.jsonl", line=3),
               CaseResult(id="b", status="failed", file=str(tmp_path / "sub" / "evals" / "x.jsonl"), line=4),
               CaseResult(id="c", status="failed", file="/elsewhere/x.jsonl", line=5)]
    lines = annotation_lines(make_report(results).to_dict(), links)
    props = [parse(line)[1] for line in lines]
    assert props[0] == {"file": "sub/evals/x.jsonl", "line": "3", "title": "agenttest: a (failed)"}
    assert props[1]["file"] == "sub/evals/x.jsonl" and props[1]["line"] == "4"
    assert "file" not in props[2] and "line" not in props[2]     # outside the repository: no location at all


def test_hostile_text_stays_inside_one_command(links: SourceLinks) -> None:
    lines = annotation_lines(make_report([hostile_result()]).to_dict(), links)
    assert len(lines) == 2
    for line in lines:
        assert "\n" not in line and "\r" not in line and "\x1b" not in line
    command, props, message = parse(lines[0])
    assert command == "error" and props["file"] == "suites/hostile.jsonl" and props["line"] == "3"
    assert props["title"].startswith("agenttest: hostile|`id`: <b>name</b> ::error::x")
    assert message.startswith("expected ::error::x in ::error file=README.md")
    assert len(message) < 4096


def run_with_console(results: list[CaseResult], *, annotate: bool, guard: bool) -> list[str]:
    """A run's log as the CLI prints it: the console and (told first, to show order does not matter) the
    annotations, inside the guarded log."""
    out = io.StringIO()
    report = make_report(results)
    reporters: list[Reporter] = [ConsoleReporter(out, verbose=True)]
    if annotate:
        reporters.insert(0, AnnotationsReporter(out, SourceLinks.from_environment()))
    with guarded_log(out, guard=guard):
        for reporter in reporters:
            reporter.run_started(report.info)
        for result in results:
            for reporter in reporters:
                reporter.case_finished(result)
        for reporter in reporters:
            reporter.run_finished(report)
    return out.getvalue().split("\n")


def commands_the_runner_would_run(lines: list[str]) -> list[str]:
    """Replays the runner's rules: `::` at a line start (after whitespace) or `##[` anywhere is a command, unless
    a stop-commands block is open; only its resume token ends it."""
    executed, stopped_by = [], None
    for line in lines:
        text = line.lstrip()
        if stopped_by is not None:
            if text == f"::{stopped_by}::":
                stopped_by = None
            continue
        if text.startswith("::") or "##[" in line:
            executed.append(text)
            if text.startswith("::stop-commands::"):
                stopped_by = text[len("::stop-commands::"):]
    return executed


def lines_inside_blocks(lines: list[str]) -> list[str]:
    """The lines between a `::stop-commands::T` and its `::T::`, which the runner does not take for commands."""
    inside, stopped_by = [], None
    for line in lines:
        text = line.lstrip()
        if stopped_by is not None:
            if text == f"::{stopped_by}::":
                stopped_by = None
            else:
                inside.append(line)
        elif text.startswith("::stop-commands::"):
            stopped_by = text[len("::stop-commands::"):]
    return inside


def test_agent_text_in_the_console_never_becomes_a_command() -> None:
    lines = run_with_console([hostile_result(input=HOSTILE, error=HOSTILE)], annotate=True, guard=True)
    executed = commands_the_runner_would_run(lines)
    assert [c.split("::")[1].split(" ")[0] for c in executed] == ["stop-commands", "error", "error"]
    assert executed[1].startswith("::error file=suites/hostile.jsonl,line=3,")
    assert any("pwned" in line for line in lines)          # the console did print the hostile text…
    unguarded = commands_the_runner_would_run(run_with_console([hostile_result(error=HOSTILE)], annotate=False,
                                                               guard=False))
    assert unguarded                                     # …which, without the guard, the runner would execute


def test_annotations_are_printed_after_the_resume_whoever_is_told_first() -> None:
    lines = [line for line in run_with_console(failing(2), annotate=True, guard=True) if line]
    token = re.fullmatch(r"::stop-commands::([0-9a-f]{32})", lines[0]).group(1)
    resume = lines.index(f"::{token}::")
    assert [line.split(" ")[0] for line in lines[resume + 1:]] == ["::error", "::error", "::error::agenttest:"]
    assert not [line for line in lines_inside_blocks(lines) if line.startswith("::error")]
    assert "  ❌ TESTS FAILED" in lines[:resume]           # the console's last lines are still guarded


def test_a_lone_surrogate_cannot_break_the_annotations() -> None:
    """An agent replying "\\ud800" once ended the run in UnicodeEncodeError: annotations and outputs lost."""
    raw = io.BytesIO()
    log = io.TextIOWrapper(raw, encoding="utf-8", write_through=True)      # strict, as sys.stdout is
    report = make_report([CaseResult(id="s\ud800", status="error", error="agent said \ud800!", file="s.jsonl",
                                     line=1)])
    with guarded_log(log, guard=True):
        AnnotationsReporter(log, SourceLinks.from_environment()).run_finished(report)
    lines = raw.getvalue().decode("utf-8").splitlines()
    assert len(lines) == 4
    assert parse(lines[2])[2] == "agent said #xD800!" and parse(lines[2])[1]["title"] == "agenttest: s#xD800 (error)"
    assert parse(lines[3])[2].startswith("agenttest: 1 errored of 1 case ")
