"""json_path, type and json_schema, through the registry, plus the path helpers."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agenttest.agents.base import AgentResponse
from agenttest.assertions import AssertionResult, structured
from agenttest.assertions.base import json_type
from agenttest.assertions.structured import compile_path
from agenttest.errors import SuiteError

Check = Callable[..., AssertionResult]
FENCE = "```"


def data(value: Any) -> AgentResponse:
    return AgentResponse(data=value)


class TestYaoVerifiedExamples:
    """Reference §2.5 (assert_test.go) and the documentation fixtures of §8.2."""

    def test_array_equals(self, check: Check) -> None:
        result = check({"type": "json_path", "path": "search_types", "value": ["db"]}, data({"search_types": ["db"]}))
        assert (result.passed, result.message) == (True, "path 'search_types' equals expected value")

    def test_array_order_matters(self, check: Check) -> None:
        result = check({"type": "json_path", "path": "search_types", "value": ["db", "web"]},
                       data({"search_types": ["web", "db"]}))
        assert (result.passed, result.message) == (False, """path 'search_types': expected ["db","web"], """
                                                          """got ["web","db"]""")
        assert (result.expected, result.actual) == (["db", "web"], ["web", "db"])

    def test_list_value_against_a_scalar_means_one_of(self, check: Check) -> None:
        result = check({"type": "json_path", "path": "status", "value": ["active", "pending"]},
                       data({"status": "active"}))
        assert (result.passed, result.message) == (True, "path 'status' equals one of expected values")
        result = check({"type": "json_path", "path": "status", "value": ["active", "pending"]},
                       data({"status": "inactive"}))
        assert (result.passed, result.message) == (False, """path 'status': expected ["active","pending"], """
                                                          """got "inactive\"""")

    def test_nested_key_and_index(self, check: Check) -> None:
        document = {"result": {"count": 5}, "items": [{"name": "first"}]}
        assert check({"type": "json_path", "path": "result.count", "value": 5}, data(document)).passed
        assert check({"type": "json_path", "path": "items[0].name", "value": "first"}, data(document)).passed

    def test_documentation_fixtures_on_text_replies(self, check: Check) -> None:
        assert check({"type": "json_path", "path": "need_search", "value": True},
                     f'{FENCE}json\n{{"need_search": true}}\n{FENCE}').passed
        assert check({"type": "json_path", "path": "from", "value": "users"}, '{"from": "users", "wheres": []}').passed
        assert check({"type": "json_path", "path": "error", "value": ["missing_schema", "missing_query"]},
                     '{"error": "missing_query"}').passed


class TestJsonPath:
    def test_jsonpath_syntax(self, check: Check) -> None:
        document = {"items": [{"name": "a", "price": 5}, {"name": "b", "price": 20}]}
        assert check({"type": "json_path", "path": "$.items[1].name", "value": "b"}, data(document)).passed
        assert check({"type": "json_path", "path": "$.items[-1].price", "value": 20}, data(document)).passed
        assert check({"type": "json_path", "path": "$", "value": document}, data(document)).passed

    def test_paths_that_select_several_values_give_a_list(self, check: Check) -> None:
        document = {"items": [{"name": "a", "price": 5}, {"name": "b", "price": 20}]}
        assert check({"type": "json_path", "path": "$.items[*].name", "value": ["a", "b"]}, data(document)).passed
        assert check({"type": "json_path", "path": "$..price", "value": [5, 20]}, data(document)).passed
        assert check({"type": "json_path", "path": "$.items[?(@.price > 10)].name", "value": ["b"]},
                     data(document)).passed
        assert check({"type": "json_path", "path": "$.items[?(@.price > 99)].name", "value": []},
                     data(document)).passed

    def test_missing_path_is_null(self, check: Check) -> None:
        result = check({"type": "json_path", "path": "a.b", "value": 1}, data({"a": {}}))
        assert (result.passed, result.message, result.actual) == (False, "path 'a.b': expected 1, got null", None)
        assert check({"type": "json_path", "path": "a.b", "value": None}, data({"a": {}})).passed
        assert check({"type": "json_path", "path": "$.a.b", "value": None}, data({"a": {}})).passed

    def test_yao_path_needs_the_right_container(self, check: Check) -> None:
        assert check({"type": "json_path", "path": "a[0]", "value": None}, data({"a": {"0": 1}})).passed
        assert check({"type": "json_path", "path": "a.0", "value": 1}, data({"a": {"0": 1}})).passed
        assert check({"type": "json_path", "path": "a[5]", "value": None}, data({"a": [1]})).passed

    def test_empty_path_is_the_whole_document(self, check: Check) -> None:
        assert check({"type": "json_path", "value": {"a": 1}}, '{"a": 1}').passed

    def test_repaired_json_in_prose(self, check: Check) -> None:
        reply = f"Here you go:\n{FENCE}json\n{{'total': 12.5, 'currency': 'USD',}}\n{FENCE}"
        assert check({"type": "json_path", "path": "$.total", "value": 12.5}, reply).passed

    def test_text_without_json(self, check: Check) -> None:
        result = check({"type": "json_path", "path": "a", "value": 1}, "I cannot answer that.")
        assert (result.passed, result.message) == (False, "output is not valid JSON: I cannot answer that.")

    def test_subject_that_is_neither_text_nor_container(self, check: Check) -> None:
        result = check({"type": "json_path", "path": "a", "value": 1}, data(5))
        assert (result.passed, result.message) == (False, "output is not a JSON object or array, got: number = 5")
        result = check({"type": "json_path", "path": "a", "value": 1}, None)
        assert result.message == "output is not a JSON object or array, got: null = null"

    @pytest.mark.parametrize(("path", "error"), [
        ("$.a(", "invalid JSONPath '\\$.a\\('"),
        ("a..b", "invalid path 'a..b'"),
        ("a[x]", "invalid path 'a\\[x\\]'"),
    ])
    def test_bad_path_is_a_load_error(self, check: Check, path: str, error: str) -> None:
        with pytest.raises(SuiteError, match=error):
            check({"type": "json_path", "path": path, "value": 1}, "{}")


