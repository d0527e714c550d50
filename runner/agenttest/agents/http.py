"""`provider: http` — any JSON API: the canonical request (or a `body` template) is sent, and the reply is read
through JSONPath mappings (plain text and server-sent events too)."""

from __future__ import annotations

import json
import re
from typing import Any

from jsonpath_ng import JSONPath
from jsonpath_ng.exceptions import JSONPathError
from jsonpath_ng.ext import parse as parse_jsonpath

from ..errors import AgentCallError, ConfigError
from .base import AgentRequest, AgentResponse
from .credentials import register_header_secrets
from .registry import ProviderContext
from .replies import is_event_stream, is_json_type, json_or_text, parse_json, read_text, snippet
from .settings import HttpSettings, ResponseMapping
from .sse import iter_sse
from .transport import HttpTransport
from .urls import check_url, display_url

_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_.]*)\s*\}\}")
_TEMPLATE_ROOTS = ("agent", "messages", "options", "context", "last_user_message", "request")
# Lists a stream gathers across events (content is appended as text; every other field keeps its last value).
_GATHERED = ("tool_calls", "tools")


class HttpAgent:
    """POSTs JSON to one URL and reads the reply by its Content-Type: an event stream, JSON, or plain text."""

    def __init__(self, agent_id: str, settings: HttpSettings, paths: dict[str, JSONPath],
                 transport: HttpTransport) -> None:
        self.id = agent_id
        self._url = settings.url
        self._method = settings.method
        self._headers = dict(settings.headers)
        if settings.stream == "sse" and not any(name.lower() == "accept" for name in self._headers):
            self._headers["Accept"] = "text/event-stream"      # unless the user's own (any spelling) says otherwise
        self._body = settings.body
        self._paths = paths
        self._transport = transport

    async def call(self, request: AgentRequest) -> AgentResponse:
        """Send the canonical request (or the rendered `body` template) and read the reply through the mapping."""
        body = request.to_dict() if self._body is None else render_template(self._body, request)
        shown = display_url(self._url)
        async with self._transport.send(self._url, body, self._headers, request.deadline,
                                        method=self._method) as response:
            if is_event_stream(response.content_type):
                return await self._read_stream(response, shown)
            text = await read_text(response)
            if is_json_type(response.content_type):
                return self._mapped(parse_json(text, response, shown), shown)
        return self._mapped(json_or_text(text), shown)

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self._transport.aclose()

    def _extract(self, reply: Any) -> dict[str, Any]:
        """The canonical fields found in `reply`: one match gives the value, several give the list of them."""
        found = {}
        for name, path in self._paths.items():
            values = [match.value for match in path.find(reply)]
            if values:
                found[name] = values[0] if len(values) == 1 else values
        return found

    def _mapped(self, reply: Any, shown: str) -> AgentResponse:
        if isinstance(reply, str):
            return AgentResponse(content=reply)
        found = self._extract(reply)
        if not found and not isinstance(reply, dict) and reply is not None:
            raise AgentCallError(f"reply from {shown} is a JSON {type(reply).__name__} and no `response` path "
                                 f"matched it: {snippet(json.dumps(reply))}")
        return AgentResponse.from_raw(found)

    async def _read_stream(self, response: Any, shown: str) -> AgentResponse:
        """Each `data:` event is either JSON — read through the mapping, its content appended, its tool calls and
        tools gathered, any other field's last value kept — or plain text, appended to the content as is."""
        text: list[str] = []
        fields: dict[str, Any] = {}
        async for event in iter_sse(response):
            if event.event == "error":
                raise AgentCallError(f"error event in the stream from {shown}: {snippet(event.data)}")
            if event.data.strip() == "[DONE]":
                break
            parsed = json_or_text(event.data)
            if isinstance(parsed, str):
                text.append(parsed)
                continue
            for name, value in self._extract(parsed).items():
                if name == "content" and isinstance(value, str):
                    text.append(value)
                elif name in _GATHERED:
                    fields.setdefault(name, []).extend(value if isinstance(value, list) else [value])
                elif value is not None:
                    fields[name] = value
        if text:
            fields["content"] = "".join(text)
        return AgentResponse.from_raw(fields)


def render_template(template: Any, request: AgentRequest) -> Any:
    """`template` with its `{{name}}` placeholders filled from the request. A string that is exactly one placeholder
    becomes the value itself (any JSON type); placeholders inside longer strings are replaced by text."""
    canonical = request.to_dict()
    values = {**canonical, "request": canonical, "last_user_message": last_user_message(request.messages)}

    def lookup(name: str) -> Any:
        value: Any = values
        for part in name.split("."):
            if isinstance(value, dict):
                value = value.get(part)
            elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
                value = value[int(part)]
            else:
                return None
        return value

    def render(node: Any) -> Any:
        if isinstance(node, str):
            whole = _PLACEHOLDER.fullmatch(node.strip())
            if whole:
                return lookup(whole.group(1))
            return _PLACEHOLDER.sub(lambda m: _as_text(lookup(m.group(1))), node)
        if isinstance(node, dict):
            return {key: render(value) for key, value in node.items()}
        if isinstance(node, list):
            return [render(item) for item in node]
        return node

    return render(template)


def last_user_message(messages: list[dict[str, Any]]) -> str:
    """The text of the last user message (text parts joined by newlines)."""
    for message in reversed(messages):
        if message.get("role", "user") == "user":
            return _as_text(message.get("content"))
    return ""


def _as_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(p, dict) and p.get("type") == "text" for p in value):
        return "\n".join(str(p.get("text", "")) for p in value)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _check_template(agent_id: str, node: Any) -> None:
    if isinstance(node, str):
        for match in _PLACEHOLDER.finditer(node):
            root = match.group(1).split(".")[0]
            if root not in _TEMPLATE_ROOTS:
                raise ConfigError(f"agents.{agent_id}.body: unknown placeholder {{{{{match.group(1)}}}}} "
                                  f"(available: {', '.join(_TEMPLATE_ROOTS)})")
    elif isinstance(node, dict):
        for value in node.values():
            _check_template(agent_id, value)
    elif isinstance(node, list):
        for item in node:
            _check_template(agent_id, item)


def _compile_paths(agent_id: str, mapping: ResponseMapping) -> dict[str, JSONPath]:
    paths = {}
    for name, expression in mapping.model_dump().items():
        if expression is None:
            continue
        try:
            paths[name] = parse_jsonpath(expression)
        except JSONPathError as exc:
            raise ConfigError(f"agents.{agent_id}.response.{name}: invalid JSONPath {expression!r}: {exc}") from exc
    return paths



def create(agent_id: str, settings: HttpSettings, ctx: ProviderContext) -> HttpAgent:
    """Check the URL and the body template, register credential headers as secrets (before the run starts) and
    compile the response paths. Raises ConfigError."""
    check_url(settings.url, f"agents.{agent_id}.url")
    register_header_secrets(settings.headers)
    _check_template(agent_id, settings.body)
    return HttpAgent(agent_id, settings, _compile_paths(agent_id, settings.response),
                     HttpTransport(ctx.pool_size, ctx.retries, urls=[settings.url]))
