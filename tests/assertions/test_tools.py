"""tool_called, tool_result and tool_sequence, through the registry, plus the matching helpers."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from agenttest.agents.base import AgentResponse, ToolCall, ToolExecution
from agenttest.assertions import AssertionResult
from agenttest.assertions.tools import arguments_match, result_matches, tool_name_matches
from agenttest.errors import SuiteError

Check = Callable[..., AssertionResult]

SETUP = "agents_expense_tools__setup"


def executed(*tools: tuple[str, Any] | tuple[str, Any, Any] | tuple[str, Any, Any, str]) -> AgentResponse:
    """A response whose agent executed these (name, arguments[, result[, error]]) tools."""
    return AgentResponse(content="done", tools=[
        ToolExecution(id=f"call_{i}", name=t[0], arguments=t[1], result=t[2] if len(t) > 2 else None,
                      error=t[3] if len(t) > 3 else "")
        for i, t in enumerate(tools)])


def requested(*calls: tuple[str, Any]) -> AgentResponse:
    """A response whose model asked for these (name, arguments) calls."""
    return AgentResponse(tool_calls=[ToolCall(id=f"req_{i}", name=name, arguments=arguments)
                                     for i, (name, arguments) in enumerate(calls)])


class TestToolNameMatches:
    @pytest.mark.parametrize(("actual", "expected", "matches"), [
        (SETUP, SETUP, True),
        (SETUP, "setup", True),
        ("agents.expense.tools.setup", "setup", True),
        (SETUP, "init", False),
        (SETUP, "set", False),           # Yao matches any substring; we do not
        (SETUP, "tools", False),
        ("setup", "", False),             # Yao's "" matches everything
        ("my_setup", "setup", False),
    ])
    def test_exact_or_suffix_after_separator(self, actual: str, expected: str, matches: bool) -> None:
        assert tool_name_matches(actual, expected) is matches


class TestToolCalled:
    """Reference §2.5's verified examples first, then our own rules."""

    def test_exact_name(self, check: Check) -> None:
        result = check({"type": "tool_called", "value": SETUP}, executed((SETUP, {})))
        assert (result.passed, result.message, result.actual) == (True, f"tool '{SETUP}' was called", [SETUP])

    def test_suffix_name(self, check: Check) -> None:
        result = check({"type": "tool_called", "value": "setup"}, executed((SETUP, {})))
        assert (result.passed, result.message) == (True, "tool 'setup' was called")

    def test_other_tool(self, check: Check) -> None:
        result = check({"type": "tool_called", "value": "setup"}, executed(("agents_expense_tools__submit", {})))
        assert (result.passed, result.message) == (False, "tool 'setup' was not called, called: "
                                                          "[agents_expense_tools__submit]")

    def test_any_of_a_list(self, check: Check) -> None:
        response = executed(("agents_expense_tools__init", {}))
        result = check({"type": "tool_called", "value": ["setup", "init"]}, response)
        assert (result.passed, result.message) == (True, "tool 'init' was called")
        result = check({"type": "tool_called", "value": ["setup", "submit"]}, response)
        assert (result.passed, result.message) == (False, "none of the expected tools were called, called: "
                                                          "[agents_expense_tools__init]")

    @pytest.mark.parametrize("arguments", [
        {"action": "init", "config": {}},
        json.dumps({"action": "init", "config": {"default_currency": "USD"}}),   # reference §8.3
    ], ids=["object", "json-string"])
    def test_matching_arguments(self, check: Check, arguments: Any) -> None:
        result = check({"type": "tool_called", "value": {"name": "setup", "arguments": {"action": "init"}}},
                       executed((SETUP, arguments)))
        assert (result.passed, result.message) == (True, "tool 'setup' was called with matching arguments")

    def test_different_arguments(self, check: Check) -> None:
        result = check({"type": "tool_called", "value": {"name": "setup", "arguments": {"action": "update"}}},
                       executed((SETUP, {"action": "init", "config": {}})))
        assert (result.passed, result.message) == (False, "tool 'setup' was not called with expected arguments, "
                                                          """called with: [{"action":"init","config":{}}]""")

    def test_argument_values_are_compared_whole(self, check: Check) -> None:
        value = {"name": "setup", "arguments": {"config": {"currency": "USD"}}}
        assert not check({"type": "tool_called", "value": value},
                         executed((SETUP, {"config": {"currency": "USD", "locale": "en"}}))).passed
        assert check({"type": "tool_called", "value": value},
                     executed((SETUP, {"config": {"currency": "USD"}, "other": 1}))).passed

    def test_name_only_object(self, check: Check) -> None:
        assert check({"type": "tool_called", "value": {"name": "setup"}}, executed((SETUP, None))).message == \
            "tool 'setup' was called"

    def test_no_tools(self, check: Check) -> None:
        result = check({"type": "tool_called", "value": "setup"}, AgentResponse(content="hi"))
        assert (result.passed, result.message, result.actual) == (False, "no tools were called", [])

    def test_requested_calls_count(self, check: Check) -> None:
        response = requested(("create_expense", '{"amount": 3500}'))
        assert check({"type": "tool_called", "value": {"name": "create_expense", "arguments": {"amount": 3500}}},
                     response).passed

    def test_a_call_both_requested_and_executed_is_listed_once(self, check: Check) -> None:
        response = AgentResponse(tool_calls=[ToolCall(id="c1", name="a")],
                                 tools=[ToolExecution(id="c1", name="a"), ToolExecution(id="c2", name="b")])
        result = check({"type": "tool_called", "value": "zzz"}, response)
        assert (result.message, result.actual) == ("tool 'zzz' was not called, called: [a, b]", ["a", "b"])

    def test_negate(self, check: Check) -> None:
        result = check({"type": "tool_called", "value": "delete_all", "negate": True}, executed(("lookup", {})))
        assert (result.passed, result.message) == (True, "negated assertion passed")

    @pytest.mark.parametrize(("value", "error"), [
        (None, "tool_called 'value' must be a tool name, a list of names, or {name, arguments}, got null"),
        ("", "tool_called 'value': expected a tool name or {name, arguments}, got \"\""),
        ([], "tool_called 'value' list must hold one or more non-empty tool names"),
        (["a", 1], "tool_called 'value' list must hold one or more non-empty tool names"),
        ({"arguments": {}}, "tool_called 'value': 'name' must be a non-empty string, got null"),
        ({"name": "a", "arguments": "x"}, "tool_called 'value': 'arguments' must be an object, got \"x\""),
        ({"name": "a", "args": {}}, "tool_called 'value': unknown key\\(s\\) args \\(valid: name, arguments\\)"),
    ])
    def test_bad_values_are_load_errors(self, check: Check, value: Any, error: str) -> None:
        with pytest.raises(SuiteError, match=error):
            check({"type": "tool_called", "value": value})