class TestCompilePath:
    @pytest.mark.parametrize(("path", "expected"), [
        (None, {"wheres": [{"like": "x%"}]}),
        ("", {"wheres": [{"like": "x%"}]}),
        ("wheres[0].like", "x%"),
        ("wheres.like", None),
        ("$.wheres[0].like", "x%"),
        ("$.wheres[*].like", ["x%"]),
        ("$.nothing", None),
    ])
    def test_lookup(self, path: str | None, expected: Any) -> None:
        assert compile_path(path)({"wheres": [{"like": "x%"}]}) == expected

    def test_yao_index_at_the_start(self) -> None:
        assert compile_path("[1][0]")([[0], [7]]) == 7


class TestType:
    @pytest.mark.parametrize(("value", "name"), [
        ("text", "string"), (5, "number"), (2.5, "number"), (True, "boolean"), ([1], "array"), ({"a": 1}, "object"),
        (None, "null"),
    ])
    def test_json_type(self, value: Any, name: str) -> None:
        assert json_type(value) == name

    def test_subject_type(self, check: Check) -> None:
        result = check({"type": "type", "value": "object"}, data({"a": 1}))
        assert (result.passed, result.message, result.actual) == (True, "output is of type 'object'", "object")
        result = check({"type": "type", "value": "object"}, '{"a": 1}')
        assert (result.passed, result.message, result.actual) == (False, "expected type 'object', got 'string'",
                                                                   "string")

    def test_bool_is_not_a_number(self, check: Check) -> None:
        assert check({"type": "type", "value": "number"}, data(True)).message == \
            "expected type 'number', got 'boolean'"

    def test_path_types_the_value_in_the_extracted_json(self, check: Check) -> None:
        reply = '{"count": 3, "ok": true, "items": [], "note": null}'
        assert check({"type": "type", "path": "$.count", "value": "number"}, reply).passed
        assert check({"type": "type", "path": "items", "value": "array"}, reply).passed
        assert check({"type": "type", "path": "note", "value": "null"}, reply).passed
        assert check({"type": "type", "path": "", "value": "object"}, reply).passed
        result = check({"type": "type", "path": "$.ok", "value": "string"}, reply)
        assert (result.passed, result.message) == (False, "path '$.ok': expected type 'string', got 'boolean'")
        assert check({"type": "type", "path": "$.count", "value": "number"}, data({"count": 3})).message == \
            "path '$.count' is of type 'number'"

    def test_path_on_text_without_json(self, check: Check) -> None:
        result = check({"type": "type", "path": "a", "value": "number"}, "plain words")
        assert (result.passed, result.message) == (False, "output is not valid JSON: plain words")

    @pytest.mark.parametrize("value", [None, "integer", 5])
    def test_value_must_be_a_json_type_name(self, check: Check, value: Any) -> None:
        with pytest.raises(SuiteError, match="type assertion 'value' must be one of string, number, boolean, "
                                             "array, object, null"):
            check({"type": "type", "value": value}, "x")


PERSON = {"type": "object", "required": ["name", "age"],
          "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0},
                         "tags": {"type": "array", "items": {"type": "string"}}}}


