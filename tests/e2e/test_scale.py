"""Verdicts at scale through the real CLI: `--runs` (stability, pass@k, pass^k, flaky cases in every artifact),
`--shard` and `agenttest merge`, and `--baseline` with `--fail-on regression`."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import junitparser
import pytest
from lxml import etree

from e2e.conftest import Project, Run, helper_server

XSD = etree.XMLSchema(etree.parse(str(Path(__file__).resolve().parents[1] / "report" / "data"
                                       / "junit-10-with-location.xsd")))

# A case's reply depends on its run: `pass N/M` passes in runs 1..N of M (deterministic flakiness). Every call is
# logged with its chat id and run, and how many calls were in flight at its start.
AGENT = '''
import asyncio, json, os

IN_FLIGHT = [0]

async def respond(request):
    text = request["messages"][-1]["content"]
    context = request["context"]
    IN_FLIGHT[0] += 1
    try:
        with open(os.environ["CALLS_FILE"], "a") as handle:
            handle.write(json.dumps({"test": context["test_id"], "run": context["run"], "chat": context["chat_id"],
                                     "in_flight": IN_FLIGHT[0]}) + "\\n")
        await asyncio.sleep(0.05)
        if text.startswith("pass "):
            good = int(text.split()[1].split("/")[0])
            return "yes" if context["run"] <= good else "no"
        if text == "boom":
            raise RuntimeError("exploded")
        if text == "slow":
            await asyncio.sleep(0.5)
        return "yes" if text != "no" else "no"
    finally:
        IN_FLIGHT[0] -= 1
'''


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return runs_project(tmp_path)


def runs_project(root: Path) -> Project:
    """A project at `root` whose default agent is AGENT."""
    proj = Project(root)
    proj.write("agenttest.yaml", """
        version: 1
        defaults:
          name: runs
        agents:
          runs:
            provider: python
            callable: runs_agent:respond
        """)
    proj.write("runs_agent.py", AGENT)
    return proj


def case(case_id: str, text: str) -> dict[str, Any]:
    return {"id": case_id, "input": text, "assert": {"type": "contains", "value": "yes"}}


def run(project: Project, *args: str, env: dict[str, str] | None = None) -> Run:
    return project.run(*args, env={"CALLS_FILE": str(project.root / "calls.jsonl"), **(env or {})})


def shards_of(root: Path, cases: int, shards: int, whole: bool = False) -> Path:
    """A project at `root` with a suite of `cases` passing cases and the reports of its `shards` shards (and of the
    whole run in main/): made once for a module, copied by each test (Project.copy) that changes them."""
    made = runs_project(root)
    made.suite("s.jsonl", *[case(f"c{i}", "x") for i in range(cases)])
    own_cache = {"XDG_CACHE_HOME": str(root / "cache")}
    for args in ([["--output-dir", "main"]] if whole else []) + [
            ["--shard", f"{k}/{shards}", "--output-dir", f"shard{k}"] for k in range(1, shards + 1)]:
        result = run(made, "-i", "s.jsonl", *args, env=own_cache)
        assert result.code == 0, result.stdout + result.stderr
    return root


@pytest.fixture(scope="module")
def three_shards(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return shards_of(tmp_path_factory.mktemp("three-shards"), cases=6, shards=3)


@pytest.fixture(scope="module")
def two_shards_and_main(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return shards_of(tmp_path_factory.mktemp("two-shards"), cases=2, shards=2, whole=True)


def calls(project: Project) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (project.root / "calls.jsonl").read_text().splitlines()]


def test_runs_give_each_case_a_verdict_over_its_runs_with_stability_and_pass_k(project: Project) -> None:
    project.suite("s.jsonl", case("steady", "pass 4/4"), case("flaky", "pass 3/4"), case("half", "pass 2/4"),
                  case("broken", "pass 0/4"), {"id": "later", "input": "x", "skip": "not yet"})
    result = run(project, "-i", "s.jsonl", "--runs", "4", "--min-pass-rate", "75", "--parallel", "8")
    assert result.code == 1, result.stdout + result.stderr
    report = result.report
    statuses = {r["id"]: r["status"] for r in report["results"]}
    assert statuses == {"steady": "passed", "flaky": "passed", "half": "failed", "broken": "failed",
                        "later": "skipped"}
    summary = report["summary"]
    assert (summary["total"], summary["passed"], summary["failed"], summary["skipped"]) == (5, 2, 2, 1)
    assert (summary["runs_per_case"], summary["total_runs"], summary["flaky_cases"]) == (4, 16, 2)
    assert (summary["stable_cases"], summary["unstable_cases"]) == (1, 3)
    passes = [4, 3, 2, 0]       # pass@k and pass^k as τ-bench defines them, averaged over the cases that ran
    for k in range(1, 5):
        hat = sum(math.comb(c, k) / math.comb(4, k) for c in passes) / 4
        at = sum(1 - math.comb(4 - c, k) / math.comb(4, k) for c in passes) / 4
        assert summary["pass_hat_k"][str(k)] == round(hat, 4) and summary["pass_at_k"][str(k)] == round(at, 4)
    half = result.result("half")
    assert half["error"] == ("2 of 4 runs passed (50%, 95% CI 15–85%, below --min-pass-rate 75%): output does not "
                             "contain 'yes'")
    assert [r["status"] for r in half["runs"]] == ["passed", "passed", "failed", "failed"]
    assert half["stability"]["stability_class"] == "unstable" and half["stability"]["flaky"] is True
    rows = {row["id"]: row for row in report["stability_results"]}
    assert rows["flaky"]["counted_as"] == "passed" and rows["broken"]["stability_class"] == "highly_unstable"
    # Wilson 95 % of 4/4, 3/4, 2/4, 0/4 (Newcombe's method 3), in percent, rounded outward to two places.
    assert [rows[name]["pass_rate_interval"] for name in ("steady", "flaky", "half", "broken")] == [
        [51.01, 100.0], [30.06, 95.45], [15.0, 85.0], [0.0, 48.99]]
    # The mean of the cases' rates, 56.25 %, with cases as clusters: SE² = Σ(p_c − p̄)²/C² = 0.546875/16, worth
    # n_eff = p̄(1 − p̄)/SE² = 7.2 runs of the 16 made; Wilson at 7.2.
    assert (summary["overall_pass_rate"], summary["overall_pass_rate_interval"]) == (56.25, [24.73, 83.42])
    # Yao's class for 0 of 4 is kept; what every artifact shows says what it is: the steadiest failure.
    assert [rows[name]["stability_label"] for name in ("steady", "flaky", "half", "broken")] == [
        "stable", "unstable", "unstable", "stably failing"]
    assert "- 0/4 runs passed (0%, 95% CI 0–49%), stably failing" in result.stdout
    summary_md = (project.root / "agenttest-results" / "summary.md").read_text()
    assert "% | stably failing |" in summary_md and "highly unstable" not in summary_md + result.stdout
    # Every run has its own chat id; the runs of a case run side by side; the skipped case is never called.
    made = calls(project)
    assert len(made) == 16 and len({c["chat"] for c in made}) == 16
    assert sorted(c["run"] for c in made if c["test"] == "flaky") == [1, 2, 3, 4]
    assert max(c["in_flight"] for c in made) > 4
    assert "► [flaky] pass 3/4 PASSED" in result.stdout
    assert "- 3/4 runs passed (75%, 95% CI 30–96%), unstable, flaky" in result.stdout
    assert ("Stability: 4 runs per case · overall pass rate 56.2% (95% CI 24–84%) · pass^1 0.56 · pass^4 0.25 · "
            "2 flaky, 1 stable of 4") in result.stdout
    events = [e for e in result.events if e["type"] == "stability"]
    assert [e["id"] for e in events] == [e["id"] for e in result.events if e["type"] == "result"
                                         and e["status"] != "skipped"]


def test_flaky_cases_are_marked_as_surefire_does_in_junit(project: Project) -> None:
    project.suite("s.jsonl", case("flaky", "pass 2/3"), case("broken", "pass 0/3"))
    run(project, "-i", "s.jsonl", "--runs", "3", "--min-pass-rate", "60")
    path = project.root / "agenttest-results" / "junit.xml"
    assert XSD.validate(etree.parse(str(path))), XSD.error_log
    root = etree.parse(str(path)).getroot()
    flaky, broken = root.findall(".//testcase")
    assert [child.tag for child in flaky] == ["flakyFailure"]
    assert flaky[0].get("message") == "run 3: output does not contain 'yes'" and flaky[0].get("type") == "failed"
    assert flaky[0].find("stackTrace").text == "run 3: output does not contain 'yes'"
    assert [child.tag for child in broken] == ["failure", "rerunFailure", "rerunFailure"]
    parsed = junitparser.JUnitXml.fromfile(str(path))
    assert [[type(r).__name__ for r in c.result] for s in parsed for c in s] == [[], ["Failure"]]
    summary = (project.root / "agenttest-results" / "summary.md").read_text()
    assert summary.index("| flaky | 3 | 2 |") < summary.index("| broken | 3 | 0 |")
    ctrf = json.loads((project.root / "agenttest-results" / "ctrf.json").read_text())
    assert [(t["name"], t["flaky"]) for t in ctrf["results"]["tests"]] == [("flaky", True), ("broken", False)]


def test_fail_fast_stops_after_the_first_case_that_fails_over_its_runs(project: Project) -> None:
    project.suite("s.jsonl", case("broken", "pass 0/2"), *[case(f"later{i}", "pass 2/2") for i in range(6)])
    result = run(project, "-i", "s.jsonl", "--runs", "2", "--fail-fast", "--parallel", "2")
    assert result.result("broken")["status"] == "failed"
    assert result.result("later5")["error"] == "not run: --fail-fast stopped the run after broken failed"


def test_repeats_never_come_from_the_helper_cache(project: Project) -> None:
    with helper_server() as (brain, server):
        project.write("agenttest.yaml", f"""
            version: 1
            defaults:
              name: runs
            agents:
              runs:
                provider: python
                callable: runs_agent:respond
              judge:
                builtin: validator
                base_url: {server.base_url}
                model: m
            """)
        project.suite("s.jsonl", {"id": "j", "input": "x",
                                  "assert": {"type": "agent", "use": "agents:judge", "value": "says 'yes'"}})
        first = run(project, "-i", "s.jsonl", "--runs", "3")
        assert first.code == 0, first.stdout + first.stderr
        assert brain.calls["judge"] == 3
        second = run(project, "-i", "s.jsonl", "--runs", "3")
        assert brain.calls["judge"] == 5                # run 1 from the cache, runs 2 and 3 asked again
        assert second.report["summary"]["usage"]["judge"]["cached"] == 1


def test_shards_split_the_suite_and_merge_gives_the_counts_of_one_run(project: Project) -> None:
    cases = [case(f"c{i:02d}", "pass 1/2" if i % 4 == 0 else "no" if i % 7 == 0 else "x") for i in range(30)]
    project.suite("s.jsonl", *cases)
    run(project, "-i", "s.jsonl", "--runs", "2", "--output-dir", "whole")
    whole = json.loads((project.root / "whole" / "report.json").read_text())
    failing = {r["id"] for r in whole["results"] if r["status"] != "passed"}
    shards = []
    for k in (1, 2, 3):
        result = run(project, "-i", "s.jsonl", "--runs", "2", "--shard", f"{k}/3", "--output-dir", f"shard{k}")
        shards.append(json.loads((project.root / f"shard{k}" / "report.json").read_text()))
        assert result.code == (1 if failing & {r["id"] for r in shards[-1]["results"]} else 0), result.stdout
    ids = [[r["id"] for r in report["results"]] for report in shards]
    assert sorted(len(part) for part in ids) == [10, 10, 10]
    assert sorted(name for part in ids for name in part) == sorted(c["id"] for c in cases)
    run(project, "-i", "s.jsonl", "--shard", "2/3", "--output-dir", "again")
    again = json.loads((project.root / "again" / "report.json").read_text())
    assert [r["id"] for r in again["results"]] == ids[1]         # deterministic
    merged_run = project.run("merge", "shard1/report.json", "shard2/report.json", "shard3/report.json",
                             "--output-dir", "merged")
    assert merged_run.code == 1, merged_run.stdout + merged_run.stderr
    merged = json.loads((project.root / "merged" / "report.json").read_text())
    for key in ("total", "passed", "failed", "errors", "timeouts", "skipped", "pass_rate", "total_runs",
                "overall_pass_rate", "stable_cases", "unstable_cases", "flaky_cases", "pass_at_k", "pass_hat_k"):
        assert merged["summary"][key] == whole["summary"][key], key
    assert [r["id"] for r in merged["results"]] == [r["id"] for r in whole["results"]]
    # The merged summary and CTRF report are the whole run's, but for its times.
    assert without_times((project.root / "merged" / "summary.md").read_text()) == \
        without_times((project.root / "whole" / "summary.md").read_text())
    assert untimed_ctrf(project.root / "merged" / "ctrf.json") == untimed_ctrf(project.root / "whole" / "ctrf.json")
    assert XSD.validate(etree.parse(str(project.root / "merged" / "junit.xml")))
    assert "Merged 3 shards into merged: 30 cases" in merged_run.stdout


def without_times(summary: str) -> str:
    """summary.md with its times blanked (when the run started, how long things took): all that two runs of one
    deterministic suite may differ by."""
    summary = re.sub(r"\*\*Started\*\* [^·\n]*", "**Started** …", summary)
    return re.sub(r"\b\d+(?:\.\d+)?(?:ms|s|m)\b", "…", summary)


def untimed_ctrf(path: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """A CTRF report's tests and summary without their times."""
    results = json.loads(path.read_text())["results"]
    return ([{k: v for k, v in test.items() if k != "duration"} for test in results["tests"]],
            {k: v for k, v in results["summary"].items() if k not in ("start", "stop", "duration")})


