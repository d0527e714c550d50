"""The public Python API: configs found as the CLI finds them, agents called over real HTTP on 127.0.0.1 (sync,
async, from several event loops, over one pool), the assertions as functions with the JSONL messages, and the
judge on the local fake OpenAI server."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

import agenttest
from e2e.conftest import Project, helper_server
from fakes.helper_brain import HelperBrain
from fakes.openai_server import FakeOpenAI
from fakes.server import ScriptedServer, slow, status_reply

TOKEN = "agent-token-never-shown-91b3"
BRAIN_KEY = "sk-brain-never-shown-2a9f"

CONFIG = """
    version: 1
    defaults:
      name: assistants.echo
      timeout: 5s
      retries: 0
    connectors:
      brain:
        base_url: ${BRAIN_URL}
        api_key: ${BRAIN_KEY}
        model: brain-1
    agents:
      assistants.echo:
        provider: http
        url: ${AGENT_URL}
        headers: {Authorization: "Bearer ${AGENT_TOKEN}"}
      workers.test.validator:
        builtin: validator
        connector: brain
    """


async def _echo(request: web.Request, body: Any) -> web.StreamResponse:
    """A canonical agent that echoes the last message, and says which client port it was reached from."""
    content = body["messages"][-1]["content"]
    text = content if isinstance(content, str) else json.dumps(content)
    peer = request.transport.get_extra_info("peername")[1] if request.transport else 0
    return web.json_response({"content": f"echo: {text}", "model": f"echo-from-{peer}",
                              "tools": [{"id": "t1", "name": "lookup", "result": {"found": True}}],
                              "usage": {"prompt_tokens": 3, "completion_tokens": 2}})


@pytest.fixture
def brain() -> Iterator[tuple[HelperBrain, FakeOpenAI]]:
    with helper_server() as pair:
        yield pair


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer("/chat", default=_echo) as running:
        yield running  # type: ignore[misc]


@pytest.fixture
def config(tmp_path: Path, server: ScriptedServer, brain: tuple[HelperBrain, FakeOpenAI],
           monkeypatch: pytest.MonkeyPatch) -> Iterator[agenttest.Config]:
    monkeypatch.setenv("AGENT_URL", server.endpoint)
    monkeypatch.setenv("AGENT_TOKEN", TOKEN)
    monkeypatch.setenv("BRAIN_URL", brain[1].base_url)
    monkeypatch.setenv("BRAIN_KEY", BRAIN_KEY)
    (tmp_path / "agenttest.yaml").write_text(textwrap.dedent(CONFIG))
    with agenttest.load_config(tmp_path / "agenttest.yaml") as loaded:
        yield loaded


def test_import_agenttest_and_the_pytest_plugin_stay_cheap() -> None:
    probe = ("import sys, agenttest, agenttest.pytest_plugin; "
             "print([m for m in ('aiohttp', 'pydantic', 'yaml', 'jsonschema', 'jsonpath_ng', 'agenttest.api') "
             "if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    assert callable(agenttest.load_config) and "load_config" in dir(agenttest)
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        agenttest.nothing  # noqa: B018


def test_a_call_returns_the_canonical_response(config: agenttest.Config, server: ScriptedServer) -> None:
    agent = agenttest.get_agent(config=config)
    reply = agent.call("hello", metadata={"k": 1}, skip={"trace": True}, timeout="2s")
    assert (reply.content, reply.usage) == ("echo: hello", {"prompt_tokens": 3, "completion_tokens": 2})
    assert reply.model is not None and reply.model.startswith("echo-from-")
    assert reply.tools[0].name == "lookup" and reply.tools[0].result == {"found": True}
    assert reply.input == "hello" and reply.latency_ms is not None and reply.latency_ms > 0
    sent = server.requests[-1]
    assert sent["agent"] == "assistants.echo" and sent["messages"] == [{"role": "user", "content": "hello"}]
    assert sent["options"] == {"metadata": {"k": 1}, "skip": {"trace": True, "history": True}}
    assert sent["context"]["test_id"] == "api" and sent["context"]["user_id"] == "test-user"
    assert server.headers[-1]["Authorization"] == f"Bearer {TOKEN}"
    assert repr(agent) == "<agenttest.Agent assistants.echo>" and config.agents == ("assistants.echo",
                                                                                    "workers.test.validator")


def test_a_call_sends_the_request_a_case_with_the_same_options_sends(config: agenttest.Config,
                                                                     server: ScriptedServer, tmp_path: Path) -> None:
    """The API behaves as a case does: the same options, history skipped, the same identity; only the chat id (one
    a call) and the test id (the test's name, or `api`) differ."""
    options = {"metadata": {"k": 1}, "skip": {"trace": True}, "connector": "brain", "mode": "fast"}
    project = Project(tmp_path / "cli")
    project.write("agenttest.yaml", textwrap.dedent(CONFIG))
    project.suite("s.jsonl", {"id": "same", "input": "hello", "options": options})
    run = project.run("-i", "s.jsonl", env={"AGENT_URL": server.endpoint, "AGENT_TOKEN": TOKEN,
                                            "BRAIN_URL": "http://127.0.0.1:9", "BRAIN_KEY": "unused"})
    assert run.code == 0, run.stdout + run.stderr
    by_case = server.requests[-1]
    agenttest.get_agent(config=config).call("hello", **options)
    by_api = server.requests[-1]
    assert by_api["options"] == by_case["options"] == {**options, "skip": {"trace": True, "history": True}}
    assert by_api["messages"] == by_case["messages"]
    differ = ("chat_id", "test_id")
    assert {k: v for k, v in by_api["context"].items() if k not in differ} == \
        {k: v for k, v in by_case["context"].items() if k not in differ}
    assert (by_case["context"]["test_id"], by_api["context"]["test_id"]) == ("same", "api")


def test_sync_async_and_several_event_loops_share_one_connection_pool(config: agenttest.Config) -> None:
    agent = agenttest.get_agent("assistants.echo", config)

    async def one() -> agenttest.Response:
        return await agent.acall("x")

    # One after the other, from plain code and from two event loops, the calls reuse one pooled connection: the
    # server sees them all come from the same client port.
    ports = {agent.call("p").model, asyncio.run(one()).model, asyncio.run(one()).model, agent.call("q").model}
    assert len(ports) == 1

    async def both() -> list[str]:
        replies = await asyncio.gather(agent.acall("a"), agent.acall([{"role": "user", "content": "b"}]))
        return [r.content for r in replies]

    assert asyncio.run(both()) == ["echo: a", "echo: b"]
    assert asyncio.run(both()) == ["echo: a", "echo: b"]


def test_agent_failures_are_agent_call_errors_with_secrets_masked(config: agenttest.Config,
                                                                  server: ScriptedServer) -> None:
    agent = agenttest.get_agent(config=config)
    server.enqueue(status_reply(503, f"upstream down, token {TOKEN}"))
    with pytest.raises(agenttest.AgentCallError) as failed:
        agent.call("hello")
    assert failed.value.kind == "agent" and f"HTTP 503 from {server.endpoint}" in failed.value.message
    assert TOKEN not in str(failed.value) and "***" in str(failed.value)
    server.enqueue(slow(2, status_reply(500)))
    with pytest.raises(agenttest.AgentCallError, match=r"^timeout after 300ms$") as late:
        agent.call("hello", timeout=0.3)
    assert late.value.kind == "timeout"


def test_mistakes_in_a_call_name_the_field(config: agenttest.Config) -> None:
    agent = agenttest.get_agent(config=config)
    with pytest.raises(agenttest.AgentTestError, match=r"^options\.conector: unknown key \(did you mean 'connector'"):
        agent.call("hi", conector="x")
    with pytest.raises(agenttest.AgentTestError, match=r"^input\[0\]: message requires a 'content' field"):
        agent.call([{"role": "user"}])
    with pytest.raises(agenttest.AgentTestError, match=r"^input\[0\]\.content\[0\]: file://\.\./x\.png is outside"):
        agent.call([{"role": "user", "content": [{"type": "image", "source": "file://../x.png"}]}])
    with pytest.raises(agenttest.AgentTestError, match="timeout: expected a positive number"):
        agent.call("hi", timeout=-1)
    with pytest.raises(agenttest.ConfigError, match=r"'assistants\.ecko' is not defined in .*did you mean"):
        agenttest.get_agent("assistants.ecko", config)
    with pytest.raises(agenttest.ConfigError, match="is a builtin validator helper, not an agent to test"):
        agenttest.get_agent("workers.test.validator", config)


def test_attachments_are_read_relative_to_the_config(config: agenttest.Config, server: ScriptedServer) -> None:
    (config.path.parent / "pic.png").write_bytes(b"\x89PNG fake")
    agenttest.get_agent(config=config).call({"role": "user", "content": [{"type": "image",
                                                                          "source": "file://pic.png"}]})
    [part] = server.requests[-1]["messages"][0]["content"]
    assert part["type"] == "image_url" and part["image_url"]["url"].startswith("data:image/png;base64,")


def test_configs_are_found_as_the_cli_finds_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENTTEST_CONFIG", raising=False)
    (tmp_path / "agenttest.yaml").write_text("version: 1\nagents:\n  a: {provider: python, callable: m:f}\n")
    (tmp_path / "deep" / "er").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "deep" / "er")
    with agenttest.load_config() as found:
        assert found.path == tmp_path / "agenttest.yaml" and found.default_agent is None
    (tmp_path / "other.yaml").write_text("version: 1\n")
    monkeypatch.setenv("AGENTTEST_CONFIG", str(tmp_path / "other.yaml"))
    with agenttest.load_config() as chosen:
        assert chosen.path == tmp_path / "other.yaml" and chosen.agents == ()
        with pytest.raises(agenttest.ConfigError, match=r"no agent named: pass an agent id, or set defaults\.name"):
            agenttest.get_agent(config=chosen)
    monkeypatch.delenv("AGENTTEST_CONFIG")
    monkeypatch.chdir("/")
    with pytest.raises(agenttest.ConfigError, match=r"no agenttest.yaml found \(looked in / and upward"):
        agenttest.load_config()
    (tmp_path / "bad.yaml").write_text("version: 1\nagents:\n  a: {provider: htp}\n")
    with pytest.raises(agenttest.ConfigError, match=r"bad\.yaml:3: agents\.a\.provider: unknown provider 'htp'"):
        agenttest.load_config(tmp_path / "bad.yaml")


