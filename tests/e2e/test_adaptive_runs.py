"""`--runs auto[:MAX]` through the real CLI against an HTTP agent on 127.0.0.1 whose every call is scripted and
counted: a case whose three runs agree stops there, one whose runs disagree runs on until its verdict at
`--min-pass-rate` is decided or MAX — and every artifact shows each case's pass rate with its Wilson interval, and
the suite's with cases as clusters.

A case's input ends with its script: `PF` passes run 1, fails run 2, passes run 3…, the letters repeating. The
agent answers by the run number the request carries (`context.run`), so the outcome of every run is fixed however
the runs interleave, and the calls each case gets are exact."""

from __future__ import annotations

import asyncio
import json
import threading
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from lxml import etree

from e2e.conftest import Project, Run, interrupt_cli
from fakes.server import ThreadedServer

XSD = etree.XMLSchema(etree.parse(str(Path(__file__).resolve().parents[1] / "report" / "data"
                                       / "junit-10-with-location.xsd")))
TOGETHER_WAIT = 10      # seconds a held run waits for the others of its group: a bound, so a miss fails, not hangs


class ScriptedAgent:
    """The agent under test. `together[case]` lists groups of runs that must be in flight at the same time: each
    run of a group is held until the whole group has arrived (a run that waited alone is noted in `alone`).
    `held[case]` lists runs never answered (until the client goes, or a bound): `holding` is set when one came."""

    def __init__(self) -> None:
        app = web.Application()
        app.router.add_post("/chat", self._handle)
        self.server = ThreadedServer(app)
        self.calls: Counter[str] = Counter()
        self.runs: defaultdict[str, list[int]] = defaultdict(list)
        self.together: dict[str, list[set[int]]] = {}
        self.alone: list[tuple[str, int]] = []
        self.held: dict[str, set[int]] = {}
        self.holding = threading.Event()
        self._arrived: defaultdict[str, set[int]] = defaultdict(set)
        self._groups: dict[tuple[str, frozenset[int]], asyncio.Event] = {}

    @property
    def url(self) -> str:
        return self.server.url("/chat")

    async def _handle(self, request: web.Request) -> web.Response:
        body = await request.json()
        case, run = body["context"]["test_id"], int(body["context"]["run"])
        script = body["messages"][-1]["content"].split()[-1]
        self.calls[case] += 1
        self.runs[case].append(run)
        await self._meet(case, run)
        if run in self.held.get(case, set()):
            self.holding.set()
            await asyncio.sleep(TOGETHER_WAIT * 6)      # cancelled when the client hangs up
        passed = script[(run - 1) % len(script)] == "P"
        return web.json_response({"content": "pass" if passed else "fail",
                                  "usage": {"prompt_tokens": 6, "completion_tokens": 4}})

    async def _meet(self, case: str, run: int) -> None:
        group = next((g for g in self.together.get(case, []) if run in g), None)
        if group is None:
            return
        self._arrived[case].add(run)
        event = self._groups.setdefault((case, frozenset(group)), asyncio.Event())
        if group <= self._arrived[case]:
            event.set()
        try:
            await asyncio.wait_for(event.wait(), TOGETHER_WAIT)
        except asyncio.TimeoutError:
            self.alone.append((case, run))


@pytest.fixture
def agent() -> Iterator[ScriptedAgent]:
    scripted = ScriptedAgent()
    with scripted.server:
        yield scripted


@pytest.fixture
def project(tmp_path: Path, agent: ScriptedAgent) -> Project:
    proj = Project(tmp_path)
    proj.write("agenttest.yaml", f"""
        version: 1
        defaults:
          name: scripted
        agents:
          scripted:
            provider: http
            url: {agent.url}
        """)
    return proj


def case(case_id: str, script: str) -> dict[str, Any]:
    return {"id": case_id, "input": f"answer {script}", "assert": {"type": "contains", "value": "pass"}}


def rows(result: Run) -> dict[str, dict[str, Any]]:
    return {row["id"]: row for row in result.report["stability_results"]}


def read(project: Project, name: str) -> str:
    return (project.root / "agenttest-results" / name).read_text()


