"""Structured assertions: the JSON in a response, a value at a path in it, its type, and its schema.

A string subject has its JSON extracted (`extract_json`: fenced blocks first, then the whole text, with repair);
an object or array subject is used as it is.

Paths: one that starts with `$` is real JSONPath (jsonpath-ng's extended syntax: `$.items[0].name`, `$..id`,
`$.items[?(@.price > 10)]`). A path that can select several values (wildcards, filters, slices, `..`, unions) gives
the list of what it matched; a path to one value gives that value, or null when it is missing. Any other path is
Yao's form, `wheres[0].like`: `.` separates keys and `[n]` indexes an array; an empty path is the whole document.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from ..bounds import TOO_DEEP
from ..errors import SuiteError
from ..secrets import shorten
from ..workspace import UnsafePath, checked_file
from .base import AssertionSpec, EvalContext, Verdict, assertion, describe, json_equal, json_type

if TYPE_CHECKING:  # jsonpath-ng and jsonschema are imported when a suite first uses them (start-up stays fast)
    from jsonpath_ng import JSONPath as JsonPathExpr
    from jsonschema import ValidationError
    from jsonschema.protocols import Validator

JSON_TYPES = ("string", "number", "boolean", "array", "object", "null")
_YAO_PART = re.compile(r"([^\[\]]*)((?:\[\d+\])*)")
_MAX_SCHEMA_ERRORS = 3
MAX_SCHEMA_BYTES = 4 * 1024 * 1024

Lookup = Callable[[Any], Any]


def compile_path(path: str | None) -> Lookup:
    """A function from a JSON document to the value at `path` (see the module docstring). Raises SuiteError."""
    if not path:
        return _whole_document
    if path.startswith("$"):
        from jsonpath_ng.ext.parser import parse as parse_jsonpath

        try:
            expr = parse_jsonpath(path)
        except Exception as exc:  # jsonpath-ng raises plain Exception as well as its own lexer/parser errors
            raise SuiteError(f"invalid JSONPath {path!r}: {exc}") from exc
        return _jsonpath_lookup(expr, _selects_one(expr))
    segments: list[str | int] = []
    for part in path.split("."):
        match = _YAO_PART.fullmatch(part)
        if match is None or part == "":
            raise SuiteError(f"invalid path {path!r}: use keys separated by '.' and [n] indexes (e.g. items[0].name),"
                             " or JSONPath starting with '$'")
        if match.group(1):
            segments.append(match.group(1))
        segments.extend(int(index) for index in re.findall(r"\d+", match.group(2)))
    return lambda document: _walk(document, segments)


def _whole_document(document: Any) -> Any:
    return document


def _jsonpath_lookup(expr: JsonPathExpr, selects_one: bool) -> Lookup:
    def lookup(document: Any) -> Any:
        values = [found.value for found in expr.find(document)]
        if selects_one:
            return values[0] if values else None
        return values

    return lookup


def _selects_one(expr: JsonPathExpr) -> bool:
    """Whether a JSONPath can match at most one value (only single fields and single indexes)."""
    from jsonpath_ng import Child, Fields, Index, Root, This

    if isinstance(expr, (Root, This)):
        return True
    if isinstance(expr, Child):
        return _selects_one(expr.left) and _selects_one(expr.right)
    if isinstance(expr, Fields):
        return len(expr.fields) == 1 and expr.fields[0] != "*"
    if isinstance(expr, Index):
        return len(expr.indices) == 1
    return False


def _walk(document: Any, segments: list[str | int]) -> Any:
    """Yao's path walk: a key needs an object, an index an array and a position in range; otherwise null."""
    for segment in segments:
        if isinstance(segment, int):
            if not isinstance(document, list) or segment >= len(document):
                return None
        elif not isinstance(document, dict) or segment not in document:
            return None
        document = document[segment]
    return document


def _json_document(output: Any, any_value: bool = False) -> tuple[Any, str | None]:
    """The JSON to look into, or why there is none. Non-string subjects other than objects and arrays count only
    with `any_value`."""
    if isinstance(output, str):
        from ..extract import extract_json  # here: loading a suite needs none of it (issue #27)

        document = extract_json(output)
        if document is None:
            return None, f"output is not valid JSON: {shorten(output, 200)}"
        return document, None
    if any_value or isinstance(output, (dict, list)):
        return output, None
    return None, f"output is not a JSON object or array, got: {json_type(output)} = {describe(output)}"