class TestJsonSchema:
    def test_valid(self, check: Check) -> None:
        result = check({"type": "json_schema", "value": PERSON}, f'{FENCE}json\n{{"name": "Ann", "age": 3}}\n{FENCE}')
        assert (result.passed, result.message, result.actual) == (True, "output matches the JSON schema",
                                                                  {"name": "Ann", "age": 3})

    def test_errors_name_their_json_pointer(self, check: Check) -> None:
        result = check({"type": "json_schema", "value": PERSON}, data({"name": "Ann", "age": -1, "tags": ["a", 2]}))
        assert result.passed is False
        assert result.message == ("output does not match the JSON schema: at /age: -1 is less than the minimum of 0; "
                                  "at /tags/1: 2 is not of type 'string'")

    def test_at_most_three_errors_are_shown(self, check: Check) -> None:
        schema = {"type": "array", "items": {"type": "string"}}
        result = check({"type": "json_schema", "value": schema}, data([1, 2, 3, 4, 5]))
        assert result.message == ("output does not match the JSON schema: at /0: 1 is not of type 'string'; "
                                  "at /1: 2 is not of type 'string'; at /2: 3 is not of type 'string' (and 2 more)")

    def test_root_error(self, check: Check) -> None:
        result = check({"type": "json_schema", "value": PERSON}, data({"name": "Ann"}))
        assert result.message == "output does not match the JSON schema: at (root): 'age' is a required property"

    def test_schema_file_relative_to_the_suite(self, check: Check, tmp_path: Path) -> None:
        (tmp_path / "schemas").mkdir()
        (tmp_path / "schemas" / "person.json").write_text(json.dumps(PERSON))
        assertion = {"type": "json_schema", "value": "schemas/person.json"}
        assert check(assertion, '{"name": "Ann", "age": 30}', base_dir=tmp_path).passed
        result = check(assertion, '{"name": "Ann"}', base_dir=tmp_path)
        assert (result.passed, result.expected) == (False, "schemas/person.json")

    def test_path_validates_part_of_the_document(self, check: Check) -> None:
        assert check({"type": "json_schema", "path": "$.person", "value": PERSON},
                     data({"person": {"name": "Ann", "age": 1}})).passed

    def test_non_json_text(self, check: Check) -> None:
        result = check({"type": "json_schema", "value": PERSON}, "no JSON here")
        assert (result.passed, result.message) == (False, "output is not valid JSON: no JSON here")

    def test_missing_schema_file(self, check: Check, tmp_path: Path) -> None:
        with pytest.raises(SuiteError, match=r"^JSON schema file missing\.json not found \(missing\.json\)$"):
            check({"type": "json_schema", "value": "missing.json"}, "{}", base_dir=tmp_path)

    def test_schema_file_that_is_not_json(self, check: Check, tmp_path: Path) -> None:
        (tmp_path / "bad.json").write_text("{nope")
        with pytest.raises(SuiteError, match=r"JSON schema file .*bad\.json is not valid JSON"):
            check({"type": "json_schema", "value": "bad.json"}, "{}", base_dir=tmp_path)

    def test_invalid_schema(self, check: Check) -> None:
        with pytest.raises(SuiteError, match="invalid JSON schema: 'strin' is not valid under any of the given "
                                             "schemas \\(at /properties/a/type\\)"):
            check({"type": "json_schema", "value": {"properties": {"a": {"type": "strin"}}}}, "{}")

    def test_references_are_followed_within_the_schema(self, check: Check) -> None:
        schema = {"$id": "https://example.test/order.json", "$defs": {"name": {"type": "string"}},
                  "properties": {"name": {"$ref": "#/$defs/name"}, "item": {"$ref": "item.json"},
                                 "meta": {"$ref": "https://json-schema.org/draft/2020-12/schema"}},
                  "items": {"$id": "item.json", "type": "object", "required": ["sku"]},
                  "const_is_data": {"const": {"$ref": "file:///etc/passwd"}}}
        assert check({"type": "json_schema", "value": schema},
                     data({"name": "Ann", "item": {"sku": 1}, "meta": {"type": "string"}})).passed
        result = check({"type": "json_schema", "value": schema}, data({"name": 5, "item": {}}))
        assert result.message == ("output does not match the JSON schema: at /name: 5 is not of type 'string'; "
                                  "at /item: 'sku' is a required property")

    @pytest.mark.parametrize("ref", ["file:///etc/passwd#/x", "http://127.0.0.1:9/s.json", "other.json",
                                     "../secrets.json#/a", "http://[::1"])
    def test_a_reference_out_of_the_schema_is_a_suite_error_and_nothing_is_read(self, check: Check,
                                                                               ref: str) -> None:
        schema = {"properties": {"a": {"$ref": ref}}}
        with pytest.raises(SuiteError, match=r"^\$ref .* leads out of the schema: agenttest follows a schema's "
                                             r"references within it only"):
            check({"type": "json_schema", "value": schema}, "{}")

    def test_a_reference_it_does_not_see_is_unresolvable_not_fetched(self, check: Check, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
        """Behind the check of `$ref`s, the validator's registry fetches nothing (a keyword of another vocabulary)."""
        secret = tmp_path / "secret.json"
        secret.write_text('{"token": "s3cret-in-a-file"}')
        monkeypatch.setattr(structured, "_reference_out", lambda schema: None)     # as if it went unseen
        result = check({"type": "json_schema", "value": {"$ref": f"{secret.as_uri()}#/nope"}}, "{}")
        assert result.passed is False and "Unresolvable" in result.message and secret.as_uri() in result.message
        assert "s3cret-in-a-file" not in result.message

    def test_value_must_be_a_schema_or_a_path(self, check: Check) -> None:
        with pytest.raises(SuiteError, match="json_schema assertion 'value' must be a schema object or a path"):
            check({"type": "json_schema", "value": 5}, "{}")
