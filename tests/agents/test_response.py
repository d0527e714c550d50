"""The canonical response: shapes accepted from agents, and the subject assertions check."""

from __future__ import annotations

from typing import Any

import pytest

from agenttest.agents.base import AgentResponse, usage_counts
from agenttest.errors import AgentCallError


def test_bare_string_is_content() -> None:
    response = AgentResponse.from_raw("hello")
    assert response.content == "hello" and response.subject() == "hello"


def test_tool_calls_in_canonical_and_openai_shapes() -> None:
    response = AgentResponse.from_raw({
        "content": "ok",
        "tool_calls": [{"id": "a", "name": "lookup", "arguments": '{"q": 1}'},
                       {"id": "b", "type": "function", "function": {"name": "create", "arguments": "{not json"}}],
        "tools": [{"toolcall_id": "a", "tool": "svc__lookup", "result": {"n": 1}, "error": {"code": 5}}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 4, "note": "x"},
    })
    assert [(c.id, c.name, c.arguments) for c in response.tool_calls] == [
        ("a", "lookup", {"q": 1}), ("b", "create", "{not json")]
    tool = response.tools[0]
    assert (tool.id, tool.name, tool.result, tool.error) == ("a", "svc__lookup", {"n": 1}, '{"code": 5}')
    assert response.usage == {"prompt_tokens": 3, "completion_tokens": 4}


@pytest.mark.parametrize(("raw", "subject"), [
    ({"content": "text", "data": {"k": 1}}, {"k": 1}),
    ({"content": "text", "data": {}}, "text"),
    ({"content": "", "tools": [{"name": "a", "result": {"message": "done"}}]}, "done"),
    ({"content": [], "tools": [{"name": "a", "result": {"action": "x"}}, {"name": "", "result": {"success": False}},
                               {"name": "c", "result": 5}]}, "[a: x] [unknown: failed] [c]"),
    ({"content": None}, None),
])
def test_subject_priority(raw: dict, subject: object) -> None:
    assert AgentResponse.from_raw(raw).subject() == subject


@pytest.mark.parametrize(("raw", "message"), [
    (5, "agent returned int, expected an object or a string"),
    ({"tool_calls": {"a": 1}}, "agent response field 'tool_calls' must be an array"),
    ({"tools": ["x"]}, "agent response tools[0] must be an object"),
    ({"usage": "lots"}, "agent response field 'usage' must be an object"),
])
def test_bad_shapes_are_agent_errors(raw: object, message: str) -> None:
    with pytest.raises(AgentCallError) as info:
        AgentResponse.from_raw(raw)
    assert info.value.message == message and info.value.kind == "agent"


@pytest.mark.parametrize(("usage", "counts"), [
    ({"prompt_tokens": 3, "completion_tokens": 4, "cached": True, "details": {"reasoning_tokens": 1}, "note": "x"},
     {"prompt_tokens": 3, "completion_tokens": 4}),
    (None, {}),
    ("lots", {}),
])
def test_usage_counts_keeps_the_integer_counters(usage: Any, counts: dict[str, int]) -> None:
    assert usage_counts(usage) == counts


def test_usage_keeps_only_plausible_token_counts() -> None:
    assert usage_counts({"prompt_tokens": -100, "completion_tokens": 10**30, "total_tokens": 7, "cached": True}) == {
        "total_tokens": 7}
