"""Record and replay through the real CLI: every agent call — the target on an OpenAI-compatible server, a judge,
a simulator, a generator — recorded once, then replayed with no server and no secret, as a fork's pull request
runs; and the run budget (`--max-tokens`, `--max-cost`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from e2e.conftest import Project, Run, helper_server, run_cli
from fakes.openai_server import completion, last_user_text

KEY = "sk-cassette-secret-93af"

CONFIG = """
    version: 1
    defaults:
      name: llm
    connectors:
      brain:
        base_url: ${BRAIN_URL}
        api_key: ${BRAIN_KEY}
        model: brain-1
        price: {input: 2, output: 8}
    agents:
      llm:
        provider: openai
        connector: brain
      judge:
        builtin: validator
        connector: brain
      sim:
        builtin: simulator
        connector: brain
      gen:
        builtin: generator
        connector: brain
    """

SUITE = [
    {"id": "judged", "input": "please say refund", "assert": [
        {"type": "contains", "value": "refund"},
        {"type": "agent", "use": "agents:judge", "value": "it mentions a 'refund'", "options": {"samples": 3}}]},
    {"id": "talk", "input": "hi", "simulator": {"use": "sim", "options": {"metadata": {
        "goal": "chat", "script": ["hi", "tell me about refunds"]}}},
     "checkpoints": [{"id": "refunds", "assert": {"type": "contains", "value": "refunds"}}]},
    {"id": "fails", "input": "no", "assert": {"type": "contains", "value": "never"}},
]


async def _model(request: web.Request, body: Any) -> web.StreamResponse:
    return await completion(f"you said: {last_user_text(body)}", usage=(30, 10))(request, body)


@pytest.fixture
def project(tmp_path: Path) -> Project:
    proj = Project(tmp_path)
    proj.write("agenttest.yaml", CONFIG)
    proj.suite("tests/s.jsonl", *SUITE)
    return proj


def statuses(run: Run) -> dict[str, tuple[str, str | None]]:
    return {r["id"]: (r["status"], r.get("error")) for r in run.report["results"]}


def test_a_recorded_run_replays_without_any_server_or_secret(project: Project) -> None:
    with helper_server(target=_model) as (_, server):
        env = {"BRAIN_URL": server.base_url, "BRAIN_KEY": KEY}
        recorded = project.run("-i", "tests/s.jsonl", "-i", "agents:gen?count=2", "--record", "tapes", env=env)
        made = len(server.requests)
    assert recorded.code == 1, recorded.stdout + recorded.stderr
    live = statuses(recorded)
    assert live["judged"][0] == "passed" and live["talk"][0] == "passed" and live["fails"][0] == "failed"
    files = sorted(str(p.relative_to(project.root / "tapes")) for p in (project.root / "tapes").rglob("*.json"))
    assert files == ["generated/agents_gen_count_2.json", "tests/s.jsonl.json"]
    for path in (project.root / "tapes").rglob("*.json"):
        assert KEY not in path.read_text()
    # A fork: no server, none of the variables the config reads.
    replayed = project.run("-i", "tests/s.jsonl", "-i", "agents:gen?count=2", "--replay", "tapes")
    assert replayed.code == 1, replayed.stdout + replayed.stderr
    assert statuses(replayed) == live and made > 10
    judge = replayed.result("judged")["assertions"][1]
    assert judge["details"]["votes"] == {"passed": 3, "failed": 0}
    assert replayed.result("talk")["metadata"]["total_turns"] == 2
    assert replayed.report["summary"]["usage"]["target"]["calls"] == recorded.report["summary"]["usage"]["target"][
        "calls"]


def test_a_recording_says_where_it_put_the_cassettes(project: Project) -> None:
    """The summary names the cassette files beside the artifacts, and report.json's metadata holds them (merged
    shards: every shard's); a run that called no agent says it recorded nothing."""
    with helper_server(target=_model) as (_, server):
        env = {"BRAIN_URL": server.base_url, "BRAIN_KEY": KEY}
        recorded = project.run("-i", "tests/s.jsonl", "-i", "agents:gen?count=2", "--record", "tapes", env=env)
        project.suite("tests/more.jsonl", {"id": "more", "input": "x"})
        shards = [project.run("-i", "tests/s.jsonl", "-i", "tests/more.jsonl", "--record", "sharded", "--shard",
                              f"{k}/2", "--output-dir", f"shard{k}", env=env) for k in (1, 2)]
    assert recorded.code == 1, recorded.stdout + recorded.stderr
    assert "  Cassettes: tapes/ (generated/agents_gen_count_2.json, tests/s.jsonl.json)" in recorded.stdout.splitlines()
    assert recorded.report["metadata"]["record"] == {
        "directory": "tapes", "files": ["generated/agents_gen_count_2.json", "tests/s.jsonl.json"]}
    per_shard = [json.loads((project.root / f"shard{k}" / "report.json").read_text())["metadata"]["record"]
                 for k in (1, 2)]
    assert all(shard.code in (0, 1) for shard in shards) and all(record["files"] for record in per_shard)
    merged = project.run("merge", "shard1/report.json", "shard2/report.json", "--output-dir", "merged")
    assert merged.code == 1, merged.stderr      # the case `fails` fails
    assert json.loads((project.root / "merged" / "report.json").read_text())["metadata"]["record"] == {
        "directory": "sharded", "files": ["tests/more.jsonl.json", "tests/s.jsonl.json"]}
    project.suite("tests/later.jsonl", {"id": "later", "input": "x", "skip": True})
    nothing = project.run("-i", "tests/later.jsonl", "--record", "empty",
                          env={"BRAIN_URL": "http://127.0.0.1:9/v1", "BRAIN_KEY": KEY})
    assert nothing.code == 0 and "  Cassettes: empty/ (nothing recorded)" in nothing.stdout.splitlines()
    assert nothing.report["metadata"]["record"] == {"directory": "empty", "files": []}