def test_cases_whose_three_runs_agree_stop_there(project: Project, agent: ScriptedAgent) -> None:
    project.suite("s.jsonl", case("always", "P"), case("never", "F"), case("off", "P") | {"skip": "later"})
    result = project.run("-i", "s.jsonl", "--runs", "auto")
    assert result.code == 1, result.stdout + result.stderr
    assert agent.calls == {"always": 3, "never": 3}
    assert sorted(agent.runs["always"]) == sorted(agent.runs["never"]) == [1, 2, 3]
    summary = result.report["summary"]
    assert (summary["runs_per_case"], summary["total_runs"], summary["stopped"]) == ("auto:10", 6, {"agreed": 2})
    found = rows(result)
    # Wilson 95 % of 3/3 is (0.4385, 1) and of 0/3 (0, 0.5615) — in percent, rounded outward to two places.
    assert [(found[c]["runs"], found[c]["stopped"], found[c]["pass_rate_interval"]) for c in ("always", "never")] \
        == [(3, "agreed", [43.85, 100.0]), (3, "agreed", [0.0, 56.15])]
    assert "► [always] answer P PASSED" in result.stdout
    assert "- 3/3 runs passed (100%, 95% CI 43–100%), stable, stopped: agreed" in result.stdout
    assert "- 0/3 runs passed (0%, 95% CI 0–57%), stably failing, stopped: agreed" in result.stdout
    # One case always passing, one never: each case is one run's worth, as 1 of 2 single runs — Wilson (9.45, 90.55).
    assert summary["overall_pass_rate_interval"] == [9.45, 90.55]
    assert ("Stability: runs auto:10, 6 in all (2 agreed) · overall pass rate 50.0% (95% CI 9–91%) · pass^1 0.50 · "
            "pass^3 0.50 · 0 flaky, 1 stable of 2") in result.stdout
    assert result.result("off")["status"] == "skipped" and "off" not in agent.calls


def test_a_case_passing_half_its_runs_runs_on_side_by_side_until_the_rule_decides(
        project: Project, agent: ScriptedAgent) -> None:
    # At a 50 % bar and MAX 10: 2 of 3 decides nothing, nor could runs 4 and 5, so 4, 5 and 6 run together; at 3
    # of 6, 7 and 8 together; at 4 of 8, run 9, and 5 of 9 is curtailed: 5 passes of 10 are reached.
    agent.together["half"] = [{1, 2, 3}, {4, 5, 6}, {7, 8}]
    project.suite("s.jsonl", case("half", "PF"))
    result = project.run("-i", "s.jsonl", "--runs", "auto", "--min-pass-rate", "50", "--parallel", "4")
    assert result.code == 0, result.stdout + result.stderr
    assert agent.alone == [], "runs the rule let run side by side were made one at a time"
    assert agent.calls["half"] == 9 and sorted(agent.runs["half"]) == list(range(1, 10))
    assert agent.runs["half"][-1] == 9
    row = rows(result)["half"]
    assert (row["runs"], row["passed"], row["stopped"], row["flaky"]) == (9, 5, "curtailed", True)
    assert row["pass_rate_interval"] == [26.66, 81.13]      # Wilson 95 % of 5/9: (0.26665, 0.81122)
    assert [r["status"] for r in result.result("half")["runs"]] == ["passed", "failed"] * 4 + ["passed"]
    assert "- 5/9 runs passed (56%, 95% CI 26–82%), unstable, flaky, stopped: curtailed" in result.stdout


def test_auto_with_a_limit_stops_at_it(project: Project, agent: ScriptedAgent) -> None:
    # auto:5 at 50 %: 2/3 (1/3), then run 4 alone (3/4 would have curtailed it; 1/4 too), then run 5: the limit.
    project.suite("s.jsonl", case("half", "PF"), case("odd", "FP"))
    result = project.run("-i", "s.jsonl", "--runs", "auto:5", "--min-pass-rate", "50")
    assert agent.calls == {"half": 5, "odd": 5}
    found = rows(result)
    assert (found["half"]["runs"], found["half"]["passed"], found["half"]["stopped"]) == (5, 3, "limit")
    assert (found["odd"]["runs"], found["odd"]["passed"], found["odd"]["stopped"]) == (5, 2, "limit")
    assert result.result("half")["status"] == "passed" and result.result("odd")["status"] == "failed"
    assert found["odd"]["pass_rate_interval"] == [11.76, 76.93]        # Wilson 95 % of 2/5: (0.11762, 0.76925)
    assert result.result("odd")["error"] == ("2 of 5 runs passed (40%, 95% CI 11–77%, below --min-pass-rate 50%): "
                                             "output does not contain 'pass'")
    assert result.report["summary"]["runs_per_case"] == "auto:5"
    assert result.report["metadata"]["options"]["runs"] == "auto:5"
    assert result.report["summary"]["pass_hat_k"]["5"] == 0.0        # both cases reached k = 5


