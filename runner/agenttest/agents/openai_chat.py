"""The Chat Completions wire format: canonical messages in the request, the completion read back as a canonical
response, tool calls translated both ways."""

from __future__ import annotations

import json
from typing import Any

from ..errors import AgentCallError
from .base import MESSAGE_KEYS, AgentResponse, ToolCall, parse_arguments, usage_counts
from .replies import snippet

# The message fields Chat Completions accepts; anything else a case carries stays on our side.


def chat_messages(system: str | None, messages: list[dict[str, Any]],
                  mock_tools: dict[str, Any]) -> list[dict[str, Any]]:
    """Canonical messages as Chat Completions messages: the system prompt first, tool calls in the OpenAI shape, and
    every tool call answered by a tool message with its id (the mocked result, or `{}`), as the API requires before
    the conversation may go on."""
    result: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    unanswered: list[tuple[str, str]] = []   # (id, name) of tool calls still waiting for their tool message

    def answer_pending() -> None:
        for call_id, name in unanswered:
            result.append({"role": "tool", "tool_call_id": call_id,
                           "content": _tool_content(mock_tools.get(name, {}))})
        unanswered.clear()

    for message in messages:
        role, content = message.get("role"), message.get("content")
        if len(message) == 2 and type(role) is str and role and role != "tool" and type(content) is str:
            answer_pending()            # nearly every message: `{role, content}` as it is
            result.append({"role": role, "content": content})
            continue
        out = {key: message[key] for key in MESSAGE_KEYS if key in message}
        out["role"] = str(out.get("role") or "user")
        if out["role"] == "tool":
            out["content"] = _tool_content(out.get("content"))
            unanswered[:] = [pending for pending in unanswered if pending[0] != out.get("tool_call_id")]
        else:
            answer_pending()
            if not isinstance(out.get("content"), (str, list, type(None))):
                out["content"] = json.dumps(out["content"], ensure_ascii=False)
        if out.get("tool_calls"):
            out["tool_calls"] = [_openai_tool_call(item, i) for i, item in enumerate(out["tool_calls"])]
            out.setdefault("content", None)
            unanswered.extend((call["id"], call["function"]["name"]) for call in out["tool_calls"])
        else:
            out.pop("tool_calls", None)
        result.append(out)
    answer_pending()
    return result


def _openai_tool_call(item: Any, index: int) -> dict[str, Any]:
    """A tool call in either shape (canonical `{id, name, arguments}` or OpenAI's) in OpenAI's shape."""
    call = item if isinstance(item, dict) else {}
    function = call.get("function") if isinstance(call.get("function"), dict) else call
    arguments = function.get("arguments")
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments if arguments is not None else {}, ensure_ascii=False)
    return {"id": str(call.get("id") or f"call_{index}"), "type": "function",
            "function": {"name": str(function.get("name") or ""), "arguments": arguments}}


def _tool_content(result: Any) -> str:
    return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)


def _tool_call(item: Any, index: int) -> ToolCall:
    call = _openai_tool_call(item, index)
    return ToolCall(id=call["id"], name=call["function"]["name"],
                    arguments=parse_arguments(call["function"]["arguments"]))


def read_completion(reply: Any, shown: str, *, model: str) -> AgentResponse:
    """A chat completion (as JSON, or assembled from a stream) as the canonical response: the first choice's content
    (or refusal) and tool calls, the reply's model (else `model`) and usage. Raises AgentCallError for an error
    object or a reply without choices."""
    if not isinstance(reply, dict):
        raise AgentCallError(f"reply from {shown} is not a chat completion: {snippet(json.dumps(reply))}")
    raise_error_object(reply, shown)
    choices = reply.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise AgentCallError(f"reply from {shown} has no choices: {snippet(json.dumps(reply))}")
    choice = choices[0]
    message = choice.get("message") if isinstance(choice.get("message"), dict) else {}
    content = message.get("content")
    if content in (None, "") and isinstance(message.get("refusal"), str):
        content = message["refusal"]
    calls = [_tool_call(item, i) for i, item in enumerate(message.get("tool_calls") or [])]
    finish_reason = choice.get("finish_reason") if isinstance(choice.get("finish_reason"), str) else None
    _refuse_cut_arguments(calls, finish_reason, shown)
    return AgentResponse(
        content=content,
        tool_calls=calls,
        finish_reason=finish_reason,
        model=reply.get("model") if isinstance(reply.get("model"), str) else model,
        usage=usage_counts(reply.get("usage")),
    )


def _refuse_cut_arguments(calls: list[ToolCall], finish_reason: str | None, shown: str) -> None:
    """A tool call whose arguments stop mid-JSON was cut off at the token limit — even when the reply says
    `tool_calls` (llama.cpp does, for a forced call): no call the agent meant, so an AgentCallError saying so."""
    if not calls:
        return
    from ..extract import unfinished_json  # here: a reply that calls no tool needs none of it (issue #27)

    for call in calls:
        if isinstance(call.arguments, str) and unfinished_json(call.arguments):
            said = f", though the reply says finish_reason {finish_reason!r}" if finish_reason != "length" else ""
            raise AgentCallError(f"the reply from {shown} was cut off: the arguments of tool call {call.name!r} were "
                                 f"cut off before they were complete ({snippet(call.arguments)}){said}: raise "
                                 "max_tokens")


def tool_step_messages(step: AgentResponse) -> list[dict[str, Any]]:
    """What one step of the tool loop adds to the messages sent to the model: its assistant message with the tool
    calls, then a tool message per call with the result it got (`{"error": …}` when its tool failed), by id."""
    executed = {tool.id: tool for tool in step.tools}
    messages: list[dict[str, Any]] = [{"role": "assistant", "content": step.content or None, "tool_calls": [
        _openai_tool_call(call.to_dict(), index) for index, call in enumerate(step.tool_calls)]}]
    for call in step.tool_calls:
        tool = executed[call.id]
        messages.append({"role": "tool", "tool_call_id": call.id,
                         "content": _tool_content({"error": tool.error} if tool.error else tool.result)})
    return messages


def raise_error_object(reply: dict[str, Any], shown: str) -> None:
    """Some servers report failures inside a 200 reply or a stream event: `{"error": {"message": …}}`."""
    error = reply.get("error")
    if error:
        message = error.get("message") if isinstance(error, dict) else error
        raise AgentCallError(f"error from {shown}: {snippet(str(message or json.dumps(error)))}")
