"""`provider: openai` — a model behind an OpenAI-compatible Chat Completions endpoint (OpenAI, Azure OpenAI, vLLM,
Ollama, LiteLLM, …), with an optional system prompt, tools and mocked tool results."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from yarl import URL

from ..errors import AgentCallError, ConfigError
from ..secrets import register_secret
from .base import AgentRequest, AgentResponse
from .credentials import register_header_secrets
from .openai_chat import chat_messages, read_completion, tool_step_messages
from .openai_files import read_system, read_tools
from .registry import ProviderContext
from .replies import is_event_stream, read_json
from .tool_loop import ToolKit, combined, steps_exceeded
from .transport import HttpTransport
from .urls import check_url, display_url

if TYPE_CHECKING:       # an agent of the plain shapes is read without its settings model (plain_settings.PlainSettings)
    from .settings import ConnectorSettings, OpenAISettings

DEFAULT_BASE_URL = "https://api.openai.com/v1"


@dataclass(frozen=True)
class Endpoint:
    """Where and how one chat completion is requested."""

    url: str
    model: str
    headers: dict[str, str] = field(default_factory=dict)
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Connectors:
    """The connectors a case (`options.connector`) or `-c` may switch the agent to, built before the run starts:
    each one's endpoint, or why it cannot serve this agent."""

    endpoints: dict[str, Endpoint] = field(default_factory=dict)
    unusable: dict[str, str] = field(default_factory=dict)

    def endpoint(self, name: str) -> Endpoint:
        """The endpoint of connector `name`. Raises AgentCallError (the case is invalid) when there is none."""
        if name in self.endpoints:
            return self.endpoints[name]
        why = self.unusable.get(name) or f"connector {name!r} is not defined in agenttest.yaml" \
                                         f"{_defined([*self.endpoints, *self.unusable])}"
        raise AgentCallError(why, kind="invalid")


class OpenAIAgent:
    """Turns the canonical request into Chat Completions requests and the replies (JSON or SSE) back."""

    def __init__(self, agent_id: str, endpoint: Endpoint, *, default_connector: str | None, connectors: Connectors,
                 system: str | None, stream: bool, tools: list[dict[str, Any]], toolkit: ToolKit,
                 max_tool_steps: int, tool_callables: dict[str, str], transport: HttpTransport) -> None:
        self.id = agent_id
        self._endpoint = endpoint
        self._default_connector = default_connector
        self._connectors = connectors
        self._system = system
        self._stream = stream
        self._tools = tools
        self._toolkit = toolkit
        self._max_tool_steps = max_tool_steps
        self._tool_callables = tool_callables
        self._transport = transport

    async def call(self, request: AgentRequest) -> AgentResponse:
        """The model's answer, on the agent's endpoint or on the connector the request's options name. While it
        calls tools that all have a mock or a callable, their results are sent back and it is asked again."""
        endpoint = self._endpoint_for(request.options.get("connector"))
        messages = chat_messages(self._system, request.messages, self._toolkit.mocks)
        steps: list[AgentResponse] = []
        while True:
            step = await self._complete(endpoint, messages, request.deadline, first_step=not steps)
            if not steps and not step.tool_calls:
                return step         # what `combined` makes of one step that called no tool: itself
            step.tools = await self._toolkit.execute(step.tool_calls, request)
            steps.append(step)
            if not self._toolkit.goes_on(step):
                return combined(steps)
            if len(steps) == self._max_tool_steps:
                raise steps_exceeded(steps, self._max_tool_steps)
            messages = [*messages, *tool_step_messages(step)]

    async def _complete(self, endpoint: Endpoint, messages: list[dict[str, Any]], deadline: float | None, *,
                        first_step: bool) -> AgentResponse:
        """One chat completion."""
        body = self._body(endpoint, messages, first_step)
        shown = display_url(endpoint.url)
        try:
            async with self._transport.send(endpoint.url, body, endpoint.headers, deadline) as response:
                if is_event_stream(response.content_type):
                    from .openai_stream import read_stream  # here: a run without streaming needs none of it

                    reply = await read_stream(response, shown)
                else:
                    reply = await read_json(response, shown)
        except AgentCallError as exc:
            if exc.status == 404 and _without_version(endpoint.url):
                exc.message += (" — base_url usually ends in /v1 (https://host/v1, http://localhost:11434/v1): "
                                "requests go to <base_url>/chat/completions")
            raise
        return read_completion(reply, shown, model=endpoint.model)

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self._transport.aclose()

    def identity(self) -> dict[str, Any]:
        """What makes this agent answer the way it does — endpoint, model, parameters, prompt, tools — without its
        credentials (for cache keys)."""
        return {"url": self._endpoint.url, "model": self._endpoint.model, "params": self._endpoint.params,
                "system": self._system, "tools": self._tools, "mock_tools": self._toolkit.mocks,
                "tool_callables": self._tool_callables, "max_tool_steps": self._max_tool_steps}

    def _endpoint_for(self, connector: str | None) -> Endpoint:
        """The agent's own endpoint, or the override connector's (CLI > case, resolved by the engine)."""
        if not connector or connector == self._default_connector:
            return self._endpoint
        return self._connectors.endpoint(connector)

    def _body(self, endpoint: Endpoint, messages: list[dict[str, Any]], first_step: bool) -> dict[str, Any]:
        body: dict[str, Any] = {**endpoint.params, "model": endpoint.model, "messages": messages}
        if self._tools:
            body["tools"] = self._tools
        if not first_step and _forces_a_call(body.get("tool_choice")):
            del body["tool_choice"]     # as agent SDKs do: else the model could never answer in text
        body.pop("stream", None)
        stream_options = body.pop("stream_options", {"include_usage": True})
        if self._stream:
            body["stream"] = True
            if stream_options is not None:   # `params: {stream_options: null}` for servers that reject it
                body["stream_options"] = stream_options
        return body


