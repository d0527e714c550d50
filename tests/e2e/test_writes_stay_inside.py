"""Symlinks a pull request commits never lead a write out of the repository, through the real CLI: the output
directory, the helper cache, a cassette folder, `init`'s folders and `merge`'s output. Each is refused before any
case runs (exit 2, saying why), and nothing appears outside."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from e2e.conftest import ECHO_AGENT, Project

REFUSED = "agenttest will not write there"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    place = tmp_path / "outside"
    place.mkdir()
    return place


@pytest.fixture
def repo(tmp_path: Path) -> Project:
    project = Project(tmp_path / "repo")
    project.write("agenttest.yaml", """
        version: 1
        defaults:
          name: echo
        agents:
          echo:
            provider: python
            callable: echo_agent:respond
        """)
    project.write("echo_agent.py", ECHO_AGENT)
    project.suite("tests/s.jsonl", {"id": "one", "input": "hi"})
    (project.root / ".git").mkdir()
    return project


def refused(run_code: int, stderr: str, stdout: str, outside: Path) -> None:
    assert run_code == 2, stdout + stderr
    assert REFUSED in stderr and "Traceback" not in stderr
    assert "► [one]" not in stdout                     # before any case ran
    assert list(outside.rglob("*")) == []              # nothing was written there


def test_a_committed_output_directory_symlink_is_not_written_through(repo: Project, outside: Path) -> None:
    (repo.root / "agenttest-results").symlink_to(outside)
    run = repo.run("-i", "tests/s.jsonl")
    refused(run.code, run.stderr, run.stdout, outside)
    assert f"--output-dir agenttest-results: it leads through a symlink to {outside}, outside the repository" \
        in run.stderr
    elsewhere = repo.run("-i", "tests/s.jsonl", "--output-dir", str(outside / "named"))     # named: the user's
    assert elsewhere.code == 0 and (outside / "named" / "report.json").is_file()


def test_a_committed_cache_symlink_is_not_written_through(repo: Project, outside: Path) -> None:
    (repo.root / ".agenttest-cache").symlink_to(outside)
    run = repo.run("-i", "tests/s.jsonl", "--cache", ".agenttest-cache")
    refused(run.code, run.stderr, run.stdout, outside)
    assert "--cache .agenttest-cache: it leads through a symlink" in run.stderr


def test_a_symlinked_cassette_folder_is_not_written_through(repo: Project, outside: Path) -> None:
    (repo.root / "tapes").mkdir()
    (repo.root / "tapes" / "tests").symlink_to(outside)
    run = repo.run("-i", "tests/s.jsonl", "--record", "tapes")
    refused(run.code, run.stderr, run.stdout, outside)
    assert (f"--record tapes: tapes/tests/s.jsonl.json: it leads through a symlink to {outside}/s.jsonl.json, "
            "outside the repository") in run.stderr
    (repo.root / "tapes").rename(repo.root / "tapes-link")       # the whole directory a symlink out
    (repo.root / "tapes").symlink_to(outside)
    whole = repo.run("-i", "tests/s.jsonl", "--record", "tapes")
    refused(whole.code, whole.stderr, whole.stdout, outside)


@pytest.mark.parametrize("folder", ["tests", ".github"])
def test_init_does_not_write_through_a_symlinked_folder(tmp_path: Path, outside: Path, folder: str) -> None:
    project = Project(tmp_path / "fresh")
    (project.root / ".git").mkdir(parents=True)
    (project.root / folder).symlink_to(outside)
    run = project.run("init")
    assert run.code == 2 and "Traceback" not in run.stderr
    assert f"init: {folder}/" in run.stderr and "outside the repository; nothing was written" in run.stderr
    assert list(outside.rglob("*")) == [] and not (project.root / "agenttest.yaml").exists()


def test_merge_does_not_write_through_a_symlinked_output_directory(repo: Project, outside: Path) -> None:
    for k in (1, 2):
        assert repo.run("-i", "tests/s.jsonl", "--shard", f"{k}/2", "--output-dir", f"shard{k}").code == 0
    (repo.root / "agenttest-results").symlink_to(outside)
    merged = repo.run("merge", "shard1/report.json", "shard2/report.json")
    assert merged.code == 2 and REFUSED in merged.stderr and list(outside.rglob("*")) == []
    assert json.loads((repo.root / "shard1" / "report.json").read_text())["summary"]["total"] in (0, 1)


def test_an_output_directory_through_a_symlink_loop_is_refused_with_a_reason(repo: Project, outside: Path) -> None:
    """A pull request can commit two symlinks that name each other: following them never ends (Python < 3.13
    raised RuntimeError from the console's list of artifacts, a traceback)."""
    (repo.root / "loop1").symlink_to("loop2")
    (repo.root / "loop2").symlink_to("loop1")
    run = repo.run("-i", "tests/s.jsonl", "--output-dir", "loop1/out")
    refused(run.code, run.stderr, run.stdout, outside)
    assert "--output-dir loop1/out: it leads into a symlink loop" in run.stderr
