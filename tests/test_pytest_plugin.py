"""The pytest plugin as users meet it: test files run by pytest's own `pytester`, against an agent served over real
HTTP on 127.0.0.1, a Python agent, and a built-in judge on the local fake OpenAI server."""

from __future__ import annotations

import json
import shutil
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

import docs_pages
from e2e.conftest import helper_server
from fakes.server import ScriptedServer

pytest_plugins = ["pytester"]

REPO = Path(__file__).resolve().parents[1]

BRAIN_KEY = "sk-brain-never-shown-7c1e"

CONFIG = """
    version: 1
    defaults:
      name: assistants.echo
      timeout: 10s
    connectors:
      brain:
        base_url: ${BRAIN_URL}
        api_key: ${BRAIN_KEY}
        model: brain-1
    agents:
      assistants.echo:
        provider: http
        url: ${AGENT_URL}
      assistants.local:
        provider: python
        callable: local_agent:respond
      workers.test.validator:
        builtin: validator
        connector: brain
    """

LOCAL_AGENT = """
    def respond(request):
        text = request["messages"][-1]["content"]
        if text == "boom":
            raise RuntimeError("the agent exploded")
        return f"local: {text}"
    """


async def _echo(request: web.Request, body: Any) -> web.StreamResponse:
    """A canonical agent: echoes the last message; asks for `create_expense` when the message is about one."""
    text = body["messages"][-1]["content"]
    calls = [{"id": "call_1", "name": "create_expense", "arguments": json.dumps({"amount": 3500})}] \
        if "expense" in text else []
    return web.json_response({"content": f"echo: {text}", "tool_calls": calls,
                              "usage": {"prompt_tokens": 3, "completion_tokens": 2}})


# The users' pytest runs in a process of its own (`runpytest_subprocess`): in-process, pytester drops the modules
# the inner run imported (jsonpath_ng's parser among them) while agenttest's, imported by tests/conftest.py, stay
# and keep references to them — a later test in the same worker then failed with KeyError 'jsonpath_ng.ext.parser'.

# pytest-asyncio asks every project to choose; the users' projects will have their own.
INI = "[pytest]\nasyncio_default_fixture_loop_scope = function\n"


@pytest.fixture
def agent_server() -> Iterator[ScriptedServer]:
    with ScriptedServer("/chat", default=_echo) as server:
        yield server  # type: ignore[misc]


@pytest.fixture
def project(pytester: pytest.Pytester, agent_server: ScriptedServer,
            monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.Pytester]:
    monkeypatch.delenv("AGENTTEST_CONFIG", raising=False)
    with helper_server() as (_brain, fake):
        monkeypatch.setenv("AGENT_URL", agent_server.endpoint)
        monkeypatch.setenv("BRAIN_URL", fake.base_url)
        monkeypatch.setenv("BRAIN_KEY", BRAIN_KEY)
        pytester.makeini(INI)
        pytester.makefile(".yaml", agenttest=textwrap.dedent(CONFIG))
        pytester.makepyfile(local_agent=textwrap.dedent(LOCAL_AGENT))
        yield pytester