def build_endpoint(where: str, base_url: str | None, api_key: str | None, model: str | None,
                   headers: dict[str, str], params: dict[str, Any]) -> Endpoint:
    """The endpoint these settings describe, its credentials registered as secrets first (even when the settings
    turn out invalid). Raises ConfigError naming `where`."""
    all_headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    all_headers.update(headers)
    if api_key:
        register_secret(api_key)
    register_header_secrets(all_headers)
    if not model:
        raise ConfigError(f"{where}: needs a model (set `model`, or `connector` naming one)")
    base = URL(check_url(base_url or DEFAULT_BASE_URL, f"{where}.base_url"))
    # The path is appended before any query, so Azure's `…/deployments/NAME?api-version=…` works as a base_url.
    url = str(base.with_path(base.path.rstrip("/") + "/chat/completions", keep_query=True))
    return Endpoint(url=url, model=model, headers=all_headers, params=dict(params))


def build_connectors(connectors: dict[str, ConnectorSettings]) -> Connectors:
    """Every connector as an endpoint, or why it cannot be one; either way its credentials are registered now."""
    built = Connectors()
    for name, settings in connectors.items():
        where = f"connectors.{name}"
        try:
            endpoint = build_endpoint(where, settings.base_url, settings.api_key, settings.model, settings.headers,
                                      settings.params)
        except ConfigError as exc:
            built.unusable[name] = exc.message
            continue
        if settings.type != "openai":
            built.unusable[name] = f"{where}: connector type {settings.type!r} is not supported (only 'openai')"
        else:
            built.endpoints[name] = endpoint
    return built


def _without_version(url: str) -> bool:
    """Whether a chat completions URL lacks the API version most OpenAI-compatible servers serve it under (`/v1`;
    Azure's deployment URLs have their own form)."""
    path = URL(url).path
    return not re.search(r"/v\d+(beta)?/", path) and "/deployments/" not in path


def _forces_a_call(tool_choice: Any) -> bool:
    """`required`, or one named function: the model must call a tool, whatever it got back."""
    return tool_choice == "required" or isinstance(tool_choice, dict)


