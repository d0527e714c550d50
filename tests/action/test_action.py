"""`agenttest action` with the environment GitHub's runner gives a docker action (ContainerActionHandler.cs)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from agenttest.analysis import exit_code
from agenttest.github.environment import read_inputs
from agenttest.github.outputs import write_outputs
from e2e.conftest import helper_server

REPO = Path(__file__).resolve().parents[2]
ACTION = yaml.safe_load((REPO / "action.yml").read_text())
OWNER_UID = 1001        # the runner user, who owns the workspace; the container runs as root
WORKFLOW_TOKEN = "ghs_workflowToken0123456789abcdefABCDEF"      # what the runner makes of `${{ github.token }}`


def parse_github_output(text: str) -> dict[str, str]:
    """A port of the runner's file-command parser (FileCommandManager.cs, EnvFileKeyValuePairs)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    else:
        raise AssertionError("EOF marker missing new line")
    values: dict[str, str] = {}
    index = 0
    while index < len(lines):
        line = lines[index].rstrip("\r")
        index += 1
        if not line:
            continue
        equals, heredoc = line.find("="), line.find("<<")
        if equals >= 0 and (heredoc < 0 or equals < heredoc):
            name, value = line.split("=", 1)
        else:
            assert heredoc > 0, f"Invalid format '{line}'"
            name, delimiter = line[:heredoc], line[heredoc + 2:]
            assert name and delimiter, f"Invalid format '{line}'"
            body = []
            while True:
                assert index < len(lines), f"Invalid value. Matching delimiter not found '{delimiter}'"
                candidate = lines[index].rstrip("\r")
                index += 1
                if candidate == delimiter:
                    break
                body.append(candidate)
            value = "\n".join(body)
        values[name] = value
    return values


@dataclass
class Step:
    code: int
    stdout: str
    stderr: str
    workspace: Path
    file_commands: Path

    @property
    def outputs(self) -> dict[str, str]:
        return parse_github_output(self.output_file.read_text())

    @property
    def output_file(self) -> Path:
        return next(self.file_commands.glob("set_output_*"))

    @property
    def step_summary(self) -> str:
        return next(self.file_commands.glob("step_summary_*")).read_text()