def test_at_the_default_bar_one_failure_decides_a_case_at_three_runs(project: Project, agent: ScriptedAgent) -> None:
    project.suite("s.jsonl", case("half", "PF"))
    result = project.run("-i", "s.jsonl", "--runs", "auto")
    assert agent.calls == {"half": 3}
    assert rows(result)["half"]["stopped"] == "curtailed" and result.result("half")["status"] == "failed"


def test_a_large_suite_with_a_few_flaky_cases_costs_about_three_runs_a_case(
        project: Project, agent: ScriptedAgent) -> None:
    cases = [case(f"c{i:03}", "PF" if i % 40 == 7 else "P") for i in range(200)]
    project.suite("s.jsonl", *cases)
    result = project.run("-i", "s.jsonl", "--runs", "auto", "--min-pass-rate", "50", "--parallel", "16",
                         timeout=300)
    assert result.code == 0, result.stdout[-2000:] + result.stderr
    flaky = {c["id"] for c in cases if c["input"].endswith("PF")}
    assert len(flaky) == 5
    assert {name: count for name, count in agent.calls.items() if name in flaky} == dict.fromkeys(flaky, 9)
    assert set(agent.calls.values()) == {3, 9}
    assert sum(agent.calls.values()) == 195 * 3 + 5 * 9 == 630       # 3.15 calls a case; --runs 10 makes 2,000
    summary = result.report["summary"]
    assert (summary["total_runs"], summary["flaky_cases"], summary["stopped"]) == (630, 5, {"agreed": 195,
                                                                                            "curtailed": 5})
    assert summary["usage"]["target"]["calls"] == 630


def test_fail_fast_with_auto_stops_after_the_first_case_that_fails(project: Project, agent: ScriptedAgent) -> None:
    # One at a time: `half`'s later runs go before `bad`, which has not started; `bad` fails its three runs, and
    # --fail-fast leaves `later` unrun.
    project.suite("s.jsonl", case("half", "PF"), case("bad", "F"), case("later", "P"))
    result = project.run("-i", "s.jsonl", "--runs", "auto", "--min-pass-rate", "50", "--parallel", "1",
                         "--fail-fast")
    assert result.code == 1
    assert agent.calls == {"half": 9, "bad": 3}
    assert [(r["id"], r["status"]) for r in result.report["results"]] == [
        ("half", "passed"), ("bad", "failed"), ("later", "skipped")]
    assert result.result("later")["error"] == "not run: --fail-fast stopped the run after bad failed"


def test_a_spent_budget_cuts_a_case_short_of_the_runs_it_asked_for(project: Project, agent: ScriptedAgent) -> None:
    # 10 tokens a call, one call at a time: `half` makes runs 1-3, asks for 4-6, and the budget is spent at run 5.
    project.suite("s.jsonl", case("half", "PF"), case("later", "P"))
    result = project.run("-i", "s.jsonl", "--runs", "auto", "--min-pass-rate", "50", "--parallel", "1",
                         "--max-tokens", "50")
    assert result.code == 1
    assert agent.calls == {"half": 5}
    half = result.result("half")
    assert half["status"] == "skipped"
    assert half["error"].startswith("only 5 of 6 runs ran (not run: budget spent: 50 tokens of --max-tokens 50")
    assert [r["status"] for r in half["runs"]] == ["passed", "failed", "passed", "failed", "passed", "skipped"]
    assert "stopped" not in rows(result)["half"]            # cut short: it has no verdict, nor a reason it stopped
    assert result.result("later")["status"] == "skipped"