def test_adding_a_case_moves_few_others_between_shards(project: Project) -> None:
    cases = [case(f"c{i:03d}", "x") for i in range(100)]
    project.suite("s.jsonl", *cases)
    before = {k: {r["id"] for r in run(project, "-i", "s.jsonl", "--shard", f"{k}/4").report["results"]}
              for k in range(1, 5)}
    project.suite("s.jsonl", *cases[:50], case("added", "x"), *cases[50:])
    after = {k: {r["id"] for r in run(project, "-i", "s.jsonl", "--shard", f"{k}/4").report["results"]}
             for k in range(1, 5)}
    moved = sum(len(before[k] - after[k]) for k in before)
    assert moved <= 10 and sorted(len(ids) for ids in after.values()) == [25, 25, 25, 26]


@pytest.mark.parametrize(("setup", "message"), [
    ("missing", "merge: shard 3 of 3 is missing: the counts would be wrong"),
    ("twice", "merge: shard1/report.json and shard1/report.json are both shard 1"),
    ("other-suite", "merge: other/report.json ran other cases than shard1/report.json"),
    ("unsharded", "merge: whole/report.json is not the report of a shard (run with --shard K/N)"),
    ("not-json", "Error: junk.json: not a report.json (Expecting property name"),
])
def test_merge_refuses_reports_that_are_not_the_shards_of_one_run(project: Project, three_shards: Path, setup: str,
                                                                   message: str) -> None:
    project.copy(three_shards, "s.jsonl", "shard1", "shard2", "shard3")
    first, second, third = (f"shard{k}/report.json" for k in (1, 2, 3))
    if setup == "missing":
        args = [first, second]
    elif setup == "twice":
        args = [first, first, second, third]
    elif setup == "other-suite":
        project.suite("other.jsonl", case("z", "x"))
        run(project, "-i", "other.jsonl", "--shard", "2/3", "--output-dir", "other")
        args = [first, "other/report.json", third]
    elif setup == "unsharded":
        run(project, "-i", "s.jsonl", "--output-dir", "whole")
        args = [first, second, "whole/report.json"]
    else:
        project.write("junk.json", "{not json")
        args = [first, second, "junk.json"]
    result = project.run("merge", *args)
    assert result.code == 2 and message in result.stderr
    assert not (project.root / "agenttest-results" / "junit.xml").exists()