class TestToolResult:
    def test_setup_006_checkpoint(self, check: Check) -> None:
        # Reference §2.5: arguments as a JSON string, a nested result, both assertions pass.
        response = executed((SETUP, '{"action": "init", "config": {"currency": "USD"}}',
                             {"success": True, "data": {"id": 7, "steps": ["a"]}}))
        assert check({"type": "tool_called", "value": {"name": "setup", "arguments": {"action": "init"}}},
                     response).passed
        result = check({"type": "tool_result", "value": {"tool": "setup", "result": {"success": True}}}, response)
        assert (result.passed, result.message) == (True, "tool 'setup' result matches expected")
        assert (result.expected, result.actual) == ({"success": True}, {"success": True, "data": {"id": 7,
                                                                                                  "steps": ["a"]}})

    def test_without_result_only_success_counts(self, check: Check) -> None:
        result = check({"type": "tool_result", "value": {"tool": "setup"}}, executed((SETUP, {}, None)))
        assert (result.passed, result.message) == (True, "tool 'setup' executed successfully")

    def test_error(self, check: Check) -> None:
        result = check({"type": "tool_result", "value": {"tool": "setup"}}, executed((SETUP, {}, None, "boom")))
        assert (result.passed, result.message) == (False, "tool 'setup' returned error: boom")

    def test_mismatch(self, check: Check) -> None:
        result = check({"type": "tool_result", "value": {"tool": "setup", "result": {"success": True}}},
                       executed((SETUP, {}, {"success": False})))
        assert (result.passed, result.message) == (False, """tool 'setup' result does not match expected """
                                                          """{"success":true}, got {"success":false}""")

    def test_only_the_first_matching_tool_is_examined(self, check: Check) -> None:
        response = executed(("setup", {}, {"n": 1}), ("setup", {}, {"n": 2}))
        assert not check({"type": "tool_result", "value": {"tool": "setup", "result": {"n": 2}}}, response).passed

    def test_not_called(self, check: Check) -> None:
        result = check({"type": "tool_result", "value": {"tool": "setup"}}, executed(("submit", {}, None)))
        assert (result.passed, result.message) == (False, "tool 'setup' was not called, called: [submit]")

    def test_no_tools(self, check: Check) -> None:
        result = check({"type": "tool_result", "value": {"tool": "setup"}}, AgentResponse(content="x"))
        assert (result.passed, result.message) == (False, "no tools were called")

    def test_requested_but_not_executed(self, check: Check) -> None:
        result = check({"type": "tool_result", "value": {"tool": "setup"}}, requested(("setup", {})))
        assert (result.passed, result.message) == (False, "no tools were called (requested but not executed: "
                                                          "[setup])")

    @pytest.mark.parametrize(("value", "error"), [
        ("setup", "tool_result 'value' must be an object {tool, result}, got \"setup\""),
        ({"result": {}}, "tool_result 'value' needs a non-empty 'tool' name"),
        ({"tool": "a", "results": {}}, "unknown key\\(s\\) results \\(valid: tool, result\\)"),
        ({"tool": "a", "result": {"id": "regex:("}}, "tool_result: invalid regex pattern '\\('"),
    ])
    def test_bad_values_are_load_errors(self, check: Check, value: Any, error: str) -> None:
        with pytest.raises(SuiteError, match=error):
            check({"type": "tool_result", "value": value})