def test_recording_again_changes_only_what_changed(project: Project) -> None:
    with helper_server(target=_model) as (_, server):
        env = {"BRAIN_URL": server.base_url, "BRAIN_KEY": KEY}
        project.run("-i", "tests/s.jsonl", "--record", "tapes", env=env)
        tape = project.root / "tapes" / "tests" / "s.jsonl.json"
        first, written = tape.read_bytes(), tape.stat()
        project.run("-i", "tests/s.jsonl", "--record", "tapes", env=env)
        assert tape.read_bytes() == first                          # byte-stable: no timestamp, sorted keys
        assert (tape.stat().st_ino, tape.stat().st_mtime_ns) == (written.st_ino, written.st_mtime_ns)   # not rewritten
        assert first == (json.dumps(json.loads(first), sort_keys=True, ensure_ascii=False, indent=1) + "\n").encode()
        assert not [p.name for p in tape.parent.iterdir() if p.name.startswith(".")]          # no temporary file left
        changed = [dict(SUITE[0]), SUITE[1], {**SUITE[2], "input": "no, never"}]
        project.suite("tests/s.jsonl", *changed)
        project.run("-i", "tests/s.jsonl", "--run", "fails", "--record", "tapes", env=env)
    before, after = json.loads(first)["cases"], json.loads(tape.read_text())["cases"]
    assert after["judged"] == before["judged"] and after["talk"] == before["talk"]    # not run: kept as they were
    assert after["fails"] != before["fails"]
    assert after["fails"][0]["request"]["messages"] == [{"role": "user", "content": "no, never"}]


def test_a_replay_miss_is_an_infra_error_saying_what_differs(project: Project) -> None:
    with helper_server(target=_model) as (_, server):
        project.run("-i", "tests/s.jsonl", "--record", "tapes", env={"BRAIN_URL": server.base_url,
                                                                      "BRAIN_KEY": KEY})
    project.suite("tests/s.jsonl", SUITE[0], SUITE[1], {**SUITE[2], "input": "yes"}, {"id": "new", "input": "x"})
    replayed = project.run("-i", "tests/s.jsonl", "--replay", "tapes")
    fails, new = replayed.result("fails"), replayed.result("new")
    assert (fails["status"], fails["error_kind"]) == ("error", "infra")
    assert fails["error"] == (
        "agent error: replay: no recording of this target call to llm in tapes/tests/s.jsonl.json, case 'fails'; "
        'the nearest (target call to llm) differs at messages[0].content: "no" recorded, "yes" now; re-record '
        "with --record tapes")
    assert new["error"] == ("agent error: replay: nothing recorded for tapes/tests/s.jsonl.json, case 'new'; "
                            "record with --record tapes")
    assert replayed.result("judged")["status"] == "passed"
    more_runs = project.run("-i", "tests/s.jsonl", "--replay", "tapes", "--runs", "2", "--run", "judged")
    assert more_runs.result("judged")["runs"][1]["error_kind"] == "infra"     # run 2 was never recorded