def test_a_baseline_shows_regressions_fixes_new_and_removed_cases(project: Project) -> None:
    project.suite("s.jsonl", case("stays", "x"), case("breaks", "x"), case("mends", "no"), case("gone", "x"),
                  case("still-bad", "no"))
    run(project, "-i", "s.jsonl", "--output-dir", "main")
    project.suite("s.jsonl", case("stays", "x"), case("breaks", "no"), case("mends", "x"), case("still-bad", "no"),
                  case("fresh", "x"))
    result = run(project, "-i", "s.jsonl", "--baseline", "main/report.json", "--annotations",
                 env={"GITHUB_ACTIONS": "true"})
    assert result.code == 1
    comparison = result.report["comparison"]
    assert comparison["counts"] == {"regressions": 1, "noise": 0, "fixes": 1, "still_failing": 1, "new": 1,
                                    "removed": 1, "introduced": 0}
    assert [(c["id"], c["was"], c["status"], c["evidence"]) for c in comparison["regressions"]] == [
        ("breaks", "passed", "failed", "failed, and failed 2 rechecks")]
    assert [c["id"] for c in comparison["removed"]] == ["gone"] and comparison["baseline"]["path"] == "main/report.json"
    assert comparison["pass_rate"] == {"before": 60.0, "now": 60.0, "delta": 0.0}
    annotations = [line for line in result.stdout.splitlines() if line.startswith("::error file=")]
    assert annotations[0].startswith("::error file=s.jsonl,line=2,title=agenttest%3A breaks (failed%2C a regression)::")
    assert "Baseline:  1 regression, 1 fix, 1 new, 1 removed · pass rate 60.0% → 60.0%" in result.stdout
    summary = (project.root / "agenttest-results" / "summary.md").read_text()
    assert summary.index("### Compared with the baseline") < summary.index("| Total |")
    assert "| 🔻 Regressions | 1 | `breaks` |" in summary
    only_regressions = run(project, "-i", "s.jsonl", "--baseline", "main/report.json", "--fail-on", "regression")
    assert only_regressions.code == 1
    project.suite("s.jsonl", case("stays", "x"), case("breaks", "x"), case("still-bad", "no"))
    no_regression = run(project, "-i", "s.jsonl", "--baseline", "main/report.json", "--fail-on", "regression")
    assert no_regression.code == 0 and no_regression.report["summary"]["failed"] == 1
    missing = run(project, "-i", "s.jsonl", "--baseline", "nope/report.json")
    assert (missing.code, missing.stderr) == (2, "Error: --baseline nope/report.json: no such file\n")


