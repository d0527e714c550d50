"""The canonical request and response every provider speaks, and the Agent interface providers implement."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..bounds import TOO_DEEP, too_deep
from ..errors import AgentCallError

# A token count above this is no count (a bug or a hostile agent), and is left out like a negative one.
_MAX_TOKENS = 10**12

# The keys of a chat message in the canonical request (OpenAI's Chat Completions message shape).
MESSAGE_KEYS = ("role", "content", "name", "tool_call_id", "tool_calls", "refusal")


@dataclass
class AgentRequest:
    """What every agent receives, whatever its transport (docs/configuration.md)."""

    agent: str
    messages: list[dict[str, Any]]
    options: dict[str, Any] = field(default_factory=dict)
    context: dict[str, Any] = field(default_factory=dict)
    # When the case's time runs out (time.monotonic()); providers must not retry or wait past it. Not sent.
    deadline: float | None = None
    # Who is asked: the agent under test (`target`), or a helper (`judge`, `simulator`, `generator`). Not sent.
    role: str = "target"
    # The case the call is made for, as (file or generator, id): where record/replay keeps it. Not sent.
    case: tuple[str, str] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The request as agents receive it (without the deadline)."""
        return {"agent": self.agent, "messages": self.messages, "options": self.options, "context": self.context}


@dataclass
class ToolCall:
    """A call the model asked for. `arguments` is an object, or the raw string when it is not JSON."""

    id: str
    name: str
    arguments: Any = None

    def to_dict(self) -> dict[str, Any]:
        """The call as the report and assertions show it."""
        return {"id": self.id, "name": self.name, "arguments": self.arguments}


@dataclass
class ToolExecution:
    """A call the agent executed, with its result (Yao's `response.tools`)."""

    id: str
    name: str
    arguments: Any = None
    result: Any = None
    error: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The execution as the report and assertions show it."""
        return {"id": self.id, "name": self.name, "arguments": self.arguments, "result": self.result,
                "error": self.error}


@dataclass
class AgentResponse:
    """What every agent gives back (docs/configuration.md)."""

    content: Any = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    tools: list[ToolExecution] = field(default_factory=list)
    data: Any = None
    awaiting_input: bool = False
    finish_reason: str | None = None
    model: str | None = None
    usage: dict[str, int] = field(default_factory=dict)

    @classmethod
    def from_raw(cls, raw: Any) -> AgentResponse:
        """Read a canonical response: a bare string becomes `content`. Raises AgentCallError on a bad shape."""
        if isinstance(raw, str):
            return cls(content=raw)
        if raw is None:
            return cls()
        if not isinstance(raw, dict):
            raise AgentCallError(f"agent returned {type(raw).__name__}, expected an object or a string")
        if too_deep(raw):
            raise AgentCallError(f"agent reply is {TOO_DEEP}")
        usage = raw.get("usage") or {}
        if not isinstance(usage, dict):
            raise AgentCallError("agent response field 'usage' must be an object")
        return cls(
            content=raw.get("content"),
            tool_calls=[_tool_call(item, i) for i, item in enumerate(_list(raw, "tool_calls"))],
            tools=[_tool_execution(item, i) for i, item in enumerate(_list(raw, "tools"))],
            data=raw.get("data"),
            awaiting_input=bool(raw.get("awaiting_input", False)),
            finish_reason=_opt_str(raw.get("finish_reason")),
            model=_opt_str(raw.get("model")),
            usage=usage_counts(usage),
        )

    def to_dict(self) -> dict[str, Any]:
        """The response in its canonical JSON shape (docs/configuration.md), as script assertions receive it."""
        return {
            "content": self.content,
            "tool_calls": [c.to_dict() for c in self.tool_calls],
            "tools": [t.to_dict() for t in self.tools],
            "data": self.data,
            "awaiting_input": self.awaiting_input,
            "finish_reason": self.finish_reason,
            "model": self.model,
            "usage": self.usage,
        }

    def subject(self) -> Any:
        """What assertions check: `data` if present, else `content`, else a summary of executed tools."""
        if not _is_empty(self.data):
            return self.data
        if not _is_empty(self.content):
            return self.content
        if self.tools:
            return _tools_summary(self.tools)
        return None


class Agent(Protocol):
    """A transport to one agent: one canonical request in, one canonical response out."""

    id: str

    async def call(self, request: AgentRequest) -> AgentResponse:
        """Call the agent. Raise AgentCallError for failures the user should see as a verdict."""
        ...

    async def aclose(self) -> None:
        """Release pooled resources (connections, processes)."""
        ...


def parse_arguments(arguments: Any) -> Any:
    """Tool arguments as an object when they are a JSON string of one; otherwise as given. AgentCallError when
    they nest too deeply for any walk."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return arguments
        except RecursionError:
            raise AgentCallError(f"tool call arguments are {TOO_DEEP}") from None
    if too_deep(arguments):
        raise AgentCallError(f"tool call arguments are {TOO_DEEP}")
    return arguments


def usage_counts(usage: Any) -> dict[str, int]:
    """The token counters of a usage object: its integer fields (nested details, flags and anything else dropped);
    `{}` when it is not an object."""
    if not isinstance(usage, dict):
        return {}
    return {key: value for key, value in usage.items()
            if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= _MAX_TOKENS}


def _list(raw: dict[str, Any], key: str) -> list[Any]:
    value = raw.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise AgentCallError(f"agent response field '{key}' must be an array")
    return value


def _tool_call(item: Any, index: int) -> ToolCall:
    if not isinstance(item, dict):
        raise AgentCallError(f"agent response tool_calls[{index}] must be an object")
    function = item.get("function") if isinstance(item.get("function"), dict) else {}
    name = item.get("name", function.get("name", ""))
    arguments = item.get("arguments", function.get("arguments"))
    return ToolCall(id=str(item.get("id") or f"call_{index}"), name=str(name or ""),
                    arguments=parse_arguments(arguments))


def _tool_execution(item: Any, index: int) -> ToolExecution:
    if not isinstance(item, dict):
        raise AgentCallError(f"agent response tools[{index}] must be an object")
    name = item.get("name", item.get("tool", ""))
    error = item.get("error") or ""
    return ToolExecution(
        id=str(item.get("id") or item.get("toolcall_id") or f"call_{index}"),
        name=str(name or ""),
        arguments=parse_arguments(item.get("arguments")),
        result=item.get("result"),
        error=error if isinstance(error, str) else json.dumps(error),
    )


def _opt_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _is_empty(value: Any) -> bool:
    return value is None or value == "" or value == {} or value == []


def _tools_summary(tools: list[ToolExecution]) -> str:
    """Yao's summary of executed tools: a result message, else `[tool: action|success|failed]` items."""
    for tool in tools:
        if isinstance(tool.result, dict) and isinstance(tool.result.get("message"), str) and tool.result["message"]:
            return tool.result["message"]
    parts = []
    for tool in tools:
        name = tool.name or "unknown"
        result = tool.result if isinstance(tool.result, dict) else {}
        if isinstance(result.get("action"), str):
            parts.append(f"[{name}: {result['action']}]")
        elif isinstance(result.get("success"), bool):
            parts.append(f"[{name}: {'success' if result['success'] else 'failed'}]")
        else:
            parts.append(f"[{name}]")
    return " ".join(parts)