def test_the_run_budget_skips_what_has_not_started_and_fails_the_run(project: Project) -> None:
    project.suite("tests/many.jsonl", *[{"id": f"c{i}", "input": f"x{i}", "assert": {"type": "contains",
                                                                                     "value": "said"}}
                                        for i in range(12)])
    with helper_server(target=_model) as (_, server):
        env = {"BRAIN_URL": server.base_url, "BRAIN_KEY": KEY}
        spent = project.run("-i", "tests/many.jsonl", "--max-tokens", "100", "--parallel", "1", env=env)
        summary_md = (project.root / "agenttest-results" / "summary.md").read_text()
        assert len(server.requests) == 3
        priced = project.run("-i", "tests/many.jsonl", "--max-cost", "1", env=env)
        tiny = project.run("-i", "tests/many.jsonl", "--max-cost", "0.00001", "--parallel", "1", env=env)
        unpriced_config = CONFIG.replace("        price: {input: 2, output: 8}\n", "")
        project.write("agenttest.yaml", unpriced_config)
        refused = project.run("-i", "tests/many.jsonl", "--max-cost", "1", env=env)
    assert spent.code == 1
    summary = spent.report["summary"]
    assert (summary["passed"], summary["skipped"]) == (3, 9)
    assert summary["budget"] == {"max_tokens": 100, "tokens": 120,
                                 "spent": "budget spent: 120 tokens of --max-tokens 100"}
    assert spent.result("c11")["error"] == "not run: budget spent: 120 tokens of --max-tokens 100"
    assert "⚠ budget spent: 120 tokens of --max-tokens 100" in spent.stdout and "❌ TESTS FAILED" in spent.stdout
    assert summary_md.startswith("## ❌ agenttest: budget spent — 3 of 12 passed, 9 skipped")
    assert "> ⚠️ **budget spent: 120 tokens of --max-tokens 100**: the cases not yet started were skipped" in summary_md
    # 12 calls of 30 prompt and 10 completion tokens at $2 and $8 per million: 12 × $0.00014
    assert priced.code == 0 and priced.report["summary"]["cost"] == {"total_usd": 0.00168, "target": 0.00168}
    assert "Cost:      $0.0017 (target $0.0017)" in priced.stdout
    assert refused.code == 2 and "--max-cost: no price for 'llm'" in refused.stderr
    # one call spends a budget below a hundredth of a cent: both amounts readable, not $0.0000 of $1e-05
    assert tiny.report["summary"]["budget"]["spent"] == "budget spent: $0.0001 of --max-cost $0.000010"


def test_a_replay_after_the_agent_changed_is_an_error_but_not_after_its_endpoint_moved(project: Project) -> None:
    with helper_server(target=_model) as (_, server):
        project.run("-i", "tests/s.jsonl", "--record", "tapes", env={"BRAIN_URL": server.base_url,
                                                                      "BRAIN_KEY": KEY})
    tape = json.loads((project.root / "tapes" / "tests" / "s.jsonl.json").read_text())
    assert KEY not in json.dumps(tape) and "127.0.0.1" not in json.dumps(tape)      # no secret, no endpoint
    # Another machine: another endpoint and key — the same agent, the recording holds.
    moved = project.run("-i", "tests/s.jsonl", "--replay", "tapes",
                        env={"BRAIN_URL": "http://10.9.9.9:1/v1", "BRAIN_KEY": "sk-other"})
    assert statuses(moved)["judged"][0] == "passed"
    # A new system prompt: the target's replies may differ, so its recordings are stale.
    project.write("agenttest.yaml", CONFIG.replace("        connector: brain\n      judge:",
                                                   "        connector: brain\n        system: Be terse.\n"
                                                   "      judge:"))
    prompted = project.run("-i", "tests/s.jsonl", "--replay", "tapes")
    fails = prompted.result("fails")
    assert (fails["status"], fails["error_kind"]) == ("error", "infra")
    assert fails["error"] == ("agent error: replay: agent 'llm' changed since tapes/tests/s.jsonl.json, case "
                              "'fails' was recorded (system: null recorded, \"Be terse.\" now); re-record with "
                              "--record tapes")
    # The judge's model changed: judged calls are stale too, named as the judge's.
    project.write("agenttest.yaml", CONFIG.replace("      judge:\n        builtin: validator\n",
                                                   "      judge:\n        builtin: validator\n"
                                                   "        model: judge-2\n"))
    judged = project.run("-i", "tests/s.jsonl", "--replay", "tapes", "--run", "judged")
    assert "replay: agent 'judge' changed since" in judged.result("judged")["assertions"][1]["message"]
    assert 'model: null recorded, "judge-2" now' in judged.result("judged")["assertions"][1]["message"]


def test_cassettes_are_filed_from_the_repository_root_whichever_directory_runs(project: Project) -> None:
    (project.root / ".git").mkdir()
    with helper_server(target=_model) as (_, server):
        recorded = project.run("-i", "tests/s.jsonl", "--record", "tapes",
                               env={"BRAIN_URL": server.base_url, "BRAIN_KEY": KEY})
    assert (project.root / "tapes" / "tests" / "s.jsonl.json").is_file()
    inside = run_cli("-i", "s.jsonl", "--replay", "../tapes", cwd=project.root / "tests")
    assert statuses(inside) == statuses(recorded)
    assert sorted(p.name for p in (project.root / "tapes").rglob("*.json")) == ["s.jsonl.json"]


