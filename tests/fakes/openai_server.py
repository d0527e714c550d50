"""A local OpenAI-compatible Chat Completions server that speaks the real wire format (JSON and SSE, tool calls,
usage) and checks both directions against the `openai` package's own types, so it cannot drift from the real API:
every request it receives is validated as `completion_create_params` (plus the API's tool-message pairing rule),
every completion and chunk it sends is validated as `ChatCompletion` / `ChatCompletionChunk`.

It behaves as the third-party servers seen in the wild do (llama-cpp-python's server, issue 26): a request's
`max_tokens` (or `max_completion_tokens`) cuts the reply at that many tokens of CHARS_PER_TOKEN characters —
text with `finish_reason: "length"`, a tool call's arguments cut as well but still reported as `"tool_calls"` —
and `FakeOpenAI(stream_usage=False)` ignores `stream_options.include_usage`: its streams carry no usage chunk."""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable, Iterator
from typing import Any

from aiohttp import web
from openai.types.chat import (
    ChatCompletion,
    ChatCompletionAssistantMessageParam,
    ChatCompletionChunk,
    ChatCompletionDeveloperMessageParam,
    ChatCompletionFunctionMessageParam,
    ChatCompletionFunctionToolParam,
    ChatCompletionMessageFunctionToolCallParam,
    ChatCompletionSystemMessageParam,
    ChatCompletionToolMessageParam,
    ChatCompletionUserMessageParam,
    completion_create_params,
)
from openai.types.shared_params import FunctionDefinition
from pydantic import TypeAdapter, ValidationError

from .server import Reply, ScriptedServer, json_reply

_REQUEST = {False: TypeAdapter(completion_create_params.CompletionCreateParamsNonStreaming),
            True: TypeAdapter(completion_create_params.CompletionCreateParamsStreaming)}
_MESSAGE_TYPES: dict[str, Any] = {
    "system": ChatCompletionSystemMessageParam, "developer": ChatCompletionDeveloperMessageParam,
    "user": ChatCompletionUserMessageParam, "assistant": ChatCompletionAssistantMessageParam,
    "tool": ChatCompletionToolMessageParam, "function": ChatCompletionFunctionMessageParam,
}
_ids = itertools.count(1)
CHARS_PER_TOKEN = 4
STREAM_USAGE = web.AppKey("stream_usage", bool)

Content = str | Callable[[dict[str, Any]], str] | None


def _keys(typed_dict: Any) -> frozenset[str]:
    return typed_dict.__required_keys__ | typed_dict.__optional_keys__


def chat_request_problems(body: Any) -> list[str]:
    """Why the real API would reject this request body (empty when it would accept it)."""
    if not isinstance(body, dict):
        return ["the body is not a JSON object"]
    problems = []
    unknown = set(body) - _keys(completion_create_params.CompletionCreateParamsStreaming)
    if unknown:
        problems.append(f"unknown parameters: {sorted(unknown)}")
    try:
        _materialise(_REQUEST[bool(body.get("stream"))].validate_python(body))
    except ValidationError as exc:
        problems.append(str(exc))
    for index, message in enumerate(body.get("messages") or []):
        message_type = _MESSAGE_TYPES.get(message.get("role")) if isinstance(message, dict) else None
        if message_type is not None:
            problems += _unknown_keys(f"messages[{index}]", message, message_type)
            for k, call in enumerate(message.get("tool_calls") or []):
                problems += _unknown_keys(f"messages[{index}].tool_calls[{k}]", call,
                                          ChatCompletionMessageFunctionToolCallParam)
    for index, tool in enumerate(body.get("tools") or []):
        problems += _unknown_keys(f"tools[{index}]", tool, ChatCompletionFunctionToolParam)
        problems += _unknown_keys(f"tools[{index}].function", tool.get("function"), FunctionDefinition)
    return problems + _pairing_problems(body.get("messages") or [])


