"""The composite action's scripts as the runner executes them (`shell: bash`): the install step makes a virtual
environment from the action's checkout, and the run step runs `agenttest action` from it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from installs import checkout, offline_env

from .test_action import parse_github_output, run_action

REPO = Path(__file__).resolve().parents[2]
STEPS = {step["id"]: step for step in yaml.safe_load((REPO / "composite" / "action.yml").read_text())["runs"]["steps"]}
# How the runner runs a `shell: bash` script (by absolute path: a test empties PATH).
BASH = [shutil.which("bash") or "bash", "--noprofile", "--norc", "-eo", "pipefail", "-c"]


def run_step(step: dict[str, Any], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*BASH, step["run"]], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_the_install_step_installs_the_actions_checkout_and_the_run_step_runs_it(tmp_path: Path,
                                                                               workspace: Path) -> None:
    action = checkout(tmp_path / "action", "composite")
    output = tmp_path / "install_output"
    output.touch()
    venv = tmp_path / "runner_temp" / "agenttest-venv"
    # `setup-python: false`: no python-path from actions/setup-python, so the python3 on PATH is used.
    env = offline_env(BASE_PYTHON="", VENV=str(venv), GITHUB_ACTION_PATH=str(action / "composite"),
                      GITHUB_OUTPUT=str(output))
    install = run_step(STEPS["install"], env, tmp_path)
    assert install.returncode == 0, install.stdout + install.stderr
    python = parse_github_output(output.read_text())["python"]
    assert python == str(venv / "bin" / "python")
    where = subprocess.run([python, "-c", "import agenttest; print(agenttest.__file__)"], cwd=tmp_path, env=env,
                           capture_output=True, text=True, check=True)
    assert Path(where.stdout.strip()).is_relative_to(venv)          # installed from the action, not this checkout
    step = run_action(workspace, {"input": "evals/suite.jsonl"}, env={"AGENTTEST_PYTHON": python,
                                                                      "PYTHONPATH": env["PYTHONPATH"]},
                      command=[*BASH, STEPS["run"]["run"]])
    assert step.code == 1, step.stdout + step.stderr
    assert (step.outputs["passed"], step.outputs["failed"], step.outputs["conclusion"]) == ("1", "1", "failure")


def test_the_install_step_says_when_there_is_no_python(tmp_path: Path) -> None:
    install = run_step(STEPS["install"], {"PATH": str(tmp_path), "BASE_PYTHON": "", "VENV": str(tmp_path / "venv")},
                       tmp_path)
    assert (install.returncode, install.stdout) == (
        1, "::error title=agenttest::setup-python is false and there is no python3 or python on PATH\n")