def test_sync_tests_call_agents_and_judge_them(project: pytest.Pytester, agent_server: ScriptedServer) -> None:
    project.makepyfile(test_agent="""
        from agenttest import assert_contains, assert_json_path, assert_tool_called

        def test_calls_over_http(agent):
            reply = agent("assistants.echo").call("I want to submit an expense", metadata={"team": "blue"})
            assert_contains(reply, "echo: I want")
            assert_tool_called(reply, {"name": "create_expense", "arguments": {"amount": 3500}})
            assert reply.tool_calls[0].name == "create_expense" and reply.tool_calls[0].arguments == {"amount": 3500}
            assert reply.usage == {"prompt_tokens": 3, "completion_tokens": 2}

        def test_default_agent_gets_a_history(agent):
            history = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"},
                       {"role": "user", "content": "c"}]
            assert agent().call(history).content == "echo: c"

        def test_static_failure(agent):
            reply = agent().call("hello")
            assert_json_path(reply, "$.total", 3)

        def test_judge_passes(agent, assert_agent):
            verdict = assert_agent(agent().call("hello receipt"), "workers.test.validator",
                                   criteria="It mentions 'receipt'")
            assert verdict.passed and verdict.score == 1.0

        def test_judge_fails(agent, assert_agent):
            reply = agent().call("hello")
            assert_agent(reply, "workers.test.validator", criteria="It mentions 'receipt' and 'approval'",
                         metadata={"conversation": [{"role": "user", "content": "hello"}]})

        def test_python_agent_that_raises(agent):
            agent("assistants.local").call("boom")

        def test_unknown_agent(agent):
            agent("assistants.ecko")
        """)
    result = project.runpytest_subprocess("--junitxml=junit.xml")
    result.assert_outcomes(passed=3, failed=4)
    output = result.stdout.str()
    result.stdout.fnmatch_lines([
        "*test_static_failure*", "*assert_json_path(reply, \"$.total\", 3)*",
        "E*AssertionError: path '$.total': expected 3, got null",
    ])
    result.stdout.fnmatch_lines([
        "*test_judge_fails*", "*assert_agent(reply, \"workers.test.validator\"*",
        "E*judge workers.test.validator: the reply does not mention 'receipt', 'approval'",
        "E*criteria: It mentions 'receipt' and 'approval'", "E*suggestions:", "E*- mention 'receipt'",
        "E*- mention 'approval'",
    ])
    result.stdout.fnmatch_lines(["*test_python_agent_that_raises*", "    def respond(request):", "*",
                                 ">*raise RuntimeError(\"the agent exploded\")", "*", "local_agent.py:4: RuntimeError",
                                 "*direct cause*", "*", "    def test_python_agent_that_raises(agent):",
                                 ">*agent(\"assistants.local\").call(\"boom\")",
                                 "E*AgentCallError: agent raised RuntimeError at local_agent.py:4: the agent exploded"])
    result.stdout.fnmatch_lines(["*agent 'assistants.ecko' is not defined in *agenttest.yaml "
                                 "(did you mean 'assistants.echo'?)"])
    assert "runner/agenttest" not in output and "During handling" not in output      # the user's frames only
    assert BRAIN_KEY not in output
    sent = [body for body in agent_server.requests if body["messages"][-1]["content"].startswith("I want")]
    assert sent[0]["options"] == {"metadata": {"team": "blue"}, "skip": {"history": True}}
    assert sent[0]["context"]["test_id"] == "test_calls_over_http"
    assert sent[0]["context"]["chat_id"].startswith("test-test_calls_over_http-")
    junit = (project.path / "junit.xml").read_text()
    assert 'name="judge workers.test.validator" value="passed (score 1): the reply mentions' in junit
    # The session's connections were closed at its end: no agent loop is left running.
    assert not [t for t in threading.enumerate() if t.name == "agenttest-agents"]


