"""A run that stops with exit 2 before any case ran leaves no earlier run's artifacts looking like its own: it removes
agenttest's own files from the output directory — and nothing else, nowhere else, never through a symlink."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import Project, echo_project

ARTIFACTS = ["ctrf.json", "events.jsonl", "junit.xml", "report.json", "summary.md"]


def _project(root: Path) -> Project:
    (root / ".git").mkdir(parents=True)
    project = echo_project(root)
    project.write("agenttest.yaml", """
        version: 1
        defaults:
          name: echo
        agents:
          echo:
            provider: python
            callable: echo_agent:respond
          judge:
            builtin: validator
            model: gpt-4o
            api_key: ${STALE_TEST_KEY}
        """)
    project.suite("tests/agents/static.jsonl", {"id": "greets", "input": "hi",
                                                "assert": {"type": "contains", "value": "hi"}})
    project.suite("tests/agents/judged.jsonl", {"id": "judged", "input": "hi", "assert": {
        "type": "agent", "use": "agents:judge", "value": "polite"}})
    return project


def _green(project: Project, output_dir: str = "agenttest-results") -> Path:
    """A passing run of the static case, leaving its artifacts in `output_dir`."""
    run = project.run("-i", "tests/agents/static.jsonl", "--output-dir", output_dir)
    assert run.code == 0, run.stdout + run.stderr
    results = project.root / output_dir
    assert sorted(p.name for p in results.iterdir()) == ARTIFACTS
    return results


@pytest.mark.parametrize(("args", "error"), [
    (["-i", "tests/agents/", "--run", "nothing-matches"], "no test cases match --run 'nothing-matches'"),
    (["-i", "tests/agents/"], "environment variable STALE_TEST_KEY is not set"),
    (["-i", "tests/agents/static.jsonl", "--timeout", "soon"], "--timeout: invalid duration 'soon'"),
])
def test_a_run_stopped_before_any_case_removes_the_previous_runs_artifacts_only(
        tmp_path: Path, args: list[str], error: str) -> None:
    project = _project(tmp_path / "repo")
    results = _green(project)
    (results / "notes.txt").write_text("mine\n")
    (results / "history").mkdir()
    (results / "history" / "report.json").write_text("{}\n")
    stopped = project.run(*args)
    assert stopped.code == 2 and error in stopped.stderr, stopped.stderr
    assert len(stopped.stderr.splitlines()) == 1            # the mistake, said in one line: the removal is documented
    assert stopped.report_text is None and "Traceback" not in stopped.stderr
    assert sorted(p.name for p in results.iterdir()) == ["history", "notes.txt"]
    assert (results / "history" / "report.json").read_text() == "{}\n"


def test_a_config_mistake_clears_the_output_directory_the_config_declares(tmp_path: Path) -> None:
    project = _project(tmp_path / "repo")
    declared = _green(project, "out")
    default = _green(project)       # another directory's artifacts: not this run's to touch
    config = (project.root / "agenttest.yaml").read_text()
    (project.root / "agenttest.yaml").write_text(config.replace("  name: echo\n", "  name: echo\n  output-dir: out\n")
                                                 .replace("provider: python", "provder: python"))
    stopped = project.run("-i", "tests/agents/static.jsonl")
    assert stopped.code == 2 and "agents.echo.provder: unknown key" in stopped.stderr
    assert list(declared.iterdir()) == [] and sorted(p.name for p in default.iterdir()) == ARTIFACTS
    (project.root / "agenttest.yaml").write_text("agents: [\n")     # no YAML: where its output goes is unknown
    unreadable = project.run("-i", "tests/agents/static.jsonl")
    assert unreadable.code == 2 and "invalid YAML" in unreadable.stderr
    assert sorted(p.name for p in default.iterdir()) == ARTIFACTS


def test_a_dry_run_removes_nothing(tmp_path: Path) -> None:
    project = _project(tmp_path / "repo")
    results = _green(project)
    stopped = project.run("-i", "tests/agents/", "--run", "nothing-matches", "--dry-run")
    assert stopped.code == 2
    assert sorted(p.name for p in results.iterdir()) == ARTIFACTS


def test_nothing_is_removed_through_a_symlink(tmp_path: Path) -> None:
    """An output directory that a symlink leads out of the repository, and an artifact name that is a symlink, are
    left alone: a run would refuse to write there, so it removes nothing there either."""
    project = _project(tmp_path / "repo")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for name in ARTIFACTS:
        (elsewhere / name).write_text("not agenttest's\n")
    (project.root / "agenttest-results").symlink_to(elsewhere, target_is_directory=True)
    stopped = project.run("-i", "tests/agents/", "--run", "nothing-matches")
    assert stopped.code == 2
    assert sorted(p.name for p in elsewhere.iterdir()) == ARTIFACTS
    (project.root / "agenttest-results").unlink()
    results = _green(project)
    (project.root / "kept.json").write_text("{}\n")
    (results / "report.json").unlink()
    (results / "report.json").symlink_to(project.root / "kept.json")
    stopped = project.run("-i", "tests/agents/", "--run", "nothing-matches")
    assert stopped.code == 2
    assert [p.name for p in results.iterdir()] == ["report.json"] and (results / "report.json").is_symlink()
    assert (project.root / "kept.json").read_text() == "{}\n"


def test_junit_and_summary_written_elsewhere_take_the_earlier_ones_out_of_the_output_directory(tmp_path: Path) -> None:
    """An upload of the output directory must not take an earlier run's junit.xml for this run's."""
    project = _project(tmp_path / "repo")
    results = _green(project)
    run = project.run("-i", "tests/agents/static.jsonl", "--junit", "out/j.xml", "--summary", "out/s.md")
    assert run.code == 0, run.stdout + run.stderr
    assert sorted(p.name for p in results.iterdir()) == ["ctrf.json", "events.jsonl", "report.json"]
    assert (project.root / "out" / "j.xml").is_file() and (project.root / "out" / "s.md").is_file()
    again = project.run("-i", "tests/agents/static.jsonl", "--junit", "agenttest-results/junit.xml")
    assert again.code == 0 and sorted(p.name for p in results.iterdir()) == ARTIFACTS    # written there: kept


def test_a_users_files_that_bear_an_artifacts_name_are_left(tmp_path: Path) -> None:
    """Only what reads as agenttest's artifact is removed: a user's notes named summary.md stay."""
    project = _project(tmp_path / "repo")
    mine = project.root / "mine"
    mine.mkdir()
    for name, text in (("summary.md", "my notes\n"), ("report.json", '{"mine": 1}\n'), ("junit.xml", "<x/>\n"),
                       ("ctrf.json", "{}\n"), ("events.jsonl", "{}\n"), ("comment.md", "draft\n")):
        (mine / name).write_text(text)
    stopped = project.run("-i", "tests/agents/", "--run", "nothing-matches", "--output-dir", "mine")
    assert stopped.code == 2, stopped.stderr
    assert sorted(p.name for p in mine.iterdir()) == sorted([*ARTIFACTS, "comment.md"])
    assert (mine / "summary.md").read_text() == "my notes\n"
