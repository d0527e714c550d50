"""The console: Yao's layout, colour and a live progress line only on a terminal."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys

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
