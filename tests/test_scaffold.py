"""`agenttest init` in a fresh repository: the files it writes, that it never overwrites, that its config and
suite pass `validate` and run green against a real agent, and that its workflow passes actionlint."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from action.test_lint import BIN, REPO, tool
from agenttest.hosting import ACTION
from e2e.conftest import helper_server, run_cli
from fakes.server import ScriptedServer

WRITTEN = ["agenttest.yaml", "tests/agents/example.jsonl", "calibration/judge-labels.jsonl",
           ".github/workflows/agenttest.yml"]


def repository(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "src" / "app").mkdir(parents=True)
    return root


def test_init_writes_the_four_files_at_the_repository_root_and_says_what_next(tmp_path: Path) -> None:
    root = repository(tmp_path)
    done = run_cli("init", cwd=root / "src" / "app")
    assert done.code == 0, done.stderr
    assert sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()) == sorted([*WRITTEN, ".gitignore"])
    assert done.stdout.splitlines() == [
        "wrote ../../agenttest.yaml", "wrote ../../tests/agents/example.jsonl",
        "wrote ../../calibration/judge-labels.jsonl", "wrote ../../.github/workflows/agenttest.yml",
        "wrote ../../.gitignore", "",
        "Next: agenttest validate -i ../../tests/agents/example.jsonl",
        "Then point AGENT_URL at your agent (default http://localhost:8080/chat) and run the case that needs no "
        "key: agenttest -i ../../tests/agents/example.jsonl --run greets",
        "The judged case and the conversation also need OPENAI_API_KEY, for the judge and the simulated user of "
        "../../agenttest.yaml: export OPENAI_API_KEY=sk-… and run: agenttest -i ../../tests/agents/example.jsonl",
        "Before trusting the judge, measure it against replies a person labelled: agenttest calibrate -i "
        "../../calibration/judge-labels.jsonl (then label replies of your own agent)",
        f"../../.github/workflows/agenttest.yml runs the action {ACTION}: on a fork or a copy of agenttest, change "
        "its `uses:` line."]
    config = (root / "agenttest.yaml").read_text()
    for kind in ("provider: http", "#   provider: openai", "#   provider: exec", "#   provider: python",
                 "builtin: validator", "builtin: simulator"):
        assert kind in config
    checked = run_cli("validate", "-i", "../../tests/agents/example.jsonl", cwd=root / "src" / "app",
                      env={"OPENAI_API_KEY": ""})
    assert checked.code == 0, checked.stdout + checked.stderr
    assert checked.stdout.strip() == "3 valid, 0 invalid in 1 file"


def test_init_never_overwrites_and_writes_nothing_when_anything_is_there(tmp_path: Path) -> None:
    root = repository(tmp_path)
    (root / "agenttest.yml").write_text("mine\n")
    (root / ".github" / "workflows").mkdir(parents=True)
    (root / ".github" / "workflows" / "agenttest.yml").write_text("mine too\n")
    refused = run_cli("init", cwd=root)
    assert refused.code == 2 and refused.stdout == ""
    assert refused.stderr.strip() == (f"Error: init: agenttest.yml, .github/workflows/agenttest.yml already exist in "
                                      f"{root}; nothing was written (init never overwrites a file)")
    assert not (root / "agenttest.yaml").exists() and not (root / "tests").exists()
    assert (root / "agenttest.yml").read_text() == "mine\n"


def test_init_keeps_the_results_out_of_git_appending_to_a_gitignore_never_overwriting_it(tmp_path: Path) -> None:
    """A new .gitignore ignores agenttest-results/; one without the entry gets it appended (its own lines kept as
    they were, a last line without its newline too); one that has it is left alone, and init says nothing of it."""
    fresh = tmp_path / "fresh"
    subprocess.run(["git", "init", "-q", str(fresh)], check=True)
    assert "wrote .gitignore" in run_cli("init", cwd=fresh).stdout.splitlines()
    (fresh / "agenttest-results").mkdir()
    (fresh / "agenttest-results" / "report.json").write_text("{}\n")
    ignored = subprocess.run(["git", "check-ignore", "-q", "agenttest-results/report.json"], cwd=fresh)
    assert ignored.returncode == 0, (fresh / ".gitignore").read_text()
    assert ".gitignore" in subprocess.run(["git", "status", "--porcelain"], cwd=fresh, capture_output=True,
                                          text=True, check=True).stdout
    mine = repository(tmp_path / "mine")
    (mine / ".gitignore").write_bytes(b"node_modules/\n*.log")
    done = run_cli("init", cwd=mine)
    assert done.code == 0 and "updated .gitignore (added agenttest-results/)" in done.stdout.splitlines()
    text = (mine / ".gitignore").read_text()
    assert text.startswith("node_modules/\n*.log\n") and text.endswith("\nagenttest-results/\n")
    assert text.count("agenttest-results/") == 1
    has_it = repository(tmp_path / "has-it")
    (has_it / ".gitignore").write_text("/agenttest-results\n")
    done = run_cli("init", cwd=has_it)
    assert done.code == 0 and ".gitignore" not in done.stdout
    assert (has_it / ".gitignore").read_text() == "/agenttest-results\n"


def test_init_writes_no_gitignore_out_of_the_repository(tmp_path: Path) -> None:
    root = repository(tmp_path)
    outside = tmp_path / "outside-ignore"
    outside.write_text("theirs\n")
    (root / ".gitignore").symlink_to(outside)
    refused = run_cli("init", cwd=root)
    assert refused.code == 2 and refused.stdout == ""
    assert refused.stderr.startswith("Error: init: .gitignore: it leads through a symlink to ")
    assert outside.read_text() == "theirs\n" and not (root / "agenttest.yaml").exists()


def test_init_outside_git_writes_in_the_working_directory(tmp_path: Path) -> None:
    done = run_cli("init", cwd=tmp_path)
    assert done.code == 0 and all((tmp_path / name).is_file() for name in WRITTEN)


async def _assistant(request: web.Request, body: Any) -> web.StreamResponse:
    return web.json_response({"content": "Hello! I can help you file and track your requests."})


def test_the_scaffolded_suite_runs_green_against_a_real_agent_and_judge(tmp_path: Path) -> None:
    root = repository(tmp_path)
    assert run_cli("init", cwd=root).code == 0
    with ScriptedServer("/chat", default=_assistant) as agent, helper_server() as (brain, fake):
        run = run_cli("-i", "tests/agents/example.jsonl", cwd=root,
                      env={"AGENT_URL": agent.endpoint, "OPENAI_BASE_URL": fake.base_url,
                           "OPENAI_API_KEY": "sk-scaffold-test-key"})
    assert run.code == 0, run.stdout + run.stderr
    assert {r["id"]: r["status"] for r in run.report["results"]} == {
        "greets": "passed", "says-what-it-does": "passed", "helps-a-new-user": "passed"}
    assert brain.calls["judge"] == 2


def test_the_scaffolded_labels_calibrate_the_scaffolded_judge(tmp_path: Path) -> None:
    root = repository(tmp_path)
    assert run_cli("init", cwd=root).code == 0
    # The fake judge passes a reply when it holds every 'quoted' phrase of the criteria; these criteria quote
    # none, so it passes every line: the three labelled fail are its disagreements, and κ is 0.
    with helper_server() as (brain, fake):
        done = run_cli("calibrate", "-i", "calibration/judge-labels.jsonl", "-o", "calibration.json", cwd=root,
                       env={"OPENAI_BASE_URL": fake.base_url, "OPENAI_API_KEY": "sk-scaffold-test-key"})
    assert done.code == 0, done.stdout + done.stderr
    assert brain.calls["judge"] == 6
    figures = json.loads((root / "calibration.json").read_text())
    assert (figures["judge"], figures["judged"], figures["kappa"]) == ("workers.test.validator", 6, 0.0)
    assert figures["confusion"] == {"true_positives": 3, "false_negatives": 0, "false_positives": 3,
                                    "true_negatives": 0}
    assert " ".join(next(line for line in done.stdout.splitlines() if "κ" in line).split()) == (
        "Cohen's κ 0.00 no agreement beyond chance")
    suite = run_cli("validate", "-i", "tests/", cwd=root, env={"OPENAI_API_KEY": ""})
    assert suite.stdout.strip() == "3 valid, 0 invalid in 1 file"       # the labels are no suite of tests/


def test_without_the_helpers_key_the_run_says_who_needs_it_and_which_case_runs_without(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    root = repository(tmp_path)
    assert run_cli("init", cwd=root).code == 0
    with ScriptedServer("/chat", default=_assistant) as agent:
        refused = run_cli("-i", "tests/agents/example.jsonl", cwd=root, env={"AGENT_URL": agent.endpoint})
        assert refused.code == 2
        assert " ".join(refused.stderr.split()) == (
            f"Error: {root / 'agenttest.yaml'}: connectors.openai.api_key: environment variable OPENAI_API_KEY is not "
            "set; agent workers.test.validator (asked by cases says-what-it-does, helps-a-new-user) needs it: set it "
            "in the environment first (export OPENAI_API_KEY=…), or run only the 1 case needing no such helper: "
            "--run greets")
        keyless = run_cli("-i", "tests/agents/example.jsonl", "--run", "greets", cwd=root,
                          env={"AGENT_URL": agent.endpoint})
    assert keyless.code == 0, keyless.stdout + keyless.stderr
    assert [r["id"] for r in keyless.report["results"]] == ["greets"]


def test_the_scaffolded_workflow_passes_actionlint(tmp_path: Path) -> None:
    root = repository(tmp_path)
    assert run_cli("init", cwd=root).code == 0
    workflow = root / ".github" / "workflows" / "agenttest.yml"
    # With the action resolved to this checkout, actionlint also checks every `with:` key against action.yml.
    workflow.write_text(workflow.read_text().replace(ACTION, "./"))
    for name in ("action.yml", "Dockerfile"):
        shutil.copy(REPO / name, root / name)
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    proc = subprocess.run([tool("actionlint"), "-shellcheck", tool("shellcheck"), str(workflow)], cwd=root,
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
