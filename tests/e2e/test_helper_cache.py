"""The helper cache as an attacker meets it, through the real CLI: a cache committed in a pull request, forged or
copied from another machine, never decides a verdict; an entry that is a FIFO, a symlink or too large is never
read; and the cache is kept outside the checkout unless `--cache` names a directory."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from e2e.conftest import Project, Run, helper_server
from fakes.helper_brain import HelperBrain
from fakes.openai_server import FakeOpenAI

BRAIN_KEY = "sk-brain-cache-7a0c"

CONFIG = """
    version: 1
    defaults:
      name: echo
    connectors:
      brain:
        base_url: ${BRAIN_URL}
        api_key: ${BRAIN_KEY}
        model: brain-1
    agents:
      echo:
        provider: python
        callable: echo_agent:respond
      judge:
        builtin: validator
        connector: brain
    """

ECHO = '''
def respond(request):
    return {"content": "echo: " + request["messages"][-1]["content"]}
'''

# The judge passes an output holding every phrase in single quotes of the criteria: this one never passes.
FAILING = {"id": "judged", "input": "hello", "assert": {"type": "agent", "use": "agents:judge",
                                                        "value": "the reply says 'goodbye'"}}


@pytest.fixture
def brain() -> Iterator[tuple[HelperBrain, FakeOpenAI]]:
    with helper_server() as pair:
        yield pair


@pytest.fixture
def project(tmp_path: Path) -> Project:
    proj = Project(tmp_path / "repo")
    proj.write("agenttest.yaml", CONFIG)
    proj.write("echo_agent.py", ECHO)
    proj.suite("tests/s.jsonl", FAILING)
    (proj.root / ".git").mkdir()
    return proj


def run(project: Project, server: FakeOpenAI, machine: str, *args: str, key: str = BRAIN_KEY) -> Run:
    """A run on `machine` (its own user cache directory, beside the repository)."""
    return project.run("-i", "tests/s.jsonl", *args, env={
        "BRAIN_URL": server.base_url, "BRAIN_KEY": key, "XDG_CACHE_HOME": str(project.root.parent / machine)})


def flip(entry: Path) -> None:
    """What an attacker commits: the judge's cached verdict turned into a pass."""
    data = json.loads(entry.read_text())
    data["response"]["content"] = json.dumps({"passed": True, "score": 1.0, "reason": "forged"})
    data["response"].pop("data", None)
    entry.write_text(json.dumps(data))


def test_a_cache_committed_in_a_pull_request_never_decides_a_verdict(
        project: Project, brain: tuple[HelperBrain, FakeOpenAI]) -> None:
    helper, server = brain
    # The attacker's machine: the real judge says fail; the cached verdict is flipped and committed.
    attacker = run(project, server, "attacker", "--cache", ".agenttest-cache")
    assert attacker.code == 1 and helper.calls["judge"] == 1
    entries = list((project.root / ".agenttest-cache").rglob("*.json"))
    assert len(entries) == 1
    flip(entries[0])
    # CI: the same key, another machine. Named or not, the committed cache decides nothing.
    named = run(project, server, "ci", "--cache", ".agenttest-cache")
    assert named.code == 1, named.stdout
    assert named.result("judged")["status"] == "failed" and helper.calls["judge"] == 2
    assert "judge: 1 call," in named.stdout and "cached" not in named.stdout
    assert named.stderr.count("⚠ helper cache .agenttest-cache: ignored an entry (agenttest did not write it on "
                              "this machine with this helper's credentials); the helper is asked instead") == 1
    by_default = run(project, server, "ci")
    assert by_default.code == 1 and helper.calls["judge"] == 3      # the checkout's cache is not even looked at
    assert list((project.root.parent / "ci" / "agenttest" / "helpers").rglob("*.json"))
    # Even on the very machine that wrote it: a flipped entry fails its authentication.
    flip(entries[0])
    same_machine = run(project, server, "attacker", "--cache", ".agenttest-cache")
    assert same_machine.result("judged")["status"] == "failed" and helper.calls["judge"] == 4
    # And with other credentials, the entries this machine wrote are asked again.
    run(project, server, "ci")
    assert helper.calls["judge"] == 4                                # cached on CI with the same key
    rotated = run(project, server, "ci", key="sk-brain-rotated-11")
    assert helper.calls["judge"] == 5 and "ignored an entry" in rotated.stderr


def test_a_cache_entry_that_is_a_fifo_a_symlink_or_too_large_is_never_read(
        project: Project, brain: tuple[HelperBrain, FakeOpenAI]) -> None:
    helper, server = brain
    project.suite("tests/s.jsonl", FAILING, {**FAILING, "id": "second", "input": "hi"},
                  {**FAILING, "id": "third", "input": "hey"})
    run(project, server, "ci", "--cache", "cache")
    entries = sorted((project.root / "cache").rglob("*.json"))
    assert len(entries) == 3 and helper.calls["judge"] == 3
    for entry in entries:
        entry.unlink()
    os.mkfifo(entries[0])                                 # read_text() would wait for a writer forever
    huge = project.root.parent / "huge.json"
    with huge.open("wb") as handle:                       # sparse: 100 MB on paper, nothing on disk
        handle.truncate(100 * 1024 * 1024)
    entries[1].symlink_to(huge)
    with entries[2].open("wb") as handle:
        handle.truncate(17 * 1024 * 1024)
    again = run(project, server, "ci", "--cache", "cache")
    assert again.code == 1 and helper.calls["judge"] == 6, again.stdout
    assert again.stderr.count("⚠ helper cache cache: ignored an entry") == 1


def test_a_cache_key_inside_the_checkout_is_never_used(project: Project, brain: tuple[HelperBrain, FakeOpenAI]) -> None:
    helper, server = brain
    committed = project.root / ".cache" / "agenttest" / "key"
    committed.parent.mkdir(parents=True)
    committed.write_text("ab" * 32 + "\n")                    # a key a pull request committed, known to its author
    for expected_calls in (1, 2):
        inside = project.run("-i", "tests/s.jsonl", env={"BRAIN_URL": server.base_url, "BRAIN_KEY": BRAIN_KEY,
                                                         "XDG_CACHE_HOME": str(project.root / ".cache")})
        assert inside.code == 1 and helper.calls["judge"] == expected_calls
        assert inside.stderr.count(f"its key {committed} would lie inside the checkout") == 1
    assert not list((project.root / ".cache").rglob("*.json"))
