"""`--fail-on regression` through the real CLI: a failure the baseline already had does not fail the run, but a
failure the change brought does — a new case that fails (a failing case renamed is one), an id reused for another
case that fails, a case skipped in the baseline that fails now."""

from __future__ import annotations

from typing import Any

import pytest

from e2e.conftest import Project


def case(case_id: str, text: str, **more: Any) -> dict[str, Any]:
    """A case that passes when `text` is `ok …` (the echo agent repeats it) and fails otherwise."""
    return {"id": case_id, "input": text, "assert": {"type": "contains", "value": "echo: ok"}, **more}


@pytest.fixture
def based(project: Project) -> Project:
    project.suite("s.jsonl", case("good", "ok 1"), case("known-bad", "broken"), case("off", "later", skip=True))
    assert project.run("-i", "s.jsonl", "--output-dir", "main").code == 1
    return project


def gate(project: Project, *cases: dict[str, Any], suite: str = "s.jsonl") -> tuple[int, dict[str, Any]]:
    """The exit code and comparison of a run of `cases` against the baseline; the banner and the summary's status
    line say the same as the exit code."""
    project.suite(suite, *cases)
    run = project.run("-i", suite, "--baseline", "main/report.json", "--fail-on", "regression")
    summary = (project.root / "agenttest-results" / "summary.md").read_text()
    if run.code:
        assert "TESTS FAILED" in run.stdout and "NO REGRESSIONS" not in run.stdout + summary, run.stdout
    else:
        assert "NO REGRESSIONS" in run.stdout and "FAILED" not in summary.splitlines()[0], run.stdout
    return run.code, run.report["comparison"]


def test_a_failure_the_baseline_had_does_not_fail_the_run(based: Project) -> None:
    code, comparison = gate(based, case("good", "ok 1"), case("known-bad", "broken", name="renamed, same case"))
    assert code == 0 and comparison["counts"]["still_failing"] == 1 and comparison["introduced"] == []
    moved = gate(based, case("good", "ok 1"), case("known-bad", "broken"), suite="t.jsonl")   # its file renamed
    assert moved[0] == 0 and moved[1]["still_failing"][0]["moved_from"] == "s.jsonl"


def test_a_failing_case_renamed_is_new_and_fails_the_run(based: Project) -> None:
    code, comparison = gate(based, case("good", "ok 1"), case("known-bad-2", "broken"))
    assert code == 1
    assert [(c["id"], c["status"]) for c in comparison["introduced"]] == [("known-bad-2", "failed")]


def test_a_new_failing_case_fails_the_run(based: Project) -> None:
    code, comparison = gate(based, case("good", "ok 1"), case("known-bad", "broken"), case("fresh", "nope"))
    assert code == 1 and [c["id"] for c in comparison["introduced"]] == ["fresh"]
    summary = (based.root / "agenttest-results" / "summary.md").read_text()
    assert "| 🆕 Failing, new or changed | 1 | `fresh` |" in summary


def test_an_id_reused_for_another_failing_case_fails_the_run(based: Project) -> None:
    code, comparison = gate(based, case("good", "ok 1"), case("known-bad", "something else entirely"))
    assert code == 1 and [(c["id"], c["was"]) for c in comparison["introduced"]] == [("known-bad", "failed")]
    moved = gate(based, case("good", "ok 1"), case("known-bad", "another thing"), suite="t.jsonl")
    assert moved[0] == 1 and [c["id"] for c in moved[1]["introduced"]] == ["known-bad"]


def test_a_duplicate_id_the_change_wrote_fails_the_run_but_one_the_baseline_had_does_not(based: Project) -> None:
    """A second case under the id of one that passes is an invalid entry the comparison cannot key (the first of an
    id wins): it used to pass `fail-on: regression` unseen."""
    code, comparison = gate(based, case("good", "ok 1"), case("known-bad", "broken"), case("good", "ok 2"))
    assert code == 1
    assert [(c["id"], c["status"], c["line"]) for c in comparison["introduced"]] == [("good", "error", 3)]
    assert "duplicate" in comparison["introduced"][0]["error"]
    (based.root / "main" / "report.json").rename(based.root / "before.json")
    based.run("-i", "s.jsonl", "--output-dir", "main")        # the duplicate is in the baseline too now
    code, comparison = gate(based, case("good", "ok 1"), case("known-bad", "broken"), case("good", "ok 2"))
    assert code == 0 and comparison["introduced"] == []


def test_a_case_skipped_in_the_baseline_that_fails_now_fails_the_run(based: Project) -> None:
    code, comparison = gate(based, case("good", "ok 1"), case("known-bad", "broken"), case("off", "later"))
    assert code == 1 and [(c["id"], c["was"]) for c in comparison["introduced"]] == [("off", "skipped")]


def test_merge_fails_on_what_the_shards_introduced(based: Project) -> None:
    based.suite("s.jsonl", case("good", "ok 1"), case("known-bad", "broken"), case("fresh", "nope"))
    for k in (1, 2):
        based.run("-i", "s.jsonl", "--shard", f"{k}/2", "--output-dir", f"shard{k}")
    merged = based.run("merge", "shard1/report.json", "shard2/report.json", "--baseline", "main/report.json",
                       "--fail-on", "regression")
    assert merged.code == 1, merged.stdout + merged.stderr
    assert "0 regressions, 0 fixes, 1 new, 1 removed, 1 failing new or changed" in merged.stdout


def test_cases_a_selection_leaves_out_are_not_removed(based: Project) -> None:
    """`--run` runs part of the suite: the cases it leaves out are still in it, so, as for a shard, the comparison
    names none removed, and the baseline's pass rate is over the cases that ran — in the run and in `merge`."""
    based.suite("s.jsonl", case("good", "ok 1"), case("known-bad", "broken"), case("off", "later", skip=True))
    run = based.run("-i", "s.jsonl", "--run", "^good$", "--baseline", "main/report.json", "--fail-on", "regression")
    comparison = run.report["comparison"]
    assert run.code == 0, run.stdout + run.stderr
    assert comparison["removed"] == [] and comparison["baseline"]["partial"] is True
    assert comparison["pass_rate"]["before"] == 100.0                  # `good` passed then: 1 of 1
    assert " 0 new, 0 removed" in next(line for line in run.stdout.splitlines() if "Baseline:" in line)
    for k in (1, 2):
        based.run("-i", "s.jsonl", "--run", "good|known", "--shard", f"{k}/2", "--output-dir", f"part{k}")
    merged = based.run("merge", "part1/report.json", "part2/report.json", "--baseline", "main/report.json")
    assert merged.report["comparison"]["removed"] == [], merged.stdout      # `off`, left out, is no removed case
    whole = based.run("-i", "s.jsonl", "--run", "good|known|off", "--baseline", "main/report.json")
    assert whole.report["comparison"]["removed"] == [] and "partial" in whole.report["comparison"]["baseline"]
