"""`provider: http` against local custom agents: the canonical request or a body template out, JSONPath-mapped
JSON, plain text or server-sent events back, and every fault as a verdict."""

from __future__ import annotations

import base64
import json
import socket
from pathlib import Path
from typing import Any

import pytest

from agenttest.errors import AgentCallError, ConfigError
from agenttest.secrets import mask
from fakes.server import ScriptedServer, json_reply, sse_reply, status_reply, text_reply

from .helpers import call, call_one, make_agent, request

CANONICAL_REPLY = {
    "content": "Expense created.",
    "tool_calls": [{"id": "call_1", "name": "create_expense", "arguments": {"amount": 3500}}],
    "tools": [{"id": "call_1", "name": "create_expense", "arguments": {"amount": 3500},
               "result": {"id": "EXP-1"}, "error": ""}],
    "data": {"expense_id": "EXP-1"},
    "awaiting_input": True,
    "finish_reason": "stop",
    "model": "expense-bot-2",
    "usage": {"prompt_tokens": 40, "completion_tokens": 9},
}


@pytest.fixture
def server() -> Any:
    with ScriptedServer("/chat") as agent_server:
        yield agent_server


def agent(server: ScriptedServer, tmp_path: Path, **settings: Any) -> Any:
    return make_agent("http", tmp_path, url=server.endpoint, **settings)


def test_posts_the_canonical_request_and_reads_the_canonical_response(server: ScriptedServer,
                                                                     tmp_path: Path) -> None:
    server.enqueue(json_reply(CANONICAL_REPLY))
    req = request("file my taxi", connector="openai.gpt4o")
    response = call_one(agent(server, tmp_path), req)
    assert response.to_dict() == CANONICAL_REPLY
    assert server.requests == [req.to_dict()]
    assert server.requests[0]["options"]["connector"] == "openai.gpt4o"   # the agent may use the override itself
    assert server.methods == ["POST"]


def test_response_mapping_with_jsonpath(server: ScriptedServer, tmp_path: Path) -> None:
    server.enqueue(json_reply({
        "reply": {"text": "Which category?"},
        "steps": [{"call": {"id": "c1", "type": "function",
                            "function": {"name": "lookup", "arguments": "{\"q\": \"travel\"}"}}},
                  {"call": {"id": "c2", "name": "create_expense", "arguments": {"amount": 1}}}],
        "state": {"needs_user": True, "out": {"category": None}},
        "meta": {"tokens": {"prompt_tokens": 5, "completion_tokens": 2}},
        "data": "ignored: mapping says null",
    }))
    response = call_one(agent(server, tmp_path, response={
        "content": "$.reply.text", "tool_calls": "$.steps[*].call", "awaiting_input": "state.needs_user",
        "data": "$.state.out", "usage": "$.meta.tokens", "model": None}))
    assert response.content == "Which category?"
    assert [(c.id, c.name, c.arguments) for c in response.tool_calls] == [("c1", "lookup", {"q": "travel"}),
                                                                          ("c2", "create_expense", {"amount": 1})]
    assert response.awaiting_input is True
    assert response.data == {"category": None}
    assert response.usage == {"prompt_tokens": 5, "completion_tokens": 2}


def test_unmapped_fields_still_read_the_canonical_places(server: ScriptedServer, tmp_path: Path) -> None:
    server.enqueue(json_reply({"reply": "hi", "data": {"x": 1}}))
    response = call_one(agent(server, tmp_path, response={"content": "$.reply"}))
    assert (response.content, response.data) == ("hi", {"x": 1})


@pytest.mark.parametrize(("reply", "content"), [
    (text_reply("Hello, plain world."), "Hello, plain world."),
    (text_reply('{"content": "json as text/plain"}'), "json as text/plain"),
    (text_reply("{not json at all"), "{not json at all"),
    (text_reply("", "text/plain"), ""),
    (json_reply("a JSON string"), "a JSON string"),
])
def test_plain_text_replies_become_content(server: ScriptedServer, tmp_path: Path, reply: Any,
                                           content: str | None) -> None:
    server.enqueue(reply)
    assert call_one(agent(server, tmp_path)).content == content


