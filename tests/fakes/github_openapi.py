"""GitHub's published OpenAPI description as a checker of what crosses the wire in the pull-request loop's tests.

The few operations agenttest calls are kept in tests/data/github-openapi/ with the commit they came from (README
there). Each reply of the REST emulator is checked against its operation's declared response (an error status the
operation does not declare against `basic-error`, the shape every GitHub error has), and each request the client
sends against the operation's query parameters and request body. OpenAPI 3.0's `nullable` becomes JSON Schema's
`null` type, and the formats the replies use (`date-time`, `uri`, `email`) are checked, so that a field GitHub says
is a date or a URL cannot be anything else.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from jsonschema import Draft4Validator, FormatChecker

SPEC = Path(__file__).parent.parent / "data" / "github-openapi" / "api.github.com.2022-11-28.subset.json"
PER_PAGE_MAX = 100      # "The number of results per page (max 100)": said in the description's text only

_RFC3339 = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)")
FORMATS = FormatChecker(formats=())
FORMATS.checks("date-time")(lambda value: not isinstance(value, str) or bool(_RFC3339.fullmatch(value)))
FORMATS.checks("uri")(lambda value: not isinstance(value, str) or bool(urlsplit(value).scheme and
                                                                        urlsplit(value).netloc))
FORMATS.checks("email")(lambda value: not isinstance(value, str) or "@" in value)


def json_schema(node: Any) -> Any:
    """An OpenAPI 3.0 schema (any part of the document) as JSON Schema: `nullable: true` becomes `anyOf` the schema
    and `null`, which keeps an `enum` or a `oneOf` beside it meaning what it meant."""
    if isinstance(node, list):
        return [json_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    converted = {key: json_schema(value) for key, value in node.items() if key != "nullable"}
    if node.get("nullable") is True:
        return {"anyOf": [converted, {"type": "null"}]}
    return converted


class Contract:
    """The kept operations by operationId, each reply and request checked against them."""

    def __init__(self, path: Path = SPEC) -> None:
        self.document = json.loads(path.read_text(encoding="utf-8"))
        self.source = self.document["info"]["x-subset-of"]
        self._components = json_schema(self.document["components"])
        self.operations: dict[str, dict[str, Any]] = {
            operation["operationId"]: operation
            for item in self.document["paths"].values() for operation in item.values()}

    def response_problems(self, operation_id: str, status: int, body: Any,
                          headers: Mapping[str, str]) -> list[str]:
        """Why this reply is not one GitHub's description allows (empty when it is)."""
        where = f"{operation_id} → {status}"
        responses = self.operations[operation_id]["responses"]
        declared = responses.get(str(status))
        if declared is None:
            if status < 400:
                return [f"{where}: status not declared (declared: {sorted(responses)})"]
            declared = {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/basic-error"}}}}
        declared = self._resolved(declared)
        problems = [f"{where}: no {name} header" for name in (declared.get("headers") or {})
                    if name != "Link" and name not in headers]
        schema = ((declared.get("content") or {}).get("application/json") or {}).get("schema")
        if schema is None:
            return problems + ([f"{where}: a body where none is declared"] if body not in (None, b"", "") else [])
        return problems + self._problems(schema, body, where)

    def request_problems(self, operation_id: str, query: Mapping[str, str], body: Any) -> list[str]:
        """Why GitHub would not read this request as agenttest means it (empty when it would)."""
        operation = self.operations[operation_id]
        parameters = {parameter["name"]: parameter for parameter in map(self._resolved, operation["parameters"])
                      if parameter["in"] == "query"}
        problems = []
        for name, value in query.items():
            parameter = parameters.get(name)
            if parameter is None:
                problems.append(f"{operation_id}: unknown query parameter {name!r}")
                continue
            problems += self._problems(parameter["schema"], _typed(value, parameter["schema"]),
                                       f"{operation_id}: ?{name}={value}")
            if name == "per_page" and value.isdigit() and int(value) > PER_PAGE_MAX:
                problems.append(f"{operation_id}: per_page={value} is above GitHub's maximum of {PER_PAGE_MAX}")
        request_body = operation.get("requestBody")
        if request_body is None:
            return problems + ([f"{operation_id}: a request body where none is taken"] if body is not None else [])
        schema = request_body["content"]["application/json"]["schema"]
        return problems + self._problems(schema, body, f"{operation_id}: request body")

    def _resolved(self, node: dict[str, Any]) -> dict[str, Any]:
        """A response or parameter object, its `$ref` (to components/responses, /parameters, /headers) followed."""
        while "$ref" in node:
            target: Any = self.document
            for part in node["$ref"].removeprefix("#/").split("/"):
                target = target[part]
            node = target
        return node

    def _problems(self, schema: dict[str, Any], instance: Any, where: str) -> list[str]:
        root = {**json_schema(copy.deepcopy(schema)), "components": self._components}
        validator = Draft4Validator(root, format_checker=FORMATS)
        return [f"{where}: {'/'.join(map(str, error.absolute_path)) or '(top)'}: {error.message}"
                for error in validator.iter_errors(instance)]


def _typed(value: str, schema: Mapping[str, Any]) -> Any:
    """A query string value as the type its schema says (left a string when it is no such value, to be refused)."""
    kinds = [schema.get("type")] + [option.get("type") for option in schema.get("oneOf") or []]
    if "integer" in kinds and re.fullmatch(r"-?\d+", value):
        return int(value)
    if "boolean" in kinds and value in ("true", "false"):
        return value == "true"
    return value
