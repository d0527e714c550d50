"""Tool assertions: which tools the agent called, with which arguments, what they returned, and in what order.

A tool name matches exactly, or as the part after `__` (MCP's `server__tool`) or `.` (`agents.expense.setup`), so
`setup` matches `agents_expense_tools__setup`. Unlike Yao, it never matches a mere substring: `set` does not match
`setup`, and an empty name matches nothing. Expected arguments are a partial object: every given key must be present
and deep-equal; the call's arguments may arrive as a JSON string.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, get_args

from ..agents.base import AgentResponse, parse_arguments
from ..errors import SuiteError
from . import regex_limit
from .base import AssertionSpec, EvalContext, Verdict, assertion, describe, json_equal, subject_text

if TYPE_CHECKING:
    from .option_models import SequenceOptions

SequenceMode = Literal["strict", "unordered", "subset", "superset"]
SEQUENCE_MODES: tuple[str, ...] = get_args(SequenceMode)
_REGEX_PREFIX = "regex:"


@dataclass(frozen=True)
class _Call:
    name: str
    arguments: Any


@dataclass(frozen=True)
class _Expected:
    """One expected call: a name, and optionally the arguments it must have been given."""

    name: str
    arguments: dict[str, Any] | None = None

    def matches_name(self, call: _Call) -> bool:
        return tool_name_matches(call.name, self.name)

    def matches(self, call: _Call) -> bool:
        return self.matches_name(call) and arguments_match(call.arguments, self.arguments)

    def label(self) -> str:
        return self.name if self.arguments is None else f"{self.name} {describe(self.arguments)}"


def tool_name_matches(actual: str, expected: str) -> bool:
    """`actual` is `expected`, or ends with `__expected` or `.expected`. An empty `expected` matches nothing."""
    return bool(expected) and (actual == expected or actual.endswith(f"__{expected}")
                               or actual.endswith(f".{expected}"))


def arguments_match(actual: Any, expected: dict[str, Any] | None) -> bool:
    """Every expected argument is present in `actual` (an object or its JSON string) and deep-equal."""
    if expected is None:
        return True
    arguments = parse_arguments(actual)
    return isinstance(arguments, dict) and all(
        key in arguments and json_equal(arguments[key], value) for key, value in expected.items())


def _expected_call(item: Any, where: str) -> _Expected:
    """A name, or `{name, arguments}`, as written in a case."""
    if isinstance(item, str) and item:
        return _Expected(item)
    if isinstance(item, dict):
        name, arguments = item.get("name"), item.get("arguments")
        unknown = sorted(set(item) - {"name", "arguments"})
        if unknown:
            raise SuiteError(f"{where}: unknown key(s) {', '.join(unknown)} (valid: name, arguments)")
        if not isinstance(name, str) or not name:
            raise SuiteError(f"{where}: 'name' must be a non-empty string, got {describe(name)}")
        if arguments is not None and not isinstance(arguments, dict):
            raise SuiteError(f"{where}: 'arguments' must be an object, got {describe(arguments)}")
        return _Expected(name, arguments)
    raise SuiteError(f"{where}: expected a tool name or {{name, arguments}}, got {describe(item)}")


def _requested(response: AgentResponse) -> list[_Call]:
    return [_Call(call.name, call.arguments) for call in response.tool_calls]


def _executed(response: AgentResponse) -> list[_Call]:
    return [_Call(tool.name, tool.arguments) for tool in response.tools]


def _requested_or_executed(response: AgentResponse) -> list[_Call]:
    """Requested calls, then the executed ones not among them (a call usually shows up in both)."""
    requested = {(call.id, call.name) for call in response.tool_calls}
    extra = [tool for tool in response.tools if (tool.id, tool.name) not in requested]
    return _requested(response) + [_Call(tool.name, tool.arguments) for tool in extra]


def _names(calls: list[_Call]) -> list[str]:
    return [call.name for call in calls]


def _show_names(names: list[str]) -> str:
    return f"[{', '.join(names)}]"


def _prepare_tool_called(spec: AssertionSpec) -> None:
    value = spec.value
    if isinstance(value, list):
        if not value or not all(isinstance(item, str) and item for item in value):
            raise SuiteError("tool_called 'value' list must hold one or more non-empty tool names")
        spec.prepared = [_Expected(item) for item in value]
    elif isinstance(value, (str, dict)):
        spec.prepared = [_expected_call(value, "tool_called 'value'")]
    else:
        raise SuiteError(f"tool_called 'value' must be a tool name, a list of names, or {{name, arguments}}, "
                         f"got {describe(value)}")


@assertion("tool_called", prepare=_prepare_tool_called)
def tool_called(spec: AssertionSpec, ctx: EvalContext) -> Verdict:
    """A tool was requested by the model or executed by the agent.

    `value`: a tool name; a list of names (any one of them suffices); or `{name, arguments}`, where every given
    argument must be present and deep-equal (other arguments may differ).
    """
    calls = _requested_or_executed(ctx.response)
    names = _names(calls)
    if not calls:
        return Verdict(False, "no tools were called", expected=spec.value, actual=names)
    wanted: list[_Expected] = spec.prepared
    for item in wanted:
        named = [call for call in calls if item.matches_name(call)]
        if named and item.arguments is None:
            return Verdict(True, f"tool '{item.name}' was called", expected=spec.value, actual=names)
        if any(item.matches(call) for call in named):
            return Verdict(True, f"tool '{item.name}' was called with matching arguments", expected=spec.value,
                           actual=names)
        if named:
            given = describe([parse_arguments(call.arguments) for call in named])
            return Verdict(False, f"tool '{item.name}' was not called with expected arguments, called with: {given}",
                           expected=spec.value, actual=names)
    if isinstance(spec.value, list):
        message = f"none of the expected tools were called, called: {_show_names(names)}"
    else:
        message = f"tool '{wanted[0].name}' was not called, called: {_show_names(names)}"
    return Verdict(False, message, expected=spec.value, actual=names)


def _prepare_tool_result(spec: AssertionSpec) -> None:
    value = spec.value
    if not isinstance(value, dict):
        raise SuiteError(f"tool_result 'value' must be an object {{tool, result}}, got {describe(value)}")
    unknown = sorted(set(value) - {"tool", "result"})
    if unknown:
        raise SuiteError(f"tool_result 'value': unknown key(s) {', '.join(unknown)} (valid: tool, result)")
    if not isinstance(value.get("tool"), str) or not value["tool"]:
        raise SuiteError("tool_result 'value' needs a non-empty 'tool' name")
    _check_result_patterns(value.get("result"))


def _check_result_patterns(expected: Any) -> None:
    """Every `regex:` string in an expected result must compile (a load error otherwise)."""
    if isinstance(expected, dict):
        for item in expected.values():
            _check_result_patterns(item)
    elif isinstance(expected, str) and expected.startswith(_REGEX_PREFIX):
        pattern = expected[len(_REGEX_PREFIX):]
        try:
            re.compile(pattern)
        except re.error as exc:
            raise SuiteError(f"tool_result: invalid regex pattern {pattern!r}: {exc}") from exc


@assertion("tool_result", prepare=_prepare_tool_result)
def tool_result(spec: AssertionSpec, ctx: EvalContext) -> Verdict:
    """The first executed tool named `tool` ran without error and its result matches `result`.

    `value.tool`: the tool name. `value.result` (optional): matched partially — an object needs only the given keys
    (recursively; a JSON-string result is parsed first); a string is compared with the result's text (the number 5
    matches "5"), or searched as a pattern with a `regex:` prefix; a bool must be that bool; anything else is
    compared by deep equality. Without `result`, running without error suffices.
    """
    name: str = spec.value["tool"]
    expected = spec.value.get("result")
    executed = _executed(ctx.response)
    if not executed:
        requested = _names(_requested(ctx.response))
        detail = f" (requested but not executed: {_show_names(requested)})" if requested else ""
        return Verdict(False, f"no tools were called{detail}", expected=expected)
    tool = next((t for t in ctx.response.tools if tool_name_matches(t.name, name)), None)
    if tool is None:
        return Verdict(False, f"tool '{name}' was not called, called: {_show_names(_names(executed))}",
                       expected=expected, actual=_names(executed))
    if tool.error:
        return Verdict(False, f"tool '{name}' returned error: {tool.error}", expected=expected, actual=tool.result)
    if expected is None:
        return Verdict(True, f"tool '{name}' executed successfully", expected=expected, actual=tool.result)
    if result_matches(tool.result, expected):
        return Verdict(True, f"tool '{name}' result matches expected", expected=expected, actual=tool.result)
    return Verdict(False, f"tool '{name}' result does not match expected {describe(expected)}, got "
                          f"{describe(tool.result)}", expected=expected, actual=tool.result)


def result_matches(actual: Any, expected: Any) -> bool:
    """Yao's partial match of a tool result (see `tool_result`)."""
    if isinstance(expected, dict):
        actual = parse_arguments(actual)
        return isinstance(actual, dict) and all(
            key in actual and result_matches(actual[key], value) for key, value in expected.items())
    if isinstance(expected, str):
        text = _result_text(actual)
        if expected.startswith(_REGEX_PREFIX):
            return regex_limit.search(re.compile(expected[len(_REGEX_PREFIX):]), text) is not None
        return text == expected
    if isinstance(expected, bool):
        return isinstance(actual, bool) and actual == expected
    return json_equal(actual, expected)