def run_action(workspace: Path, inputs: dict[str, str], env: dict[str, str] | None = None,
               command: list[str] | None = None) -> Step:
    """The container's view: every declared input as INPUT_<NAME> (defaults merged, unset ones empty), the
    file-command files created empty per step, the github context as env, cwd = the workspace, owned by the
    runner user. `command` runs instead of the image's entrypoint (`agenttest action`)."""
    temp = workspace.parent
    file_commands = temp / "_runner_file_commands"
    file_commands.mkdir(exist_ok=True)
    for stale in file_commands.iterdir():
        stale.unlink()
    output = file_commands / f"set_output_{uuid.uuid4()}"
    summary = file_commands / f"step_summary_{uuid.uuid4()}"
    output.touch()
    summary.touch()
    (temp / "_github_home").mkdir(exist_ok=True)
    (temp / "_github_workflow").mkdir(exist_ok=True)
    (temp / "_github_workflow" / "event.json").write_text("{}")
    declared = {name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()}
    declared.update({name: value.replace("${{ github.token }}", WORKFLOW_TOKEN) for name, value in declared.items()})
    declared.update(inputs)
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_", "RUNNER_"))}
    full_env.update({f"INPUT_{name.replace(' ', '_').upper()}": value for name, value in declared.items()})
    full_env.update(
        GITHUB_ACTIONS="true", CI="true", HOME=str(temp / "_github_home"), GITHUB_WORKSPACE=str(workspace),
        GITHUB_OUTPUT=str(output), GITHUB_STEP_SUMMARY=str(summary), GITHUB_ENV=str(file_commands / "set_env_x"),
        GITHUB_EVENT_PATH=str(temp / "_github_workflow" / "event.json"), GITHUB_EVENT_NAME="push",
        RUNNER_TEMP=str(temp), GITHUB_REPOSITORY="octo/agents", GITHUB_SHA="feedbeef", GITHUB_REF="refs/heads/main",
        GITHUB_SERVER_URL="https://github.com", GITHUB_RUN_ID="42", GITHUB_ACTION="agenttest", RUNNER_OS="Linux",
        RUNNER_NAME="GitHub Actions 7", RUNNER_ARCH="X64",
    )
    full_env.update(env or {})
    if os.geteuid() == 0:
        for path in [workspace, *workspace.rglob("*")]:
            os.chown(path, OWNER_UID, OWNER_UID)
    proc = subprocess.run(command or [sys.executable, "-m", "agenttest", "action"], cwd=workspace, env=full_env,
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    return Step(proc.returncode, proc.stdout, proc.stderr, workspace, file_commands)


def test_failing_run(workspace: Path) -> None:
    step = run_action(workspace, {"input": "evals/suite.jsonl"})
    assert step.code == 1, step.stdout + step.stderr
    assert step.outputs == {
        "total": "2", "passed": "1", "failed": "1", "errors": "0", "timeouts": "0", "skipped": "0",
        "pass-rate": "50.0", "conclusion": "failure", "report": "agenttest-results/report.json",
        "junit": "agenttest-results/junit.xml", "summary": "agenttest-results/summary.md",
        "ctrf": "agenttest-results/ctrf.json", "events": "agenttest-results/events.jsonl",
        "comment": "no comment: a push event has no pull request to comment on",
        "baseline": "no baseline: none was asked for (baseline: auto compares with the base branch)"}
    for name in ("report", "junit", "summary", "ctrf", "events"):
        assert (workspace / step.outputs[name]).is_file()
    lines = step.stdout.splitlines()
    assert lines[-2].startswith("::error file=evals/suite.jsonl,line=2,title=agenttest%3A fail (failed)::")
    assert lines[-1].startswith("::error::agenttest: 1 failed of 2 cases")
    assert step.step_summary == (workspace / "agenttest-results" / "summary.md").read_text()
    assert "https://github.com/octo/agents/blob/feedbeef/evals/suite.jsonl#L2" in step.step_summary


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root, as in the container")
def test_files_are_handed_to_the_workspace_owner(workspace: Path) -> None:
    step = run_action(workspace, {"input": "evals/suite.jsonl", "output-dir": "out/nested/results",
                                  "args": "--output report.md"})
    assert step.code == 1, step.stdout + step.stderr
    written = [workspace / "out", workspace / "out" / "nested", *(workspace / "out").rglob("*"),
               workspace / "report.md"]
    assert len(written) > 6
    assert {(p.stat().st_uid, p.stat().st_gid) for p in written} == {(OWNER_UID, OWNER_UID)}
    assert (workspace / "report.md").read_text().startswith("## ❌ agenttest")


def test_fail_on_never_and_a_passing_selection(workspace: Path) -> None:
    never = run_action(workspace, {"input": "evals/suite.jsonl", "fail-on": "never"})
    assert never.code == 0 and never.outputs["conclusion"] == "failure"
    passing = run_action(workspace, {"input": "evals/suite.jsonl", "args": "--run '^pass$'"})
    assert passing.code == 0 and passing.outputs["conclusion"] == "success"
    assert passing.outputs["total"] == "1"
    assert "::error" not in passing.stdout


def test_fail_on_regression_without_a_baseline_warns_and_fails(workspace: Path) -> None:
    step = run_action(workspace, {"input": "evals/suite.jsonl", "fail-on": "regression"})
    assert step.code == 1
    assert "::warning::agenttest: fail-on: regression needs a baseline" in step.stdout


def test_working_directory_and_multi_line_input(workspace: Path) -> None:
    sub = workspace / "agents" / "support"
    sub.mkdir(parents=True)
    for name in ("agenttest.yaml", "echo_agent.py"):
        (sub / name).write_text((workspace / name).read_text())
    (sub / "a.jsonl").write_text('{"id": "a", "input": "x", "assert": {"type": "contains", "value": "echo"}}\n')
    (sub / "b.jsonl").write_text('{"id": "b", "input": "y", "assert": {"type": "contains", "value": "nope"}}\n')
    step = run_action(workspace, {"input": "a.jsonl\n  b.jsonl  \n\n", "working-directory": "agents/support",
                                  "output-dir": "results"})
    assert step.code == 1, step.stdout + step.stderr
    assert step.outputs["total"] == "2" and step.outputs["report"] == "agents/support/results/report.json"
    assert "::error file=agents/support/b.jsonl,line=1," in step.stdout


def test_a_lone_surrogate_from_the_agent_loses_no_output(workspace: Path) -> None:
    """Once a UnicodeEncodeError printing the annotations: a traceback, no annotations, no `$GITHUB_OUTPUT`."""
    (workspace / "echo_agent.py").write_text("def respond(request):\n"
                                            "    raise RuntimeError('agent said \\ud800')\n")
    step = run_action(workspace, {"input": "evals/suite.jsonl"})
    assert step.code == 1 and "Traceback" not in step.stderr, step.stdout + step.stderr
    assert step.outputs["errors"] == "2" and step.outputs["conclusion"] == "failure"
    errors = [line for line in step.stdout.splitlines() if line.startswith("::error")]
    assert len(errors) == 3 and "agent said #xD800" in errors[0]
    assert errors[-1].startswith("::error::agenttest: 2 errored of 2 cases")


def test_job_summary_false_leaves_the_step_summary_alone(workspace: Path) -> None:
    step = run_action(workspace, {"input": "evals/suite.jsonl", "job-summary": "false"})
    assert step.code == 1 and step.step_summary == ""
    assert (workspace / "agenttest-results" / "summary.md").is_file()


@pytest.mark.parametrize(("inputs", "message"), [
    ({"input": ""}, "input: required"),
    ({"input": "evals/suite.jsonl", "annotations": "yes"}, "annotations: 'yes' is not a boolean"),
    ({"input": "evals/suite.jsonl", "parallel": "many"}, "parallel: 'many' is not a whole number"),
    ({"input": "evals/suite.jsonl", "fail-on": "sometimes"}, "fail-on: 'sometimes' is not one of"),
    ({"input": "evals/suite.jsonl", "runs": "auto:2"}, "--runs: auto:2: MAX must be from 3"),
    ({"input": "evals/suite.jsonl", "runs": "twice"}, "--runs: expected N (a whole number of runs) or auto[:MAX]"),
    ({"input": "evals/suite.jsonl", "working-directory": "../elsewhere"}, "is outside the workspace"),
    ({"input": "evals/suite.jsonl", "args": "--no-such-flag"}, "args: No such option"),
    ({"input": "evals/suite.jsonl", "args": "--help"}, "asks for no run"),
    ({"input": "evals/suite.jsonl", "agent": "missing"}, "agent 'missing' is not defined"),
    # always a path (SPEC §2): a mistyped name is not sent as a chat message that passes
    ({"input": "evalz"}, "input: evalz: no such file or directory"),
    ({"input": "evals/suite.jsonl\nsuite"}, "input: suite: no such file or directory"),
    ({"input": "evals/suite.jsonl", "args": "-i evalz"}, "args: evalz: no such file or directory"),
])
def test_bad_inputs_fail_with_one_error_line(workspace: Path, inputs: dict[str, str], message: str) -> None:
    step = run_action(workspace, inputs)
    assert step.code == 2, step.stdout + step.stderr
    errors = [line for line in step.stdout.splitlines() if line.startswith("::error")]
    assert len(errors) == 1 and message in errors[0], step.stdout
    assert step.outputs == {"conclusion": "error"}


@pytest.mark.parametrize(("runs", "shown"), [("auto", "auto:10"), ("auto:4", "auto:4"), ("2", 2)])
def test_runs_takes_a_number_or_auto(workspace: Path, runs: str, shown: Any) -> None:
    step = run_action(workspace, {"input": "evals/suite.jsonl", "runs": runs})
    assert step.code == 1, step.stdout + step.stderr
    report = json.loads((workspace / "agenttest-results" / "report.json").read_text())
    assert report["summary"]["runs_per_case"] == shown
    # Both cases agree with themselves: under auto, three runs each and no more.
    assert report["summary"]["total_runs"] == (4 if shown == 2 else 6)
    assert [row.get("stopped") for row in report["stability_results"]] == (
        [None, None] if shown == 2 else ["agreed", "agreed"])


def test_annotations_false_and_max_annotations(workspace: Path) -> None:
    suite = workspace / "evals" / "many.jsonl"
    suite.write_text("".join(json.dumps({"id": f"f{i}", "input": "x", "assert": {"type": "contains", "value": "no"}})
                             + "\n" for i in range(6)))
    capped = run_action(workspace, {"input": "evals/many.jsonl", "max-annotations": "3"})
    errors = [line for line in capped.stdout.splitlines() if line.startswith("::error")]
    assert len(errors) == 3 and "and 4 more failing cases" in errors[1]
    quiet = run_action(workspace, {"input": "evals/many.jsonl", "annotations": "false"})
    assert quiet.code == 1 and "::error" not in quiet.stdout
    assert quiet.stdout.count("::stop-commands::") == 1       # the log is guarded all the same


def test_write_outputs_is_multiline_safe(tmp_path: Path) -> None:
    path = tmp_path / "out"
    path.write_text("earlier=1\n")
    value = "line 1\nghadelimiter_x\nEOF\n\nlast"
    write_outputs(str(path), {"text": value, "count": 3, "empty": None})
    assert parse_github_output(path.read_text()) == {"earlier": "1", "text": value, "count": "3", "empty": ""}


def test_inputs_are_read_as_the_toolkit_reads_them() -> None:
    env = {"INPUT_OUTPUT-DIR": "  out  ", "INPUT_FAIL-ON": "", "INPUT_MY_INPUT": "x"}
    assert read_inputs(env, ["output-dir", "fail-on", "my input", "absent"]) == {
        "output-dir": "out", "fail-on": None, "my input": "x", "absent": None}


@pytest.mark.parametrize(("fail_on", "ok", "regressions", "spent", "expected"), [
    ("failure", False, None, False, 1), ("failure", True, None, False, 0), ("never", False, None, True, 0),
    ("regression", False, 0, False, 0), ("regression", False, 2, False, 1), ("regression", True, 0, False, 0),
    ("regression", True, 0, True, 1), ("failure", True, None, True, 1), ("regression", False, None, False, 1),
])
def test_exit_code_per_fail_on(fail_on: str, ok: bool, regressions: Any, spent: bool, expected: int) -> None:
    assert exit_code(ok, fail_on, regressions, spent=spent) == expected


def test_judged_and_dynamic_suites_run_through_the_action(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    shutil.copytree(REPO / "examples" / "expense", workspace)
    (workspace / ".git").mkdir()
    (workspace / "tests" / "more.jsonl").write_text(json.dumps(
        {"id": "never-submits", "input": "Hello", "simulator": {"options": {"metadata": {"amount": "$5"}}},
         "checkpoints": [{"id": "submitted", "assert": {"type": "tool_called", "value": "create_expense"}}],
         "max_turns": 2}) + "\n")
    step = run_action(workspace, {"input": "tests/conversations.jsonl\ntests/more.jsonl\ntests/expense.jsonl",
                                  "simulator": "workers.test.user"})
    assert step.code == 1, step.stdout + step.stderr
    assert (step.outputs["total"], step.outputs["passed"], step.outputs["failed"]) == ("13", "10", "2")
    report = json.loads((workspace / "agenttest-results" / "report.json").read_text())
    by_id = {r["id"]: r for r in report["results"]}
    assert by_id["submit-by-conversation"]["status"] == "passed"
    assert by_id["policy-judged"]["assertions"][0]["details"]["judge"] == "workers.test.validator"
    assert by_id["never-submits"]["error"] == "max turns (2) exceeded without reaching: submitted"
    assert "**Conversation** — 2 turns, 0 of 1 checkpoints reached" in step.step_summary
    assert "::error file=tests/more.jsonl,line=1,title=agenttest%3A never-submits (failed)::" in step.stdout
    assert not (Path(os.environ["XDG_CACHE_HOME"]) / "agenttest" / "helpers").exists()   # in-process helpers are
    assert not (workspace / ".agenttest-cache").exists()                                 # never cached


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root, as in the container")
def test_the_helper_cache_is_handed_to_the_workspace_owner(workspace: Path) -> None:
    with helper_server() as (brain, server):
        (workspace / "agenttest.yaml").write_text(textwrap.dedent(f"""
            version: 1
            defaults:
              name: echo
            agents:
              echo:
                provider: python
                callable: echo_agent:respond
              judge:
                builtin: validator
                base_url: {server.base_url}
                model: brain-1
            """))
        (workspace / "evals" / "judged.jsonl").write_text(json.dumps(
            {"id": "j", "input": "hi", "assert": {"type": "agent", "use": "agents:judge", "value": "says 'hi'"}}))
        # The container's $HOME is the runner's _github_home, its user's; no XDG_CACHE_HOME: the cache and its key
        # go there, and actions/cache (run as that user) must read them.
        home = workspace.parent / "_github_home"
        home.mkdir()
        os.chown(home, OWNER_UID, OWNER_UID)
        step = run_action(workspace, {"input": "evals/judged.jsonl"}, env={"XDG_CACHE_HOME": ""})
    assert step.code == 0, step.stdout + step.stderr
    cache = home / ".cache" / "agenttest"
    assert brain.calls["judge"] == 1 and len(list((cache / "helpers").rglob("*.json"))) == 1
    assert (cache / "key").is_file() and not (workspace / ".agenttest-cache").exists()
    assert {p.stat().st_uid for p in [home / ".cache", cache, *cache.rglob("*")]} == {OWNER_UID}


def test_a_hostile_suite_through_the_action_runs_no_workflow_command(workspace: Path) -> None:
    """SPEC §11 for the Action: suite keys, assertion types and file names written by a fork stay text."""
    from report.test_annotations import commands_the_runner_would_run

    (workspace / "evals" / "odd\n::error::PWN-name.jsonl").write_text(
        json.dumps({"id": "a", "input": "x", "##[error]PWN-key": 1}) + "\n"
        + json.dumps({"id": "b", "input": "x", "assert": {"type": "::warning::PWN-type"}}) + "\n")
    step = run_action(workspace, {"input": "evals/"})
    assert step.code == 1, step.stdout + step.stderr
    assert "PWN-name" in step.stdout and "PWN-key" in step.stdout
    executed = commands_the_runner_would_run(step.stdout.splitlines() + step.stderr.splitlines())
    ours = [c for c in executed if not c.startswith(("::stop-commands::", "::add-mask::", "::error file=",
                                                      "::error::agenttest:", "::warning::agenttest:"))]
    assert ours == [], executed          # annotations are ours, their file and text escaped
    missing = run_action(workspace, {"input": "evals/x\n##[error]PWN-missing.jsonl"})
    assert missing.code == 2
    assert all("PWN" not in c or c.startswith("::error::agenttest:")
               for c in commands_the_runner_would_run(missing.stdout.splitlines()))


def _github_env(workspace: Path, output: Path) -> dict[str, str]:
    return {"GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": str(workspace), "GITHUB_OUTPUT": str(output)}


def test_run_writes_the_same_step_outputs_as_the_action(workspace: Path) -> None:
    """`docker run` and `pip install` users get the Action's outputs from `agenttest run` in GitHub Actions."""
    (workspace / "evals" / "third.jsonl").write_text('{"id": "x", "input": "a", "assert": '
                                                     '{"type": "contains", "value": "zz"}}\n')
    action = run_action(workspace, {"input": "evals/suite.jsonl\nevals/third.jsonl"})
    assert action.code == 1
    code, outputs = _run_in_actions(workspace, "-i", "evals/suite.jsonl", "-i", "evals/third.jsonl")
    assert code == 1
    # The one difference: the comment is `auto` in the Action and `off` on the command line (on a push, neither
    # comments).
    assert outputs == {**action.outputs, "comment": "no comment: comment is off"}
    assert action.outputs["comment"] == "no comment: a push event has no pull request to comment on"
    assert outputs["pass-rate"] == "33.3"           # one decimal, as the console, summary and JUnit print it
    assert set(outputs) >= {"total", "passed", "failed", "errors", "timeouts", "skipped", "pass-rate", "report",
                            "junit", "summary", "conclusion"}
    assert outputs["report"] == "agenttest-results/report.json" and outputs["conclusion"] == "failure"


def test_run_in_github_actions_says_error_when_it_cannot_start(workspace: Path) -> None:
    assert _run_in_actions(workspace, "-i", "evals/suite.jsonl", "-n", "nobody") == (2, {"conclusion": "error"})


def _run_in_actions(workspace: Path, *args: str) -> tuple[int, dict[str, str]]:
    """`agenttest run ARGS` as a workflow step runs it: its exit code and the step outputs it wrote."""
    output = workspace.parent / "run_output"
    output.write_text("")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_", "RUNNER_"))}
    cli = subprocess.run([sys.executable, "-m", "agenttest", *args], cwd=workspace,
                         env={**env, **_github_env(workspace, output)}, capture_output=True, text=True, timeout=120)
    assert "Traceback" not in cli.stderr, cli.stdout + cli.stderr
    return cli.returncode, parse_github_output(output.read_text())


def test_fail_on_never_closes_with_a_notice(workspace: Path) -> None:
    step = run_action(workspace, {"input": "evals/suite.jsonl", "fail-on": "never"})
    assert step.code == 0
    lines = step.stdout.splitlines()
    assert lines[-2].startswith("::error file=evals/suite.jsonl,line=2,")      # the failing case stays annotated
    assert lines[-1].startswith("::notice::agenttest: 1 failed of 2 cases")
    assert not any(line.startswith("::error::") for line in lines)


def test_unset_inputs_leave_the_config_defaults_in_charge(workspace: Path) -> None:
    """The runner passes an input's `default:` as if set: job-summary and fail-on had one, so they overrode
    `defaults: job_summary` and `defaults: fail_on` in agenttest.yaml."""
    config = workspace / "agenttest.yaml"
    config.write_text(config.read_text().replace("  name: echo\n", "  name: echo\n  job_summary: false\n"
                                                                   "  fail_on: never\n"))
    step = run_action(workspace, {"input": "evals/suite.jsonl"})
    assert step.code == 0, step.stdout + step.stderr            # fail_on: never, from the config
    assert step.step_summary == ""                               # job_summary: false, from the config
    assert step.stdout.splitlines()[-1].startswith("::notice::")
    forced = run_action(workspace, {"input": "evals/suite.jsonl", "job-summary": "true", "fail-on": "failure"})
    assert forced.code == 1 and forced.step_summary.startswith("## ❌ agenttest")


def test_a_run_whose_cases_were_all_skipped_has_no_rate_and_is_no_success(workspace: Path) -> None:
    (workspace / "evals" / "later.jsonl").write_text('{"id": "a", "input": "x", "skip": "later"}\n')
    step = run_action(workspace, {"input": "evals/later.jsonl"})
    assert step.code == 0, step.stdout + step.stderr
    assert step.outputs["pass-rate"] == "" and step.outputs["conclusion"] == "skipped"
    assert (step.outputs["total"], step.outputs["skipped"]) == ("1", "1")
    assert step.step_summary.startswith("## ⏭️ agenttest: no case ran, 1 skipped")


def test_the_token_is_masked_before_the_guard_and_hidden_from_the_agent(workspace: Path) -> None:
    (workspace / "echo_agent.py").write_text("import os\n\ndef respond(request):\n"
                                            "    return 'token: ' + os.environ.get('INPUT_GITHUB-TOKEN', 'none')\n")
    step = run_action(workspace, {"input": "evals/suite.jsonl"})
    assert step.code == 1, step.stdout + step.stderr
    lines = step.stdout.splitlines()
    mask = lines.index(f"::add-mask::{WORKFLOW_TOKEN}")
    assert mask < next(i for i, line in enumerate(lines) if line.startswith("::stop-commands::"))
    report = json.loads((workspace / "agenttest-results" / "report.json").read_text())
    outputs = [result["output"] for result in report["results"]]
    assert outputs == ["token: none", "token: none"]