def _banner(result: Run) -> str:
    lines = result.stdout.splitlines()
    return lines[len(lines) - 1 - lines[::-1].index("═" * 63) - 1]


def _status_line(project: Project, output_dir: str = "agenttest-results") -> str:
    return (project.root / output_dir / "summary.md").read_text().splitlines()[0]


def test_the_banner_the_summary_and_the_exit_code_agree_whatever_fail_on_says(project: Project) -> None:
    project.suite("s.jsonl", case("stays", "x"), case("breaks", "x"), case("still-bad", "no"))
    run(project, "-i", "s.jsonl", "--output-dir", "main")
    unchanged = run(project, "-i", "s.jsonl", "--baseline", "main/report.json", "--fail-on", "regression")
    assert unchanged.code == 0
    assert _banner(unchanged) == "  ✅ NO REGRESSIONS (1 failing case was already failing)"
    assert _status_line(project) == ("## ✅ agenttest: no regressions (1 failing case was already failing) — 2 of 3 "
                                     "passed")
    tolerated = run(project, "-i", "s.jsonl", "--fail-on", "never")
    assert tolerated.code == 0
    assert _banner(tolerated) == "  ⚠ 1 CASE DID NOT PASS (--fail-on never: the run does not fail)"
    assert _status_line(project) == "## ⚠️ agenttest: 1 failed — 2 of 3 passed (--fail-on never: the run does not fail)"
    project.suite("s.jsonl", case("stays", "x"), case("breaks", "no"), case("still-bad", "no"))
    regressed = run(project, "-i", "s.jsonl", "--baseline", "main/report.json", "--fail-on", "regression")
    assert regressed.code == 1
    assert _banner(regressed) == "  ❌ TESTS FAILED"
    assert _status_line(project) == "## ❌ agenttest: 2 failed — 1 of 3 passed"
    assert "    ✗ regressed: breaks (s.jsonl:2) passed → failed" in regressed.stdout.splitlines()
    for k in (1, 2):
        run(project, "-i", "s.jsonl", "--shard", f"{k}/2", "--output-dir", f"shard{k}", "--fail-on", "never")
    merged = project.run("merge", "shard1/report.json", "shard2/report.json", "--baseline", "main/report.json",
                         "--output-dir", "merged", "--fail-on", "regression")
    assert merged.code == 1 and _status_line(project, "merged") == "## ❌ agenttest: 2 failed — 1 of 3 passed"
    project.suite("s.jsonl", case("stays", "x"), case("breaks", "x"), case("still-bad", "no"))
    for k in (1, 2):
        run(project, "-i", "s.jsonl", "--shard", f"{k}/2", "--output-dir", f"shard{k}", "--fail-on", "never")
    merged = project.run("merge", "shard1/report.json", "shard2/report.json", "--baseline", "main/report.json",
                         "--output-dir", "merged", "--fail-on", "regression")
    assert merged.code == 0
    assert _status_line(project, "merged") == ("## ✅ agenttest: no regressions (1 failing case was already "
                                               "failing) — 2 of 3 passed")


