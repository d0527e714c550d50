"""Decisions under noise through the real CLI (docs/decisions.md), against an agent on 127.0.0.1 whose every call
passes or fails by a script and which counts its calls: with several runs a side Fisher's test decides (5/5 → 0/5
is a regression, 5/5 → 4/5 noise), with one run a side the rechecks do — and they make exactly the calls they
should, under cassettes and budgets as any run; shards merged decide as one run; an A/A run reports no regression
where the old rule reported every flip; and every artifact shows the evidence."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest

from agenttest.report.escape import md_text
from e2e.conftest import Run, helper_server, interrupt_cli
from e2e.noise_project import NoiseProject, decided, noise_project, verdicts
from fakes.flaky_agent import CONFIG, PASS, flaky, patterns

GATE = ("--baseline", "main/report.json", "--fail-on", "regression")


@pytest.fixture
def project(tmp_path: Path) -> Iterator[NoiseProject]:
    with noise_project(tmp_path) as proj:
        yield proj


def _failures(run: Run) -> dict[str, str]:
    """Each failing testcase of junit.xml: its failure's message."""
    tree = ET.parse(run.cwd / "agenttest-results" / "junit.xml")
    return {case.get("name", ""): failure.get("message", "")
            for case in tree.iter("testcase") for failure in case.iter("failure")}


def test_five_runs_a_side_a_collapse_is_a_regression_and_one_failure_in_ten_is_noise(project: NoiseProject) -> None:
    project.cases("collapse", "wobble", "steady")
    base = project.side({}, "-i", "s.jsonl", "--runs", "5", "--output-dir", "main")
    assert base.code == 0, base.stdout + base.stderr
    now = project.side({"collapse": "FFFFF", "wobble": "PPPPF"}, "-i", "s.jsonl", "--runs", "5", *GATE,
                       "--annotations", "--color", "never", "-o", "report.html", env={"GITHUB_ACTIONS": "true"})
    assert now.code == 1, now.stdout + now.stderr
    assert project.agent.calls == {"collapse": 5, "wobble": 5, "steady": 5}      # several runs a side: no recheck
    comparison = now.report["comparison"]
    assert decided(comparison, "regressions") == [("collapse", "5/5 → 0/5, p = 0.0040")]
    assert decided(comparison, "noise") == [("wobble", "5/5 → 4/5, p = 0.50, too small to test at 5 runs a side")]
    [regression], [noise] = comparison["regressions"], comparison["noise"]
    assert regression["p_value"] == regression["adjusted_p_value"] == pytest.approx(1 / 252)
    assert (noise["p_value"], noise["adjusted_p_value"]) == (0.5, None)
    assert comparison["counts"]["noise"] == 1 and "recheck" not in now.result("wobble")

    lines = now.stdout.splitlines()
    assert "  Baseline:  1 regression, 1 within noise, 0 fixes, 0 new, 0 removed · pass rate 100.0% → 33.3%" in lines
    assert lines[lines.index("    ○ noise: wobble (s.jsonl:2) passed → failed") + 1] == \
        "        evidence: 5/5 → 4/5, p = 0.50, too small to test at 5 runs a side"
    summary = (project.root / "agenttest-results" / "summary.md").read_text()
    assert "| 〰️ Noise, not regressions | 1 | `wobble` |" in summary
    assert f"- `collapse` (`s.jsonl:1`) — {md_text('5/5 → 0/5, p = 0.0040')}" in summary
    assert f"- `wobble` (`s.jsonl:2`) — {md_text('5/5 → 4/5, p = 0.50, too small to test at 5 runs a side')}" in summary
    failures = _failures(now)
    assert failures["collapse"].startswith("regression: 5/5 → 0/5, p = 0.0040 — ")
    assert failures["wobble"].startswith("noise, not a regression: 5/5 → 4/5, p = 0.50, too small to test at 5 ")
    annotations = {line.split("title=agenttest%3A ")[1].split("::")[0]: line for line in lines
                   if line.startswith("::error file=")}
    assert annotations["collapse (failed%2C a regression)"].split("::")[2].startswith(
        "Regression: 5/5 → 0/5, p = 0.0040%0A")
    assert annotations["wobble (failed%2C noise)"].split("::")[2].startswith("Noise, not a regression: 5/5 → 4/5")
    html = (project.root / "report.html").read_text()
    assert "<code>wobble</code> — 5/5 → 4/5, p = 0.50, too small to test at 5 runs a side</li>" in html
    [event] = [event for event in now.events if event["type"] == "comparison"]
    assert [entry["evidence"] for entry in event["regressions"]] == ["5/5 → 0/5, p = 0.0040"]
    assert [event["type"] for event in now.events][-2:] == ["comparison", "summary"]