class TestResultMatches:
    @pytest.mark.parametrize(("actual", "expected", "matches"), [
        ({"a": 1, "b": {"c": 2, "d": 3}}, {"b": {"c": 2}}, True),       # objects by subset, recursively
        ({"a": 1}, {"a": 1, "b": 2}, False),
        ('{"id": "EXP-1", "status": "ok"}', {"status": "ok"}, True),    # a JSON-string result is parsed
        ({"id": "EXP-42"}, {"id": "regex:^EXP-\\d+$"}, True),
        ({"id": "X-42"}, {"id": "regex:^EXP-"}, False),
        (5, "5", True),                                                # compared as text, like Go's %v
        (5.0, "5", True),
        (2.5, "2.5", True),
        (True, "true", True),
        (None, "null", True),
        ({"a": 1}, '{"a":1}', True),
        (5, "regex:^\\d$", True),
        (True, True, True),
        (1, True, False),                                              # a bool expectation needs a bool
        ("true", True, False),
        (5, 5.0, True),                                                # other values: deep equality
        ([1, 2], [1, 2], True),
        ([1, 2, 3], [1, 2], False),                                    # arrays are compared whole
        (None, None, True),
    ])
    def test_partial_match(self, actual: Any, expected: Any, matches: bool) -> None:
        assert result_matches(actual, expected) is matches


class TestArgumentsMatch:
    def test_rules(self) -> None:
        assert arguments_match({"a": 1, "b": 2}, {"a": 1.0})
        assert arguments_match('{"a": 1}', {"a": 1})
        assert not arguments_match("not json", {"a": 1})
        assert not arguments_match({"b": 1}, {"a": None})               # a missing key is not null
        assert arguments_match(None, None)
        assert arguments_match({}, {})


