"""equals, contains, not_contains and regex, through the registry."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from agenttest.agents.base import AgentResponse
from agenttest.assertions import AssertionResult, AssertionSpec, prepare_assertion
from agenttest.errors import SuiteError

Check = Callable[..., AssertionResult]


class TestEquals:
    def test_objects_are_equal_whatever_the_key_order(self, check: Check) -> None:
        result = check({"type": "equals", "value": {"b": [1, 2], "a": 1.0}},
                       AgentResponse(data={"a": 1, "b": [1, 2]}))
        assert (result.passed, result.message) == (True, "values are equal")
        assert result.expected == {"b": [1, 2], "a": 1.0}
        assert result.actual == {"a": 1, "b": [1, 2]}

    def test_failure_shows_both_values_as_json(self, check: Check) -> None:
        result = check({"type": "equals", "value": "5"}, AgentResponse(data=5))
        assert (result.passed, result.message) == (False, 'expected "5", got 5')

    def test_bool_is_not_a_number(self, check: Check) -> None:
        assert not check({"type": "equals", "value": 1}, AgentResponse(data=True)).passed

    def test_array_order_matters(self, check: Check) -> None:
        result = check({"type": "equals", "value": ["db", "web"]}, AgentResponse(data=["web", "db"]))
        assert (result.passed, result.message) == (False, 'expected ["db","web"], got ["web","db"]')

    def test_empty_type_means_equals(self, check: Check) -> None:
        assert check({"type": "", "value": "hi"}, "hi").passed
        assert check({"type": "", "value": "hi"}, "hello").message == 'expected "hi", got "hello"'

    def test_without_value_only_null_passes(self, check: Check) -> None:
        assert check({"type": "equals"}, None).passed
        assert not check({"type": "equals"}, "text").passed


class TestContains:
    def test_substring(self, check: Check) -> None:
        result = check({"type": "contains", "value": "Hello"}, "Hello from T001")
        assert (result.passed, result.message) == (True, "output contains 'Hello'")

    def test_missing_substring(self, check: Check) -> None:
        result = check({"type": "contains", "value": "IMPOSSIBLE_STRING_12345"}, "Hello")
        assert (result.passed, result.message) == (False, "output does not contain 'IMPOSSIBLE_STRING_12345'")
        assert result.expected == "IMPOSSIBLE_STRING_12345"
        assert result.actual == "Hello"

    def test_object_subject_is_searched_as_json(self, check: Check) -> None:
        # Yao's verified example: contains "success" on {"status": "success"}.
        assert check({"type": "contains", "value": "success"}, AgentResponse(data={"status": "success"})).passed
        assert check({"type": "contains", "value": '"status":"success"'},
                     AgentResponse(data={"status": "success"})).passed

    def test_list_needs_every_item_and_names_the_missing_ones(self, check: Check) -> None:
        assert check({"type": "contains", "value": ["css", "color-primary"]}, "css with --color-primary").passed
        result = check({"type": "contains", "value": ["css", "palette", "blue"]}, "css only")
        assert (result.passed, result.message) == (False, "output does not contain 'palette', 'blue'")

    def test_non_string_value_is_matched_as_json_text(self, check: Check) -> None:
        assert check({"type": "contains", "value": 5}, "5 items").passed
        assert check({"type": "contains", "value": True}, "it is true").passed

    def test_ignore_case(self, check: Check) -> None:
        assert not check({"type": "contains", "value": "hello"}, "Hello").passed
        assert check({"type": "contains", "value": "hello", "options": {"ignore_case": True}}, "HELLO").passed

    def test_negate(self, check: Check) -> None:
        # Yao's verified example: negate contains "error" on "success message".
        result = check({"type": "contains", "value": "error", "negate": True}, "success message")
        assert (result.passed, result.message, result.negate) == (True, "negated assertion passed", True)
        result = check({"type": "contains", "value": "success", "negate": True}, "success message")
        assert (result.passed, result.message) == (False, "negated: output contains 'success'")

    def test_message_override_replaces_the_failure_message(self, check: Check) -> None:
        result = check({"type": "contains", "value": "x", "message": "should mention x"}, "nothing")
        assert (result.passed, result.message) == (False, "should mention x")

    def test_no_output_is_empty_text(self, check: Check) -> None:
        assert not check({"type": "contains", "value": "a"}, None).passed

    @pytest.mark.parametrize(("value", "options", "error"), [
        (None, {}, "contains assertion needs a 'value'"),
        ([], {}, "contains assertion 'value' is an empty list"),
        ("x", {"ignore_case": "yes"}, "option 'ignore_case' must be true or false"),
    ])
    def test_bad_values_are_load_errors(self, check: Check, value: object, options: dict[str, object],
                                        error: str) -> None:
        with pytest.raises(SuiteError, match=error):
            check({"type": "contains", "value": value, "options": options}, "x")


class TestNotContains:
    def test_absent(self, check: Check) -> None:
        result = check({"type": "not_contains", "value": "error"}, "all good")
        assert (result.passed, result.message) == (True, "output does not contain 'error'")

    def test_present(self, check: Check) -> None:
        result = check({"type": "not_contains", "value": "I'm sorry"}, "I'm sorry, I can't")
        assert (result.passed, result.message) == (False, "output should not contain 'I'm sorry'")

    def test_list_means_none_of_them_and_names_those_found(self, check: Check) -> None:
        assert check({"type": "not_contains", "value": ["error", "sorry"]}, "fine").passed
        result = check({"type": "not_contains", "value": ["error", "sorry", "oops"]}, "sorry, oops")
        assert (result.passed, result.message) == (False, "output should not contain 'sorry', 'oops'")

    def test_ignore_case(self, check: Check) -> None:
        assert not check({"type": "not_contains", "value": "error", "options": {"ignore_case": True}},
                         "An ERROR occurred").passed

    def test_needs_a_value(self, check: Check) -> None:
        with pytest.raises(SuiteError, match="not_contains assertion needs a 'value'"):
            check({"type": "not_contains"}, "x")


class TestRegex:
    def test_inline_case_flag(self, check: Check) -> None:
        result = check({"type": "regex", "value": "(?i)hello"}, "Hello there")
        assert (result.passed, result.message) == (True, "output matches pattern '(?i)hello'")

    def test_search_is_unanchored(self, check: Check) -> None:
        assert check({"type": "regex", "value": r"\d{3}"}, "order 12345 placed").passed
        assert not check({"type": "regex", "value": r"^\d{3}$"}, "order 12345 placed").passed

    def test_no_match(self, check: Check) -> None:
        result = check({"type": "regex", "value": "(?i)confirm"}, "What size?")
        assert (result.passed, result.message) == (False, "output does not match pattern '(?i)confirm'")
        assert (result.expected, result.actual) == ("(?i)confirm", "What size?")

    def test_object_subject_is_searched_as_json(self, check: Check) -> None:
        assert check({"type": "regex", "value": r'"count":\s*5'}, AgentResponse(data={"count": 5})).passed

    def test_invalid_pattern_is_a_load_error_naming_it(self, check: Check) -> None:
        with pytest.raises(SuiteError, match=r"invalid regex pattern '\(unclosed': missing \), unterminated"):
            check({"type": "regex", "value": "(unclosed"}, "x")

    def test_pattern_must_be_a_string(self, check: Check) -> None:
        with pytest.raises(SuiteError, match="regex assertion 'value' must be a string pattern, got 5"):
            check({"type": "regex", "value": 5}, "x")

    def test_pattern_is_compiled_once_at_load(self, check: Check) -> None:
        spec = AssertionSpec(type="regex", value="a+")
        prepare_assertion(spec)
        assert spec.prepared.pattern == "a+"