def test_one_failure_in_ten_runs_does_not_fail_the_regression_gate(project: NoiseProject) -> None:
    project.cases("wobble")
    project.side({}, "-i", "s.jsonl", "--runs", "5", "--output-dir", "main")
    now = project.side({"wobble": "FPPPP"}, "-i", "s.jsonl", "--runs", "5", *GATE)
    assert now.code == 0, now.stdout + now.stderr
    assert now.report["summary"]["failed"] == 1 and now.report["comparison"]["regressions"] == []
    assert "  ✅ NO REGRESSIONS (1 failing case is noise)" in now.stdout.splitlines()
    status = (project.root / "agenttest-results" / "summary.md").read_text().splitlines()[0]
    assert status.startswith("## ✅ agenttest: no regressions (1 failing case is noise)"), status


def test_single_runs_recheck_a_flip_until_its_first_pass(project: NoiseProject) -> None:
    project.cases("steady", "flip", "broken", "bad")
    assert project.side({"bad": "F"}, "-i", "s.jsonl", "--output-dir", "main").code == 1
    now = project.side({"flip": "FP", "broken": "FFF", "bad": "F"}, "-i", "s.jsonl", *GATE)
    assert now.code == 1, now.stdout + now.stderr
    # flip: its run and one recheck, which passed; broken: its run and both rechecks; the others none.
    assert project.agent.calls == {"steady": 1, "flip": 2, "broken": 3, "bad": 1}
    assert project.agent.runs["flip"] == [1, 2] and project.agent.runs["broken"] == [1, 2, 3]
    comparison = now.report["comparison"]
    assert decided(comparison, "noise") == [("flip", "failed, then passed on recheck 1")]
    assert decided(comparison, "regressions") == [("broken", "failed, and failed 2 rechecks")]
    assert [entry["id"] for entry in comparison["still_failing"]] == ["bad"]
    flip = now.result("flip")
    assert flip["status"] == "failed" and flip["recheck"]["outcomes"][0].pop("duration_ms") >= 0
    assert flip["recheck"] == {"limit": 2, "runs": 1, "passed": True, "outcomes": [{"run": 2, "status": "passed"}]}
    broken = now.result("broken")["recheck"]
    assert (broken["runs"], broken["passed"], [o["run"] for o in broken["outcomes"]]) == (2, False, [2, 3])
    assert now.report["summary"]["usage"]["target"]["calls"] == 7      # four cases, three rechecks
    lines = now.stdout.splitlines()
    rechecks = lines.index("  Rechecks")
    assert lines[rechecks + 2] == "  2 cases passed in the baseline and not now (flip, broken): each runs again, " \
                                  "up to 2 times, until it passes"
    assert sorted(lines[rechecks + 3:rechecks + 5]) == ["↻ [broken] failed, and failed 2 rechecks: a regression",
                                                        "↻ [flip] failed, then passed on recheck 1: noise"]
    events = {event["id"]: event for event in now.events if event["type"] == "recheck"}
    assert (events["flip"]["evidence"], events["flip"]["regression"], events["broken"]["regression"]) == (
        "failed, then passed on recheck 1", False, True)


def test_a_flip_that_passes_its_recheck_does_not_fail_the_regression_gate(project: NoiseProject) -> None:
    project.cases("steady", "flip")
    project.side({}, "-i", "s.jsonl", "--output-dir", "main")
    now = project.side({"flip": "FP"}, "-i", "s.jsonl", *GATE, "--recheck", "5")
    assert now.code == 0, now.stdout + now.stderr
    assert project.agent.calls == {"steady": 1, "flip": 2}          # it stopped at its first pass, of five allowed
    assert now.result("flip")["recheck"]["limit"] == 5
    assert "  ✅ NO REGRESSIONS (1 failing case is noise)" in now.stdout.splitlines()


def test_recheck_0_rechecks_nothing_and_any_flip_is_a_regression(project: NoiseProject) -> None:
    project.cases("flip")
    project.side({}, "-i", "s.jsonl", "--output-dir", "main")
    now = project.side({"flip": "FP"}, "-i", "s.jsonl", *GATE, "--recheck", "0")
    assert now.code == 1
    assert project.agent.calls == {"flip": 1} and "recheck" not in now.result("flip")
    assert decided(now.report["comparison"], "regressions") == [("flip", "passed, now failed; not rechecked")]
    assert "Rechecks" not in now.stdout