class TestToolSequence:
    def test_strict(self, check: Check) -> None:
        response = requested(("search", {}), ("create", {}))
        result = check({"type": "tool_sequence", "value": ["search", "create"]}, response)
        assert (result.passed, result.message, result.actual) == (True, "tool sequence matches (strict): "
                                                                        "[search, create]", ["search", "create"])
        result = check({"type": "tool_sequence", "value": ["create", "search"]}, response)
        assert (result.passed, result.message) == (False, "tool sequence does not match (strict): call 1 is "
                                                          "'search', expected create; expected [create, search], "
                                                          "got [search, create]")

    def test_strict_allows_nothing_else(self, check: Check) -> None:
        result = check({"type": "tool_sequence", "value": ["search"]}, requested(("search", {}), ("create", {})))
        assert (result.passed, result.message) == (False, "tool sequence does not match (strict): expected 1 calls, "
                                                          "got 2; expected [search], got [search, create]")

    def test_unordered(self, check: Check) -> None:
        response = requested(("b", {}), ("a", {}), ("b", {}))
        assert check({"type": "tool_sequence", "value": ["a", "b", "b"], "options": {"mode": "unordered"}},
                     response).passed
        result = check({"type": "tool_sequence", "value": ["a", "a", "b"], "options": {"mode": "unordered"}},
                       response)
        assert (result.passed, result.message) == (False, "tool sequence does not match (unordered): no call "
                                                          "matches a; expected [a, a, b], got [b, a, b]")

    def test_unordered_pairs_argument_constrained_items_first(self, check: Check) -> None:
        # A greedy pairing would give the only `init` call to the bare `setup` item and fail.
        response = requested(("setup", {"action": "init"}), ("setup", {"action": "other"}))
        value = ["setup", {"name": "setup", "arguments": {"action": "init"}}]
        assert check({"type": "tool_sequence", "value": value, "options": {"mode": "unordered"}}, response).passed

    def test_subset_is_an_in_order_subsequence(self, check: Check) -> None:
        response = requested(("auth", {}), ("search", {}), ("log", {}), ("create", {}), ("log", {}))
        options = {"mode": "subset"}
        assert check({"type": "tool_sequence", "value": ["search", "create"], "options": options}, response).passed
        result = check({"type": "tool_sequence", "value": ["create", "search"], "options": options}, response)
        assert (result.passed, result.message) == (False, "tool sequence does not match (subset): search (item 2) "
                                                          "was not called in order; expected [create, search], got "
                                                          "[auth, search, log, create, log]")

    def test_superset_allows_only_listed_calls(self, check: Check) -> None:
        options = {"mode": "superset"}
        assert check({"type": "tool_sequence", "value": ["search", "create", "delete"], "options": options},
                     requested(("create", {}), ("search", {}))).passed
        result = check({"type": "tool_sequence", "value": ["search"], "options": options},
                       requested(("search", {}), ("delete", {})))
        assert (result.passed, result.message) == (False, "tool sequence does not match (superset): unexpected "
                                                          "call(s) delete; expected [search], got [search, delete]")

    def test_items_with_arguments(self, check: Check) -> None:
        response = requested(("search", '{"q": "tea"}'), ("create", {"amount": 5, "note": "x"}))
        value = [{"name": "search", "arguments": {"q": "tea"}}, {"name": "create", "arguments": {"amount": 5}}]
        assert check({"type": "tool_sequence", "value": value}, response).passed
        value[1] = {"name": "create", "arguments": {"amount": 6}}
        result = check({"type": "tool_sequence", "value": value}, response)
        assert result.message == ("""tool sequence does not match (strict): call 2 is 'create', expected """
                                  """create {"amount":6}; expected [search {"q":"tea"}, create {"amount":6}], """
                                  """got [search, create]""")

    def test_requested_calls_win_over_executed_ones(self, check: Check) -> None:
        response = AgentResponse(tool_calls=[ToolCall(id="1", name="a")],
                                 tools=[ToolExecution(id="1", name="a"), ToolExecution(id="2", name="b")])
        assert check({"type": "tool_sequence", "value": ["a"]}, response).passed
        assert not check({"type": "tool_sequence", "value": ["a", "b"]}, response).passed

    def test_executed_calls_when_none_were_requested(self, check: Check) -> None:
        assert check({"type": "tool_sequence", "value": ["a", "b"]}, executed(("x__a", {}), ("b", {}))).passed

    def test_no_calls(self, check: Check) -> None:
        result = check({"type": "tool_sequence", "value": ["a"]}, AgentResponse(content="hi"))
        assert (result.passed, result.message) == (False, "tool sequence does not match (strict): expected 1 calls, "
                                                          "got 0; expected [a], got []")

    @pytest.mark.parametrize(("value", "options", "error"), [
        ([], {}, "tool_sequence 'value' must be a non-empty list"),
        ("a", {}, "tool_sequence 'value' must be a non-empty list"),
        (["a", 3], {}, "tool_sequence 'value'\\[1\\]: expected a tool name or {name, arguments}, got 3"),
        (["a"], {"mode": "loose"}, "tool_sequence option 'mode' must be one of strict, unordered, subset, "
                                   "superset, got \"loose\""),
    ])
    def test_bad_values_are_load_errors(self, check: Check, value: Any, options: dict[str, Any], error: str) -> None:
        with pytest.raises(SuiteError, match=error):
            check({"type": "tool_sequence", "value": value, "options": options})
