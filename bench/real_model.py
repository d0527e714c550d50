"""agenttest against a real third-party OpenAI-compatible server and a real (weak) model: the helpers (judge,
simulated user, generator), `--runs`, record/replay and budgets, streamed and not. Figures, not assertions: run by
hand (bench/real_model.md says how to build the server), never part of `.ci/run` or the test suite.

    python bench/real_model.py --base-url http://127.0.0.1:18426/v1 --agenttest .venv/bin/agenttest \\
        --workdir /tmp/real-model --json before.json
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

# USD per million tokens: high, so that a handful of calls of a tiny model crosses a budget.
PRICE = "{input: 100, output: 100}"

CONFIG = """\
version: 1
defaults:
  name: llm
connectors:
  local:
    base_url: {base_url}
    api_key: local-key
    model: smollm2
    price: {price}
agents:
  llm:
    description: A customer support assistant for ACME's online shop
    provider: openai
    connector: local
    system: system.md
    params: {{max_tokens: 60}}
  llm-stream:
    description: The same assistant, its replies streamed
    provider: openai
    connector: local
    system: system.md
    stream: true
    params: {{max_tokens: 60}}
"""

# llama-cpp-python's server rejects OpenAI's `json_schema` response format but takes a `schema` beside
# `json_object` and constrains the reply to it: what structured output can do for a weak model on this server.
VERDICT_FORMAT = {"type": "json_object", "schema": {
    "type": "object", "required": ["reasoning", "passed", "score", "reason", "suggestions"],
    "properties": {"reasoning": {"type": "string"}, "passed": {"type": "boolean"}, "score": {"type": "number"},
                   "reason": {"type": "string"}, "suggestions": {"type": "array", "items": {"type": "string"}}}}}
TURN_FORMAT = {"type": "json_object", "schema": {
    "type": "object", "required": ["reasoning", "message", "goal_achieved"],
    "properties": {"reasoning": {"type": "string"}, "message": {"type": "string"},
                   "goal_achieved": {"type": "boolean"}}}}

# The built-in helpers: (id, role, params), on the local connector.
HELPERS: list[tuple[str, str, dict[str, Any]]] = [
    ("judge", "validator", {"max_tokens": 200}),
    ("short-judge", "validator", {"max_tokens": 16}),
    ("schema-judge", "validator", {"max_tokens": 200, "response_format": VERDICT_FORMAT}),
    ("sim", "simulator", {"max_tokens": 120}),
    ("short-sim", "simulator", {"max_tokens": 12}),
    ("schema-sim", "simulator", {"max_tokens": 120, "response_format": TURN_FORMAT}),
    ("gen", "generator", {"max_tokens": 400}),
    ("short-gen", "generator", {"max_tokens": 24}),
]


def config(base_url: str) -> str:
    """agenttest.yaml: the assistant (streamed and not) and every helper of HELPERS."""
    helpers = "".join(f"  {agent_id}:\n    builtin: {role}\n    connector: local\n    params: {json.dumps(params)}\n"
                      for agent_id, role, params in HELPERS)
    return CONFIG.format(base_url=base_url, price=PRICE) + helpers


SYSTEM = "You are the support assistant of ACME's online shop. Refunds are possible within 30 days. Be brief.\n"

QUESTIONS = ["Can I get a refund for shoes I bought last week?", "What is your refund window?",
             "Say hello to me.", "Tell me a joke about cats.", "How do I reset my password?",
             "Is shipping free?"]
CRITERIA = ["It says that a refund is possible.", "It mentions 30 days.", "It greets the user.",
            "It tells a joke about cats.", "It explains how to reset a password.", "It answers about shipping."]


def judged(use: str = "judge", **options: Any) -> list[dict[str, Any]]:
    assertion: dict[str, Any] = {"type": "agent", "use": f"agents:{use}"}
    if options:
        assertion["options"] = options
    return [{"id": f"j{i + 1}", "input": question, "assert": {**assertion, "value": criteria}}
            for i, (question, criteria) in enumerate(zip(QUESTIONS, CRITERIA, strict=True))]


def conversations(use: str = "sim") -> list[dict[str, Any]]:
    """Two conversations of 3 turns whose checkpoint no reply reaches, so that the simulated user speaks twice."""
    return [{"id": f"talk{i}", "max_turns": 3, "input": first,
             "simulator": {"use": use, "options": {"metadata": {"persona": persona, "goal": goal}}},
             "checkpoints": [{"id": "never", "assert": {"type": "contains", "value": "zebra-xyzzy"}}]}
            for i, (first, persona, goal) in enumerate([
                ("Hi, I need help with a refund.", "A customer who bought shoes 10 days ago",
                 "Get a refund for the shoes"),
                ("Hello, where is my order?", "A customer waiting for order 4411", "Learn where order 4411 is")],
                start=1)]


def plain() -> list[dict[str, Any]]:
    return [{"id": f"p{i + 1}", "input": question, "assert": {"type": "regex", "value": "(?i)[a-z]"}}
            for i, question in enumerate(QUESTIONS)]


def stability() -> list[dict[str, Any]]:
    return [{"id": "always-fails", "input": "Say hello.", "assert": {"type": "contains", "value": "zebra-xyzzy"}},
            {"id": "always-passes", "input": "Say hello.", "assert": {"type": "regex", "value": "(?s)."}}]


# (name, suite file, its cases, arguments): each runs in the same project, one after the other, with a fresh
# cache (the server answers one request at a time: the timeout leaves room for a case's calls queued behind others).
SCENARIOS: list[tuple[str, str | None, list[dict[str, Any]], list[str]]] = [
    ("judged", "judged.jsonl", judged(), []),
    ("judged-stream", "judged.jsonl", judged(), ["-n", "llm-stream"]),
    ("judged-schema", "judged.jsonl", judged("schema-judge"), []),
    ("judge-samples-3", "samples.jsonl", judged(samples=3)[:2], []),
    ("judge-cut-off", "judge-cut.jsonl", judged("short-judge")[:2], []),
    ("conversation", "talk.jsonl", conversations(), []),
    ("conversation-schema", "talk.jsonl", conversations("schema-sim"), []),
    ("conversation-cut-off", "talk-cut.jsonl", conversations("short-sim")[:1], []),
    ("generator", None, [], ["-i", "agents:gen?count=3"]),
    ("generator-cut-off", None, [], ["-i", "agents:short-gen?count=3"]),
    ("runs-3", "stability.jsonl", stability(), ["--runs", "3"]),
    ("record", "recorded.jsonl", plain()[:3], ["--record", "cassettes"]),
    ("replay", "recorded.jsonl", plain()[:3], ["--replay", "cassettes"]),
    ("budget", "plain.jsonl", plain(), ["--max-cost", "0.01", "--parallel", "1"]),
    ("budget-stream", "plain.jsonl", plain(), ["--max-cost", "0.01", "--parallel", "1", "-n", "llm-stream"]),
    ("tokens-budget-stream", "plain.jsonl", plain(), ["--max-tokens", "300", "--parallel", "1", "-n", "llm-stream"]),
]


def run_scenario(agenttest: str, project: Path, name: str, suite_file: str | None, suite: list[dict[str, Any]],
                 args: list[str]) -> dict[str, Any]:
    inputs: list[str] = []
    if suite_file is not None:
        (project / suite_file).write_text("".join(json.dumps(case) + "\n" for case in suite))
        inputs = ["-i", suite_file]
    shutil.rmtree(project / ".agenttest-cache", ignore_errors=True)
    shutil.rmtree(project / "agenttest-results", ignore_errors=True)
    argv = [agenttest, *inputs, *args, "--color", "never", "--timeout", "30m"]
    started = time.monotonic()
    proc = subprocess.run(argv, cwd=project, capture_output=True, text=True, timeout=3600)
    wall = time.monotonic() - started
    report_path = project / "agenttest-results" / "report.json"
    report = json.loads(report_path.read_text()) if report_path.is_file() else {}
    summary_md = project / "agenttest-results" / "summary.md"
    return {"name": name, "argv": argv[1:], "exit_code": proc.returncode, "wall_s": round(wall, 1),
            "stdout": proc.stdout, "stderr": proc.stderr, "report": report,
            "summary_md": summary_md.read_text() if summary_md.is_file() else "",
            "figures": figures(report, proc.stdout + proc.stderr)}


# Texts of the built-in prompts' example replies, before and after issue 26: a verdict or a turn holding one was
# copied from the prompt.
EXAMPLE_TEXTS = ("your check of each part of the criteria", "one or two sentences for the test report",
                 "a concrete change to the agent", "your next message to the agent",
                 "the words the user types to the agent now", "briefly: what the agent did last")


def copied(texts: list[Any]) -> bool:
    return any(isinstance(text, str) and any(example in text.lower() for example in EXAMPLE_TEXTS)
               for text in texts)


def figures(report: dict[str, Any], log: str) -> dict[str, Any]:
    """What the closing note needs: statuses, judge verdicts read (and copied from the prompt), simulator turns,
    usage, cost and budget."""
    results = report.get("results") or []
    summary = report.get("summary") or {}
    statuses = Counter(f"{r['status']}" + (f" ({r['error_kind']})" if r.get("error_kind") else "")
                       for r in results)
    judged = [a for r in results for a in r.get("assertions") or [] if a.get("type") == "agent"]
    verdicts = [a for a in judged if isinstance(a.get("details"), dict)]
    turns = [turn.get("input") for result in results
             for turn in (result.get("metadata") or {}).get("turns") or [] if turn.get("role", "user") == "user"]
    return {
        "statuses": dict(statuses),
        "judge_asked": len(judged), "judge_verdicts_read": len(verdicts),
        "judge_verdicts_copied": sum(1 for a in verdicts if copied([a["details"].get("reason"),
                                                                     *(a["details"].get("suggestions") or [])])),
        "judge_errors": len(judged) - len(verdicts),
        "judge_verdicts": [{k: a["details"].get(k) for k in ("reason", "score", "votes")} | {"passed": a["passed"]}
                           for a in verdicts],
        "simulator_turns_copied": sum(1 for turn in turns if copied([turn])),
        "errors": [f"{r['id']}: {r.get('error')}" for r in results if r.get("status") == "error"],
        "simulator_turns": turns,
        "usage": summary.get("usage"), "cost": summary.get("cost"), "budget": summary.get("budget"),
        "stability": [{k: row.get(k) for k in ("id", "runs", "passed", "stability_class", "stability_label")}
                      for row in report.get("stability_results") or []],
        "log_lines": [line for line in log.splitlines()
                      if line.lstrip().startswith(("⚠", "Tokens:", "Cost:")) or "Stability" in line
                      or "estimated" in line or "budget" in line],
    }


def estimate_check(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """agenttest's estimate (`agents.meter.estimated_usage`) of the target's calls whose usage the server did report
    (not streamed, one run per case), next to that usage: how close, and on which side, the estimate falls."""
    from agenttest.agents.base import AgentRequest, AgentResponse
    from agenttest.agents.meter import estimated_usage

    pairs = []
    for run in runs:
        for result in run["report"].get("results") or []:
            usage = result.get("usage") or {}
            if "prompt_tokens" not in usage or usage.get("estimated") or result.get("runs") or run["name"] == "replay" \
                    or (result.get("metadata") or {}).get("turns"):
                continue
            request = AgentRequest(agent="llm", messages=[{"role": "user", "content": result["input"]}])
            estimate = estimated_usage(request, AgentResponse(content=result.get("output")), SYSTEM)
            pairs.append((usage, estimate))
    if not pairs:
        return {}
    ratios = [(e["prompt_tokens"] + e["completion_tokens"]) / (u["prompt_tokens"] + u["completion_tokens"])
              for u, e in pairs]
    return {"calls": len(pairs),
            "reported": [sum(u[k] for u, _ in pairs) for k in ("prompt_tokens", "completion_tokens")],
            "estimated": [sum(e[k] for _, e in pairs) for k in ("prompt_tokens", "completion_tokens")],
            "ratio_min": round(min(ratios), 2), "ratio_max": round(max(ratios), 2)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", help="the server's /v1 URL")
    parser.add_argument("--agenttest", help="the agenttest console script to measure")
    parser.add_argument("--workdir", type=Path)
    parser.add_argument("--json", type=Path, help="write every run (with its log and report) here")
    parser.add_argument("--only", action="append", help="run only these scenarios (repeatable)")
    parser.add_argument("--figures-from", type=Path, help="print the figures of a saved --json run again")
    options = parser.parse_args()
    if options.figures_from:
        runs = json.loads(options.figures_from.read_text())["runs"]
        for run in runs:
            print(f"== {run['name']}")
            print(json.dumps({"exit_code": run["exit_code"], "wall_s": run["wall_s"],
                              **figures(run["report"], run["stdout"] + run["stderr"])}, ensure_ascii=False, indent=1))
        print("== usage estimate against the server's own counts")
        print(json.dumps(estimate_check(runs), indent=1))
        return 0
    project = options.workdir
    project.mkdir(parents=True, exist_ok=True)
    (project / "agenttest.yaml").write_text(config(options.base_url))
    (project / "system.md").write_text(SYSTEM)
    shutil.rmtree(project / "cassettes", ignore_errors=True)
    runs = []
    for name, suite_file, suite, args in SCENARIOS:
        if options.only and name not in options.only:
            continue
        print(f"== {name}", flush=True)
        run = run_scenario(options.agenttest, project, name, suite_file, suite, args)
        print(json.dumps({"exit_code": run["exit_code"], "wall_s": run["wall_s"], **run["figures"]},
                         ensure_ascii=False, indent=1), flush=True)
        runs.append(run)
    if options.json:
        options.json.write_text(json.dumps({"agenttest": options.agenttest, "runs": runs}, ensure_ascii=False,
                                           indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