def test_rechecks_are_recorded_and_replayed_as_runs_of_their_own(project: NoiseProject) -> None:
    project.cases("flip", "broken")
    project.side({}, "-i", "s.jsonl", "--output-dir", "main")
    recorded = project.side({"flip": "FP", "broken": "FFF"}, "-i", "s.jsonl", *GATE, "--record", "tapes")
    assert recorded.code == 1 and project.agent.calls == {"flip": 2, "broken": 3}
    project.agent.start(lambda case_id, call: False)         # were it asked, every reply would fail now
    replayed = project.run("-i", "s.jsonl", *GATE, "--replay", "tapes")
    assert replayed.code == 1, replayed.stdout + replayed.stderr
    assert project.agent.calls == {}                          # every run and recheck came from the cassettes
    assert verdicts(replayed.report["comparison"]) == verdicts(recorded.report["comparison"])
    for case_id in ("flip", "broken"):
        record, replay = recorded.result(case_id)["recheck"], replayed.result(case_id)["recheck"]
        assert [o["status"] for o in replay["outcomes"]] == [o["status"] for o in record["outcomes"]]
    assert decided(replayed.report["comparison"], "noise") == [("flip", "failed, then passed on recheck 1")]


def test_a_budget_spent_before_the_rechecks_stops_them_and_says_so(project: NoiseProject) -> None:
    project.cases("flip")
    project.side({}, "-i", "s.jsonl", "--output-dir", "main")
    now = project.side({"flip": "FP"}, "-i", "s.jsonl", *GATE, "--max-tokens", "15")   # 15 tokens a call
    assert now.code == 1 and project.agent.calls == {"flip": 1}
    spent = "budget spent: 15 tokens of --max-tokens 15"
    assert now.result("flip")["recheck"] == {"limit": 2, "runs": 0, "passed": False, "outcomes": [], "stopped": spent}
    assert decided(now.report["comparison"], "regressions") == [("flip", f"failed; not rechecked ({spent})")]
    assert f"↻ [flip] failed; not rechecked ({spent}): a regression" in now.stdout.splitlines()


def test_a_budget_spent_by_a_recheck_stops_the_next(project: NoiseProject) -> None:
    project.cases("flip")
    project.side({}, "-i", "s.jsonl", "--output-dir", "main")
    now = project.side({"flip": "FFP"}, "-i", "s.jsonl", *GATE, "--max-tokens", "30")
    assert now.code == 1 and project.agent.calls == {"flip": 2}       # its run, and one recheck: then 30 tokens
    assert now.report["summary"]["budget"]["tokens"] == 30
    assert decided(now.report["comparison"], "regressions") == [
        ("flip", "failed, and failed 1 recheck before the rechecks stopped (budget spent: 30 tokens of --max-tokens "
                 "30)")]


def test_an_interrupt_during_the_rechecks_stops_them_and_the_report_says_so(project: NoiseProject) -> None:
    project.cases("flip")
    project.side({}, "-i", "s.jsonl", "--output-dir", "main")
    project.agent.start(patterns({"flip": "FFP"}))
    project.agent.hold.add(("flip", 2))                      # the first recheck never answers
    now = interrupt_cli("-i", "s.jsonl", *GATE, cwd=project.root, env={"BOT_URL": project.url},
                        ready=lambda: project.agent.calls["flip"] == 2)
    assert now.code == 130, now.stdout + now.stderr
    assert now.report["interrupted"] is True and project.agent.calls == {"flip": 2}
    assert now.result("flip")["recheck"] == {"limit": 2, "runs": 0, "passed": False, "outcomes": [],
                                             "stopped": "interrupted"}
    assert decided(now.report["comparison"], "regressions") == [("flip", "failed; not rechecked (interrupted)")]


JUDGED_CONFIG = CONFIG + """
      judge:
        builtin: validator
        connector: brain
    connectors:
      brain:
        base_url: ${BRAIN_URL}
        api_key: sk-noise-brain
        model: brain-1
    """