def _defined(names: Iterable[str]) -> str:
    listed = sorted(names)
    return f" (defined: {', '.join(listed)})" if listed else " (no connectors are defined)"



def create(agent_id: str, settings: OpenAISettings, ctx: ProviderContext) -> OpenAIAgent:
    """Build the agent with every endpoint it could be switched to. Building them here, before any case runs,
    registers every credential while the log is still ours: in GitHub Actions an `::add-mask::` printed later would
    land inside the run's stop-commands block, where the runner shows it verbatim."""
    return build_openai_agent(agent_id, settings, ctx, system=read_system(agent_id, settings.system, ctx.config_dir))


def build_openai_agent(agent_id: str, settings: OpenAISettings, ctx: ProviderContext, *,
                       system: str | None) -> OpenAIAgent:
    """An OpenAIAgent from its settings and the text of its system prompt (built-in helpers bring their own)."""
    prefix = f"agents.{agent_id}"
    connectors = build_connectors(ctx.connectors)
    connector = None
    if settings.connector:
        connector = ctx.connectors.get(settings.connector)
        if connector is None:
            raise ConfigError(f"{prefix}.connector: {settings.connector!r} is not defined under connectors"
                              f"{_defined(ctx.connectors)}")
        if connector.type != "openai":
            raise ConfigError(f"{prefix}.connector: connector type {connector.type!r} is not supported "
                              "(only 'openai')")
    override = ctx.connector_override
    if override and override not in ctx.connectors:
        raise ConfigError(f"--connector: {override!r} is not defined under connectors{_defined(ctx.connectors)}")
    if override and override != settings.connector and override in connectors.unusable:
        raise ConfigError(f"--connector {override}: {connectors.unusable[override]}")
    # Inline fields override the named connector's; headers and params merge key by key.
    endpoint = build_endpoint(
        prefix,
        settings.base_url or (connector.base_url if connector else None),
        settings.api_key or (connector.api_key if connector else None),
        settings.model or (connector.model if connector else None),
        {**(connector.headers if connector else {}), **settings.headers},
        {**(connector.params if connector else {}), **settings.params},
    )
    tools = read_tools(agent_id, settings.tools, ctx.config_dir)
    return OpenAIAgent(agent_id, endpoint, default_connector=settings.connector, connectors=connectors,
                       system=system, stream=settings.stream, tools=tools,
                       toolkit=build_toolkit(prefix, settings, tools, ctx.config_dir),
                       max_tool_steps=settings.max_tool_steps, tool_callables=settings.tool_callables,
                       transport=HttpTransport(ctx.pool_size, ctx.retries,
                                               urls=[endpoint.url, *(e.url for e in connectors.endpoints.values())]))


def build_toolkit(prefix: str, settings: OpenAISettings, tools: list[dict[str, Any]], config_dir: Path) -> ToolKit:
    """The mocks and callables that answer the agent's tool calls, each naming one of its tools. Raises ConfigError
    naming the key."""
    names = {tool["function"]["name"] for tool in tools}
    for key, answered in (("mock_tools", settings.mock_tools), ("tool_callables", settings.tool_callables)):
        unknown = set(answered) - names
        if unknown:
            raise ConfigError(f"{prefix}.{key}: {', '.join(sorted(unknown))} not among the agent's tools "
                              f"({', '.join(sorted(names)) or 'it has none'})")
    both = set(settings.mock_tools) & set(settings.tool_callables)
    if both:
        raise ConfigError(f"{prefix}.tool_callables: {', '.join(sorted(both))} also in mock_tools: give each tool "
                          "a fixed result or a callable, not both")
    functions: dict[str, Any] = {}
    if settings.tool_callables:     # most agents have none: their run loads no importer of Python callables
        from .python import import_callable

        functions = {name: import_callable(f"{prefix}.tool_callables.{name}", reference, config_dir)
                     for name, reference in settings.tool_callables.items()}
    return ToolKit(mocks=settings.mock_tools, functions=functions)