def test_async_tests_await_the_agent_and_the_judge(project: pytest.Pytester) -> None:
    project.makepyfile(test_async="""
        import pytest
        from agenttest import assert_contains

        @pytest.mark.asyncio
        async def test_acall_and_judge(agent, assert_agent):
            reply = await agent().acall("hello receipt")
            assert_contains(reply, "receipt")
            verdict = await assert_agent.acall(reply, "workers.test.validator", criteria="It mentions 'receipt'")
            assert verdict.passed

        @pytest.mark.asyncio
        async def test_a_second_event_loop_shares_the_pool(agent):
            assert (await agent("assistants.local").acall("hi")).content == "local: hi"

        @pytest.mark.asyncio
        async def test_sync_call_inside_the_loop_is_refused(agent):
            with pytest.raises(RuntimeError, match=r"use `await agent\\(\\.\\.\\.\\)\\.acall\\(\\.\\.\\.\\)`"):
                agent().call("hello")

        @pytest.mark.asyncio
        async def test_sync_judge_inside_the_loop_is_refused(agent, assert_agent):
            reply = await agent().acall("hello")
            with pytest.raises(RuntimeError, match=r"await assert_agent\\.acall"):
                assert_agent(reply, "workers.test.validator", criteria="x")

        @pytest.mark.asyncio
        async def test_async_judge_fails_with_the_reason(agent, assert_agent):
            await assert_agent.acall(await agent().acall("hello"), "workers.test.validator",
                                     criteria="It mentions 'invoice'", threshold=0.5)

        def test_sync_after_async(agent):
            assert agent().call("again").content == "echo: again"
        """)
    result = project.runpytest_subprocess()
    result.assert_outcomes(passed=5, failed=1)
    result.stdout.fnmatch_lines(["E*judge workers.test.validator: the reply does not mention 'invoice' "
                                 "(score 0 < threshold 0.5)", "E*- mention 'invoice'"])


@pytest.mark.slow
def test_xdist_workers_each_have_their_own_pool(project: pytest.Pytester, agent_server: ScriptedServer) -> None:
    project.makepyfile(test_many="""
        import os
        import pytest

        @pytest.mark.parametrize("n", range(6))
        def test_call(agent, n):
            assert agent().call(f"{n} from {os.getpid()}").content.startswith(f"echo: {n} from")
        """)
    result = project.runpytest_subprocess("-n", "2")
    result.assert_outcomes(passed=6)
    senders = {body["messages"][-1]["content"].split(" from ")[1] for body in agent_server.requests}
    assert len(senders) == 2


def test_a_missing_config_is_one_clear_error(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENTTEST_CONFIG", raising=False)
    pytester.makeini(INI)
    pytester.makepyfile(test_x="""
        def test_needs_an_agent(agent):
            agent("assistants.echo")

        def test_needs_no_agent():
            pass
        """)
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*no agenttest.yaml found (looked in * and upward; *`agenttest init` writes one"])
    assert "pytest_plugin.py" not in result.stdout.str()
    said = [line for line in result.stdout.lines if "no agenttest.yaml found" in line and
            not line.startswith("ERROR ")]                 # the short summary's line apart
    assert len(said) == 1                                  # said once, not as a chain of two
    assert "During handling of the above exception" not in result.stdout.str()


def test_the_config_option_and_a_config_mistake(pytester: pytest.Pytester) -> None:
    pytester.makeini(INI)
    pytester.makefile(".yaml", broken="version: 1\nagents:\n  a:\n    provider: http\n    ulr: http://x\n")
    pytester.makepyfile(test_x="""
        def test_x(agenttest_config):
            pass
        """)
    result = pytester.runpytest_subprocess("--agenttest-config", "broken.yaml")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*broken.yaml:5: agents.a.ulr: unknown key (did you mean 'url'?)*"])


@pytest.mark.slow
def test_the_readme_example_passes_against_the_example_agent(pytester: pytest.Pytester,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENTTEST_CONFIG", raising=False)
    [example] = docs_pages.blocks("docs/python.md", "python")
    shutil.copytree(REPO / "examples" / "expense", pytester.path, dirs_exist_ok=True)
    pytester.makeini(INI)
    pytester.makepyfile(test_readme=example)
    # In a process of its own: the example's modules (`agent`, `helper_agents`) must not be ones already imported.
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(passed=1)
    # The same test with criteria the reply does not meet fails with the judge's words.
    pytester.makepyfile(test_readme=example.replace("'EXP-' id", "'receipt'"))
    failed = pytester.runpytest_subprocess()
    failed.assert_outcomes(failed=1)
    failed.stdout.fnmatch_lines(["E*judge workers.test.validator: the reply does not mention receipt",
                                 "E*- mention receipt"])