def _unknown_keys(where: str, value: Any, typed_dict: Any) -> list[str]:
    if not isinstance(value, dict):
        return []
    unknown = set(value) - _keys(typed_dict)
    return [f"{where}: unknown keys {sorted(unknown)}"] if unknown else []


def _pairing_problems(messages: list[Any]) -> list[str]:
    """The API's rule: an assistant message with tool_calls must be followed by a tool message for each id, and
    a tool message must answer a call of the assistant message before it."""
    problems = []
    waiting: set[str] = set()
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            continue
        if message.get("role") == "tool":
            if message.get("tool_call_id") not in waiting:
                problems.append(f"messages[{index}]: tool message answers no pending tool call")
            waiting.discard(message.get("tool_call_id"))
            continue
        if waiting:
            problems.append(f"messages[{index}]: tool calls {sorted(waiting)} were not answered by tool messages")
        waiting = {call.get("id") for call in message.get("tool_calls") or [] if isinstance(call, dict)}
    if waiting:
        problems.append(f"tool calls {sorted(waiting)} were not answered by tool messages")
    return problems


def _materialise(value: Any) -> None:
    """pydantic validates `Iterable[...]` fields lazily; walking them makes it validate every item."""
    if isinstance(value, dict):
        for item in value.values():
            _materialise(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _materialise(item)
    elif isinstance(value, Iterator):
        for item in list(value):
            _materialise(item)


def last_user_text(body: dict[str, Any]) -> str:
    for message in reversed(body.get("messages") or []):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):
                return " ".join(part.get("text", "") for part in content if part.get("type") == "text")
            return str(content)
    return ""


def tool_results(body: dict[str, Any]) -> list[str]:
    """The contents of the tool messages at the end of the conversation (empty when it ends otherwise)."""
    results: list[str] = []
    for message in reversed(body.get("messages") or []):
        if message.get("role") != "tool":
            break
        results.insert(0, str(message.get("content")))
    return results


def using_tools(reply: Reply, answer: Content = None) -> Reply:
    """A model that uses what its tools return: `reply` to the user, and once the conversation ends with tool
    results, `answer` — by default a text that quotes them: `Done: {"id": "EXP-1"}`."""
    then = completion(answer or (lambda body: "Done: " + " ".join(tool_results(body))))

    async def route(request: web.Request, body: Any) -> web.StreamResponse:
        return await (then if tool_results(body) else reply)(request, body)

    return route