def _prepare_json_path(spec: AssertionSpec) -> None:
    spec.prepared = compile_path(spec.path)


@assertion("json_path", prepare=_prepare_json_path)
def json_path(spec: AssertionSpec, ctx: EvalContext) -> Verdict:
    """The value at `path` in the JSON of the subject equals `value`.

    `path`: JSONPath (`$.a.b[0]`) or Yao's `a.b[0]`; empty means the whole document.
    `value`: the expected value (deep equality); a list `value` against a found non-list means "equals one of".
    A missing path gives null, so `"value": null` passes when the key is absent.
    """
    document, problem = _json_document(ctx.output)
    if problem is not None:
        return Verdict(False, problem, expected=spec.value, actual=ctx.output)
    lookup: Lookup = spec.prepared
    actual = lookup(document)
    path = spec.path or ""
    if json_equal(actual, spec.value):
        return Verdict(True, f"path '{path}' equals expected value", expected=spec.value, actual=actual)
    if isinstance(spec.value, list) and not isinstance(actual, list) and any(
            json_equal(actual, candidate) for candidate in spec.value):
        return Verdict(True, f"path '{path}' equals one of expected values", expected=spec.value, actual=actual)
    return Verdict(False, f"path '{path}': expected {describe(spec.value)}, got {describe(actual)}",
                   expected=spec.value, actual=actual)


def _prepare_type(spec: AssertionSpec) -> None:
    if not isinstance(spec.value, str) or spec.value not in JSON_TYPES:
        raise SuiteError(f"type assertion 'value' must be one of {', '.join(JSON_TYPES)}, got {describe(spec.value)}")
    spec.prepared = None if spec.path is None else compile_path(spec.path)


@assertion("type", prepare=_prepare_type)
def type_of(spec: AssertionSpec, ctx: EvalContext) -> Verdict:
    """The subject, or the value at `path` in its JSON, has the JSON type `value`.

    `value`: one of string, number, boolean, array, object, null (a bool is boolean, not number).
    `path`: optional, as for `json_path`; without it the subject itself is typed (a text reply is a string).
    """
    lookup: Lookup | None = spec.prepared
    if lookup is None:
        actual = json_type(ctx.output)
        if actual == spec.value:
            return Verdict(True, f"output is of type '{spec.value}'", expected=spec.value, actual=actual)
        return Verdict(False, f"expected type '{spec.value}', got '{actual}'", expected=spec.value, actual=actual)
    document, problem = _json_document(ctx.output)
    if problem is not None:
        return Verdict(False, problem, expected=spec.value, actual=ctx.output)
    actual = json_type(lookup(document))
    if actual == spec.value:
        return Verdict(True, f"path '{spec.path}' is of type '{spec.value}'", expected=spec.value, actual=actual)
    return Verdict(False, f"path '{spec.path}': expected type '{spec.value}', got '{actual}'", expected=spec.value,
                   actual=actual)


class _SchemaCheck(NamedTuple):
    lookup: Lookup
    validator: Validator


def _prepare_json_schema(spec: AssertionSpec) -> None:
    """Load the schema (inline object, or a `.json` file relative to the suite) and check it is a valid schema."""
    schema = spec.value
    if isinstance(schema, str):
        schema = _load_schema_file(spec.base_dir / schema, schema, spec.root or spec.base_dir)
    if not isinstance(schema, dict):
        raise SuiteError(f"json_schema assertion 'value' must be a schema object or a path to a .json file, "
                         f"got {describe(spec.value)}")
    from jsonschema import SchemaError
    from jsonschema.validators import validator_for

    validator_class = validator_for(schema)
    try:
        validator_class.check_schema(schema)
    except SchemaError as exc:
        raise SuiteError(f"invalid JSON schema: {exc.message} (at {_pointer(exc.absolute_path)})") from exc
    outside = _reference_out(schema)
    if outside is not None:
        raise SuiteError(f"$ref {outside!r} leads out of the schema: agenttest follows a schema's references within "
                         "it only (put what it refers to under $defs), and reads no file or URL a schema names")
    validator = validator_class(schema, format_checker=validator_class.FORMAT_CHECKER, registry=_no_retrieval())
    spec.prepared = _SchemaCheck(compile_path(spec.path), validator)


_NOT_SCHEMAS = frozenset({"const", "enum", "examples", "default"})     # values, where a "$ref" key is data


