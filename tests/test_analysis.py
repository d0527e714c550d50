"""The cores of verdicts at scale: a case's verdict over its runs, the comparison with a baseline, the exit code."""

from __future__ import annotations

import math
from typing import Any

import pytest

from agenttest.analysis import case_verdict, compare, exit_code, pass_at_k, pass_rate_text, stability_summary
from agenttest.analysis.stability import outside_the_replay
from agenttest.results import CaseResult


def run(status: str = "passed", *, kind: str | None = None, ran: bool = True, error: str | None = None,
        ms: int = 10) -> CaseResult:
    return CaseResult(id="c", status=status, error=error or (None if status == "passed" else f"{status}!"),  # type: ignore[arg-type]
                      error_kind=kind, ran=ran, duration_ms=ms, file="s.jsonl", line=1)


def test_runs_that_failed_outside_the_agent_are_not_counted_against_it() -> None:
    verdict = case_verdict([run(), run(), run("error", kind="infra"), run()], min_pass_rate=100)
    assert verdict.status == "passed"
    assert verdict.stability is not None
    assert (verdict.stability["runs"], verdict.stability["passed"], verdict.stability["failed"]) == (4, 3, 0)
    assert verdict.stability["infra_errors"] == 1 and verdict.stability["flaky"] is False
    assert verdict.stability["pass_rate"] == 100.0


def test_in_a_replay_a_recorded_infra_error_is_still_apart_and_a_miss_counts_against_the_case() -> None:
    blip = run("error", kind="infra", error="agent error: cannot connect to http://x: Connection refused")
    miss = run("error", kind="infra", error="agent error: replay: no recording of this target call to a in t.json")
    replayed = case_verdict([run(), blip, run()], apart=outside_the_replay)
    assert replayed.status == "passed"                       # as the recorded (live) run decided
    assert case_verdict([run(), blip, run()]).status == "passed"
    missed = case_verdict([run(), miss, run()], apart=outside_the_replay)
    assert (missed.status, missed.error_kind) == ("error", "infra")
    assert missed.error is not None and missed.error.startswith("2 of 3 runs passed")
    assert case_verdict([run(), miss, run()]).status == "passed"     # live, an infra error is apart


def test_a_case_whose_every_run_failed_outside_the_agent_is_that_error() -> None:
    verdict = case_verdict([run("error", kind="infra", error="connection refused")] * 2)
    assert (verdict.status, verdict.error_kind) == ("error", "infra")
    assert verdict.error == "every run failed outside the agent: connection refused"


def test_a_case_whose_runs_were_cut_short_has_no_verdict() -> None:
    verdict = case_verdict([run("failed"), run("skipped", ran=False, error="not run: budget spent")])
    assert (verdict.status, verdict.error_kind) == ("skipped", None)
    assert verdict.error == "only 1 of 2 runs ran (not run: budget spent): no verdict"
    assert verdict.stability is not None and verdict.stability["counted_as"] == "skipped"
    whole = {"runs": 2, "passed": 2, "infra_errors": 0, "counted_as": "passed", "pass_rate": 100.0,
             "flaky": False, "stability_class": "stable"}
    at, hat = pass_at_k([verdict.stability, whole], 2)
    assert hat == {"1": 1.0, "2": 1.0} and at["2"] == 1.0     # the case cut short is left out
    assert stability_summary([verdict.stability, whole], 2)["total_runs"] == 2


def test_a_flaky_case_below_the_minimum_pass_rate_fails_with_the_figures() -> None:
    verdict = case_verdict([run(), run("failed", error="no refund"), run(), run()], min_pass_rate=80)
    assert verdict.status == "failed"
    assert verdict.error == "3 of 4 runs passed (75%, 95% CI 30–96%, below --min-pass-rate 80%): no refund"
    assert verdict.stability is not None and verdict.stability["flaky"] is True


def test_pass_at_k_leaves_runs_that_failed_outside_the_agent_out_of_n() -> None:
    row = case_verdict([run(), run("error", kind="infra"), run(), run()]).stability
    assert row is not None
    at, hat = pass_at_k([row], 4)
    # Three counted runs, all passed: as if the case had run three times (no k = 4 without four counted runs).
    assert at == hat == {"1": 1.0, "2": 1.0, "3": 1.0}


def result(case_id: str, status: str, file: str = "s.jsonl", **extra: Any) -> dict[str, Any]:
    return {"id": case_id, "status": status, "file": file, "line": 1, **extra}


def report(*results: dict[str, Any], **summary: Any) -> dict[str, Any]:
    return {"results": list(results), "summary": summary, "metadata": {"started_at": "t", "version": "0"}}


@pytest.mark.parametrize("status", ["failed", "error", "timeout"])
def test_a_case_that_passed_in_the_baseline_and_does_not_now_is_a_regression(status: str) -> None:
    worse = compare(report(result("a", status)), report(result("a", "passed")), path="b.json")
    assert ([e["id"] for e in worse["regressions"]], worse["fixes"], worse["still_failing"]) == (["a"], [], [])
    better = compare(report(result("a", "passed")), report(result("a", status)), path="b.json")
    assert ([e["id"] for e in better["fixes"]], better["regressions"], better["still_failing"]) == (["a"], [], [])
    same = compare(report(result("a", status)), report(result("a", "error")), path="b.json")
    assert ([e["id"] for e in same["still_failing"]], same["regressions"], same["fixes"]) == (["a"], [], [])
    for now, then in (("skipped", status), (status, "skipped"), ("skipped", "passed")):   # nothing to compare
        skipped = compare(report(result("a", now)), report(result("a", then)), path="b.json")
        assert (skipped["regressions"], skipped["fixes"], skipped["still_failing"]) == ([], [], [])