def test_body_template(server: ScriptedServer, tmp_path: Path) -> None:
    body = {"session": "{{context.chat_id}}", "question": "{{last_user_message}}", "history": "{{messages}}",
            "label": "case {{context.test_id}} of {{agent}} ({{options.metadata}})", "fixed": [1, True, None],
            "first": "{{messages.0.content}}", "missing": "{{context.nope}}", "spaced": "{{ context.test_id }}"}
    messages = [{"role": "user", "content": "first question"}, {"role": "assistant", "content": "an answer"},
                {"role": "user", "content": [{"type": "text", "text": "part one"}, {"type": "text", "text": "two"}]}]
    call_one(agent(server, tmp_path, body=body), request(messages=messages, metadata={"k": 1}))
    assert server.requests == [{
        "session": "test-T1-abc", "question": "part one\ntwo", "history": messages,
        "label": 'case T1 of agent.under.test ({"k":1})', "fixed": [1, True, None], "first": "first question",
        "missing": None, "spaced": "T1"}]


def test_unknown_template_placeholders_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"body: unknown placeholder \{\{user_input\}\} \(available: agent, "):
        make_agent("http", tmp_path, url="http://127.0.0.1:9/chat", body={"q": ["{{user_input}}"]})


def test_method_and_headers(server: ScriptedServer, tmp_path: Path) -> None:
    call_one(agent(server, tmp_path, method="PUT", headers={"Authorization": "Bearer agent-token-0001",
                                                            "X-Tenant": "acme"}))
    assert server.methods == ["PUT"]
    assert server.headers[0]["Authorization"] == "Bearer agent-token-0001"
    assert server.headers[0]["X-Tenant"] == "acme"
    assert mask("token agent-token-0001 leaked") == "token *** leaked"   # literal credentials are secrets too


# --- server-sent events -----------------------------------------------------------------------------------------

def test_sse_json_events_through_the_mapping(server: ScriptedServer, tmp_path: Path) -> None:
    server.enqueue(sse_reply([
        'event: delta\ndata: {"delta": "Your expense "}\n\n',
        ": heartbeat\n\n",
        'data: {"delta": "is filed."}\n\n',
        'data: {"call": {"id": "c1", "name": "create_expense", "arguments": {"amount": 3}}}\n\n',
        'data: {"done": true, "usage": {"prompt_tokens": 3, "completion_tokens": 4}, "data": {"id": "EXP-9"}}\n\n',
        "data: [DONE]\n\n",
        'data: {"delta": "never read"}\n\n',
    ], pause=0.01))
    response = call_one(agent(server, tmp_path, stream="sse",
                              response={"content": "$.delta", "tool_calls": "$.call"}))
    assert response.content == "Your expense is filed."
    assert [c.name for c in response.tool_calls] == ["create_expense"]
    assert response.usage == {"prompt_tokens": 3, "completion_tokens": 4}
    assert response.data == {"id": "EXP-9"}
    assert server.headers[0]["Accept"] == "text/event-stream"


def test_the_users_accept_header_in_any_spelling_wins_over_the_streams(server: ScriptedServer,
                                                                       tmp_path: Path) -> None:
    server.enqueue(sse_reply(["data: hi\n\n"]))
    call_one(agent(server, tmp_path, stream="sse", headers={"accept": "text/event-stream, application/json"}))
    sent = [value for name, value in server.headers[0].items() if name.lower() == "accept"]
    assert sent == ["text/event-stream, application/json"]


def test_sse_plain_text_chunks_are_appended(server: ScriptedServer, tmp_path: Path) -> None:
    server.enqueue(sse_reply(["data: Hello\n\n", "data: , \n\n", "data: world\ndata: again\n\n"]))
    assert call_one(agent(server, tmp_path, stream="sse")).content == "Hello, world\nagain"


def test_sse_json_string_chunks_are_decoded(server: ScriptedServer, tmp_path: Path) -> None:
    server.enqueue(sse_reply(['data: "Hello,"\n\n', 'data: " world"\n\n', 'data: "line\\n"\n\n']))
    assert call_one(agent(server, tmp_path, stream="sse")).content == "Hello, worldline\n"