def _reference_out(schema: dict[str, Any]) -> str | None:
    """The first `$ref` (`$dynamicRef`, `$recursiveRef`) of `schema` whose target is neither the schema nor one of
    its subschemas (by `$id`, or draft 4's `id`) nor a JSON Schema meta-schema: a file or a URL, which jsonschema
    would fetch (its deprecated automatic retrieval reads `file://` and calls any http(s) address), and a suite
    from a fork could name to publish a runner's file in its failure reasons."""
    from contextlib import suppress
    from urllib.parse import urljoin

    from jsonschema_specifications import REGISTRY as META_SCHEMAS

    ids: set[str] = set()
    refs: list[tuple[str, str]] = []
    stack: list[tuple[Any, str]] = [(schema, "")]
    while stack:
        node, base = stack.pop()
        if isinstance(node, list):
            stack.extend((item, base) for item in node)
            continue
        if not isinstance(node, dict):
            continue
        own = node.get("$id", node.get("id"))
        if isinstance(own, str):
            with suppress(ValueError):      # an $id that is no URL (`http://[::1`): nothing can refer to it
                base = urljoin(base, own).partition("#")[0]
                ids.add(base)
        refs.extend((ref, base) for key in ("$ref", "$dynamicRef", "$recursiveRef")
                    if isinstance(ref := node.get(key), str))
        stack.extend((value, base) for key, value in node.items() if key not in _NOT_SCHEMAS)
    for ref, base in refs:
        try:
            target = urljoin(base, ref).partition("#")[0]
        except ValueError:
            return ref
        if target and target not in ids and target not in META_SCHEMAS and f"{target}#" not in META_SCHEMAS:
            return ref
    return None


def _no_retrieval() -> Any:
    """A registry that fetches nothing: whatever reference `_reference_out` did not see (a keyword of a vocabulary
    it does not know) is unresolvable, naming only its URI, rather than read."""
    from referencing import Registry
    from referencing.exceptions import NoSuchResource

    def refuse(uri: str) -> Any:
        raise NoSuchResource(ref=uri)

    return Registry(retrieve=refuse)  # type: ignore[call-arg]


def _load_schema_file(path: Path, shown: str, root: Path) -> Any:
    """A schema file the suite names, read only when it is safe to (`workspace.checked_file`)."""
    try:
        real = checked_file(path, root, f"JSON schema file {shown}", limit=MAX_SCHEMA_BYTES)
        return json.loads(real.read_text(encoding="utf-8"))
    except UnsafePath as exc:
        raise SuiteError(str(exc)) from None
    except OSError as exc:
        raise SuiteError(f"cannot read JSON schema file {shown}: {exc.strerror or exc}") from exc
    except RecursionError:
        raise SuiteError(f"JSON schema file {shown} is {TOO_DEEP}") from None
    except ValueError as exc:
        raise SuiteError(f"JSON schema file {shown} is not valid JSON: {exc}") from exc


@assertion("json_schema", prepare=_prepare_json_schema)
def json_schema(spec: AssertionSpec, ctx: EvalContext) -> Verdict:
    """The JSON of the subject (or the value at `path` in it) validates against a JSON Schema.

    `value`: the schema object, or the path of a `.json` file holding it, relative to the suite file.
    `path`: optional, as for `json_path`. Failures name up to three errors with their JSON pointer.
    """
    document, problem = _json_document(ctx.output, any_value=True)
    if problem is not None:
        return Verdict(False, problem, expected=spec.value, actual=ctx.output)
    check: _SchemaCheck = spec.prepared
    instance = check.lookup(document)
    errors = list(check.validator.iter_errors(instance))
    if not errors:
        return Verdict(True, "output matches the JSON schema", expected=spec.value, actual=instance)
    shown = "; ".join(_schema_error(error) for error in errors[:_MAX_SCHEMA_ERRORS])
    more = len(errors) - _MAX_SCHEMA_ERRORS
    suffix = f" (and {more} more)" if more > 0 else ""
    return Verdict(False, f"output does not match the JSON schema: {shown}{suffix}", expected=spec.value,
                   actual=instance)


def _schema_error(error: ValidationError) -> str:
    return f"at {_pointer(error.absolute_path)}: {shorten(error.message, 200)}"


def _pointer(parts: Any) -> str:
    """A JSON pointer (RFC 6901) for a jsonschema path; the root shows as `(root)`."""
    pointer = "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)
    return pointer or "(root)"
