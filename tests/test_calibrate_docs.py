"""Every example of docs/calibrate.md is real: its labels file is read as it says, its run prints what it shows
against a judge whose verdicts are known (fakes/helper_brain.py), its workflow passes actionlint and its gate fails
as it says, and its table of flags is the command's."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from action.test_lint import BIN, tool
from agenttest.calibrate.labels import read_labels
from agenttest.cli import main
from e2e.conftest import Run, helper_server, run_cli

REPO = Path(__file__).resolve().parents[1]
DOC = (REPO / "docs" / "calibrate.md").read_text()
CONFIG = """
version: 1
connectors:
  openai:
    base_url: ${OPENAI_BASE_URL}
    api_key: ${OPENAI_API_KEY}
    model: gpt-4o-mini
agents:
  workers.test.validator:
    builtin: validator
    connector: openai
"""


def _blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", DOC, re.M | re.S)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "agenttest.yaml").write_text(CONFIG)
    (tmp_path / "calibration").mkdir()
    (tmp_path / "calibration" / "judge-labels.jsonl").write_text(_blocks("jsonl")[0])
    return tmp_path


@pytest.fixture
def judge() -> Iterator[dict[str, str]]:
    with helper_server() as (_, server):
        yield {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-calibrate-docs"}


def _typed(command: str, cwd: Path, env: dict[str, str]) -> Run:
    words = shlex.split(command)
    assert words[:2] == ["agenttest", "calibrate"], command
    return run_cli(*words[1:], cwd=cwd, env=env)


def test_the_labels_file_is_read_as_the_doc_says(project: Path, judge: dict[str, str]) -> None:
    path = project / "calibration" / "judge-labels.jsonl"
    lines, invalid = read_labels(path, "calibration/judge-labels.jsonl")
    assert invalid == [] and len(lines) == 8 and sum(line.label for line in lines) == 4
    text = path.read_text().splitlines()
    text[2] = text[2].replace('"label": true', '"label": "true"')
    path.write_text("\n".join(text) + "\n")
    done = run_cli("calibrate", "-i", "calibration/judge-labels.jsonl", "--judge", "workers.test.validator",
                   cwd=project, env=judge)
    stated = "`calibration/judge-labels.jsonl:3: label: expected true or false, got string`"
    assert stated in DOC and f"✗ {stated.strip('`')}" in done.stdout.splitlines()


def test_the_run_prints_what_the_doc_shows(project: Path, judge: dict[str, str]) -> None:
    command = _blocks("sh")[0].strip()
    done = _typed(command, project, judge)
    assert done.code == 0, done.stdout + done.stderr
    assert done.stdout == _blocks("text")[0]
    figures = json.loads((project / "calibration.json").read_text())
    for key in ("accuracy", "true_positive_rate", "true_negative_rate", "majority_baseline", "self_contradiction"):
        assert set(figures[key]) >= {"value", "interval", "count", "of"} and f"`{key}`" in DOC
    for key in ("kappa", "confusion", "judged", "judge_errors", "invalid", "shortfalls", "passed", "results"):
        assert f"`{key}`" in DOC and key in figures
    assert set(figures["results"][4]) == {"line", "id", "label", "verdict", "agreed", "reason", "votes"}


def test_the_workflow_passes_actionlint_and_its_gate_fails_as_the_doc_says(
        project: Path, judge: dict[str, str], tmp_path: Path) -> None:
    [workflow] = _blocks("yaml")
    workflows = tmp_path / "lint" / ".github" / "workflows"
    workflows.mkdir(parents=True)
    (workflows / "calibrate.yml").write_text(workflow)
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    linted = subprocess.run([tool("actionlint"), "-shellcheck", tool("shellcheck"), str(workflows / "calibrate.yml")],
                            cwd=tmp_path / "lint", capture_output=True, text=True, env=env, timeout=120)
    assert linted.returncode == 0, linted.stdout + linted.stderr
    [command] = [line.strip() for line in workflow.splitlines() if line.strip().startswith("agenttest calibrate")]
    gated = _typed(command, project, judge)
    assert gated.code == 1, gated.stdout + gated.stderr
    said = _blocks("text")[1].splitlines()
    assert gated.stdout.splitlines()[-len(said) - 1:] == [*said, "Written: calibration.json"]


def test_the_table_of_flags_is_the_commands() -> None:
    table = DOC[DOC.index("| calibrate flag | default | meaning |"):]
    table = table[:table.index("\n\n")]
    documented = set(re.findall(r"(?<![\w-])(-[a-z]|--[a-z][a-z-]*)", table))
    command = main.commands["calibrate"]
    options = {name for param in command.params for name in param.opts} - {"-h", "--help"}
    assert documented == options
