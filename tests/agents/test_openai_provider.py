"""`provider: openai` against a local server speaking the real Chat Completions wire format (validated against the
`openai` package's types on both sides)."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path
from typing import Any

import openai
import pytest
from aiohttp import web
from pydantic import ValidationError

from agenttest.agents.openai_chat import chat_messages
from agenttest.agents.registry import ConnectorSettings
from agenttest.errors import AgentCallError, ConfigError
from fakes.openai_server import FakeOpenAI, chat_request_problems, completion
from fakes.server import ScriptedServer, held_open, json_reply, slow, sse_reply, status_reply, text_reply

from .helpers import call, call_one, make_agent, request

AMOUNT = {"type": "object", "properties": {"amount": {"type": "number"}}}
TOOLS = [{"type": "function", "function": {"name": "create_expense", "description": "File an expense",
                                           "parameters": AMOUNT}},
         {"type": "function", "function": {"name": "lookup_policy", "parameters": {"type": "object"}}}]


def agent(fake: FakeOpenAI, tmp_path: Path, **settings: Any) -> Any:
    return make_agent("openai", tmp_path, **{"base_url": fake.base_url, "api_key": "sk-agent-key-0001",
                                             "model": "gpt-test", **settings})


# --- the fake cannot drift --------------------------------------------------------------------------------------

def test_the_real_openai_client_reads_what_the_fake_sends(fake_openai: FakeOpenAI) -> None:
    client = openai.OpenAI(base_url=fake_openai.base_url, api_key="sk-test", max_retries=0)
    fake_openai.enqueue(completion("Sure.", [("create_expense", {"amount": 35})]))
    reply = client.chat.completions.create(model="gpt-test", messages=[{"role": "user", "content": "hi"}],
                                           tools=TOOLS)  # type: ignore[arg-type]
    message = reply.choices[0].message
    assert message.content == "Sure."
    assert message.tool_calls is not None and message.tool_calls[0].function.name == "create_expense"  # type: ignore[union-attr]
    assert reply.usage is not None and reply.usage.total_tokens == 18

    fake_openai.enqueue(completion("Hello world", [("lookup_policy", {"topic": "travel"})]))
    chunks = list(client.chat.completions.create(model="gpt-test", messages=[{"role": "user", "content": "hi"}],
                                                 stream=True, stream_options={"include_usage": True}))
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "Hello world"
    arguments = "".join(tc.function.arguments or "" for c in chunks if c.choices
                        for tc in c.choices[0].delta.tool_calls or [] if tc.function)
    assert json.loads(arguments) == {"topic": "travel"}
    assert chunks[-1].usage is not None and chunks[-1].usage.prompt_tokens == 11


def test_the_fake_rejects_what_the_real_api_rejects() -> None:
    ok = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    assert chat_request_problems(ok) == []
    assert chat_request_problems({**ok, "temprature": 0})[0] == "unknown parameters: ['temprature']"
    assert chat_request_problems({"model": "m", "messages": [{"role": "robot", "content": "x"}]})
    assert chat_request_problems({"model": "m", "messages": [{"role": "user", "content": 5}]})
    assert chat_request_problems({"messages": [{"role": "user", "content": "x"}]})   # no model
    assert chat_request_problems({**ok, "messages": [{"role": "user", "content": "x", "tool_call_id": "1"}]})
    unanswered = [{"role": "user", "content": "x"},
                  {"role": "assistant", "content": None,
                   "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
                  {"role": "user", "content": "y"}]
    assert chat_request_problems({**ok, "messages": unanswered}) == [
        "messages[2]: tool calls ['c1'] were not answered by tool messages"]
    stray = [{"role": "user", "content": "x"}, {"role": "tool", "tool_call_id": "c9", "content": "{}"}]
    assert chat_request_problems({**ok, "messages": stray}) == [
        "messages[1]: tool message answers no pending tool call"]
    assert chat_request_problems({**ok, "stream": True, "stream_options": {"include_usage": "yes please"}})


# --- request and reply ------------------------------------------------------------------------------------------

def test_json_reply_content_model_usage(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    fake_openai.enqueue(completion("Hello!", model="gpt-test-2025-01-01", usage=(21, 4)))
    response = call_one(agent(fake_openai, tmp_path, params={"temperature": 0, "max_tokens": 50}))
    assert response.content == "Hello!"
    assert response.model == "gpt-test-2025-01-01"
    assert response.finish_reason == "stop"
    assert response.usage == {"prompt_tokens": 21, "completion_tokens": 4, "total_tokens": 25}
    [sent] = fake_openai.requests
    assert sent == {"model": "gpt-test", "messages": [{"role": "user", "content": "hi"}], "temperature": 0,
                    "max_tokens": 50}
    assert fake_openai.headers[0]["Authorization"] == "Bearer sk-agent-key-0001"


def test_system_prompt_inline_or_from_a_file(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "llm.md").write_text("You file expenses.\nBe brief.\n")
    call_one(agent(fake_openai, tmp_path, system="prompts/llm.md"))
    call_one(agent(fake_openai, tmp_path, system="You are a pirate. Answer in one line."))
    assert fake_openai.requests[0]["messages"][0] == {"role": "system", "content": "You file expenses.\nBe brief.\n"}
    assert fake_openai.requests[1]["messages"][0] == {"role": "system",
                                                      "content": "You are a pirate. Answer in one line."}


def test_a_missing_prompt_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"agents.agent.under.test.system: prompt file prompts/nope.md not found"):
        make_agent("openai", tmp_path, model="m", system="prompts/nope.md")


def test_tools_from_a_file_and_bare_function_definitions(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    (tmp_path / "tools.json").write_text(json.dumps(TOOLS))
    call_one(agent(fake_openai, tmp_path, tools="tools.json"))
    call_one(agent(fake_openai, tmp_path, tools=[t["function"] for t in TOOLS]))
    assert fake_openai.requests[0]["tools"] == TOOLS
    assert fake_openai.requests[1]["tools"] == TOOLS


@pytest.mark.parametrize(("tools", "message"), [
    ("missing.json", "cannot read"),
    ([{"type": "function"}], r"tools\[0\]: expected"),
])
def test_bad_tools_are_config_errors(tmp_path: Path, tools: Any, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        make_agent("openai", tmp_path, model="m", tools=tools)


def test_mocks_must_name_known_tools(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="mock_tools: create_expens not among the agent's tools"):
        make_agent("openai", tmp_path, model="m", tools=TOOLS, mock_tools={"create_expens": {}})


def test_tool_calls_are_recorded_and_mocked_ones_reported_with_their_result(fake_openai: FakeOpenAI,
                                                                              tmp_path: Path) -> None:
    fake_openai.enqueue(completion(None, [("create_expense", {"amount": 3500}), ("lookup_policy", "not json")]))
    response = call_one(agent(fake_openai, tmp_path, tools=TOOLS, mock_tools={"create_expense": {"id": "EXP-1"}}))
    assert [(c.name, c.arguments) for c in response.tool_calls] == [("create_expense", {"amount": 3500}),
                                                                    ("lookup_policy", "not json")]
    assert response.content is None and response.finish_reason == "tool_calls"
    assert [(t.name, t.result) for t in response.tools] == [("create_expense", {"id": "EXP-1"})]
    assert response.tools[0].id == response.tool_calls[0].id


def test_conversation_goes_on_after_tool_calls_with_tool_messages_paired_by_id(fake_openai: FakeOpenAI,
                                                                               tmp_path: Path) -> None:
    fake_openai.enqueue(completion("", [("lookup_policy", {}), ("create_expense", {"amount": 1})]),
                        completion("Filed as EXP-1."))
    llm = agent(fake_openai, tmp_path, tools=TOOLS, mock_tools={"create_expense": {"id": "EXP-1"}}, stream=True)

    async def conversation() -> Any:
        try:
            first = await llm.call(request("file my taxi"))
            # What the engine appends: the assistant turn with its tool calls (canonical shape), then the next user
            # turn — the tool messages are the provider's to supply.
            messages = [{"role": "user", "content": "file my taxi"},
                        {"role": "assistant", "content": first.content,
                         "tool_calls": [c.to_dict() for c in first.tool_calls]},
                        {"role": "user", "content": "done?"}]
            return first, await llm.call(request(messages=messages))
        finally:
            await llm.aclose()

    first, second = asyncio.run(conversation())
    assert second.content == "Filed as EXP-1."
    sent = fake_openai.requests[1]["messages"]
    lookup_id, create_id = (c.id for c in first.tool_calls)
    assert sent[1]["tool_calls"][1] == {"id": create_id, "type": "function",
                                        "function": {"name": "create_expense", "arguments": '{"amount": 1}'}}
    assert sent[2:4] == [{"role": "tool", "tool_call_id": lookup_id, "content": "{}"},
                         {"role": "tool", "tool_call_id": create_id, "content": '{"id": "EXP-1"}'}]
    assert sent[4] == {"role": "user", "content": "done?"}


def test_tool_messages_already_in_the_conversation_are_kept() -> None:
    messages = [{"role": "user", "content": "x"},
                {"role": "assistant", "tool_calls": [
                    {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}},
                    {"id": "b", "name": "g", "arguments": {"k": 1}}]},
                {"role": "tool", "tool_call_id": "b", "content": {"from": "engine"}}]
    assert chat_messages("sys", messages, {"f": "plain text result"}) == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "x"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}},
            {"id": "b", "type": "function", "function": {"name": "g", "arguments": '{"k": 1}'}}]},
        {"role": "tool", "tool_call_id": "b", "content": '{"from": "engine"}'},
        {"role": "tool", "tool_call_id": "a", "content": "plain text result"},
    ]


def test_content_parts_and_structured_assistant_content_are_sent_as_the_api_expects(fake_openai: FakeOpenAI,
                                                                                    tmp_path: Path) -> None:
    messages = [{"role": "user", "content": [{"type": "text", "text": "what is this?"},
                                             {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA",
                                                                                 "detail": "auto"}}]},
                {"role": "assistant", "content": {"next": "structured data from a hook"}},
                {"role": "user", "content": "and?"}]
    call_one(agent(fake_openai, tmp_path), request(messages=messages))
    sent = fake_openai.requests[0]["messages"]
    assert sent[0] == messages[0]
    assert sent[1] == {"role": "assistant", "content": '{"next": "structured data from a hook"}'}


def test_refusal_becomes_the_content(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    fake_openai.enqueue(completion(None, refusal="I can't help with that."))
    assert call_one(agent(fake_openai, tmp_path)).content == "I can't help with that."


# --- streaming --------------------------------------------------------------------------------------------------

def test_stream_assembles_content_usage_and_model(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    fake_openai.enqueue(completion("The quick brown fox jumps over the lazy dog.", usage=(30, 12), chunk_size=2))
    response = call_one(agent(fake_openai, tmp_path, stream=True))
    assert response.content == "The quick brown fox jumps over the lazy dog."
    assert response.usage == {"prompt_tokens": 30, "completion_tokens": 12, "total_tokens": 42}
    assert response.model == "gpt-test" and response.finish_reason == "stop"
    assert fake_openai.requests[0]["stream"] is True
    assert fake_openai.requests[0]["stream_options"] == {"include_usage": True}


@pytest.mark.parametrize("interleave", [False, True])
def test_stream_assembles_several_tool_calls_by_index_from_split_arguments(fake_openai: FakeOpenAI,
                                                                          tmp_path: Path, interleave: bool) -> None:
    arguments = {"amount": 3500, "currency": "EUR", "note": "taxi from the airport, with tip"}
    fake_openai.enqueue(completion("Let me file that.", [("create_expense", arguments),
                                                         ("lookup_policy", {"topic": "travel"})],
                                   chunk_size=4, interleave=interleave))
    response = call_one(agent(fake_openai, tmp_path, stream=True, tools=TOOLS))
    assert response.content == "Let me file that."
    assert [(c.name, c.arguments) for c in response.tool_calls] == [("create_expense", arguments),
                                                                    ("lookup_policy", {"topic": "travel"})]
    assert all(c.id.startswith("call_") for c in response.tool_calls)
    assert response.finish_reason == "tool_calls"


def test_stream_options_can_be_turned_off_for_servers_that_reject_them(fake_openai: FakeOpenAI,
                                                                       tmp_path: Path) -> None:
    response = call_one(agent(fake_openai, tmp_path, stream=True, params={"stream_options": None}))
    assert response.content == "echo: hi" and response.usage == {}
    assert "stream_options" not in fake_openai.requests[0]


def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> str:
    return "data: " + json.dumps({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
                                  "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]}) + "\n\n"


@pytest.mark.parametrize(("events", "cut", "message"), [
    ([chunk({"content": "Hel"}), chunk({"content": "lo"})], True,
     "the reply from {url} was cut off after "),
    ([chunk({"content": "Hel"}), chunk({"content": "lo"})], False,
     "the event stream from {url} ended before the reply was complete (no finish_reason, no [DONE])"),
    ([chunk({"content": "Hel"}), "data: {\"choices\": [{\"delta\n\n"], False,
     "invalid JSON in the event stream from {url}: {\"choices\": [{\"delta"),
    ([chunk({"content": "Hel"}), 'data: {"error": {"message": "upstream model crashed"}}\n\n'], False,
     "error from {url}: upstream model crashed"),
])
def test_broken_streams_are_agent_errors(tmp_path: Path, events: list[str], cut: bool, message: str) -> None:
    with ScriptedServer("/v1/chat/completions", sse_reply(events, cut=cut)) as server:
        with pytest.raises(AgentCallError) as caught:
            call_one(make_agent("openai", tmp_path, base_url=server.url("/v1"), model="m", stream=True))
        assert len(server.requests) == 1
    assert caught.value.kind == "agent"
    assert caught.value.message.startswith(message.replace("{url}", server.endpoint))


def test_stream_tool_calls_without_an_index_are_told_apart_by_their_ids(tmp_path: Path) -> None:
    # Gemini's OpenAI-compatible API: each call whole, in a chunk of its own, with no `index`.
    events = [chunk({"role": "assistant", "tool_calls": [
                  {"id": "c1", "type": "function", "function": {"name": "create_expense", "arguments": "{}"}}]}),
              chunk({"tool_calls": [
                  {"id": "c2", "type": "function", "function": {"name": "lookup", "arguments": '{"a": '}}]}),
              chunk({"tool_calls": [{"function": {"arguments": "1}"}}]}),      # the last call, continued
              chunk({}, "tool_calls")]
    with ScriptedServer("/v1/chat/completions", sse_reply(events)) as server:
        response = call_one(make_agent("openai", tmp_path, base_url=server.url("/v1"), model="m", stream=True))
    assert [(c.id, c.name, c.arguments) for c in response.tool_calls] == [("c1", "create_expense", {}),
                                                                         ("c2", "lookup", {"a": 1})]


def test_an_error_event_or_a_byte_order_mark_in_a_stream(tmp_path: Path) -> None:
    errored = [chunk({"content": "partial answer"}), "event: error\ndata: {\"message\": \"overloaded\"}\n\n",
               chunk({}, "stop")]
    with ScriptedServer("/v1/chat/completions", sse_reply(errored)) as server, \
            pytest.raises(AgentCallError) as caught:
        call_one(make_agent("openai", tmp_path, base_url=server.url("/v1"), model="m", stream=True))
    assert caught.value.message == (f"error event in the stream from {server.endpoint}: "
                                    '{"message": "overloaded"}')
    marked = ["\ufeff" + chunk({"content": "first "}), chunk({"content": "second"}, "stop")]
    with ScriptedServer("/v1/chat/completions", sse_reply(marked)) as server:
        response = call_one(make_agent("openai", tmp_path, base_url=server.url("/v1"), model="m", stream=True))
    assert response.content == "first second"            # the BOM (ASP.NET writes one) is not part of a line


def test_a_finished_stream_held_open_is_read_to_its_finish_not_to_the_timeout(tmp_path: Path) -> None:
    let_go = threading.Event()

    async def held(request: web.Request, body: Any) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        for piece in (chunk({"role": "assistant", "content": "done"}), chunk({}, "stop"),
                      "data: " + json.dumps({"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 1,
                                                                      "total_tokens": 4}}) + "\n\n"):
            await response.write(piece.encode())
        if await held_open(request):                # complete, but neither [DONE] nor the end of the stream comes
            let_go.set()
        return response

    with ScriptedServer("/v1/chat/completions", held) as server:
        response = call_one(make_agent("openai", tmp_path, base_url=server.url("/v1"), model="m", stream=True))
        assert let_go.wait(30)                      # the client closed the stream: the server never ended it
    assert (response.content, response.finish_reason) == ("done", "stop")
    assert response.usage == {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}   # read in the grace


def test_stream_without_done_is_complete_when_finished(tmp_path: Path) -> None:
    events = [chunk({"role": "assistant", "content": "Hi"}), chunk({}, "stop")]
    with ScriptedServer("/v1/chat/completions", sse_reply(events)) as server:
        response = call_one(make_agent("openai", tmp_path, base_url=server.url("/v1"), model="m", stream=True))
    assert response.content == "Hi" and response.finish_reason == "stop"


# --- connectors -------------------------------------------------------------------------------------------------

def test_agent_on_a_connector_with_inline_overrides(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    connectors = {"openai.gpt4o": ConnectorSettings(base_url=fake_openai.base_url, api_key="sk-connector-0001",
                                                    model="gpt-4o", headers={"X-Team": "qa"},
                                                    params={"temperature": 0, "seed": 7})}
    call_one(make_agent("openai", tmp_path, connectors=connectors, connector="openai.gpt4o"))
    call_one(make_agent("openai", tmp_path, connectors=connectors, connector="openai.gpt4o", model="gpt-4o-mini",
                        params={"temperature": 0.5}, headers={"X-Run": "7"}))
    first, second = fake_openai.requests
    assert (first["model"], first["temperature"], first["seed"]) == ("gpt-4o", 0, 7)
    assert (second["model"], second["temperature"], second["seed"]) == ("gpt-4o-mini", 0.5, 7)
    assert fake_openai.headers[0]["Authorization"] == "Bearer sk-connector-0001"
    assert fake_openai.headers[1]["X-Team"] == "qa" and fake_openai.headers[1]["X-Run"] == "7"


def test_connector_override_from_the_request_wins(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    with FakeOpenAI() as other:
        connectors = {"a": ConnectorSettings(base_url=fake_openai.base_url, api_key="sk-conn-a-0001", model="model-a"),
                      "b": ConnectorSettings(base_url=other.base_url, api_key="sk-conn-b-0001", model="model-b")}
        llm = make_agent("openai", tmp_path, connectors=connectors, connector="a", system="Be brief.",
                         params={"temperature": 1})
        call(llm, request(), request(connector="b"), request(connector="a"))
        assert other.invalid == []
    assert [r["model"] for r in fake_openai.requests] == ["model-a", "model-a"]
    [on_b] = other.requests
    assert on_b["model"] == "model-b" and "temperature" not in on_b      # the endpoint is the connector's alone…
    assert on_b["messages"][0] == {"role": "system", "content": "Be brief."}   # …the agent's prompt stays
    assert other.headers[0]["Authorization"] == "Bearer sk-conn-b-0001"


def test_unknown_connectors(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    connectors = {"a": ConnectorSettings(base_url=fake_openai.base_url, model="m")}
    with pytest.raises(ConfigError, match=r"connector: 'nope' is not defined under connectors \(defined: a\)"):
        make_agent("openai", tmp_path, connectors=connectors, connector="nope")
    with pytest.raises(ConfigError, match=r"--connector: 'zzz' is not defined"):
        make_agent("openai", tmp_path, connectors=connectors, connector="a", connector_override="zzz")
    with pytest.raises(AgentCallError) as caught:
        call_one(make_agent("openai", tmp_path, connectors=connectors, connector="a"), request(connector="typo"))
    assert caught.value.kind == "invalid"
    assert caught.value.message == "connector 'typo' is not defined in agenttest.yaml (defined: a)"


def test_connectors_that_cannot_serve_the_agent(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    connectors = {"a": ConnectorSettings(base_url=fake_openai.base_url, model="m"),
                  "bad-url": ConnectorSettings(base_url="ftp://x/v1", model="m"),
                  "other-type": ConnectorSettings(type="anthropic", base_url=fake_openai.base_url, model="m")}
    llm = make_agent("openai", tmp_path, connectors=connectors, connector="a")   # unused bad ones are no obstacle
    for name, message in [("bad-url", "connectors.bad-url.base_url: 'ftp://x/v1' must be an absolute http"),
                          ("other-type", "connectors.other-type: connector type 'anthropic' is not supported")]:
        with pytest.raises(AgentCallError) as caught:
            call_one(llm, request(connector=name))
        assert caught.value.kind == "invalid" and caught.value.message.startswith(message)
        with pytest.raises(ConfigError, match=f"--connector {name}: {message}"):
            make_agent("openai", tmp_path, connectors=connectors, connector="a", connector_override=name)


def test_settings_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="needs a model"):
        make_agent("openai", tmp_path, base_url="http://127.0.0.1:1/v1")
    with pytest.raises(ConfigError, match="base_url: 'ftp://x/v1' must be an absolute http"):
        make_agent("openai", tmp_path, base_url="ftp://x/v1", model="m")
    with pytest.raises(ValidationError) as typo:
        make_agent("openai", tmp_path, model="m", temprature=0)
    assert [(error["loc"], error["type"]) for error in typo.value.errors()] == [(("temprature",), "extra_forbidden")]


def test_azure_style_base_url_keeps_its_query(tmp_path: Path) -> None:
    path = "/openai/deployments/gpt4o/chat/completions"
    with ScriptedServer(path, completion("hi from azure")) as server:
        llm = make_agent("openai", tmp_path, base_url=server.url("/openai/deployments/gpt4o?api-version=2024-10-21"),
                         model="gpt-4o", headers={"api-key": "azure-key-0001"})
        assert call_one(llm).content == "hi from azure"
        assert server.headers[0]["api-key"] == "azure-key-0001"
        assert "Authorization" not in server.headers[0]


# --- faults -----------------------------------------------------------------------------------------------------

def test_429_with_retry_after_then_success(fake_openai: FakeOpenAI, tmp_path: Path, waits: list[float]) -> None:
    fake_openai.enqueue(status_reply(429, "Rate limit reached for gpt-test", retry_after="0.2"), completion("ok"))
    assert call_one(agent(fake_openai, tmp_path)).content == "ok"
    assert waits == [0.2]
    assert len(fake_openai.requests) == 2


def test_5xx_exhausting_retries(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    fake_openai.enqueue(*[status_reply(503, "The server is overloaded")] * 3)
    with pytest.raises(AgentCallError) as caught:
        call_one(agent(fake_openai, tmp_path, stream=True))
    assert caught.value.message == (f"HTTP 503 from {fake_openai.endpoint}: The server is overloaded "
                                    "(after 3 attempts)")
    assert caught.value.kind == "agent"


def test_bad_api_key_is_reported_without_the_key(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    fake_openai.enqueue(status_reply(401, "Incorrect API key provided: sk-agent-key-0001."))
    with pytest.raises(AgentCallError) as caught:
        call_one(agent(fake_openai, tmp_path))
    assert caught.value.message == f"HTTP 401 from {fake_openai.endpoint}: Incorrect API key provided: ***."
    assert len(fake_openai.requests) == 1


@pytest.mark.parametrize(("reply", "message"), [
    (text_reply("<html><body>502 Bad Gateway</body></html>", "text/html"),
     "reply from {url} is not valid JSON (HTTP 200, text/html): <html><body>502 Bad Gateway</body></html>"),
    (text_reply('{"choices": [', "application/json"),
     'reply from {url} is not valid JSON (HTTP 200, application/json): {"choices": ['),
    (text_reply("", "application/json"),
     "reply from {url} is not valid JSON (HTTP 200, application/json): (empty body)"),
    (json_reply({"object": "chat.completion", "choices": []}), "reply from {url} has no choices: "),
    (json_reply({"error": {"message": "model overloaded"}}), "error from {url}: model overloaded"),
    (json_reply(["not", "a", "completion"]), 'reply from {url} is not a chat completion: ["not", "a", "completion"]'),
])
def test_garbage_replies_are_agent_errors(tmp_path: Path, reply: Any, message: str) -> None:
    with ScriptedServer("/v1/chat/completions", reply) as server, pytest.raises(AgentCallError) as caught:
        call_one(make_agent("openai", tmp_path, base_url=server.url("/v1"), model="m"))
    assert caught.value.kind == "agent"
    assert caught.value.message.startswith(message.replace("{url}", server.endpoint))


def test_slow_reply_within_the_deadline_is_awaited(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    fake_openai.enqueue(slow(0.3, completion("finally")))
    response = call_one(agent(fake_openai, tmp_path), request(deadline=time.monotonic() + 10))
    assert response.content == "finally"


def test_connection_refused_is_infra(tmp_path: Path) -> None:
    with FakeOpenAI() as gone:
        base_url = gone.base_url
    with pytest.raises(AgentCallError) as caught:
        call_one(make_agent("openai", tmp_path, base_url=base_url, model="m", retries=1))
    assert caught.value.kind == "infra"
    assert caught.value.message == (f"cannot connect to {base_url}/chat/completions: Connection refused "
                                    "(after 2 attempts)")
