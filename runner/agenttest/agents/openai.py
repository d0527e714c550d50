"""`provider: openai` — a model behind an OpenAI-compatible Chat Completions endpoint (OpenAI, Azure OpenAI, vLLM,
Ollama, LiteLLM, …), with an optional system prompt, tools and mocked tool results."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import Field
from yarl import URL

from ..errors import AgentCallError, ConfigError
from ..secrets import register_secret
from .base import AgentRequest, AgentResponse, ToolCall, ToolExecution, parse_arguments
from .registry import ConnectorSettings, ProviderContext, ProviderSettings, register_provider
from .transport import (
    HttpTransport,
    check_url,
    display_url,
    is_event_stream,
    iter_sse,
    parse_json,
    read_text,
    register_header_secrets,
    snippet,
)

DEFAULT_BASE_URL = "https://api.openai.com/v1"
_MESSAGE_KEYS = ("role", "content", "name", "tool_call_id", "tool_calls", "refusal")


class OpenAISettings(ProviderSettings):
    connector: str | None = None          # a name under `connectors:`; the inline fields below override it
    base_url: str | None = None
    api_key: str | None = None
    model: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    params: dict[str, Any] = Field(default_factory=dict)
    system: str | None = None             # the prompt, or a file relative to the config's directory
    stream: bool = False
    tools: str | list[dict[str, Any]] | None = None   # OpenAI tool schema: a JSON file, or inline
    mock_tools: dict[str, Any] = Field(default_factory=dict)


@dataclass(frozen=True)
class Endpoint:
    """Where and how one chat completion is requested."""

    url: str
    model: str
    headers: dict[str, str] = field(default_factory=dict)
    params: dict[str, Any] = field(default_factory=dict)


class OpenAIAgent:
    """Turns the canonical request into a Chat Completions request and the reply (JSON or SSE) back."""

    def __init__(self, agent_id: str, endpoint: Endpoint, *, default_connector: str | None,
                 connectors: dict[str, ConnectorSettings], system: str | None, stream: bool,
                 tools: list[dict[str, Any]], mock_tools: dict[str, Any], transport: HttpTransport) -> None:
        self.id = agent_id
        self._endpoint = endpoint
        self._default_connector = default_connector
        self._connectors = connectors
        self._overrides: dict[str, Endpoint] = {}
        self._system = system
        self._stream = stream
        self._tools = tools
        self._mock_tools = mock_tools
        self._transport = transport

    async def call(self, request: AgentRequest) -> AgentResponse:
        endpoint = self._endpoint_for(request.options.get("connector"))
        body = self._body(endpoint, request.messages)
        shown = display_url(endpoint.url)
        async with self._transport.send(endpoint.url, body, endpoint.headers, request.deadline) as response:
            if is_event_stream(response.content_type):
                reply = await _read_stream(response, shown)
            else:
                reply = parse_json(await read_text(response), response, shown)
        return self._response(reply, endpoint, shown)

    async def aclose(self) -> None:
        await self._transport.aclose()

    def _endpoint_for(self, connector: str | None) -> Endpoint:
        """The agent's own endpoint, or the override connector's (CLI > case, resolved by the engine)."""
        if not connector or connector == self._default_connector:
            return self._endpoint
        if connector not in self._overrides:
            settings = self._connectors.get(connector)
            if settings is None:
                raise AgentCallError(f"connector {connector!r} is not defined in agenttest.yaml"
                                     f"{_defined(self._connectors)}", kind="invalid")
            try:
                self._overrides[connector] = _endpoint(f"connectors.{connector}", settings.base_url,
                                                       settings.api_key, settings.model, settings.headers,
                                                       settings.params)
            except ConfigError as exc:
                raise AgentCallError(str(exc), kind="invalid") from exc
        return self._overrides[connector]

    def _body(self, endpoint: Endpoint, messages: list[dict[str, Any]]) -> dict[str, Any]:
        body: dict[str, Any] = {**endpoint.params, "model": endpoint.model,
                                "messages": chat_messages(self._system, messages, self._mock_tools)}
        if self._tools:
            body["tools"] = self._tools
        body.pop("stream", None)
        stream_options = body.pop("stream_options", {"include_usage": True})
        if self._stream:
            body["stream"] = True
            if stream_options is not None:   # `params: {stream_options: null}` for servers that reject it
                body["stream_options"] = stream_options
        return body

    def _response(self, reply: Any, endpoint: Endpoint, shown: str) -> AgentResponse:
        if not isinstance(reply, dict):
            raise AgentCallError(f"reply from {shown} is not a chat completion: {snippet(json.dumps(reply))}")
        _raise_error_object(reply, shown)
        choices = reply.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise AgentCallError(f"reply from {shown} has no choices: {snippet(json.dumps(reply))}")
        choice = choices[0]
        message = choice.get("message") if isinstance(choice.get("message"), dict) else {}
        content = message.get("content")
        if content in (None, "") and isinstance(message.get("refusal"), str):
            content = message["refusal"]
        calls = [_tool_call(item, i) for i, item in enumerate(message.get("tool_calls") or [])]
        return AgentResponse(
            content=content,
            tool_calls=calls,
            tools=[ToolExecution(id=c.id, name=c.name, arguments=c.arguments, result=self._mock_tools[c.name])
                   for c in calls if c.name in self._mock_tools],
            finish_reason=choice.get("finish_reason") if isinstance(choice.get("finish_reason"), str) else None,
            model=reply.get("model") if isinstance(reply.get("model"), str) else endpoint.model,
            usage=_usage(reply.get("usage")),
        )


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
        out = {key: message[key] for key in _MESSAGE_KEYS if key in message}
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


def _usage(usage: Any) -> dict[str, int]:
    if not isinstance(usage, dict):
        return {}
    return {k: v for k, v in usage.items() if isinstance(v, int) and not isinstance(v, bool)}


def _raise_error_object(reply: dict[str, Any], shown: str) -> None:
    """Some servers report failures inside a 200 reply or a stream event: `{"error": {"message": …}}`."""
    error = reply.get("error")
    if error:
        message = error.get("message") if isinstance(error, dict) else error
        raise AgentCallError(f"error from {shown}: {snippet(str(message or json.dumps(error)))}")


class _StreamAssembler:
    """Rebuilds one chat completion from its chunks: content pieces appended, tool calls gathered by `index` with
    their arguments concatenated, the last finish_reason, model and usage kept."""

    def __init__(self) -> None:
        self.content: list[str] = []
        self.refusal: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.finish_reason: str | None = None
        self.model: str | None = None
        self.usage: Any = None

    def add(self, chunk: dict[str, Any]) -> None:
        if isinstance(chunk.get("model"), str) and chunk["model"]:
            self.model = chunk["model"]
        if chunk.get("usage"):
            self.usage = chunk["usage"]
        choices = chunk.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            return
        choice = choices[0]
        if choice.get("finish_reason"):
            self.finish_reason = choice["finish_reason"]
        delta = choice.get("delta") if isinstance(choice.get("delta"), dict) else {}
        if isinstance(delta.get("content"), str):
            self.content.append(delta["content"])
        if isinstance(delta.get("refusal"), str):
            self.refusal.append(delta["refusal"])
        for position, piece in enumerate(delta.get("tool_calls") or []):
            if isinstance(piece, dict):
                self._add_call_piece(piece, position)

    def _add_call_piece(self, piece: dict[str, Any], position: int) -> None:
        index = piece.get("index") if isinstance(piece.get("index"), int) else position
        call = self.calls.setdefault(index, {"id": "", "name": "", "arguments": ""})
        function = piece.get("function") if isinstance(piece.get("function"), dict) else {}
        # Ids and names arrive whole in the first piece (some servers repeat them); arguments arrive in pieces.
        if piece.get("id") and not call["id"]:
            call["id"] = str(piece["id"])
        if function.get("name") and not call["name"]:
            call["name"] = str(function["name"])
        if isinstance(function.get("arguments"), str):
            call["arguments"] += function["arguments"]

    def completion(self) -> dict[str, Any]:
        """The assembled reply in the non-streaming shape."""
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self.content) if self.content else None}
        if self.refusal:
            message["refusal"] = "".join(self.refusal)
        if self.calls:
            message["tool_calls"] = [
                {"id": call["id"] or f"call_{index}", "type": "function",
                 "function": {"name": call["name"], "arguments": call["arguments"]}}
                for index, call in sorted(self.calls.items())]
        reply: dict[str, Any] = {"choices": [{"index": 0, "message": message, "finish_reason": self.finish_reason}],
                                 "usage": self.usage}
        if self.model:
            reply["model"] = self.model
        return reply


async def _read_stream(response: Any, shown: str) -> dict[str, Any]:
    assembler = _StreamAssembler()
    done = False
    async for event in iter_sse(response):
        if event.data.strip() == "[DONE]":
            done = True
            break
        try:
            chunk = json.loads(event.data)
        except ValueError:
            raise AgentCallError(f"invalid JSON in the event stream from {shown}: {snippet(event.data)}") from None
        if not isinstance(chunk, dict):
            raise AgentCallError(f"unexpected event in the stream from {shown}: {snippet(event.data)}")
        _raise_error_object(chunk, shown)
        assembler.add(chunk)
    if not done and assembler.finish_reason is None:
        raise AgentCallError(f"the event stream from {shown} ended before the reply was complete "
                             "(no finish_reason, no [DONE])")
    return assembler.completion()


def _endpoint(where: str, base_url: str | None, api_key: str | None, model: str | None,
              headers: dict[str, str], params: dict[str, Any]) -> Endpoint:
    if not model:
        raise ConfigError(f"{where}: needs a model (set `model`, or `connector` naming one)")
    base = URL(check_url(base_url or DEFAULT_BASE_URL, f"{where}.base_url"))
    # The path is appended before any query, so Azure's `…/deployments/NAME?api-version=…` works as a base_url.
    url = str(base.with_path(base.path.rstrip("/") + "/chat/completions", keep_query=True))
    all_headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    all_headers.update(headers)
    if api_key:
        register_secret(api_key)
    register_header_secrets(all_headers)
    return Endpoint(url=url, model=model, headers=all_headers, params=dict(params))


def _defined(connectors: dict[str, ConnectorSettings]) -> str:
    return f" (defined: {', '.join(sorted(connectors))})" if connectors else " (no connectors are defined)"


def _read_system(agent_id: str, system: str | None, config_dir: Path) -> str | None:
    """`system` is a file when it names one that exists (relative to the config's directory); a value that looks
    like a path — one word containing `/` or ending in a file extension — must exist; anything else is the text."""
    if not system:
        return system
    where = f"agents.{agent_id}.system"
    looks_like_path = "\n" not in system and " " not in system.strip() and (
        "/" in system or Path(system.strip()).suffix[1:].isalnum())
    path = config_dir / system.strip() if looks_like_path else None
    if path is None or not path.is_file():
        if looks_like_path:
            raise ConfigError(f"{where}: prompt file {system.strip()} not found in {config_dir}")
        return system
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{where}: cannot read {path}: {exc}") from exc


def _read_tools(agent_id: str, tools: str | list[dict[str, Any]] | None, config_dir: Path) -> list[dict[str, Any]]:
    """The OpenAI tool schema, from a JSON file or inline; bare function definitions are wrapped."""
    where = f"agents.{agent_id}.tools"
    if tools is None:
        return []
    if isinstance(tools, str):
        path = config_dir / tools
        try:
            loaded = json.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise ConfigError(f"{where}: cannot read {path}: {exc.strerror or exc}") from exc
        except ValueError as exc:
            raise ConfigError(f"{where}: {path} is not valid JSON: {exc}") from exc
        tools = loaded.get("tools") if isinstance(loaded, dict) and "tools" in loaded else loaded
        if not isinstance(tools, list):
            raise ConfigError(f"{where}: {path} must hold a JSON array of tools")
    result = []
    for index, tool in enumerate(tools):
        if isinstance(tool, dict) and "function" not in tool and "name" in tool:
            tool = {"type": "function", "function": tool}
        if not (isinstance(tool, dict) and isinstance(tool.get("function"), dict) and tool["function"].get("name")):
            raise ConfigError(f"{where}[{index}]: expected {{type: function, function: {{name, parameters}}}}")
        result.append({"type": "function", **tool})
    return result


@register_provider("openai", OpenAISettings)
def create(agent_id: str, settings: OpenAISettings, ctx: ProviderContext) -> OpenAIAgent:
    prefix = f"agents.{agent_id}"
    connector = None
    if settings.connector:
        connector = ctx.connectors.get(settings.connector)
        if connector is None:
            raise ConfigError(f"{prefix}.connector: {settings.connector!r} is not defined under connectors"
                              f"{_defined(ctx.connectors)}")
        if connector.type != "openai":
            raise ConfigError(f"{prefix}.connector: connector type {connector.type!r} is not supported "
                              "(only 'openai')")
    if ctx.connector_override and ctx.connector_override not in ctx.connectors:
        raise ConfigError(f"--connector: {ctx.connector_override!r} is not defined under connectors"
                          f"{_defined(ctx.connectors)}")
    # Inline fields override the named connector's; headers and params merge key by key.
    endpoint = _endpoint(
        prefix,
        settings.base_url or (connector.base_url if connector else None),
        settings.api_key or (connector.api_key if connector else None),
        settings.model or (connector.model if connector else None),
        {**(connector.headers if connector else {}), **settings.headers},
        {**(connector.params if connector else {}), **settings.params},
    )
    tools = _read_tools(agent_id, settings.tools, ctx.config_dir)
    unknown_mocks = set(settings.mock_tools) - {tool["function"]["name"] for tool in tools}
    if unknown_mocks:
        raise ConfigError(f"{prefix}.mock_tools: {', '.join(sorted(unknown_mocks))} not among the agent's tools")
    return OpenAIAgent(agent_id, endpoint, default_connector=settings.connector, connectors=ctx.connectors,
                       system=_read_system(agent_id, settings.system, ctx.config_dir), stream=settings.stream,
                       tools=tools, mock_tools=settings.mock_tools,
                       transport=HttpTransport(ctx.pool_size, ctx.retries))