def test_sse_with_the_default_mapping_reads_canonical_events(server: ScriptedServer, tmp_path: Path) -> None:
    server.enqueue(sse_reply(['data: {"content": "a"}\n\n', 'data: {"content": "b", "awaiting_input": true}\n\n']))
    response = call_one(agent(server, tmp_path, stream="sse"))
    assert (response.content, response.awaiting_input) == ("ab", True)


def test_sse_reply_without_asking_for_it_is_still_read(server: ScriptedServer, tmp_path: Path) -> None:
    server.enqueue(sse_reply(['data: {"content": "streamed anyway"}\n\n']))
    assert call_one(agent(server, tmp_path)).content == "streamed anyway"


def test_json_reply_when_sse_was_asked_is_read_as_json(server: ScriptedServer, tmp_path: Path) -> None:
    server.enqueue(json_reply({"content": "not streamed"}))
    assert call_one(agent(server, tmp_path, stream="sse")).content == "not streamed"


@pytest.mark.parametrize(("events", "cut", "message"), [
    (["data: partial\n\n"], True, "the reply from {url} was cut off after 15 bytes (connection closed mid-body)"),
    (["data: partial\n\n", "event: error\ndata: agent crashed: KeyError 'amount'\n\n"], False,
     "error event in the stream from {url}: agent crashed: KeyError 'amount'"),
])
def test_broken_streams(server: ScriptedServer, tmp_path: Path, events: list[str], cut: bool, message: str) -> None:
    server.enqueue(sse_reply(events, cut=cut))
    with pytest.raises(AgentCallError) as caught:
        call_one(agent(server, tmp_path, stream="sse"))
    assert caught.value.kind == "agent"
    assert caught.value.message.startswith(message.replace("{url}", server.endpoint))
    assert len(server.requests) == 1


# --- faults -----------------------------------------------------------------------------------------------------

def test_5xx_then_success(server: ScriptedServer, tmp_path: Path) -> None:
    server.enqueue(status_reply(500), status_reply(504), json_reply({"content": "third time lucky"}))
    assert call_one(agent(server, tmp_path)).content == "third time lucky"
    assert len(server.requests) == 3


def test_http_error_message(server: ScriptedServer, tmp_path: Path) -> None:
    server.enqueue(*[text_reply("upstream down", status=503)] * 3)
    with pytest.raises(AgentCallError) as caught:
        call_one(agent(server, tmp_path))
    assert caught.value.message == f"HTTP 503 from {server.endpoint}: upstream down (after 3 attempts)"
    server.enqueue(json_reply({"detail": "Not Found"}, status=404))
    with pytest.raises(AgentCallError) as caught:
        call_one(agent(server, tmp_path))
    assert caught.value.message == f"HTTP 404 from {server.endpoint}: Not Found"


@pytest.mark.parametrize(("reply", "message"), [
    (text_reply("{'python': 'repr'}", "application/json"),
     "reply from {url} is not valid JSON (HTTP 200, application/json): {'python': 'repr'}"),
    (json_reply([1, 2, 3]), "reply from {url} is a JSON list and no `response` path matched it: [1, 2, 3]"),
    (json_reply({"content": "x", "tool_calls": "not a list"}), "agent response field 'tool_calls' must be an array"),
    (json_reply({"usage": 12}), "agent response field 'usage' must be an object"),
])
def test_unusable_replies_are_agent_errors(server: ScriptedServer, tmp_path: Path, reply: Any,
                                           message: str) -> None:
    server.enqueue(reply)
    with pytest.raises(AgentCallError) as caught:
        call_one(agent(server, tmp_path))
    assert caught.value.kind == "agent"
    assert caught.value.message == message.replace("{url}", server.endpoint)


