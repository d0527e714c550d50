"""The comparison's decisions under noise as a pure function of two report.json dicts (analysis/noise.py): which
cases that passed in the baseline and do not now are regressions, which are noise, and the evidence of each."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agenttest.analysis import compare, failures_under_regression
from agenttest.analysis.noise import alpha_of, counted_runs, recheck_decision
from agenttest.errors import UsageError
from agenttest.report.merge import read_report
from agenttest.statistics import Proportion


def result(case_id: str, passed: int, runs: int = 1, *, status: str | None = None, **more: Any) -> dict[str, Any]:
    """A report result of `passed` of `runs` runs, passing when every run did (--min-pass-rate 100)."""
    entry: dict[str, Any] = {"id": case_id, "file": "s.jsonl", "line": 1,
                             "status": status or ("passed" if passed == runs else "failed"), **more}
    if runs > 1:
        entry["stability"] = {"runs": runs, "passed": passed, "pass_rate": 100 * passed / runs, "infra_errors": 0,
                              "stability_class": "stable"}
    return entry


def report(*results: dict[str, Any], alpha: float | None = None) -> dict[str, Any]:
    options = {} if alpha is None else {"alpha": alpha}
    return {"summary": {}, "results": list(results), "metadata": {"options": options}}


def groups(comparison: dict[str, Any]) -> dict[str, list[tuple[str, str]]]:
    return {group: [(entry["id"], entry["evidence"]) for entry in comparison[group]]
            for group in ("regressions", "noise")}


def test_fisher_decides_with_several_runs_a_side_and_bh_corrects_over_every_drop() -> None:
    before = report(result("lone", 3, 3), result("partner", 2, 3), result("wobble", 3, 3))
    now = [result("lone", 0, 3), result("partner", 1, 3), result("wobble", 2, 3)]
    assert groups(compare(report(*now), before)) == {"regressions": [], "noise": [
        ("lone", "3/3 → 0/3, p = 0.05, 0.10 adjusted over 2 drops"),
        ("wobble", "3/3 → 2/3, p = 0.50, too small to test at 3 runs a side")]}
    # Without the other testable drop, the collapse stands alone: a regression at exactly alpha.
    alone = compare(report(now[0], now[2]), before)
    assert groups(alone)["regressions"] == [("lone", "3/3 → 0/3, p = 0.05")]
    assert failures_under_regression(alone) == 1
    # A stricter --alpha, as the run was made with it: no longer.
    assert groups(compare(report(now[0], now[2], alpha=0.01), before))["regressions"] == []


def test_unequal_runs_and_a_raised_bar_say_so() -> None:
    before = report(result("a", 5, 5), result("b", 3, 5, status="passed"))
    now = report(result("a", 2, 3), result("b", 4, 5, status="failed"))
    assert groups(compare(now, before))["noise"] == [
        ("a", "5/5 → 2/3, p = 0.38, too small to test at 5 runs then, 3 now"),
        ("b", "3/5 → 4/5, the pass rate did not drop")]


def test_a_single_run_on_either_side_is_decided_by_its_rechecks() -> None:
    before = report(result("flip", 1), result("broken", 1), result("many", 5, 5), result("unchecked", 1))
    now = report(result("flip", 0, recheck={"limit": 2, "runs": 1, "passed": True}),
                 result("broken", 0, recheck={"limit": 2, "runs": 2, "passed": False}),
                 result("many", 0, recheck={"limit": 2, "runs": 2, "passed": True}),
                 result("unchecked", 0))
    assert groups(compare(now, before)) == {
        "regressions": [("broken", "failed, and failed 2 rechecks"),
                        ("unchecked", "passed, now failed; not rechecked")],
        "noise": [("flip", "failed, then passed on recheck 1"), ("many", "failed, then passed on recheck 2")]}


@pytest.mark.parametrize(("status", "record", "regression", "evidence"), [
    ("timeout", {"runs": 1, "passed": True}, False, "timed out, then passed on recheck 1"),
    ("error", {"runs": 1, "passed": False}, True, "errored, and failed 1 recheck"),
    ("failed", {"runs": 0, "passed": False, "stopped": "interrupted"}, True, "failed; not rechecked (interrupted)"),
    ("failed", {"runs": 1, "passed": False, "stopped": "interrupted"}, True,
     "failed, and failed 1 recheck before the rechecks stopped (interrupted)"),
    ("failed", {"runs": 0, "passed": False}, True, "passed, now failed; not rechecked"),
    ("failed", {"runs": "two", "passed": True}, True, "passed, now failed; not rechecked"),    # an edited report
])
def test_the_evidence_of_rechecks(status: str, record: dict[str, Any], regression: bool, evidence: str) -> None:
    decision = recheck_decision({"status": status, "recheck": record})
    assert (decision.regression, decision.evidence) == (regression, evidence)


def test_runs_that_failed_outside_the_agent_are_counted_on_neither_side() -> None:
    row = {"runs": 5, "passed": 3, "infra_errors": 1}
    assert counted_runs({"stability": row}) == Proportion(3, 4)
    assert counted_runs({"stability": {**row, "infra_errors": 4}}) is None        # one counted run: a single run
    assert counted_runs({"stability": {**row, "passed": True}}) is None


@pytest.mark.parametrize(("alpha", "used"), [(0.01, 0.01), (None, 0.05), ("0.01", 0.05), (1.5, 0.05), (True, 0.05)])
def test_the_alpha_of_a_report_is_its_option_or_the_default(alpha: Any, used: float) -> None:
    assert alpha_of({"metadata": {"options": {"alpha": alpha}}}) == used


def test_a_crafted_recheck_in_a_report_is_a_usage_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report(result("a", 0, recheck={"runs": "2", "passed": True}))))
    with pytest.raises(UsageError, match=r"results\[0\]\.recheck\.runs: expected an integer, got string"):
        read_report(path)


def _side(counts: list[tuple[int, int]]) -> list[dict[str, Any]]:
    return [result(f"c{index}", passed, runs) for index, (passed, runs) in enumerate(counts)]


counts = st.integers(1, 12).flatmap(lambda runs: st.tuples(st.integers(0, runs), st.just(runs)))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(counts, counts), max_size=25), st.integers(1, 20), st.integers(1, 20),
       st.sampled_from([0.01, 0.05, 0.2]), st.data())
def test_a_case_always_passing_on_both_sides_is_never_a_regression(
        others: list[tuple[tuple[int, int], tuple[int, int]]], runs_before: int, runs_now: int, alpha: float,
        data: st.DataObject) -> None:
    """Whatever the other cases did and however many runs each side made: the case that passed every run on both
    sides is in no group of drops, and every case that passed then and not now is in exactly one of them."""
    place = data.draw(st.integers(0, len(others)))
    before = _side([old for old, _ in others])
    now = _side([new for _, new in others])
    before.insert(place, result("always", runs_before, runs_before))
    now.insert(place, result("always", runs_now, runs_now))
    comparison = compare(report(*now, alpha=alpha), report(*before))
    dropped = {entry["id"] for group in ("regressions", "noise") for entry in comparison[group]}
    assert "always" not in dropped
    flipped = {new["id"] for old, new in zip(before, now, strict=True)
               if old["status"] == "passed" and new["status"] != "passed"}
    assert dropped == flipped
    assert not {e["id"] for e in comparison["regressions"]} & {e["id"] for e in comparison["noise"]}
    for entry in comparison["regressions"]:
        assert entry["evidence"] and (entry.get("adjusted_p_value") is None or entry["adjusted_p_value"] <= alpha)