def test_a_shard_compared_with_a_baseline_leaves_removed_cases_to_merge(project: Project) -> None:
    project.suite("s.jsonl", *[case(f"c{i}", "x") for i in range(8)])
    run(project, "-i", "s.jsonl", "--output-dir", "main")
    project.suite("s.jsonl", *[case(f"c{i}", "no" if i == 0 else "x") for i in range(7)])
    for k in (1, 2):
        result = run(project, "-i", "s.jsonl", "--shard", f"{k}/2", "--baseline", "main/report.json",
                     "--output-dir", f"shard{k}")
        shard = json.loads((project.root / f"shard{k}" / "report.json").read_text())
        assert result.code == (1 if "c0" in {r["id"] for r in shard["results"]} else 0), result.stdout  # c0 fails
        comparison = shard["comparison"]
        assert comparison["removed"] == [] and comparison["baseline"]["partial"] is True
    merged = project.run("merge", "shard1/report.json", "shard2/report.json", "--baseline", "main/report.json",
                         "--output-dir", "merged", "--fail-on", "regression")
    assert merged.code == 1
    assert "Compared with main/report.json: 1 regression, 0 fixes, 0 new, 1 removed" in merged.stdout
    report = json.loads((project.root / "merged" / "report.json").read_text())
    assert [c["id"] for c in report["comparison"]["removed"]] == ["c7"]


