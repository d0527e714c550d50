"""The static assertions as plain functions: each checks a response (or any value) as its JSONL type does and
returns the Verdict with the same message; each `assert_…` form raises AssertionError with that message.

The subject of a response is what a suite's assertions see: its `data` if present, else its `content`, else a
summary of the tools it executed. Any other value (a string, an object) is checked as it is.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

from .agents.base import AgentResponse
from .assertions import REGISTRY, AssertionSpec, EvalContext, Verdict, prepare_assertion
from .errors import AgentTestError, SuiteError, Where
from .secrets import mask


def equals(subject: Any, value: Any) -> Verdict:
    """The subject deep-equals `value` (objects order-insensitive, `1 == 1.0`, `true != 1`, arrays ordered)."""
    return check("equals", subject, value)


def contains(subject: Any, value: str | list[str], *, ignore_case: bool = False) -> Verdict:
    """The text of the subject contains `value`; a list means every item."""
    return check("contains", subject, value, options={"ignore_case": ignore_case})


def not_contains(subject: Any, value: str | list[str], *, ignore_case: bool = False) -> Verdict:
    """The text of the subject contains none of `value` (one string, or a list of them)."""
    return check("not_contains", subject, value, options={"ignore_case": ignore_case})


def regex(subject: Any, pattern: str) -> Verdict:
    """`pattern` (a Python regular expression) is found anywhere in the text of the subject."""
    return check("regex", subject, pattern)


def json_path(subject: Any, path: str, value: Any) -> Verdict:
    """The JSON in the subject (fenced blocks first, then the whole text, repaired) has `value` at `path`
    (`$.a.b[0]` JSONPath, or Yao's `a.b[0]`); a list `value` means "one of"."""
    return check("json_path", subject, value, path=path)


def json_type(subject: Any, expected: str, *, path: str | None = None) -> Verdict:
    """The JSON type (`string number boolean array object null`) of the subject, or of the value at `path` in
    its JSON, is `expected`."""
    return check("type", subject, expected, path=path)


def json_schema(subject: Any, schema: dict[str, Any] | str | Path) -> Verdict:
    """The JSON in the subject validates against `schema` (an object, or the path of a `.json` file)."""
    return check("json_schema", subject, str(schema) if isinstance(schema, Path) else schema)


def tool_called(response: AgentResponse, value: str | list[str] | dict[str, Any]) -> Verdict:
    """A tool was requested or executed: `value` is a name, a list of names (any of them), or `{"name",
    "arguments"}` (every given argument deep-equal). Names match exactly or as the suffix after `__` or `.`."""
    return check("tool_called", _response(response, "tool_called"), value)


def tool_result(response: AgentResponse, tool: str, result: Any) -> Verdict:
    """The first executed `tool` had no error and its result matches `result` (objects by subset, `regex:`
    prefix for strings)."""
    return check("tool_result", _response(response, "tool_result"), {"tool": tool, "result": result})


def tool_sequence(response: AgentResponse, calls: list[str | dict[str, Any]], *, mode: str = "strict") -> Verdict:
    """The tool calls match `calls` (names or `{"name", "arguments"}`) by `mode`: `strict` (same order, nothing
    else), `unordered`, `subset` or `superset`."""
    return check("tool_sequence", _response(response, "tool_sequence"), calls, options={"mode": mode})


def latency(response: AgentResponse, max_ms: float) -> Verdict:
    """The call that gave `response` (an `agenttest.Response`) took at most `max_ms` milliseconds."""
    return check("latency", _response(response, "latency"), max_ms)


def assert_equals(subject: Any, value: Any) -> None:
    """`equals`, failing with its message."""
    __tracebackhide__ = True
    require(equals(subject, value))


def assert_contains(subject: Any, value: str | list[str], *, ignore_case: bool = False) -> None:
    """`contains`, failing with its message."""
    __tracebackhide__ = True
    require(contains(subject, value, ignore_case=ignore_case))


def assert_not_contains(subject: Any, value: str | list[str], *, ignore_case: bool = False) -> None:
    """`not_contains`, failing with its message."""
    __tracebackhide__ = True
    require(not_contains(subject, value, ignore_case=ignore_case))


def assert_regex(subject: Any, pattern: str) -> None:
    """`regex`, failing with its message."""
    __tracebackhide__ = True
    require(regex(subject, pattern))


def assert_json_path(subject: Any, path: str, value: Any) -> None:
    """`json_path`, failing with its message."""
    __tracebackhide__ = True
    require(json_path(subject, path, value))


def assert_json_type(subject: Any, expected: str, *, path: str | None = None) -> None:
    """`json_type`, failing with its message."""
    __tracebackhide__ = True
    require(json_type(subject, expected, path=path))


def assert_json_schema(subject: Any, schema: dict[str, Any] | str | Path) -> None:
    """`json_schema`, failing with its message."""
    __tracebackhide__ = True
    require(json_schema(subject, schema))


def assert_tool_called(response: AgentResponse, value: str | list[str] | dict[str, Any]) -> None:
    """`tool_called`, failing with its message."""
    __tracebackhide__ = True
    require(tool_called(response, value))


def assert_tool_result(response: AgentResponse, tool: str, result: Any) -> None:
    """`tool_result`, failing with its message."""
    __tracebackhide__ = True
    require(tool_result(response, tool, result))


def assert_tool_sequence(response: AgentResponse, calls: list[str | dict[str, Any]], *, mode: str = "strict") -> None:
    """`tool_sequence`, failing with its message."""
    __tracebackhide__ = True
    require(tool_sequence(response, calls, mode=mode))


def assert_latency(response: AgentResponse, max_ms: float) -> None:
    """`latency`, failing with its message."""
    __tracebackhide__ = True
    require(latency(response, max_ms))


def require(verdict: Verdict) -> None:
    """AssertionError with the verdict's message (secrets masked) when it did not pass."""
    __tracebackhide__ = True
    if not verdict.passed:
        raise AssertionError(mask(verdict.message))


def check(kind: str, subject: Any, value: Any, *, path: str | None = None,
          options: dict[str, Any] | None = None) -> Verdict:
    """The verdict of the static assertion type `kind` on `subject`. AgentTestError when `value`, `path` or an
    option is not what the type accepts (the same message a suite file would get)."""
    __tracebackhide__ = True
    spec = prepared(AssertionSpec(type=kind, value=value, path=path, options=dict(options or {}),
                                  base_dir=Path.cwd()))
    outcome = REGISTRY[kind].evaluate(spec, evaluation_context(subject))
    if inspect.isawaitable(outcome):  # only judges are asynchronous, and they are not checked here
        raise TypeError(f"{kind!r} is not a static assertion")
    return outcome


def prepared(spec: AssertionSpec, fields: dict[str, str] | None = None) -> AssertionSpec:
    """`spec` checked and prepared as the suite loader does; AgentTestError naming the field, in the caller's
    words (`fields` maps the suite's field names to them)."""
    __tracebackhide__ = True
    try:
        prepare_assertion(spec)
    except SuiteError as exc:
        field = exc.where.field
        if field and fields:
            head = next((key for key in sorted(fields, key=len, reverse=True)
                         if field == key or field.startswith(f"{key}.")), None)
            field = fields[head] + field[len(head):] if head else field
        raise AgentTestError(exc.message, Where(field=field)) from None
    return spec


def evaluation_context(subject: Any, **extra: Any) -> EvalContext:
    """What an assertion looks at: a response (with what was sent and how long it took, when it is an
    `agenttest.Response`), or any other value as the subject itself."""
    if isinstance(subject, AgentResponse):
        return EvalContext(response=subject, input=getattr(subject, "input", None),
                           latency_ms=getattr(subject, "latency_ms", None) or 0.0, **extra)
    return _ValueContext(response=AgentResponse(), value=subject, **extra)


class _ValueContext(EvalContext):
    """The context of a plain value: the value is the subject."""

    def __init__(self, response: AgentResponse, value: Any, **extra: Any) -> None:
        super().__init__(response=response, **extra)
        self.value = value

    @property
    def output(self) -> Any:
        return self.value


def _response(value: Any, kind: str) -> AgentResponse:
    __tracebackhide__ = True
    if not isinstance(value, AgentResponse):
        raise TypeError(f"{kind} checks an agent's response (what Agent.call returns), got {type(value).__name__}")
    if kind == "latency" and getattr(value, "latency_ms", None) is None:
        raise TypeError("latency needs the response of an Agent.call (it knows how long the call took)")
    return value
