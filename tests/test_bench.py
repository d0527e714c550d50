"""The benchmark harness (bench/cli.py) runs end to end at tiny sizes and its agent server speaks the wire format.
Numbers are only checked to be sane: speed is measured in bench/, never asserted in a test."""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "bench"


@pytest.mark.slow
def test_the_harness_measures_every_section_at_tiny_sizes(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    env = {key: value for key, value in os.environ.items() if key not in ("PROMPTFOO", "PROMPTFOO_NODE")}
    proc = subprocess.run(
        [sys.executable, str(BENCH / "cli.py"), "--scenario", "20/4", "--scenario", "400/8", "--repeat", "1",
         "--latency", "0.01",
         "--startup-repeat", "3", "--validate-cases", "20", "--replay-cases", "50", "--dynamic-cases", "5",
         "--dynamic-turns", "3", "--dynamic-parallel", "4", "--no-promptfoo", "--workdir", str(tmp_path / "work"),
         "--json", str(out)],
        capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(out.read_text())
    assert data["machine"]["cpu_count"] >= 1 and data["machine"]["agenttest_version"]

    def sane(run: dict, cases: int) -> None:
        assert run["exit_code"] == 0 and run["summary"]["passed"] == cases
        assert run["wall_s"] > 0 and run["cpu_s"] > 0 and run["peak_rss_kb"] > 0 and len(run["load_avg"]) == 3

    scenario, _ = data["scenarios"]
    [run, bare] = scenario["runs"]
    assert bare["tool"] == "aiohttp" and bare["exit_code"] == 0 and bare["agent_requests"] == 20
    assert bare["loop_s"] > 0 and bare["startup_s"] > 0 and bare["loop_efficiency"] >= bare["efficiency"] > 0
    sane(run, 20)
    assert run["tool"] == "agenttest" and run["agent_requests"] == 20 and 0 < run["efficiency"] < 1.5
    assert run["ideal_s"] == scenario["ideal_s"] > 0 and run["cpu_ms_per_case"] > 0

    dynamic = data["dynamic"]
    [run] = dynamic["runs"]
    sane(run, 5)
    assert run["agent_requests"] == 5 * 3 and run["cpu_ms_per_turn"] > 0 and run["overhead_ms_per_turn"] > -30
    assert run["two_turns_wall_s"] > 0 and "marginal_ms_per_turn" in run and "marginal_cpu_ms_per_turn" in run
    # The bare client held the same conversations (floor.py checks every reply; the harness, the 5 × 3 calls).
    assert run["floor_wall_s"] > 0 and run["floor_cpu_s"] > 0 and run["floor_peak_rss_mb"] > 0

    replay = data["replay"]
    sane(replay["record"], 50)
    assert replay["record"]["agent_requests"] == 50 and replay["cassette_bytes"] > 0
    [run] = replay["runs"]
    sane(run, 50)
    assert run["cases_per_s"] > 0 and "agent_requests" not in run
    assert len(replay["bare_wall_s"]) == 5 and run["ratio_to_bare"] == run["wall_s"] / replay["median_bare_wall_s"]

    commands = data["startup"]["commands"]
    assert len(commands) == 4 and all(len(row["samples"]) == 3 for row in commands.values())
    assert all(row["median_wall_s"] > 0 and row["ratio_to_bare"] > 0 for row in commands.values())
    assert all(0 < row["best_wall_s"] <= row["median_wall_s"] and row["best_ratio_to_bare"] > 0
               for row in commands.values())
    assert commands["python -c pass"]["best_ratio_to_bare"] == 1 and "| best wall ms | best × |" in proc.stdout
    assert "## Scenarios" in proc.stdout and "| 20 / 4 |" in proc.stdout and "promptfoo not measured" in proc.stdout
    assert "× python -c pass |" in proc.stdout and "`python -c pass`: median " in proc.stdout
    targets = proc.stdout.split("## Issue #27's targets, best of the repeats")[1]
    assert "20 / 4:" not in targets       # the wall and CPU targets are of the scenarios only
    for row in ("| 400 / 8: wall within 0.1 s of the floor |", "| 400 / 8: CPU within 1.3× the floor's |",
                "| conversations: wall within 0.3 s of the floor |", "| conversations: CPU within 1.4× the floor's |",
                "| `agenttest --version` within 4× `python -c pass` |",
                "| `agenttest validate -i suite.jsonl (20 cases)` within 12× `python -c pass` |",
                "| replay of 50 recorded cases within 100× `python -c pass` |"):
        assert row in targets, targets
    assert targets.count(" | met |") + targets.count(" | not yet |") == 7, targets


def test_the_agent_server_answers_json_and_sse_on_one_kept_alive_connection() -> None:
    server = subprocess.Popen([sys.executable, str(BENCH / "agent_server.py"), "--latency", "0"],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        connection = http.client.HTTPConnection("127.0.0.1", int(server.stdout.readline()), timeout=10)
        body = {"model": "m", "messages": [{"role": "system", "content": "be brief"},
                                           {"role": "user", "content": "hello"}]}
        connection.request("POST", "/v1/chat/completions", json.dumps(body))
        reply = json.loads(connection.getresponse().read())
        assert reply["object"] == "chat.completion" and reply["model"] == "m"
        assert reply["choices"][0]["message"] == {"role": "assistant", "content": "ok hello"}
        assert reply["choices"][0]["finish_reason"] == "stop" and reply["usage"]["total_tokens"] > 0

        stream = {**body, "stream": True, "stream_options": {"include_usage": True}}
        connection.request("POST", "/v1/chat/completions", json.dumps(stream))
        response = connection.getresponse()
        assert response.getheader("Content-Type") == "text/event-stream"
        events = [event.removeprefix("data: ") for event in response.read().decode().split("\n\n") if event]
        assert events[-1] == "[DONE]"
        chunks = [json.loads(event) for event in events[:-1]]
        assert "".join(c["choices"][0]["delta"].get("content", "") for c in chunks if c["choices"]) == "ok hello"
        assert chunks[-1]["usage"]["completion_tokens"] > 0

        connection.request("GET", "/stats")
        stats = json.loads(connection.getresponse().read())
        assert stats["connections"] == 1 and stats["chat_connections"] == 1
        assert stats["requests"] == 3 and stats["chat_completions"] == 2
    finally:
        server.terminate()
        server.wait(10)


def test_the_timeline_names_each_step_of_a_run(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text("async def respond(request):\n    return {'content': 'ok'}\n")
    (tmp_path / "agenttest.yaml").write_text("agents:\n  bot:\n    provider: python\n    callable: agent:respond\n")
    (tmp_path / "s.jsonl").write_text('{"id": "a", "input": "hi", "assert": {"type": "contains", "value": "ok"}}\n')
    proc = subprocess.run([sys.executable, str(BENCH / "timeline.py"), "-i", "s.jsonl"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    steps = [line.split(" ms")[0].rsplit(None, 1)[0].strip() for line in proc.stderr.splitlines() if " ms " in line]
    assert steps == ["cli imported", "engine imported", "run started", "artifacts written", "main returned"]
    assert "collections: gen 0:" in proc.stderr