def test_a_shard_report_is_no_baseline_and_regression_without_a_baseline_says_so(project: Project) -> None:
    project.suite("s.jsonl", *[case(f"c{i}", "no" if i == 0 else "x") for i in range(4)])
    run(project, "-i", "s.jsonl", "--shard", "1/2", "--output-dir", "shard1")
    refused = run(project, "-i", "s.jsonl", "--baseline", "shard1/report.json")
    assert refused.code == 2 and "Traceback" not in refused.stderr
    assert ("--baseline shard1/report.json: the report of shard 1/2 only; compare with the merged report "
            "(agenttest merge)") in refused.stderr
    unbased = run(project, "-i", "s.jsonl", "--fail-on", "regression")
    assert unbased.code == 1
    assert "⚠ --fail-on regression needs --baseline: failing on any failure instead" in unbased.stderr


@pytest.mark.parametrize(("edit", "message"), [
    ({"status": "weird"}, "results[0].status: Input should be 'passed', 'failed', 'error', 'timeout' or "
                          "'skipped'"),
    ({"id": 7}, "results[0].id: expected a string, got number"),
    ({"duration_ms": "slow"}, "results[0].duration_ms: expected a number, got string"),
])
def test_an_edited_report_is_refused_as_a_baseline_and_by_merge_naming_what_is_wrong(
        project: Project, two_shards_and_main: Path, edit: dict[str, Any], message: str) -> None:
    project.copy(two_shards_and_main, "s.jsonl", "main", "shard1", "shard2")
    for path in (project.root / "main" / "report.json", project.root / "shard1" / "report.json"):
        data = json.loads(path.read_text())
        data["results"][0].update(edit)
        path.write_text(json.dumps(data))
    baseline = run(project, "-i", "s.jsonl", "--baseline", "main/report.json")
    assert baseline.code == 2 and f"--baseline main/report.json: {message}" in baseline.stderr
    merged = project.run("merge", "shard1/report.json", "shard2/report.json")
    assert merged.code == 2 and f"shard1/report.json: {message}" in merged.stderr
    assert "Traceback" not in baseline.stderr + merged.stderr


