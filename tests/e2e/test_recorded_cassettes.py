"""Cassettes recorded by an earlier agenttest replay as they were recorded: a recording is committed, and a
newer agenttest that keyed its calls any other way would miss every one of them.

`data/cassettes_bfa850b` was recorded by agenttest at commit bfa850b — before a replay looked its calls up by
cheaper bytes (issue #27) — with `agenttest -i tests/s.jsonl -i "agents:gen?count=2" --record tapes` against the
tests' fake OpenAI server (`fakes.helper_brain.HelperBrain` as judge, simulated user and generator, the target
answering `you said: <last user message>` with usage (30, 10)); `recorded-report.json` is that run's report.json
`summary` and `results`, every `duration_ms` left out. The calls cover what a key is worked out from: a judge's
payload (JSON inside a string, sorted before hashing), the same call made again (a judge's samples, two identical
judge assertions: their ranks), a conversation's turns, a message that is itself JSON, non-ASCII text, floats, an
integer beyond 64 bits, null, nested options, and a generator's call.

The built-in helpers' prompts count in each recording's agent configuration: a change to one makes this replay an
error saying the agent changed, and the project is then recorded again the same way (and the commit named here).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from e2e.conftest import Project

RECORDED = Path(__file__).parent / "data" / "cassettes_bfa850b"


def _timeless(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _timeless(item) for key, item in value.items() if key != "duration_ms"}
    if isinstance(value, list):
        return [_timeless(item) for item in value]
    return value


def test_cassettes_recorded_by_an_earlier_agenttest_replay_every_call(tmp_path: Path) -> None:
    project = Project(tmp_path)
    project.copy(RECORDED, "agenttest.yaml", "tests", "tapes")
    tapes = sorted((tmp_path / "tapes").rglob("*.json"))
    before = [path.read_bytes() for path in tapes]
    run = project.run("-i", "tests/s.jsonl", "-i", "agents:gen?count=2", "--replay", "tapes")
    assert run.code == 1, run.stdout + run.stderr          # `fails` and the two generated cases fail, as recorded
    assert "replay:" not in run.stdout + run.stderr
    recorded = json.loads((RECORDED / "recorded-report.json").read_text())
    assert _timeless(run.report["results"]) == recorded["results"]
    assert _timeless(run.report["summary"]) == recorded["summary"]     # every call replayed, tokens and cost too
    assert [path.read_bytes() for path in tapes] == before
