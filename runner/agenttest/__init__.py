"""agenttest: test AI agents in CI — and from Python.

The public API (docs/python.md) is what this module exports: `load_config`, `get_agent` (an agent with `call` and
`acall`), the canonical `Response`, the assertions as functions returning a `Verdict` (`contains`, `json_path`,
`tool_called`, …, and `judge` for an LLM judge) with their `assert_…` forms, and the errors they raise. Names are
imported on first use, so `import agenttest` stays cheap (the CLI and the pytest plugin start up without them).
"""

from __future__ import annotations

__version__ = "0.1.0"

TYPE_CHECKING = False       # not typing's: `agenttest --version` imports nothing it does not need (issue #27)
if TYPE_CHECKING:
    from typing import Any

    from .agents.base import ToolCall, ToolExecution
    from .api import Agent, Config, Response, ajudge, get_agent, judge, load_config
    from .assertions.base import Verdict
    from .checks import (
        assert_contains,
        assert_equals,
        assert_json_path,
        assert_json_schema,
        assert_json_type,
        assert_latency,
        assert_not_contains,
        assert_regex,
        assert_tool_called,
        assert_tool_result,
        assert_tool_sequence,
        contains,
        equals,
        json_path,
        json_schema,
        json_type,
        latency,
        not_contains,
        regex,
        tool_called,
        tool_result,
        tool_sequence,
    )
    from .errors import AgentCallError, AgentTestError, ConfigError, HelperError

__all__ = [
    "Agent",
    "AgentCallError",
    "AgentTestError",
    "Config",
    "ConfigError",
    "HelperError",
    "Response",
    "ToolCall",
    "ToolExecution",
    "Verdict",
    "__version__",
    "ajudge",
    "assert_contains",
    "assert_equals",
    "assert_json_path",
    "assert_json_schema",
    "assert_json_type",
    "assert_latency",
    "assert_not_contains",
    "assert_regex",
    "assert_tool_called",
    "assert_tool_result",
    "assert_tool_sequence",
    "contains",
    "equals",
    "get_agent",
    "json_path",
    "json_schema",
    "json_type",
    "judge",
    "latency",
    "load_config",
    "not_contains",
    "regex",
    "tool_called",
    "tool_result",
    "tool_sequence",
]

# Where each public name lives (imported on first use).
_CHECKS = ("equals", "contains", "not_contains", "regex", "json_path", "json_type", "json_schema", "tool_called",
           "tool_result", "tool_sequence", "latency")
_EXPORTS: dict[str, str] = {
    **dict.fromkeys(("Agent", "Config", "Response", "ajudge", "get_agent", "judge", "load_config"), "api"),
    "Verdict": "assertions.base",
    "ToolCall": "agents.base",
    "ToolExecution": "agents.base",
    **dict.fromkeys(_CHECKS, "checks"),
    **dict.fromkeys((f"assert_{name}" for name in _CHECKS), "checks"),
    **dict.fromkeys(("AgentCallError", "AgentTestError", "ConfigError", "HelperError"), "errors"),
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'agenttest' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