def test_an_interrupt_during_a_cases_later_runs_leaves_it_without_a_verdict(
        project: Project, agent: ScriptedAgent) -> None:
    agent.held["half"] = {5}
    project.suite("s.jsonl", case("half", "PF"), case("always", "P"), case("later", "P"))
    stopped = interrupt_cli("-i", "s.jsonl", "--runs", "auto", "--min-pass-rate", "50", "--parallel", "2",
                            cwd=project.root, ready=agent.holding.is_set)
    assert stopped.code == 130, stopped.stdout + stopped.stderr
    report = stopped.report
    assert report["interrupted"] is True
    half = stopped.result("half")
    assert half["status"] == "skipped" and half["error"].startswith("only ")
    assert half["error"].endswith("runs ran (interrupted): no verdict")
    assert [r["status"] for r in half["runs"]][:4] == ["passed", "failed", "passed", "failed"]
    assert {r["run"]: r["status"] for r in half["runs"]}[5] == "skipped"
    assert "stopped" not in half["stability"]
    assert stopped.events[-1]["type"] == "summary" and stopped.events[-1]["interrupted"] is True


def test_an_auto_run_replays_from_its_cassettes_run_for_run(project: Project, agent: ScriptedAgent) -> None:
    project.suite("s.jsonl", case("half", "PF"), case("always", "P"))
    recorded = project.run("-i", "s.jsonl", "--runs", "auto", "--min-pass-rate", "50", "--record", "tapes")
    assert dict(agent.calls) == {"half": 9, "always": 3}
    replayed = project.run("-i", "s.jsonl", "--runs", "auto", "--min-pass-rate", "50", "--replay", "tapes")
    assert replayed.code == 0, replayed.stdout + replayed.stderr
    assert dict(agent.calls) == {"half": 9, "always": 3}
    def timeless(run: Run) -> list[dict[str, Any]]:
        return [{k: v for k, v in row.items() if not k.endswith("_ms")} for row in run.report["stability_results"]]

    assert timeless(replayed) == timeless(recorded) and timeless(recorded)[0]["runs"] == 9


def test_every_artifact_shows_the_intervals_and_why_runs_stopped(project: Project, agent: ScriptedAgent) -> None:
    project.suite("s.jsonl", case("odd", "FP"), case("always", "P"), case("never", "F"))
    result = project.run("-i", "s.jsonl", "--runs", "auto:5", "--min-pass-rate", "50", "-o", "report.html")
    # odd: 1/3, 2/4, 2/5 — the limit.
    assert agent.calls == {"odd": 5, "always": 3, "never": 3}
    summary = result.report["summary"]
    assert summary["stopped"] == {"agreed": 2, "limit": 1}
    # Cases at 2/5, 1 and 0: p̄ = 7/15, SE² = ((2/5 − 7/15)² + (8/15)² + (7/15)²)/3² = 38/675, worth
    # n_eff = p̄(1 − p̄)/SE² = 84/19 ≈ 4.42 runs (between the 3 cases and 9/(1/5 + 1/3 + 1/3) ≈ 10.4); Wilson there.
    assert (summary["overall_pass_rate"], summary["overall_pass_rate_interval"]) == (46.67, [14.16, 82.27])
    summary_md = read(project, "summary.md")
    assert "| odd | 5 | 2 | 40.0% | 11–77% | limit | highly unstable | yes | failed |" in summary_md
    assert "| always | 3 | 3 | 100.0% | 43–100% | agreed | stable |  | passed |" in summary_md
    assert "runs auto:5, 11 in all (2 agreed, 1 limit) · overall pass rate 46.7% (95% CI 14–83%)" in summary_md
    assert "above k=3, only the cases whose runs disagreed and ran on" in summary_md
    html = (project.root / "report.html").read_text()
    assert '<td class="n">40.0%</td><td class="n">11–77%</td><td>limit</td>' in html
    assert "overall pass rate 46.7% (95% CI 14–83%)" in html
    junit = project.root / "agenttest-results" / "junit.xml"
    assert XSD.validate(etree.parse(str(junit))), XSD.error_log
    properties = {p.get("name"): p.get("value") for p in etree.parse(str(junit)).iter("property")}
    assert (properties["runs"], properties["total_runs"], properties["overall_pass_rate"],
            properties["overall_pass_rate_interval"]) == ("auto:5", "11", "46.7", "95% CI 14.16–82.27%")
    failure = etree.parse(str(junit)).find(".//testcase[@name='never']/failure")
    assert failure.get("message").startswith("0 of 3 runs passed (0%, 95% CI 0–57%, below --min-pass-rate 50%)")
    assert "Runs: 0 of 3 passed (0%, 95% CI 0–57%, stably failing; stopped: agreed): ✗ ✗ ✗" in failure.text
    ctrf = json.loads(read(project, "ctrf.json"))["results"]
    assert ctrf["summary"]["extra"]["overall_pass_rate_interval"] == [14.16, 82.27]
    assert ctrf["summary"]["extra"]["runs_per_case"] == "auto:5"
    assert ctrf["tests"][0]["extra"]["pass_rate_interval"] == [11.76, 76.93]
    assert ctrf["tests"][1]["extra"] == {"runs": 3, "passed_runs": 3, "pass_rate": 100.0,
                                         "pass_rate_interval": [43.85, 100.0], "stopped": "agreed"}
    events = result.events
    stability = {e["id"]: e for e in events if e["type"] == "stability"}
    assert (stability["odd"]["pass_rate_interval"], stability["odd"]["stopped"]) == ([11.76, 76.93], "limit")
    assert events[-1]["type"] == "summary" and events[-1]["overall_pass_rate_interval"] == [14.16, 82.27]


