"""What a replay trusts, through the real CLI in a real git repository: the cassette directory as it is named (a
pull request that swaps it for a symlink to another directory changed it, and nothing is read through the symlink),
and the code of a `python` or `exec` agent beyond its entry file (a change to a module it imports makes the
replay an error, as a changed configuration does)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from e2e.conftest import Project

CONFIG = """
    version: 1
    defaults: {name: cli}
    agents:
      cli: {provider: exec, command: [python3, bot.py]}
      py: {provider: python, callable: pyagent:respond}
    """
BOT = '''
import json, sys
import lib
request = json.load(sys.stdin)
print(json.dumps({"content": lib.answer(request["messages"][-1]["content"])}))
'''
PYAGENT = '''
import lib

def respond(request):
    return {"content": lib.answer(request["messages"][-1]["content"])}
'''


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=root,
                          check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def project(tmp_path: Path) -> Project:
    proj = Project(tmp_path)
    proj.write("agenttest.yaml", CONFIG)
    proj.write("bot.py", BOT)
    proj.write("pyagent.py", PYAGENT)
    proj.write("lib.py", 'def answer(text):\n    return "good " + text\n')
    proj.write(".gitignore", "agenttest-results/\n")
    proj.suite("s.jsonl", {"id": "c1", "input": "x", "assert": {"type": "contains", "value": "good"}})
    git(tmp_path, "init", "-q")
    return proj


def pull_request(project: Project, base: str) -> dict[str, str]:
    event = project.root.parent / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 7, "base": {"sha": base, "ref": "main"}}}))
    return {"GITHUB_ACTIONS": "true", "GITHUB_EVENT_PATH": str(event)}


def test_a_cassette_directory_swapped_for_a_symlink_is_a_change_and_is_not_read_through(project: Project) -> None:
    root = project.root
    assert project.run("-i", "s.jsonl", "--record", "tapes").code == 0
    shutil.copytree(root / "tapes", root / "tapes-alt")
    alt = root / "tapes-alt" / "s.jsonl.json"
    alt.write_text(alt.read_text().replace("good x", "good x, FORGED"))
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base: tapes, and another directory of cassettes")
    base = git(root, "rev-parse", "HEAD")
    shutil.rmtree(root / "tapes")
    (root / "tapes").symlink_to("tapes-alt")

    pushed = project.run("-i", "s.jsonl", "--replay", "tapes")          # not committed yet: compared with HEAD
    assert pushed.report["replay"]["changed"] == ["tapes", "tapes/s.jsonl.json"], pushed.stdout
    git(root, "add", "-A")
    git(root, "commit", "-qm", "the pull request: tapes -> tapes-alt")
    replayed = project.run("-i", "s.jsonl", "--replay", "tapes", env=pull_request(project, base))
    assert replayed.report["replay"]["changed"] == ["tapes", "tapes/s.jsonl.json"], replayed.stdout
    assert "replayed from cassettes this pull request changed" in replayed.stdout
    result = replayed.result("c1")
    assert (result["status"], result["error_kind"]) == ("error", "infra"), result
    assert result["error"] == ("agent error: replay: cannot read the cassette tapes/s.jsonl.json: tapes is a "
                               "symbolic link, which agenttest does not read through")
    assert "FORGED" not in replayed.stdout + json.dumps(replayed.report)


@pytest.mark.parametrize("agent", ["cli", "py"])
def test_a_replay_after_a_module_the_agent_imports_changed_is_an_error_naming_it(project: Project,
                                                                                 agent: str) -> None:
    root = project.root
    recorded = project.run("-i", "s.jsonl", "-n", agent, "--record", "tapes")
    assert recorded.code == 0, recorded.stdout + recorded.stderr
    assert project.run("-i", "s.jsonl", "-n", agent, "--replay", "tapes").code == 0
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    (root / "lib.py").write_text('def answer(text):\n    return "bad " + text\n')
    assert project.run("-i", "s.jsonl", "-n", agent).result("c1")["status"] == "failed"
    replayed = project.run("-i", "s.jsonl", "-n", agent, "--replay", "tapes")
    result = replayed.result("c1")
    assert (result["status"], result["error_kind"]) == ("error", "infra"), replayed.stdout
    assert result["error"].startswith(f"agent error: replay: agent '{agent}' changed since tapes/s.jsonl.json, case "
                                      "'c1' was recorded (code.lib.py: \"sha256:"), result["error"]
    assert "re-record with --record tapes" in result["error"]
    assert replayed.report["replay"]["changed"] == []        # the cassettes are the base's: the code is not


def test_code_past_the_cap_is_left_out_and_the_run_says_so(project: Project) -> None:
    for index in range(1_001):
        project.write(f"gen/m{index:04}.py", f"VALUE = {index}\n")
    recorded = project.run("-i", "s.jsonl", "--record", "tapes")
    assert recorded.code == 0
    assert ("⚠ agent 'cli': more than 1,000 files or 64 MB of code; only the first 1,000 (the last: gen/m0996.py) "
            "are digested for --record and --replay: a change in the others goes unseen") in recorded.stderr
    # The agent's own folder's files (bot.py, lib.py, pyagent.py) come first; gen/m0997.py is the first left out.
    (project.root / "gen" / "m0997.py").write_text("VALUE = -1\n")
    assert project.run("-i", "s.jsonl", "--replay", "tapes").code == 0
    (project.root / "gen" / "m0000.py").write_text("VALUE = -1\n")
    changed = project.run("-i", "s.jsonl", "--replay", "tapes").result("c1")
    assert "(code.gen/m0000.py: " in changed["error"]


def test_a_replay_with_more_runs_than_were_recorded_is_an_error_not_a_pass_over_the_recorded_runs(
        project: Project) -> None:
    """A replay miss is an `infra` error, which a live run counts apart (a dropped connection says nothing of the
    agent); in a replay it is no chance: the runs that missed say the cassettes do not hold this run."""
    assert project.run("-i", "s.jsonl", "-n", "py", "--runs", "2", "--record", "tapes").code == 0
    assert project.run("-i", "s.jsonl", "-n", "py", "--runs", "2", "--replay", "tapes").code == 0
    replayed = project.run("-i", "s.jsonl", "-n", "py", "--runs", "3", "--replay", "tapes")
    assert replayed.code == 1, replayed.stdout
    result = replayed.result("c1")
    assert (result["status"], result["error_kind"]) == ("error", "infra"), result
    assert result["error"].startswith("2 of 3 runs passed (66.7%"), result["error"]
    assert "replay: no recording of this target call" in result["error"]
    [row] = replayed.report["stability_results"]
    assert (row["passed"], row["failed"], row["infra_errors"]) == (2, 1, 0)
    assert replayed.report["summary"]["errors"] == 1
