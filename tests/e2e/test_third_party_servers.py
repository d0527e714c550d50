"""What third-party OpenAI-compatible servers send (llama-cpp-python's server, issue 26), through the real CLI: a
stream without a usage chunk — its tokens estimated from the text, marked as estimated in every artifact, and
counted against the run's budget — and a forced tool call whose arguments were cut off at max_tokens while the
reply still says `finish_reason: "tool_calls"`."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from e2e.conftest import Project, Run
from fakes.helper_brain import HelperBrain
from fakes.openai_server import FakeOpenAI, completion, last_user_text

CONFIG = """
    version: 1
    defaults:
      name: llm
    connectors:
      brain:
        base_url: ${BRAIN_URL}
        api_key: sk-usage-key-77c1
        model: brain-1
        price: {input: 2, output: 8}
      free:
        base_url: ${BRAIN_URL}
        api_key: sk-usage-key-77c1
        model: brain-1
    agents:
      llm:
        provider: openai
        connector: brain
        stream: true
      llm-unpriced:
        provider: openai
        connector: free
        stream: true
      judge:
        builtin: validator
        connector: brain
        stream: true
      caller:
        provider: openai
        connector: free
        tools: [{name: get_weather, parameters: {type: object, properties: {city: {type: string}}}}]
        params: {max_tokens: 3, tool_choice: required}
    """


async def _model(request: web.Request, body: Any) -> web.StreamResponse:
    return await completion(f"you said: {last_user_text(body)}")(request, body)


def tokens(text: str) -> int:
    """The documented estimate: one token per three bytes of UTF-8, rounded up."""
    return math.ceil(len(text.encode("utf-8")) / 3)


def said(text: str) -> str:
    """The request's messages as the estimate reads them."""
    return json.dumps([{"role": "user", "content": text}], ensure_ascii=False)


@pytest.fixture
def project(tmp_path: Path) -> Project:
    proj = Project(tmp_path)
    proj.write("agenttest.yaml", CONFIG)
    proj.suite("s.jsonl", *[{"id": f"c{i}", "input": f"x{i}", "assert": {"type": "contains", "value": "said"}}
                            for i in range(6)])
    return proj


def run(project: Project, server: FakeOpenAI, *args: str) -> Run:
    return project.run(*args, env={"BRAIN_URL": server.base_url})


def test_a_stream_without_usage_is_estimated_marked_and_stops_the_run_at_its_budget(project: Project) -> None:
    with FakeOpenAI(default=HelperBrain(target=_model), stream_usage=False) as server:
        result = run(project, server, "-i", "s.jsonl", "--max-cost", "0.0001", "--parallel", "1")
        assert len(server.requests) == 2
    per_call = {"prompt_tokens": tokens(said("x0")), "completion_tokens": tokens("you said: x0")}
    cost = (per_call["prompt_tokens"] * 2 + per_call["completion_tokens"] * 8) / 1e6
    summary = result.report["summary"]
    assert (summary["passed"], summary["skipped"]) == (2, 4), result.stdout + result.stderr
    total = 2 * (per_call["prompt_tokens"] + per_call["completion_tokens"])
    assert summary["usage"]["target"] == {"calls": 2, "estimated": 2, "prompt_tokens": 2 * per_call["prompt_tokens"],
                                          "completion_tokens": 2 * per_call["completion_tokens"],
                                          "total_tokens": total}
    assert result.result("c0")["usage"] == {**per_call, "total_tokens": sum(per_call.values()), "estimated": 1}
    spent = f"budget spent: ~${2 * cost:.4f} of --max-cost $0.0001"
    assert summary["budget"] == {"tokens": total, "max_cost": 0.0001, "cost_usd": round(2 * cost, 6),
                                 "estimated": True, "spent": spent}
    assert result.result("c5")["error"] == f"not run: {spent}"
    notice = ("⚠ agent 'llm' reported no token usage: its tokens are estimated from the text of each call (a token "
              "per 3 bytes), marked ~, and count against the budget")
    assert result.stderr.count(notice) == 1
    assert f"Tokens:    target: 2 calls, ~{total} tokens (2 estimated)" in result.stdout
    assert f"Cost:      ~${2 * cost:.4f} (target ~${2 * cost:.4f})" in result.stdout
    summary_md = (project.root / "agenttest-results" / "summary.md").read_text()
    assert f"**Tokens** target: 2 calls, \\~{total} tokens (2 estimated)" in summary_md
    assert f"**Cost** \\~\\${2 * cost:.4f} (target \\~\\${2 * cost:.4f})" in summary_md