def test_a_duplicate_id_in_a_baseline_is_the_first_of_them() -> None:
    baseline = report(result("a", "passed"), result("a", "error"))
    comparison = compare(report(result("a", "failed")), baseline, path="b.json")
    assert [(c["id"], c["was"]) for c in comparison["regressions"]] == [("a", "passed")]


def test_what_a_baseline_holds_is_stored_capped_like_any_value() -> None:
    huge = {**result("r" * 3_000_000, "failed"), "error": "e" * 3_000_000}
    comparison = compare(report(result("a", "passed")), report(huge), path="b.json")
    removed = comparison["removed"][0]
    assert len(removed["id"]) < 40_000 and removed["id"].endswith("… [cut: 3,000,000 characters in all]")
    assert len(removed["error"]) < 40_000


def test_a_case_whose_suite_file_moved_is_the_same_case() -> None:
    baseline = report(result("a", "passed", "old/s.jsonl"), result("b", "passed", "old/s.jsonl"),
                      result("x", "passed", "one.jsonl"), result("x", "passed", "two.jsonl"))
    now = report(result("a", "failed", "new/s.jsonl"), result("b", "passed", "new/s.jsonl"),
                 result("x", "passed", "three.jsonl"))
    comparison = compare(now, baseline, path="b.json")
    assert [(c["id"], c["moved_from"]) for c in comparison["regressions"]] == [("a", "old/s.jsonl")]
    assert comparison["counts"]["removed"] == 2 and comparison["counts"]["new"] == 1   # `x`: ambiguous, not matched


def test_an_edited_baseline_with_odd_numbers_gives_no_delta_rather_than_a_crash() -> None:
    baseline = report(result("a", "passed", duration_ms="slow"), pass_rate=math.inf, duration_ms=None)
    comparison = compare(report(result("a", "passed", duration_ms=500), pass_rate=100.0, duration_ms=5),
                         baseline, path="b.json")
    assert comparison["pass_rate"] == {"before": None, "now": 100.0, "delta": None}
    assert comparison["duration_ms"] == {"before": None, "now": 5, "delta": None}


def test_a_shard_is_compared_with_the_baseline_over_its_own_cases() -> None:
    baseline = report(result("a", "passed"), result("b", "failed"), result("c", "failed"), pass_rate=33.33)
    comparison = compare(report(result("a", "passed"), pass_rate=100.0), baseline, path="b.json", partial=True)
    assert comparison["pass_rate"] == {"before": 100.0, "now": 100.0, "delta": 0.0}


@pytest.mark.parametrize(("ok", "fail_on", "regressions", "spent", "code"), [
    (True, "failure", None, False, 0), (False, "failure", None, False, 1), (True, "failure", None, True, 1),
    (False, "regression", 0, False, 0), (True, "regression", 1, False, 1), (True, "regression", 0, True, 1),
    (False, "regression", None, False, 1), (False, "never", 3, True, 0),
])
def test_the_exit_code(ok: bool, fail_on: str, regressions: int | None, spent: bool, code: int) -> None:
    assert exit_code(ok, fail_on, regressions, spent=spent) == code


@pytest.mark.parametrize(("rate", "text"), [(100, "100.0"), (100.0, "100.0"), (99.98, "99.9"), (99.95, "99.9"),
                                            (85.714, "85.7"), (0.04, "0.1"), (0, "0.0"), (None, ""), (True, "")])
def test_a_rate_below_100_never_reads_100(rate: Any, text: str) -> None:
    assert pass_rate_text(rate) == text       # a workflow gating on pass-rate == 100.0 must not pass 3,999 of 4,000


def test_suites_that_moved_together_with_the_same_ids_are_matched_by_their_file_names() -> None:
    """Yao numbers every suite's cases T001…: moving tests/ to suites/ moves two T001s at once, which the id alone
    cannot pair; each file's own name can."""
    baseline = report(result("T001", "passed", "tests/a.jsonl"), result("T002", "passed", "tests/a.jsonl"),
                      result("T001", "passed", "tests/b.jsonl"), result("T002", "failed", "tests/b.jsonl"))
    now = report(result("T001", "passed", "suites/a.jsonl"), result("T002", "failed", "suites/a.jsonl"),
                 result("T001", "passed", "suites/b.jsonl"), result("T002", "failed", "suites/b.jsonl"))
    comparison = compare(now, baseline, path="b.json")
    assert [(c["file"], c["moved_from"]) for c in comparison["regressions"]] == [("suites/a.jsonl", "tests/a.jsonl")]
    assert [c["file"] for c in comparison["still_failing"]] == ["suites/b.jsonl"]
    assert (comparison["counts"]["new"], comparison["counts"]["removed"], comparison["introduced"]) == (0, 0, [])


def test_a_shard_matches_no_case_by_file_name_to_one_another_shard_ran() -> None:
    """In a part of a run, the baseline's cases it did not run are not gone: a new T001 in a new suite is new."""
    baseline = report(result("T001", "passed", "a/cases.jsonl"), result("T001", "passed", "d/smoke.jsonl"),
                      result("T001", "passed", "b/evals.jsonl"))
    shard = report(result("T001", "passed", "b/evals.jsonl"), result("T001", "failed", "c/cases.jsonl"))
    comparison = compare(shard, baseline, path="b.json", partial=True)
    assert comparison["regressions"] == [] and [c["file"] for c in comparison["introduced"]] == ["c/cases.jsonl"]
