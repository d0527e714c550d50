"""The pre-commit hook (.pre-commit-hooks.yaml) runs as pre-commit runs it: its `entry` with the changed files that
match `files` appended, exiting 0 on valid suites and 2, naming the file and line, on an invalid one."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]


def run_hook(cwd: Path, changed: list[str]) -> subprocess.CompletedProcess[str]:
    [hook] = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == "agenttest-validate" and hook["language"] == "python"
    files = [name for name in changed if re.search(hook["files"], name)]
    command = shlex.split(hook["entry"])
    assert command[0] == "agenttest"       # the console script pre-commit's environment gets from pip install
    return subprocess.run([sys.executable, "-m", "agenttest", *command[1:], *hook.get("args", []), *files], cwd=cwd,
                          capture_output=True, text=True, timeout=60)


def test_the_hook_passes_valid_suites_and_fails_an_invalid_one(tmp_path: Path) -> None:
    (tmp_path / "agenttest.yaml").write_text("version: 1\nagents:\n  a: {provider: python, callable: m:f}\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "good.jsonl").write_text('{"id": "a", "input": "hi", "expected": "hi"}\n')
    (tmp_path / "tests" / "other.jsonl").write_text('{"id": "b", "input": "hi"}\n')
    (tmp_path / "README.md").write_text("not a suite")
    ok = run_hook(tmp_path, ["tests/good.jsonl", "tests/other.jsonl", "README.md"])
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "2 valid, 0 invalid in 2 files" in ok.stdout
    (tmp_path / "tests" / "bad.jsonl").write_text('{"id": "a", "input": "hi"}\n{"id": "b", "inptu": "hi"}\n')
    bad = run_hook(tmp_path, ["tests/good.jsonl", "tests/bad.jsonl"])
    assert bad.returncode == 2
    assert "tests/bad.jsonl:2: invalid test case: unknown key 'inptu' (did you mean 'input'?)" in bad.stdout