def _result_text(value: Any) -> str:
    """A result as text for string comparison: numbers without a spurious `.0`, null as `null`, else compact JSON."""
    if value is None:
        return "null"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return subject_text(value)


class _SequenceCheck(NamedTuple):
    mode: str
    expected: list[_Expected]


def _prepare_tool_sequence(spec: AssertionSpec) -> None:
    if not isinstance(spec.value, list) or not spec.value:
        raise SuiteError(f"tool_sequence 'value' must be a non-empty list of tool names or {{name, arguments}}, "
                         f"got {describe(spec.value)}")
    options: SequenceOptions = spec.typed_options
    expected = [_expected_call(item, f"tool_sequence 'value'[{i}]") for i, item in enumerate(spec.value)]
    spec.prepared = _SequenceCheck(options.mode, expected)


@assertion("tool_sequence", prepare=_prepare_tool_sequence, options=".option_models:SequenceOptions")
def tool_sequence(spec: AssertionSpec, ctx: EvalContext) -> Verdict:
    """The agent's tool calls follow `value`, a list of names or `{name, arguments}` items, as `options.mode` says.

    The calls are those the model requested, or, when it requested none, those the agent executed.
    """
    check: _SequenceCheck = spec.prepared
    calls = _requested(ctx.response) or _executed(ctx.response)
    names = _names(calls)
    problem = _SEQUENCE_RULES[check.mode](check.expected, calls)
    if problem is None:
        return Verdict(True, f"tool sequence matches ({check.mode}): {_show_names(names)}", expected=spec.value,
                       actual=names)
    expected = _show_names([item.label() for item in check.expected])
    return Verdict(False, f"tool sequence does not match ({check.mode}): {problem}; expected {expected}, "
                          f"got {_show_names(names)}", expected=spec.value, actual=names)


