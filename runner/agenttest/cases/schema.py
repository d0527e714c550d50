"""The suite file format at its edge: pydantic models of a test-case entry and of an assertion entry.

Validation is strict (no coercion: `"negate": "true"` is an error) and closed (unknown keys are errors with a
"did you mean" hint). Key matching is case-sensitive (Yao's is not). `None` is accepted wherever a key is optional
and means "not given". `describe_errors` turns a pydantic ValidationError into our one-line field messages.
"""

from __future__ import annotations

import types
import typing
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, WithJsonSchema, field_validator, model_validator
from pydantic_core import PydanticCustomError

from ..assertions.base import json_type
from ..durations import parse_duration
from ..hints import did_you_mean

_MESSAGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "anyOf": [{"required": ["content"]}, {"required": ["tool_calls"]}],
    "additionalProperties": False,
    "properties": {
        "role": {"type": "string", "default": "user"},
        "content": {"description": "a string, a list of content parts, or one part object "
                                   "(text, image, image_url, audio, input_audio, file, data)"},
        "name": {"type": "string"},
        "tool_call_id": {"type": "string"},
        "tool_calls": {"type": "array", "items": {"type": "object"}},
        "refusal": {"type": "string"},
    },
}
_INPUT_SCHEMA: dict[str, Any] = {
    "description": "a user message, one chat message, or a message history",
    "anyOf": [{"type": "string"}, _MESSAGE_SCHEMA, {"type": "array", "items": _MESSAGE_SCHEMA}],
}
_ASSERT_SCHEMA: dict[str, Any] = {  # completed by case_json_schema (pydantic cannot take a $ref here)
    "description": "one assertion, a list of them, or an assertion type name",
}

JsonInput = Annotated[Any, WithJsonSchema(_INPUT_SCHEMA)]
JsonAssert = Annotated[Any, WithJsonSchema(_ASSERT_SCHEMA)]
AnyJson = Annotated[Any, WithJsonSchema({})]


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")


class SkipOptions(_Strict):
    """`options.skip`: parts of the agent's pipeline to skip for this case."""

    history: bool | None = None
    trace: bool | None = None
    output: bool | None = None
    keyword: bool | None = None
    search: bool | None = None


class CaseOptions(_Strict):
    """`options`: passed to the target agent with the request."""

    connector: str | None = Field(None, description="connector override (a CLI -c still wins)")
    skip: SkipOptions | None = None
    mode: str | None = None
    search: bool | None = None
    metadata: dict[str, Any] | None = None
    disable_global_prompts: bool | None = None


class AssertionEntry(_Strict):
    """One assertion as written in a suite file.

    `pattern` (for `regex`) and `name` (for `tool_called`, DESIGN's form) are aliases of `value`.
    """

    type: str | None = Field(None, description="assertion type; `equals` when absent")
    value: AnyJson = None
    pattern: AnyJson = Field(None, description="alias of `value` for `regex`")
    name: AnyJson = Field(None, description="alias of `value` for `tool_called`")
    path: str | None = None
    message: str | None = Field(None, description="replaces the failure message")
    negate: bool = False
    options: dict[str, Any] | None = None
    use: str | None = None
    script: str | None = None

    @model_validator(mode="after")
    def _one_value(self) -> AssertionEntry:
        given = [key for key in ("value", "pattern", "name") if key in self.model_fields_set]
        if len(given) > 1:
            raise ValueError(f"{' and '.join(repr(k) for k in given)} are the same field; give only one")
        for alias, kind in (("pattern", "regex"), ("name", "tool_called")):
            if alias in given and self.kind != kind:
                raise ValueError(f"{alias!r} is an alias of 'value' only for type {kind!r}; use 'value'")
        return self

    @property
    def kind(self) -> str:
        return self.type or "equals"

    @property
    def resolved_value(self) -> Any:
        for key in ("pattern", "name"):
            if key in self.model_fields_set:
                return getattr(self, key)
        return self.value