def test_recording_over_an_unreadable_cassette_warns_and_records_it_anew(project: Project) -> None:
    tape = project.root / "tapes" / "tests" / "s.jsonl.json"
    tape.parent.mkdir(parents=True)
    tape.write_text("{ not json")
    with helper_server(target=_model) as (_, server):
        recorded = project.run("-i", "tests/s.jsonl", "--record", "tapes",
                               env={"BRAIN_URL": server.base_url, "BRAIN_KEY": KEY})
    assert recorded.code == 1 and "Traceback" not in recorded.stderr
    assert "⚠ --record: cannot read the cassette tapes/tests/s.jsonl.json: " in recorded.stderr
    assert "recording it anew" in recorded.stderr and "replay" not in recorded.stderr
    assert set(json.loads(tape.read_text())["cases"]) == {"judged", "talk", "fails"}
    tape.write_text("[]")
    replayed = project.run("-i", "tests/s.jsonl", "--replay", "tapes")
    assert replayed.result("fails")["error"].startswith(
        "agent error: replay: cannot read the cassette tapes/tests/s.jsonl.json: ")


def test_merged_shards_add_up_what_each_spent_of_the_budget(project: Project) -> None:
    project.suite("tests/many.jsonl", *[{"id": f"c{i}", "input": f"x{i}", "assert": {"type": "contains",
                                                                                     "value": "said"}}
                                        for i in range(12)])
    with helper_server(target=_model) as (_, server):
        env = {"BRAIN_URL": server.base_url, "BRAIN_KEY": KEY}
        for k in (1, 2):
            shard = project.run("-i", "tests/many.jsonl", "--shard", f"{k}/2", "--max-tokens", "1000",
                                "--max-cost", "1", "--output-dir", f"shard{k}", env=env)
            assert shard.code == 0, shard.stderr
    merged = project.run("merge", "shard1/report.json", "shard2/report.json", "--output-dir", "merged")
    assert merged.code == 0, merged.stderr
    summary = json.loads((project.root / "merged" / "report.json").read_text())["summary"]
    assert summary["budget"] == {"max_tokens": 1000, "max_cost": 1.0, "tokens": 480, "cost_usd": 0.00168}
    assert summary["cost"] == {"target": 0.00168, "total_usd": 0.00168}


def test_a_record_directory_that_cannot_be_one_is_refused_before_any_case_runs(project: Project) -> None:
    project.suite("tests/s.jsonl", {"id": "one", "input": "x"})
    (project.root / "notes.txt").write_text("a file\n")
    (project.root / "dangling").symlink_to(project.root / "nowhere" / "tapes")
    for where, said in (("notes.txt", "Directory 'notes.txt' is a file"),
                        ("notes.txt/tapes", "--record notes.txt/tapes: "),
                        ("dangling", "--record dangling: cannot create the directory: a symlink to nothing")):
        run = project.run("-i", "tests/s.jsonl", "--record", where)
        assert run.code == 2, run.stdout + run.stderr
        assert said in run.stderr and "Traceback" not in run.stderr
        assert "► [one]" not in run.stdout                   # refused before any case, not warned of after all


def test_a_replay_spends_the_budget_its_recording_spent(project: Project) -> None:
    project.suite("tests/many.jsonl", *[{"id": f"c{i}", "input": f"x{i}", "assert": {"type": "contains",
                                                                                     "value": "said"}}
                                        for i in range(6)])
    budget = ("--max-tokens", "100", "--parallel", "1")
    with helper_server(target=_model) as (_, server):
        recorded = project.run("-i", "tests/many.jsonl", *budget, "--record", "tapes",
                               env={"BRAIN_URL": server.base_url, "BRAIN_KEY": KEY})
    replayed = project.run("-i", "tests/many.jsonl", *budget, "--replay", "tapes")
    priced = project.run("-i", "tests/many.jsonl", "--replay", "tapes", "--run", "c0")
    for run in (recorded, replayed):
        summary = run.report["summary"]
        assert (summary["passed"], summary["skipped"]) == (3, 3), run.stdout
        assert summary["budget"] == {"max_tokens": 100, "tokens": 120,
                                     "spent": "budget spent: 120 tokens of --max-tokens 100"}
    # 30 prompt and 10 completion tokens at $2 and $8 per million, as recorded
    assert priced.report["summary"]["cost"] == {"total_usd": 0.00014, "target": 0.00014}
