"""Every example in the README is real: the config loads, the cases load, the quick-start commands exist."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

from agenttest.cases import load_suite
from agenttest.cases.model import Case
from agenttest.config import load_project
from installs import checkout, offline_env

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text()


def _blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", README, re.M | re.S)


def test_the_config_example_loads(tmp_path: Path) -> None:
    config = next(block for block in _blocks("yaml") if block.startswith("version: 1"))
    path = tmp_path / "agenttest.yaml"
    path.write_text(config)
    project = load_project(path)
    assert set(project.agents) == {"assistants.expense", "assistants.cli"}
    assert project.defaults["name"] == "assistants.expense"


def test_the_case_examples_load(tmp_path: Path) -> None:
    (suite := tmp_path / "cases.jsonl").write_text(_blocks("jsonl")[0])
    entries = load_suite([str(suite)], cwd=tmp_path, repo_root=tmp_path).entries
    assert [type(e) for e in entries] == [Case, Case, Case]
    assert [e.id for e in entries] == ["greeting", "asks-for-details", "confirm"]


def test_the_quick_start_first_command_installs_agenttest_and_runs_the_example(tmp_path: Path) -> None:
    command = _blocks("sh")[0].strip()
    assert command.startswith("python3 -m venv .venv && .venv/bin/pip install . && ")
    clone = checkout(tmp_path / "clone", "examples")
    proc = subprocess.run(["sh", "-c", command], cwd=clone, env=offline_env(), capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 1, proc.stdout + proc.stderr       # one of the nine cases fails on purpose
    report = json.loads((clone / "agenttest-results" / "report.json").read_text())
    assert Counter(r["status"] for r in report["results"]) == {"passed": 7, "failed": 1, "skipped": 1}
    python = str(clone / ".venv" / "bin" / "python")
    installed = subprocess.run([python, "-c", "import agenttest; print(agenttest.__file__)"], cwd=clone,
                               env=offline_env(), capture_output=True, text=True, check=True)
    assert Path(installed.stdout.strip()).is_relative_to(clone / ".venv")      # the copy pip installed, not this one


def test_ci_runs_the_readmes_test_command_with_no_network() -> None:
    install, _, tests = _blocks("sh")[1].strip().rpartition(" && ")
    assert tests == ".venv/bin/pytest"
    ci = (REPO / ".ci" / "run").read_text().splitlines()
    assert ci.index(install) < ci.index(f"unshare --net sh -c 'ip link set lo up && exec {tests}'")


def test_the_case_examples_pass_against_the_example_agent(tmp_path: Path) -> None:
    example = tmp_path / "expense"
    shutil.copytree(REPO / "examples" / "expense", example)
    (example / "tests" / "readme.jsonl").write_text(_blocks("jsonl")[0])
    proc = subprocess.run([sys.executable, "-m", "agenttest", "-i", "tests/readme.jsonl"], cwd=example,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads((example / "agenttest-results" / "report.json").read_text())
    assert [r["status"] for r in report["results"]] == ["passed"] * 3


def test_the_judged_and_conversation_examples_pass_against_the_example_agent(tmp_path: Path) -> None:
    example = tmp_path / "expense"
    shutil.copytree(REPO / "examples" / "expense", example)
    judged, talks = _blocks("jsonl")[1:3]
    (example / "tests" / "readme.jsonl").write_text(judged + talks)
    proc = subprocess.run([sys.executable, "-m", "agenttest", "-i", "tests/readme.jsonl"], cwd=example,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads((example / "agenttest-results" / "report.json").read_text())
    assert {r["id"]: r["status"] for r in report["results"]} == {
        "judged-policy": "passed", "judged-three-times": "passed", "submit-by-talking": "passed",
        "scripted": "passed"}
    votes = next(r for r in report["results"] if r["id"] == "judged-three-times")["assertions"][0]["details"]["votes"]
    assert votes == {"passed": 3, "failed": 0}


def test_the_helper_agents_example_loads(tmp_path: Path) -> None:
    config = next(block for block in _blocks("yaml") if "builtin: validator" in block)
    path = tmp_path / "agenttest.yaml"
    path.write_text(config)
    project = load_project(path)
    roles = {agent_id: getattr(settings, "builtin", None) for agent_id, settings in project.agents.items()}
    assert roles == {"workers.test.validator": "validator", "workers.test.user": "simulator",
                     "workers.test.generator": "generator"}


def test_the_budget_example_loads_with_its_prices(tmp_path: Path) -> None:
    config = next(block for block in _blocks("yaml") if "price:" in block)
    path = tmp_path / "agenttest.yaml"
    path.write_text(config)
    project = load_project(path)
    assert project.connectors["openai"].price is not None and project.connectors["openai"].price.output == 0.6
    assert project.agents["assistants.local"].price is not None