class CaseEntry(_Strict):
    """One test case as written in a suite file (SPEC §5)."""

    id: str = Field(min_length=1, description="unique case id")
    input: JsonInput = None
    name: str | None = None
    description: AnyJson = Field(None, description="documentation only, ignored")
    mode: AnyJson = Field(None, description="documentation only, ignored")
    assert_: JsonAssert = Field(None, alias="assert")
    assertions: JsonAssert = Field(None, description="alias of `assert`")
    expected: AnyJson = Field(None, description="deep-equality expectation when there is no `assert`")
    options: CaseOptions | None = None
    user: str | None = None
    team: str | None = None
    metadata: dict[str, Any] | None = None
    skip: Annotated[Any, WithJsonSchema({"anyOf": [{"type": "boolean"}, {"type": "string"}, {"type": "null"}],
                                         "description": "true, or the reason to skip"})] = None
    timeout: str | None = Field(None, description="Go duration: 300ms, 30s, 1m30s")
    before: str | None = None
    after: str | None = None
    tags: list[str] | None = None
    simulator: AnyJson = Field(None, description="dynamic mode (not supported yet)")
    checkpoints: AnyJson = Field(None, description="dynamic mode (not supported yet)")
    max_turns: AnyJson = Field(None, description="dynamic mode (not supported yet)")

    @field_validator("id", mode="before")
    @classmethod
    def _id_present(cls, value: Any) -> Any:
        if value is None or value == "":
            raise PydanticCustomError("missing", "missing")
        return value

    @field_validator("skip", mode="before")
    @classmethod
    def _skip_shape(cls, value: Any) -> Any:
        if value is None or isinstance(value, (bool, str)):
            return value
        raise PydanticCustomError("expected", "expected true/false or a reason string, got {got}",
                                  {"got": json_type(value)})

    @field_validator("timeout")
    @classmethod
    def _timeout_parses(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():  # parse_duration("") raises IndexError, not ValueError
            raise ValueError(f"invalid duration {value!r} (use e.g. 300ms, 30s, 1m30s, 2h)")
        if value is not None:
            parse_duration(value)
        return value

    @property
    def is_dynamic(self) -> bool:
        return any(getattr(self, key) is not None for key in ("simulator", "checkpoints", "max_turns"))

    @property
    def timeout_seconds(self) -> float | None:
        return None if self.timeout is None else parse_duration(self.timeout)

    @property
    def skip_reason(self) -> str | None:
        if self.skip is None or self.skip is False:
            return None
        return "" if self.skip is True else self.skip


def case_json_schema() -> dict[str, Any]:
    """The JSON Schema of one test case (for `agenttest schema`)."""
    schema = CaseEntry.model_json_schema(by_alias=True)
    schema.setdefault("$defs", {})["AssertionEntry"] = AssertionEntry.model_json_schema(by_alias=True)
    one = {"$ref": "#/$defs/AssertionEntry"}
    for key in ("assert", "assertions"):
        schema["properties"][key]["anyOf"] = [one, {"type": "array", "items": one}, {"type": "string"},
                                              {"type": "null"}]
    return schema


_EXPECTED = {
    "string_type": "a string", "bool_type": "true or false", "int_type": "an integer", "float_type": "a number",
    "dict_type": "an object", "model_type": "an object", "model_attributes_type": "an object",
    "list_type": "an array",
}


def describe_errors(exc: ValidationError, model: type[BaseModel], prefix: str = "") -> list[str]:
    """One message per problem, each naming its field (`options.skip.trace: expected true or false, got string`).

    `prefix` is the path of the validated object inside the case (`assert[1]`); `model` is used to suggest keys.
    """
    messages = []
    for error in exc.errors(include_url=False):
        loc = error["loc"]
        kind = error["type"]
        if kind == "extra_forbidden":
            key = str(loc[-1])
            parent = field_path(prefix, loc[:-1])
            text = f"unknown key {key!r}{did_you_mean(key, _known_keys(model, loc[:-1]))}"
            messages.append(f"{parent}: {text}" if parent else text)
            continue
        path = field_path(prefix, loc)
        if kind == "missing":
            messages.append(f"missing required field {path!r}")
        elif kind in _EXPECTED:
            messages.append(f"{path}: expected {_EXPECTED[kind]}, got {json_type(error['input'])}")
        elif kind == "value_error":
            messages.append(f"{path}: {error['ctx']['error']}" if path else str(error["ctx"]["error"]))
        else:
            messages.append(f"{path}: {error['msg']}" if path else error["msg"])
    return messages


def field_path(prefix: str, loc: tuple[int | str, ...] | list[int | str]) -> str:
    """`("options", "skip", "trace")` → `options.skip.trace`; integers become `[i]`."""
    path = prefix
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path = f"{path}.{part}" if path else str(part)
    return path





def known_keys(model: type[BaseModel]) -> list[str]:
    """The keys a model accepts, as written in files (aliases)."""
    return [info.alias or name for name, info in model.model_fields.items()]


def _known_keys(model: type[BaseModel], loc: tuple[int | str, ...]) -> list[str]:
    """Keys of the nested model at `loc` (e.g. `("options", "skip")` → SkipOptions), [] when not a model."""
    current: type[BaseModel] | None = model
    for part in loc:
        if current is None or isinstance(part, int):
            return []
        by_alias = {info.alias or name: info for name, info in current.model_fields.items()}
        info = by_alias.get(str(part))
        current = _model_in(info.annotation) if info else None
    return known_keys(current) if current else []


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The BaseModel class in `X`, `X | None` or `Optional[X]`, else None."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        for arg in typing.get_args(annotation):
            found = _model_in(arg)
            if found:
                return found
    return None