def test_connection_refused_and_dns_are_infra(tmp_path: Path) -> None:
    with ScriptedServer("/chat") as gone:
        url = gone.endpoint
    with pytest.raises(AgentCallError) as refused:
        call_one(make_agent("http", tmp_path, url=url, retries=0))
    assert (refused.value.kind, refused.value.message) == ("infra", f"cannot connect to {url}: Connection refused")
    with pytest.raises(AgentCallError) as unknown:
        call_one(make_agent("http", tmp_path, url="http://agenttest-no-such-host.invalid:8080/chat"))
    assert unknown.value.kind == "infra"
    assert unknown.value.message == ("cannot resolve host 'agenttest-no-such-host.invalid' (DNS) for "
                                     "http://agenttest-no-such-host.invalid:8080/chat: Name or service not known")


@pytest.mark.parametrize(("settings", "message"), [
    ({"url": "localhost:8080/chat"}, "url: 'localhost:8080/chat' must be an absolute http:// or https:// URL"),
    ({"url": "http://127.0.0.1:9/chat", "response": {"content": "$.reply["}},
     r"response.content: invalid JSONPath '\$.reply\['"),
])
def test_settings_errors(tmp_path: Path, settings: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        make_agent("http", tmp_path, **settings)


def test_one_session_serves_many_calls(server: ScriptedServer, tmp_path: Path) -> None:
    responses = call(agent(server, tmp_path), *(request(f"q{i}") for i in range(5)))
    assert [r.content for r in responses] == ["ok"] * 5
    assert [json.dumps(r["messages"]) for r in server.requests] == [
        json.dumps([{"role": "user", "content": f"q{i}"}]) for i in range(5)]


def test_proxy_from_the_environment_is_used(server: ScriptedServer, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """HTTP_PROXY is honoured (looked up once per origin): the request for an unresolvable host reaches the proxy."""
    for name in ("NO_PROXY", "no_proxy", "http_proxy", "HTTPS_PROXY", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", server.endpoint.rsplit("/", 1)[0].replace("http://", "http://pu:pw@"))
    server.enqueue(json_reply({"content": "via proxy"}), json_reply({"content": "again"}))
    proxied = make_agent("http", tmp_path, url="http://agent.invalid/chat", retries=0)
    responses = call(proxied, request("one"), request("two"))
    assert [r.content for r in responses] == ["via proxy", "again"]
    assert len(server.requests) == 2
    assert server.headers[0]["Proxy-Authorization"] == "Basic cHU6cHc="        # pu:pw, as the proxy needs it


def test_proxy_credentials_reach_the_proxy_as_written_without_a_deprecated_parameter(
        server: ScriptedServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        recwarn: pytest.WarningsRecorder) -> None:
    """A user name and password with characters URLs escape (`@ : / %`) reach the proxy as the environment spells
    them, carried in the proxy's URL (aiohttp 3.14 deprecates `proxy_auth`, and warns of it)."""
    for name in ("NO_PROXY", "no_proxy", "http_proxy", "HTTPS_PROXY", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    proxy = server.endpoint.rsplit("/", 1)[0].replace("http://", "http://p%40u:p%3Aw%2F%25@")
    monkeypatch.setenv("HTTP_PROXY", proxy)
    server.enqueue(json_reply({"content": "via proxy"}))
    [response] = call(make_agent("http", tmp_path, url="http://agent.invalid/chat", retries=0), request("one"))
    assert response.content == "via proxy"
    assert server.headers[0]["Proxy-Authorization"] == "Basic " + base64.b64encode(b"p@u:p:w/%").decode()
    assert not [w for w in recwarn if issubclass(w.category, DeprecationWarning)]


def test_a_proxy_out_of_reach_is_named_not_the_agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("NO_PROXY", "no_proxy", "http_proxy", "HTTPS_PROXY", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    with socket.socket() as probe:          # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("HTTP_PROXY", f"http://puser:ppass1234@127.0.0.1:{port}")
    with pytest.raises(AgentCallError) as caught:
        call(make_agent("http", tmp_path, url="http://agent.internal:8080/chat", retries=0), request("one"))
    assert caught.value.kind == "infra"
    assert caught.value.message == (f"cannot connect to the proxy http://127.0.0.1:{port} for "
                                    "http://agent.internal:8080/chat: Connection refused")