def test_an_unpriced_model_without_usage_still_counts_against_a_token_budget(project: Project) -> None:
    with FakeOpenAI(default=HelperBrain(target=_model), stream_usage=False) as server:
        result = run(project, server, "-i", "s.jsonl", "-n", "llm-unpriced", "--max-tokens", "30", "--parallel", "1")
        assert len(server.requests) == 2
    assert result.report["summary"]["budget"]["spent"].startswith("budget spent: ~32 tokens of --max-tokens 30")
    assert "cost" not in result.report["summary"]


def test_a_helper_s_estimate_counts_its_system_prompt(project: Project) -> None:
    project.suite("s.jsonl", {"id": "judged", "input": "say x", "assert": {
        "type": "agent", "use": "agents:judge", "value": "it says 'said'"}})
    helper = HelperBrain(target=_model)
    with FakeOpenAI(default=helper, stream_usage=False) as server:
        result = run(project, server, "-i", "s.jsonl")
    assert result.result("judged")["status"] == "passed", result.stdout + result.stderr
    [body] = helper.bodies["judge"]
    system, asked = body["messages"][0]["content"], body["messages"][-1]["content"]
    judge = result.report["summary"]["usage"]["judge"]
    assert judge["prompt_tokens"] == tokens(system + said(asked)) and judge["estimated"] == 1
    assert result.stderr.count("reported no token usage") == 2      # once for llm, once for judge


def test_a_server_that_reports_usage_is_never_estimated(project: Project) -> None:
    with FakeOpenAI(default=HelperBrain(target=_model)) as server:
        result = run(project, server, "-i", "s.jsonl", "--max-cost", "1")
    assert result.report["summary"]["usage"]["target"] == {"calls": 6, "prompt_tokens": 66, "completion_tokens": 42,
                                                           "total_tokens": 108}
    assert "estimated" not in result.stdout + result.stderr and "~" not in result.stdout


async def _forced_call(request: web.Request, body: Any) -> web.StreamResponse:
    return await completion(None, [("get_weather", {"city": "Paris", "unit": "celsius"})])(request, body)


@pytest.mark.parametrize("stream", [False, True])
def test_a_tool_call_whose_arguments_were_cut_off_says_so(project: Project, stream: bool) -> None:
    if stream:
        project.write("agenttest.yaml", CONFIG.replace("params: {max_tokens: 3, tool_choice: required}",
                                                       "params: {max_tokens: 3, tool_choice: required}\n"
                                                       "        stream: true"))
    project.suite("s.jsonl", {"id": "weather", "input": "weather in Paris?", "assert": {
        "type": "tool_called", "value": {"name": "get_weather", "arguments": {"city": "Paris"}}}})
    with FakeOpenAI(default=HelperBrain(target=_forced_call)) as server:
        result = run(project, server, "-i", "s.jsonl", "-n", "caller")
    case = result.result("weather")
    assert (case["status"], case.get("error_kind")) == ("error", "agent"), case
    assert case["error"].startswith("agent error: the reply from http://127.0.0.1:")
    assert case["error"].endswith(": the arguments of tool call 'get_weather' were cut off before they were complete "
                                  "({\"city\": \"Pa), though the reply says finish_reason 'tool_calls': raise "
                                  "max_tokens")