def test_merge_recomputes_the_intervals_of_auto_shards(project: Project, agent: ScriptedAgent) -> None:
    project.suite("s.jsonl", *[case(f"c{i}", script) for i, script in enumerate(["PF", "P", "F", "PPF", "P"])])
    args = ["-i", "s.jsonl", "--runs", "auto", "--min-pass-rate", "60"]
    whole = project.run(*args, "--output-dir", "main")
    for k in (1, 2):
        project.run(*args, "--shard", f"{k}/2", "--output-dir", f"shard{k}")
        path = project.root / f"shard{k}" / "report.json"
        shard = json.loads(path.read_text())           # as an older agenttest wrote it: no intervals
        for result in shard["results"]:
            result.get("stability", {}).pop("pass_rate_interval", None)
        shard["summary"].pop("overall_pass_rate_interval", None)
        path.write_text(json.dumps(shard))
    merged = project.run("merge", "shard1/report.json", "shard2/report.json", "--output-dir", "merged")
    assert merged.code == 1, merged.stdout + merged.stderr
    report = json.loads((project.root / "merged" / "report.json").read_text())
    main = json.loads((project.root / "main" / "report.json").read_text())
    keys = ("runs_per_case", "total_runs", "overall_pass_rate", "overall_pass_rate_interval", "stopped")
    assert {key: report["summary"][key] for key in keys} == {key: main["summary"][key] for key in keys}
    assert {r["id"]: r["pass_rate_interval"] for r in report["stability_results"]} == {
        r["id"]: r["pass_rate_interval"] for r in main["stability_results"]}
    assert "overall pass rate" in (project.root / "merged" / "summary.md").read_text()
    assert whole.code == 1


@pytest.mark.parametrize(("value", "message"), [
    ("auto:2", "--runs: auto:2: MAX must be from 3 (the runs every case makes first) to 1000, got 2"),
    ("auto:x", "--runs: expected N (a whole number of runs) or auto[:MAX] (e.g. auto:5), got 'auto:x'"),
    ("0", "--runs: must be at least 1, got 0"),
    ("often", "--runs: expected N (a whole number of runs) or auto[:MAX] (e.g. auto:5), got 'often'"),
])
def test_a_runs_value_that_is_neither_a_number_nor_auto_is_a_usage_error(
        project: Project, agent: ScriptedAgent, value: str, message: str) -> None:
    project.suite("s.jsonl", case("always", "P"))
    result = project.run("-i", "s.jsonl", "--runs", value)
    assert result.code == 2 and result.stderr.strip() == f"Error: {message}", result.stderr
    assert "Traceback" not in result.stderr and not agent.calls


def test_auto_in_the_config_defaults(project: Project, agent: ScriptedAgent) -> None:
    project.write("agenttest.yaml", (project.root / "agenttest.yaml").read_text().replace(
        "  name: scripted\n", "  name: scripted\n  runs: auto:4\n"))
    project.suite("s.jsonl", case("always", "P"))
    result = project.run("-i", "s.jsonl")
    assert result.code == 0 and result.report["summary"]["runs_per_case"] == "auto:4" and agent.calls["always"] == 3
    project.write("agenttest.yaml", (project.root / "agenttest.yaml").read_text().replace("auto:4", "auto:1"))
    refused = project.run("-i", "s.jsonl")
    assert refused.code == 2 and "runs: auto:1: MAX must be from 3" in refused.stderr, refused.stderr
