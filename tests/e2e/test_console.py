"""The console: Yao's layout, colour and a live progress line only on a terminal."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys

import pytest

from .conftest import Project


def _run_in_terminal(project: Project, *args: str) -> tuple[int, str]:
    """Run the CLI with a pseudo-terminal as stdout, as a developer's shell would."""
    leader, follower = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "GITHUB_ACTIONS")} | {"TERM": "xterm"}
    proc = subprocess.Popen([sys.executable, "-m", "agenttest", *args], cwd=project.root, stdout=follower,
                            stderr=follower, stdin=subprocess.DEVNULL, env=env)
    os.close(follower)
    chunks = []
    while True:
        ready, _, _ = select.select([leader], [], [], 30)
        if not ready:
            break
        try:
            data = os.read(leader, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    os.close(leader)
    return proc.wait(timeout=30), b"".join(chunks).decode()


def test_colour_and_live_progress_only_on_a_terminal(project: Project) -> None:
    project.suite("suite.jsonl", {"id": "ok", "input": "hi"},
                  {"id": "bad", "input": "hi", "assert": {"type": "contains", "value": "nope"}})
    code, screen = _run_in_terminal(project, "-i", "suite.jsonl")
    assert code == 1
    assert "\x1b[32m" in screen and "\x1b[31m" in screen     # green PASSED, red FAILED
    assert "\r\x1b[K[Progress: " in screen
    piped = project.run("-i", "suite.jsonl")
    assert "\x1b[" not in piped.stdout and "\r" not in piped.stdout


def test_layout(project: Project) -> None:
    project.suite("suite.jsonl",
                  {"id": "ok", "input": [{"role": "user", "content": "first"}, {"role": "assistant", "content": "a"},
                                         {"role": "user", "content": "the   last\nquestion"}]},
                  {"id": "bad", "input": "x" * 80, "assert": {"type": "contains", "value": "nope"}},
                  {"id": "later", "input": "hi", "skip": "not today"})
    run = project.run("-i", "suite.jsonl", "--parallel", "1", "--timeout", "90s")
    lines = run.stdout.splitlines()
    assert lines[1] == "═" * 63 and lines[2] == "  Agent Test"
    assert "ℹ Agent: echo" in lines and "ℹ Input: suite.jsonl (3 test cases)" in lines
    assert "ℹ Timeout: 1m30s" in lines
    assert any(line.startswith("► [ok] the last question PASSED (") for line in lines)
    bad = next(i for i, line in enumerate(lines) if line.startswith("► [bad] "))
    assert lines[bad].startswith("► [bad] " + "x" * 47 + "... FAILED (")
    assert lines[bad + 1] == "  └─ output does not contain 'nope'"
    assert any(line.startswith("► [later] hi SKIPPED") for line in lines)
    assert "  └─ not today" in lines
    summary = lines.index("  Summary")
    assert lines[summary + 2:summary + 9] == [
        "  Agent:     echo", "  Total:     3", "  Passed:    1", "  Failed:    1", "  Skipped:   1",
        "  Pass Rate: 50.0%", lines[summary + 8]]
    assert lines[summary + 8].startswith("  Duration:  ")
    assert lines[-3] == "  ❌ TESTS FAILED"


def _artifact_texts(project: Project) -> dict[str, str]:
    return {path.name: path.read_text() for path in (project.root / "agenttest-results").iterdir()}


@pytest.mark.parametrize(("args", "env", "coloured"), [
    ((), {"GITHUB_ACTIONS": "true"}, True),                      # Actions logs render ANSI colour
    ((), {"GITHUB_ACTIONS": "true", "NO_COLOR": "1"}, False),    # no-color.org
    ((), {"GITHUB_ACTIONS": "true", "NO_COLOR": ""}, True),      # …set and empty does not count
    ((), {"FORCE_COLOR": "1"}, True),                            # force-color.org, into a pipe
    ((), {"FORCE_COLOR": ""}, False),
    (("--color", "always"), {}, True),
    (("--color", "never"), {"FORCE_COLOR": "1", "GITHUB_ACTIONS": "true"}, False),
    (("--color", "auto"), {}, False),                            # a pipe, outside Actions
])
def test_colour_follows_the_flag_the_environment_and_github_actions(project: Project, args: tuple[str, ...],
                                                                   env: dict[str, str], coloured: bool) -> None:
    project.suite("suite.jsonl", {"id": "ok", "input": "hi"},
                  {"id": "bad", "input": "hi", "assert": {"type": "contains", "value": "nope"}})
    run = project.run("-i", "suite.jsonl", *args, env={"GITHUB_ACTIONS": "", **env})
    assert run.code == 1
    assert ("\x1b[32m" in run.stdout and "\x1b[31m" in run.stdout) is coloured, run.stdout
    assert "\r" not in run.stdout                # the live line stays a terminal's
    for name, text in _artifact_texts(project).items():
        assert "\x1b" not in text, name          # never colour inside an artifact


def test_the_summary_ends_with_where_the_artifacts_went(project: Project) -> None:
    project.suite("suite.jsonl", {"id": "ok", "input": "hi"})
    run = project.run("-i", "suite.jsonl", "--junit", "out/junit.xml", "-o", "report.md")
    lines = run.stdout.splitlines()
    banner = lines.index("  ✨ ALL TESTS PASSED ✨")
    assert lines[banner - 3] == ("  Artifacts: agenttest-results/ (report.json, summary.md, ctrf.json, events.jsonl), "
                                 "out/junit.xml, report.md")
    assert (project.root / "out" / "junit.xml").is_file() and (project.root / "report.md").is_file()
    plain = project.run("-i", "suite.jsonl", "--output-dir", "results")
    assert ("  Artifacts: results/ (report.json, junit.xml, summary.md, ctrf.json, events.jsonl)"
            in plain.stdout.splitlines())


def test_a_run_whose_cases_were_all_skipped_says_no_test_ran(project: Project) -> None:
    project.suite("suite.jsonl", {"id": "a", "input": "hi", "skip": "later"},
                  {"id": "b", "input": "hi", "skip": "later"})
    run = project.run("-i", "suite.jsonl")
    lines = run.stdout.splitlines()
    assert run.code == 0
    assert "► [a] hi SKIPPED (<1ms)" in lines            # not `0µs`
    assert "  Pass Rate: n/a (no case ran)" in lines
    assert lines[-3] == "  ○ NO TEST RAN: 2 cases skipped" and "ALL TESTS PASSED" not in run.stdout
    assert run.report["summary"]["pass_rate"] is None


def test_a_console_that_cannot_show_the_symbols_gets_their_text_forms(project: Project) -> None:
    project.suite("suite.jsonl", {"id": "ok", "input": "hi → there"},
                  {"id": "bad", "input": "hi", "assert": {"type": "contains", "value": "nope"}})
    run = project.run("-i", "suite.jsonl", "--parallel", "1", "-v", env={"PYTHONIOENCODING": "ascii"})
    assert run.code == 1
    lines = [re.sub(r"\((<1ms|\d+ms)\)", "(T)", line) for line in run.stdout.splitlines()]
    assert lines[1:3] == ["=" * 63, "  Agent Test"] and "i Agent: echo" in lines
    assert lines[lines.index("> [ok] hi -> there PASSED (T)"):][:7] == [
        "> [ok] hi -> there PASSED (T)", "  `- Output: echo: hi -> there",
        "  `- nothing was checked: the case has no assertion and no `expected`",
        "> [bad] hi FAILED (T)", "  `- output does not contain 'nope'", "  `- Output: echo: hi",
        "  |  [x] contains: output does not contain 'nope'"]
    assert lines[-4:] == ["=" * 63, "  [FAIL] TESTS FAILED", "=" * 63, ""]
    assert "?" not in run.stdout