def _strict(expected: list[_Expected], calls: list[_Call]) -> str | None:
    for position, (item, call) in enumerate(zip(expected, calls, strict=False), start=1):
        if not item.matches(call):
            return f"call {position} is '{call.name}', expected {item.label()}"
    if len(calls) != len(expected):
        return f"expected {len(expected)} calls, got {len(calls)}"
    return None


def _unordered(expected: list[_Expected], calls: list[_Call]) -> str | None:
    if len(calls) != len(expected):
        return f"expected {len(expected)} calls, got {len(calls)}"
    missing = _unmatched(expected, calls)
    if missing:
        return f"no call matches {', '.join(expected[i].label() for i in missing)}"
    return None


def _subset(expected: list[_Expected], calls: list[_Call]) -> str | None:
    position = 0
    for number, item in enumerate(expected, start=1):
        while position < len(calls) and not item.matches(calls[position]):
            position += 1
        if position == len(calls):
            return f"{item.label()} (item {number}) was not called in order"
        position += 1
    return None


def _superset(expected: list[_Expected], calls: list[_Call]) -> str | None:
    unexpected = [call.name for call in calls if not any(item.matches(call) for item in expected)]
    if unexpected:
        return f"unexpected call(s) {', '.join(unexpected)}"
    return None


def _unmatched(expected: list[_Expected], calls: list[_Call]) -> list[int]:
    """Indexes of expected items left without a call in a maximum one-to-one matching (Kuhn's algorithm).

    Greedy pairing is not enough: `[setup {action: init}, setup]` against `[setup(init), setup(x)]` needs the
    argument-constrained item to get the only call that fits it.
    """
    owner: dict[int, int] = {}

    def assign(item: int, seen: set[int]) -> bool:
        for index, call in enumerate(calls):
            if index not in seen and expected[item].matches(call):
                seen.add(index)
                if index not in owner or assign(owner[index], seen):
                    owner[index] = item
                    return True
        return False

    return [item for item in range(len(expected)) if not assign(item, set())]


_SEQUENCE_RULES: dict[str, Callable[[list[_Expected], list[_Call]], str | None]] = {
    "strict": _strict,
    "unordered": _unordered,
    "subset": _subset,
    "superset": _superset,
}
