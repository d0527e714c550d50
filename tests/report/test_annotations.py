"""Annotations: one per failing case at its JSONL line, capped, a closing line, and the log guarded meanwhile."""

from __future__ import annotations

import io
import re
from pathlib import Path

from agenttest.report.annotations import AnnotationsReporter, annotation_lines, resume_commands
from agenttest.report.console import ConsoleReporter
from agenttest.report.github import SourceLinks
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
    out = io.StringIO()
    report = make_report(results)
    reporters = [ConsoleReporter(out, verbose=True),
                 AnnotationsReporter(out, SourceLinks.from_environment(), annotate=annotate, guard=guard)]
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


def test_agent_text_in_the_console_never_becomes_a_command() -> None:
    lines = run_with_console([hostile_result(input=HOSTILE, error=HOSTILE)], annotate=True, guard=True)
    executed = commands_the_runner_would_run(lines)
    assert [c.split("::")[1].split(" ")[0] for c in executed] == ["stop-commands", "error", "error"]
    assert executed[1].startswith("::error file=suites/hostile.jsonl,line=3,")
    assert any("pwned" in line for line in lines)          # the console did print the hostile text…
    unguarded = commands_the_runner_would_run(run_with_console([hostile_result(error=HOSTILE)], annotate=False,
                                                               guard=False))
    assert unguarded                                     # …which, without the guard, the runner would execute


def test_guard_token_is_random_and_resumed_once() -> None:
    first = [line for line in run_with_console(failing(1), annotate=False, guard=True) if line.startswith("::")]
    second = [line for line in run_with_console(failing(1), annotate=False, guard=True) if line.startswith("::")]
    assert len(first) == 2 and re.fullmatch(r"::stop-commands::[0-9a-f]{32}", first[0])
    assert first[1] == f"::{first[0].split('::')[2]}::"
    assert first != second


def test_an_unfinished_run_does_not_leave_the_log_deaf() -> None:
    out = io.StringIO()
    reporter = AnnotationsReporter(out, SourceLinks.from_environment(), annotate=True, guard=True)
    reporter.run_started(make_report([]).info)
    resume_commands()
    resume_commands()
    lines = out.getvalue().splitlines()
    assert len(lines) == 2 and lines[1] == f"::{lines[0].split('::')[2]}::"