def test_a_closed_config_refuses_calls_and_get_agent_without_one_owns_its_own(
        config: agenttest.Config, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(config.path.parent)
    with agenttest.get_agent() as own:
        assert own.call("x").content == "echo: x"
    with pytest.raises(agenttest.AgentTestError, match="this agenttest config is closed"):
        own.call("again")
    agent = agenttest.get_agent(config=config)
    agent.close()                                   # not its config to close
    assert agent.call("still").content == "echo: still"


# The static assertions, each as (JSONL type and fields, function and its arguments): all fail on the reply
# "echo: hello" (whose executed tool is `lookup`, with result {"found": true}).
CHECKS: list[tuple[str, dict[str, Any], str, tuple[Any, ...], dict[str, Any]]] = [
    ("contains", {"value": "nope"}, "contains", ("nope",), {}),
    ("not_contains", {"value": "ECHO", "options": {"ignore_case": True}}, "not_contains", ("ECHO",),
     {"ignore_case": True}),
    ("regex", {"value": "^bye"}, "regex", ("^bye",), {}),
    ("equals", {"value": {"a": 1}}, "equals", ({"a": 1},), {}),
    ("json_path", {"path": "$.total", "value": 3}, "json_path", ("$.total", 3), {}),
    ("type", {"value": "object"}, "json_type", ("object",), {}),
    ("json_schema", {"value": {"type": "object", "required": ["id"]}}, "json_schema",
     ({"type": "object", "required": ["id"]},), {}),
    ("tool_called", {"value": {"name": "lookup", "arguments": {"q": "x"}}}, "tool_called",
     ({"name": "lookup", "arguments": {"q": "x"}},), {}),
    ("tool_result", {"value": {"tool": "lookup", "result": {"found": False}}}, "tool_result",
     ("lookup", {"found": False}), {}),
    ("tool_sequence", {"value": ["search", "lookup"], "options": {"mode": "unordered"}}, "tool_sequence",
     (["search", "lookup"],), {"mode": "unordered"}),
    ("latency", {"value": 0}, "latency", (0,), {}),
]


def test_the_assertion_functions_fail_with_the_messages_of_the_jsonl_assertions(
        config: agenttest.Config, server: ScriptedServer, tmp_path: Path) -> None:
    project = Project(tmp_path / "cli")
    project.write("agenttest.yaml", textwrap.dedent(CONFIG))
    project.suite("s.jsonl", *({"id": name, "input": "hello", "assert": {"type": kind, **fields}}
                               for kind, fields, name, _, _ in CHECKS))
    run = project.run("-i", "s.jsonl", env={"AGENT_URL": server.endpoint, "AGENT_TOKEN": TOKEN,
                                            "BRAIN_URL": "http://127.0.0.1:9", "BRAIN_KEY": "unused"})
    assert [r["status"] for r in run.report["results"]] == ["failed"] * len(CHECKS), run.stdout
    reply = agenttest.get_agent(config=config).call("hello")
    for (kind, _, name, args, kwargs), result in zip(CHECKS, run.report["results"], strict=True):
        verdict = getattr(agenttest, name)(reply, *args, **kwargs)
        assert isinstance(verdict, agenttest.Verdict) and not verdict.passed, name
        expected = result["assertions"][0]["message"]
        if kind == "latency":          # this call's time is not the run's
            expected = re.sub(r"latency \S+", verdict.message.split(" exceeds")[0], expected)
        assert verdict.message == expected, name
        with pytest.raises(AssertionError) as failed:
            getattr(agenttest, f"assert_{name}")(reply, *args, **kwargs)
        assert str(failed.value) == verdict.message
    passing = agenttest.contains(reply, "echo")
    assert passing.passed and passing.message == "output contains 'echo'"
    agenttest.assert_tool_called(reply, "lookup")
    agenttest.assert_json_path('{"total": 3}', "total", 3)        # any value is checked as it is


def test_assertion_arguments_are_checked_as_a_suite_is(config: agenttest.Config) -> None:
    reply = agenttest.get_agent(config=config).call("hello")
    with pytest.raises(agenttest.AgentTestError, match=r"^invalid regex pattern '\('"):
        agenttest.regex(reply, "(")
    with pytest.raises(agenttest.AgentTestError, match=r"^tool_sequence option 'mode' must be one of strict, "):
        agenttest.tool_sequence(reply, ["a"], mode="strictly")
    with pytest.raises(TypeError, match="tool_called checks an agent's response"):
        agenttest.tool_called("just text", "lookup")  # type: ignore[arg-type]


# The judge: `agenttest.judge` is a `type: agent` assertion, asked of a validator on the fake OpenAI server.

def test_the_judge_gives_its_verdict_reason_and_suggestions(config: agenttest.Config,
                                                           brain: tuple[HelperBrain, FakeOpenAI]) -> None:
    helper, _ = brain
    reply = agenttest.get_agent(config=config).call("hello receipt")
    good = agenttest.judge(reply, "workers.test.validator", "It mentions 'receipt'", config=config)
    assert good.passed and good.score == 1.0 and good.details is not None
    assert good.details["reason"] == "the reply mentions 'receipt'"
    asked = json.loads(helper.bodies["judge"][-1]["messages"][-1]["content"])
    assert asked == {"criteria": "It mentions 'receipt'", "input": "hello receipt", "output": "echo: hello receipt"}
    history = [{"role": "user", "content": "hi"}]
    bad = agenttest.judge(reply, "workers.test.validator", metadata={"criteria": "It mentions 'approval'",
                                                                    "conversation": history, "tone": "kind"},
                          config=config)
    assert not bad.passed and bad.message == "judge workers.test.validator: the reply does not mention 'approval'"
    assert bad.details is not None and bad.details["suggestions"] == ["mention 'approval'"]
    asked = json.loads(helper.bodies["judge"][-1]["messages"][-1]["content"])
    assert asked["conversation"] == history and asked["tone"] == "kind"
    scored = agenttest.judge("receipt and more", "workers.test.validator", "'receipt' 'approval'", threshold=0.4,
                             config=config)
    assert scored.passed and scored.message.endswith("(score 0.5 ≥ threshold 0.4)")
    votes = agenttest.judge(reply, "workers.test.validator", "[judge:votes=PFP] 'receipt'", samples=3, config=config)
    assert votes.passed and votes.details is not None and votes.details["votes"] == {"passed": 2, "failed": 1}

    async def judged() -> agenttest.Verdict:
        return await agenttest.ajudge(reply, "workers.test.validator", "It mentions 'hello'", config=config)

    assert asyncio.run(judged()).passed


def test_a_judge_that_cannot_decide_or_is_asked_wrongly_raises(config: agenttest.Config) -> None:
    with pytest.raises(agenttest.HelperError, match=r"^judge workers\.test\.validator: .*HTTP 500") as down:
        agenttest.judge("x", "workers.test.validator", "[judge:status=500] 'x'", config=config)
    assert down.value.kind == "judge" and BRAIN_KEY not in str(down.value)
    with pytest.raises(agenttest.HelperError, match="holds no verdict"):
        agenttest.judge("x", "workers.test.validator", "[judge:no-json] 'x'", config=config)
    with pytest.raises(agenttest.HelperError, match="timeout after 200ms"):
        agenttest.judge("x", "workers.test.validator", "[judge:slow=2] 'x'", timeout=0.2, config=config)
    with pytest.raises(agenttest.ConfigError, match=r"agent 'workers\.test\.validatr' is not defined"):
        agenttest.judge("x", "workers.test.validatr", "'x'", config=config)
    with pytest.raises(agenttest.AgentTestError, match=r"^metadata\.input: reserved"):
        agenttest.judge("x", "workers.test.validator", "'x'", metadata={"input": "y"}, config=config)
    with pytest.raises(agenttest.AgentTestError, match=r"^criteria: agent assertion needs criteria"):
        agenttest.judge("x", "workers.test.validator", config=config)
    with pytest.raises(agenttest.AgentTestError, match=r"^threshold: expected a number from 0 to 1"):
        agenttest.judge("x", "workers.test.validator", "'x'", threshold=2, config=config)
