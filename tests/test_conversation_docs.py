"""Every example in docs/conversations.md is real: its cases run against the bundled expense assistant with no API
key and end as the page says, the console, summary and terminal session it shows are what agenttest prints, and the
README's links into it lead somewhere."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from e2e.test_interactive import Terminal

REPO = Path(__file__).resolve().parents[1]
DOC = (REPO / "docs" / "conversations.md").read_text()


def _blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", DOC, re.M | re.S)


def _cases() -> dict[str, dict[str, Any]]:
    cases = [json.loads(line) for block in _blocks("jsonl") for line in block.splitlines() if line.strip()]
    return {case["id"]: case for case in cases}


def _example(tmp_path: Path) -> Path:
    """A repository holding a copy of the expense example, with the page's cases in its tests/docs.jsonl."""
    example = tmp_path / "examples" / "expense"
    shutil.copytree(REPO / "examples" / "expense", example, ignore=shutil.ignore_patterns("__pycache__"))
    (example / "tests" / "docs.jsonl").write_text("".join(json.dumps(case) + "\n" for case in _cases().values()))
    return tmp_path


def _run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "AGENTTEST_"))}
    return subprocess.run([sys.executable, "-m", "agenttest", *args, "--no-cache"], cwd=root, env=env,
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_the_pages_cases_end_as_it_says_and_the_reports_show_what_it_shows(tmp_path: Path) -> None:
    root = _example(tmp_path)
    assert set(_cases()) == {"submit-by-talking", "scripted", "turns-with-a-guard", "static-trip", "read-only"}
    proc = _run(root, "-i", "examples/expense/tests/docs.jsonl", "--parallel", "1")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    report = json.loads((root / "agenttest-results" / "report.json").read_text())
    ended = {r["id"]: (r["status"], r["metadata"]["termination"]) for r in report["results"]}
    assert ended == {"submit-by-talking": ("passed", "checkpoints_reached"),
                     "scripted": ("passed", "checkpoints_reached"),
                     "turns-with-a-guard": ("passed", "turns_completed"), "static-trip": ("passed", "turns_completed"),
                     "read-only": ("failed", "guard_broken")}
    [console] = [block for block in _blocks("text") if block.startswith("► [read-only]")]
    printed = proc.stdout[proc.stdout.index("► [read-only]"):].splitlines()[:len(console.splitlines())]
    without_time = re.compile(r"FAILED \([^)]*\)")
    assert [without_time.sub("FAILED", line) for line in printed] == \
        [without_time.sub("FAILED", line) for line in console.splitlines()]
    [chat] = _blocks("markdown")
    assert chat in (root / "agenttest-results" / "summary.md").read_text()
    example = next(case for case in map(json.loads, (REPO / "examples/expense/tests/conversations.jsonl").read_text()
                                        .splitlines()[3:]) if case["id"] == "turns-with-a-guard")
    documented = _cases()["turns-with-a-guard"]
    assert {k: v for k, v in example.items() if k not in ("name", "checkpoints")} == {
        k: v for k, v in documented.items() if k != "checkpoints"}       # the page shows the example project's case


def test_the_awaiting_input_hint_is_the_one_printed(tmp_path: Path) -> None:
    root = _example(tmp_path)
    suite = root / "examples" / "expense" / "tests" / "ask.jsonl"
    suite.write_text('{"id": "ask", "turns": [{"input": "I want to submit an expense"}]}\n')
    proc = _run(root, "-i", str(suite.relative_to(root)), "--on-missing-input", "fail")
    assert proc.returncode == 1
    error = json.loads((root / "agenttest-results" / "report.json").read_text())["results"][0]["error"]
    assert f"`{error}`" in _flat(DOC)


def test_the_pages_terminal_session_is_what_a_person_sees(tmp_path: Path) -> None:
    root = _example(tmp_path)
    [command] = [block.strip() for block in _blocks("sh") if "--interactive" in block]
    args = command.split()[1:]
    [session] = [block for block in _blocks("text") if block.startswith("── conversation")]
    terminal = Terminal([*args, "--color", "never"], root, {**os.environ, "NO_COLOR": "1"})
    for line in session.splitlines():
        typed = re.match(r"you \(turn \d+\) › (.*)$", line)
        if typed:
            terminal.expect(line[:line.index("›") + 2])
            terminal.type(typed.group(1))
        else:
            terminal.expect(line.rstrip())
    assert terminal.finish() == 0, terminal.screen
    saved = json.loads((root / "examples" / "expense" / "tests" / "explored.jsonl").read_text())
    assert saved["turns"] == [{"input": "I want to submit an expense"}, {"input": "It was a client dinner, $250"},
                              {"input": "Yes, confirm."}]
    assert _flat(json.dumps(saved["turns"], ensure_ascii=False)) in _flat(DOC)


def test_the_readmes_links_into_the_page_lead_somewhere() -> None:
    readme = (REPO / "README.md").read_text()
    anchors = {re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
               for heading in re.findall(r"^#{1,4} (.+)$", DOC, re.M)}
    links = re.findall(r"\]\(docs/conversations\.md#([\w-]+)\)", readme) + \
        re.findall(r"\]\(#([\w-]+)\)", DOC)
    assert links and [link for link in links if link not in anchors] == []
    assert "docs/conversations.md" in readme