def test_a_recheck_asks_the_judge_afresh_never_the_helper_cache(project: NoiseProject) -> None:
    """The recheck's reply is the baseline's, word for word, and so is the judge's question: the cache, which
    serves only a case's first run, would answer it with the baseline's verdict — a recheck must ask."""
    project.write("agenttest.yaml", JUDGED_CONFIG)
    project.suite("s.jsonl", {"id": "judged", "input": "question judged", "assert": {
        "type": "agent", "use": "agents:judge", "value": f"the reply says '{PASS}'"}})
    with helper_server() as (helper, server):
        env = {"BRAIN_URL": server.base_url}
        base = project.side({}, "-i", "s.jsonl", "--cache", "cache", "--output-dir", "main", env=env)
        assert base.code == 0 and helper.calls["judge"] == 1, base.stdout + base.stderr
        now = project.side({"judged": "FP"}, "-i", "s.jsonl", "--cache", "cache", *GATE, env=env)
    assert now.code == 0, now.stdout + now.stderr
    assert project.agent.calls == {"judged": 2} and helper.calls["judge"] == 3     # its run, and its recheck
    assert decided(now.report["comparison"], "noise") == [("judged", "failed, then passed on recheck 1")]
    judge = now.report["summary"]["usage"]["judge"]
    assert judge["calls"] == 2 and judge.get("cached", 0) == 0


@pytest.mark.parametrize(("runs", "before", "after"), [
    # three runs a side: `lone` collapsed (p = 0.05) but `partner`'s drop is tested with it (BH: 0.10)
    ("3", {"lone": "PPP", "partner": "PPF", "wobble": "PPP"}, {"lone": "FFF", "partner": "PFF", "wobble": "PPF"}),
    # one run a side: the shards recheck their own flips
    ("1", {}, {"lone": "FFF", "partner": "FP", "wobble": "FFP"}),
])
def test_shards_merged_decide_as_one_run(project: NoiseProject, runs: str, before: dict[str, str],
                                         after: dict[str, str]) -> None:
    project.cases("lone", "partner", "wobble", "steady")
    project.side(before, "-i", "s.jsonl", "--runs", runs, "--output-dir", "main")
    whole = project.side(after, "-i", "s.jsonl", "--runs", runs, *GATE)
    calls = dict(project.agent.calls)
    for k in (1, 2):
        project.side(after, "-i", "s.jsonl", "--runs", runs, *GATE, "--shard", f"{k}/2", "--output-dir", f"shard{k}")
        assert project.agent.calls, "the shard ran no case"
    merged = project.run("merge", "shard1/report.json", "shard2/report.json", *GATE, "--output-dir", "merged")
    assert merged.code == whole.code, merged.stdout + merged.stderr
    merged_comparison = json.loads((project.root / "merged" / "report.json").read_text())["comparison"]
    assert verdicts(merged_comparison) == verdicts(whole.report["comparison"])
    if runs == "3":
        assert calls == {"lone": 3, "partner": 3, "wobble": 3, "steady": 3}
        assert decided(merged_comparison, "noise") == [("lone", "3/3 → 0/3, p = 0.05, 0.10 adjusted over 2 drops"),
                                                       ("wobble", "3/3 → 2/3, p = 0.50, too small to test at 3 runs "
                                                                  "a side")]
        assert whole.code == 0 and [entry["id"] for entry in merged_comparison["still_failing"]] == ["partner"]
    else:
        assert calls == {"lone": 3, "partner": 2, "wobble": 3, "steady": 1}
        assert decided(merged_comparison, "regressions") == [("lone", "failed, and failed 2 rechecks")]
        assert decided(merged_comparison, "noise") == [("partner", "failed, then passed on recheck 1"),
                                                       ("wobble", "failed, then passed on recheck 2")]
    assert "Compared with main/report.json: " in merged.stdout


def test_an_a_a_run_reports_no_regression_where_any_drop_would_report_many(project: NoiseProject) -> None:
    """The same agent on both sides — each call fails with chance 10 %, drawn from a fixed seed — over 100 cases,
    three runs a side: every case whose verdict flipped is noise, none is a regression."""
    ids = [f"case-{number:03d}" for number in range(100)]
    project.cases(*ids)
    project.agent.start(flaky(seed=22, rate=0.1))
    base = project.run("-i", "s.jsonl", "--runs", "3", "--parallel", "8", "--output-dir", "main")
    now = project.run("-i", "s.jsonl", "--runs", "3", "--parallel", "8", *GATE)
    assert now.code == 0, now.stdout[-3000:] + now.stderr
    assert sum(project.agent.calls.values()) == 600        # three runs a side, and no recheck
    assert base.code == 1           # some case failed a run
    baseline = json.loads((project.root / "main" / "report.json").read_text())
    before = {result["id"]: result["status"] for result in baseline["results"]}
    flips = sorted(result["id"] for result in now.report["results"]
                   if before[result["id"]] == "passed" and result["status"] != "passed")
    comparison = now.report["comparison"]
    assert comparison["regressions"] == [] and comparison["introduced"] == []
    assert len(flips) >= 10 and sorted(entry["id"] for entry in comparison["noise"]) == flips