def completion(content: Content = "", tool_calls: list[tuple[str, Any]] | None = None, *,
               model: str | None = None, usage: tuple[int, int] = (11, 7), finish_reason: str | None = None,
               chunk_size: int = 3, interleave: bool = False, refusal: str | None = None) -> Reply:
    """A chat completion, sent as JSON or — when the request says `stream: true` — as SSE chunks the way the API
    streams them: content in pieces of `chunk_size` characters, each tool call announced with its id and name at
    its `index` and its arguments split across chunks (with `interleave`, the pieces of several calls alternate),
    the finish_reason in a last choice chunk, then a usage chunk when `stream_options.include_usage`, then [DONE].
    `tool_calls` are (name, arguments) pairs; arguments that are not a string are sent as JSON."""

    async def reply(request: web.Request, body: Any) -> web.StreamResponse:
        text = content(body) if callable(content) else content
        calls = [(f"call_{next(_ids)}", name, args if isinstance(args, str) else json.dumps(args))
                 for name, args in tool_calls or []]
        base = {"id": f"chatcmpl-{next(_ids)}", "created": int(time.time()), "model": model or body["model"],
                "system_fingerprint": "fp_fake"}
        reason = finish_reason or ("tool_calls" if calls else "stop")
        limit = body.get("max_completion_tokens") or body.get("max_tokens")
        if isinstance(limit, int) and text and len(text) > limit * CHARS_PER_TOKEN:
            text, reason = text[:limit * CHARS_PER_TOKEN], "length"
        if isinstance(limit, int):
            calls = [(call_id, name, arguments[:limit * CHARS_PER_TOKEN]) for call_id, name, arguments in calls]
        prompt_tokens, completion_tokens = usage
        usage_object = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                        "total_tokens": prompt_tokens + completion_tokens,
                        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
                        "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                                                      "accepted_prediction_tokens": 0,
                                                      "rejected_prediction_tokens": 0}}
        if not body.get("stream"):
            message: dict[str, Any] = {"role": "assistant", "content": text, "refusal": refusal}
            if calls:
                message["tool_calls"] = [{"id": call_id, "type": "function",
                                          "function": {"name": name, "arguments": arguments}}
                                         for call_id, name, arguments in calls]
            payload = {**base, "object": "chat.completion", "usage": usage_object,
                       "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": reason}]}
            ChatCompletion.model_validate(payload)
            return web.json_response(payload)

        def chunk(delta: dict[str, Any], reason: str | None = None) -> dict[str, Any]:
            return {**base, "object": "chat.completion.chunk",
                    "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": reason}]}

        chunks = [chunk({"role": "assistant", "content": "", "refusal": None})]
        chunks += [chunk({"content": text[i:i + chunk_size]}) for i in range(0, len(text or ""), chunk_size)]
        if refusal:
            chunks.append(chunk({"refusal": refusal}))
        pieces = [[chunk({"tool_calls": [{"index": index, "id": call_id, "type": "function",
                                          "function": {"name": name, "arguments": ""}}]})]
                  + [chunk({"tool_calls": [{"index": index, "function": {"arguments": arguments[i:i + chunk_size]}}]})
                     for i in range(0, len(arguments), chunk_size)]
                  for index, (call_id, name, arguments) in enumerate(calls)]
        if interleave:
            chunks += [c for group in itertools.zip_longest(*pieces) for c in group if c is not None]
        else:
            chunks += [c for group in pieces for c in group]
        chunks.append(chunk({}, reason))
        if (body.get("stream_options") or {}).get("include_usage") and request.app.get(STREAM_USAGE, True):
            chunks.append({**base, "object": "chat.completion.chunk", "choices": [], "usage": usage_object})
        for item in chunks:
            ChatCompletionChunk.model_validate(item)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await response.prepare(request)
        for item in chunks:
            await response.write(f"data: {json.dumps(item)}\n\n".encode())
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response

    return reply


class FakeOpenAI(ScriptedServer):
    """`base_url` is what a connector points at. Replies come from `enqueue(...)`, then the default: an echo of the
    last user message. A request the real API would reject gets its 400 and is listed in `invalid`. With
    `stream_usage=False` streams never carry usage, whatever the request asks."""

    def __init__(self, default: Reply | None = None, *, stream_usage: bool = True) -> None:
        super().__init__("/v1/chat/completions",
                         default or completion(lambda body: f"echo: {last_user_text(body)}"))
        self.app[STREAM_USAGE] = stream_usage
        self.invalid: list[str] = []

    @property
    def base_url(self) -> str:
        return self.url("/v1")

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        try:
            body = await request.json()
        except ValueError:
            body = None
        problems = chat_request_problems(body)
        if problems:
            self.invalid.append("; ".join(problems))
            return await json_reply({"error": {"message": "; ".join(problems), "type": "invalid_request_error",
                                               "param": None, "code": None}}, status=400)(request, body)
        return await super()._handle(request)


def by_input(routes: dict[str, Reply], default: Reply | None = None) -> Reply:
    """Picks the reply by the last user message (the first route whose key it contains), so one server can answer
    every case of a suite run in parallel."""
    fallback = default or completion(lambda body: f"echo: {last_user_text(body)}")

    async def reply(request: web.Request, body: Any) -> web.StreamResponse:
        text = last_user_text(body)
        chosen = next((route for key, route in routes.items() if key in text), fallback)
        return await chosen(request, body)

    return reply