def test_a_report_with_infinity_is_not_json_to_merge(project: Project, two_shards_and_main: Path) -> None:
    project.copy(two_shards_and_main, "s.jsonl", "shard1", "shard2")
    path = project.root / "shard1" / "report.json"
    path.write_text(path.read_text().replace('"duration_ms": ', '"duration_ms": Infinity, "x": ', 1))
    merged = project.run("merge", "shard1/report.json", "shard2/report.json")
    assert merged.code == 2 and "Infinity is not JSON" in merged.stderr


def test_merge_refuses_shards_of_other_runs_options(project: Project) -> None:
    project.suite("s.jsonl", *[case(f"c{i}", "x") for i in range(4)])
    run(project, "-i", "s.jsonl", "--shard", "1/2", "--output-dir", "shard1", "--parallel", "2")
    run(project, "-i", "s.jsonl", "--shard", "2/2", "--output-dir", "shard2", "--runs", "2")
    merged = project.run("merge", "shard1/report.json", "shard2/report.json")
    assert merged.code == 2
    assert ("merge: shard2/report.json ran each case 2 times, shard1/report.json once; merge the shards of one "
            "run") in merged.stderr
    run(project, "-i", "s.jsonl", "--shard", "2/2", "--output-dir", "shard2", "--timeout", "9s")
    merged = project.run("merge", "shard1/report.json", "shard2/report.json")
    assert merged.code == 2
    assert ("merge: shard2/report.json was run with other options than shard1/report.json (timeout); merge the "
            "shards of one run") in merged.stderr
    run(project, "-i", "s.jsonl", "--shard", "2/2", "--output-dir", "shard2", "--parallel", "8")
    assert project.run("merge", "shard1/report.json", "shard2/report.json").code == 0   # parallel is per shard


@pytest.mark.parametrize(("args", "message"), [
    (["--min-pass-rate", "0"], "--min-pass-rate: must be more than 0"),
    (["--max-cost", "inf"], "--max-cost: must be a finite number"),
    (["--max-cost", "nan"], "--max-cost: must be a finite number"),
])
def test_run_options_out_of_their_range_are_refused(project: Project, args: list[str], message: str) -> None:
    project.suite("s.jsonl", case("a", "x"))
    result = run(project, "-i", "s.jsonl", *args)
    assert result.code == 2 and message in result.stderr, result.stderr


def test_a_case_whose_runs_were_cut_short_is_skipped_without_a_verdict(project: Project) -> None:
    # Two at a time: `bad` fails its three runs while the first run of `slow` is in flight; --fail-fast stops the
    # run there, so `slow` ran one run of three and has no verdict.
    project.suite("s.jsonl", case("bad", "no"), case("slow", "slow"), case("later", "x"))
    result = run(project, "-i", "s.jsonl", "--runs", "3", "--parallel", "2", "--fail-fast")
    assert result.code == 1
    slow = result.result("slow")
    assert slow["status"] == "skipped"
    assert [r["status"] for r in slow["runs"]] == ["passed", "skipped", "skipped"]
    assert slow["error"].startswith("only 1 of 3 runs ran (") and slow["error"].endswith("): no verdict")
    assert result.result("bad")["status"] == "failed" and result.result("later")["status"] == "skipped"
    rows = {row["id"]: row for row in result.report["stability_results"]}
    assert rows["slow"]["counted_as"] == "skipped"
    assert result.report["summary"]["total_runs"] == 3          # `bad`'s three runs only
