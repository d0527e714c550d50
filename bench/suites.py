"""The files a benchmark run reads: agenttest projects (agenttest.yaml and a JSONL suite) and the promptfoo config
of the same cases.

Every standard case asks `case I` and has two static assertions that pass against the bench server's
`ok <last user message>`: `contains "ok case I"` and `regex "^ok case \\d+$"`. Every conversation sends T scripted
user turns (`dI turn 1` … `dI turn T`) and has one checkpoint that only the last reply meets, so each conversation
runs all T turns.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

API_KEY_VAR = "BENCH_API_KEY"
API_KEY = "sk-bench-dummy"
MODEL = "bench-model"
AGENT = "bench"
SUITE = "suite.jsonl"
PROMPTFOO_CONFIG = "promptfooconfig.yaml"
REGEX = r"^ok case \d+$"


def agenttest_config(base_url: str, *, stream: bool = False) -> str:
    """An agenttest.yaml whose only agent is `provider: openai` on the bench server."""
    return (
        "version: 1\n"
        "defaults:\n"
        f"  name: {AGENT}\n"
        "agents:\n"
        f"  {AGENT}:\n"
        "    provider: openai\n"
        f"    base_url: {base_url}\n"
        f"    api_key: ${{{API_KEY_VAR}}}\n"
        f"    model: {MODEL}\n"
        f"    stream: {'true' if stream else 'false'}\n"
    )


def standard_case(index: int) -> dict[str, Any]:
    return {"id": f"c{index}", "input": f"case {index}",
            "assert": [{"type": "contains", "value": f"ok case {index}"}, {"type": "regex", "value": REGEX}]}


def conversation_case(index: int, turns: int) -> dict[str, Any]:
    said = [f"d{index} turn {turn}" for turn in range(1, turns + 1)]
    return {"id": f"d{index}", "input": said[0], "max_turns": turns,
            "simulator": {"use": "scripted", "replies": said[1:]},
            "checkpoints": [{"id": "last-turn", "assert": {"type": "regex", "value": f"^ok {said[-1]}$"}}]}


def write_project(root: Path, base_url: str, cases: list[dict[str, Any]], *, stream: bool = False) -> Path:
    """An agenttest project in `root`: agenttest.yaml and suite.jsonl. Returns `root`."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "agenttest.yaml").write_text(agenttest_config(base_url, stream=stream))
    (root / SUITE).write_text("".join(json.dumps(case) + "\n" for case in cases))
    return root


def standard_project(root: Path, base_url: str, cases: int, *, stream: bool = False) -> Path:
    return write_project(root, base_url, [standard_case(i) for i in range(cases)], stream=stream)


def dynamic_project(root: Path, base_url: str, cases: int, turns: int, *, stream: bool = False) -> Path:
    return write_project(root, base_url, [conversation_case(i, turns) for i in range(cases)], stream=stream)


def promptfoo_config(root: Path, base_url: str, cases: int, parallel: int) -> Path:
    """promptfooconfig.yaml with the same cases: one prompt `{{input}}`, the same two assertions per test, the
    same server through promptfoo's own OpenAI provider. Written as JSON, which YAML reads as it is."""
    config = {
        "description": f"agenttest bench {cases}/{parallel}",
        "prompts": ["{{input}}"],
        "providers": [{"id": f"openai:chat:{MODEL}", "config": {"apiBaseUrl": base_url, "apiKey": API_KEY}}],
        "evaluateOptions": {"maxConcurrency": parallel},
        "tests": [{"vars": {"input": f"case {i}"},
                   "assert": [{"type": "contains", "value": f"ok case {i}"}, {"type": "regex", "value": REGEX}]}
                  for i in range(cases)],
    }
    path = root / PROMPTFOO_CONFIG
    root.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(config, indent=1) + "\n")
    return path
