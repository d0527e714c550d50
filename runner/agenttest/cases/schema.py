"""The suite file format at its edge: pydantic models of a test-case entry and of an assertion entry.

Validation is strict (no coercion: `"negate": "true"` is an error) and closed (unknown keys are errors with a
"did you mean" hint). Key matching is case-sensitive (Yao's is not). `None` is accepted wherever a key is optional
and means "not given". `validation.describe_errors` turns a ValidationError of these models into field messages.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, WithJsonSchema, field_validator, model_validator
from pydantic_core import PydanticCustomError

from ..assertions import REGISTRY
from ..assertions.base import json_type, known_types
from ..assertions.options import AssertionOptions
from ..durations import parse_timeout
from .plain import skip_reason, timeout_seconds

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

def _a_timeout(value: str) -> str:
    parse_timeout(value)        # ValueError: an invalid case naming the field
    return value


GoTimeout = Annotated[str, AfterValidator(_a_timeout)]
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
        fields = self.model_fields_set
        if "pattern" not in fields and "name" not in fields:      # the common case: no alias used
            return self
        given = [key for key in ("value", "pattern", "name") if key in fields]
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


class SimulatorOptions(_Strict):
    """`simulator.options`: what the simulated user is told, and the connector it uses."""

    metadata: dict[str, Any] | None = Field(None, description="`persona` and `goal` (strings), and any other facts "
                                                              "the simulated user may use (given as `extra`)")
    connector: str | None = Field(None, description="connector override for the simulator agent")


class SimulatorEntry(_Strict):
    """`simulator`: who plays the user in a dynamic case."""

    use: str | None = Field(None, description="the simulator agent's id, or \"scripted\" to replay `replies`; "
                                              "default: --simulator")
    options: SimulatorOptions | None = None
    replies: list[str] | None = Field(None, description="with use: \"scripted\": the user's turns, in order")


class CheckpointEntry(_Strict):
    """One checkpoint of a dynamic case: what some reply of the agent must satisfy, in order."""

    id: str = Field(min_length=1, description="unique within the case")
    description: str | None = None
    assert_: JsonAssert = Field(None, alias="assert")
    assertion: JsonAssert = Field(None, description="alias of `assert`")
    after: list[str] | None = Field(None, description="checkpoint ids that must be reached first")
    required: bool | None = Field(None, description="default true; an optional checkpoint never fails the case")
    by_turn: int | None = Field(None, ge=1, le=1000, description="a deadline: a required checkpoint not reached by "
                                                               "this turn fails the case then")


class GuardEntry(_Strict):
    """One guard of a conversation: what every reply of the agent must satisfy."""

    id: str = Field(min_length=1, description="unique within the case; named when the guard is broken")
    description: str | None = None
    assert_: JsonAssert = Field(None, alias="assert")
    assertion: JsonAssert = Field(None, description="alias of `assert`")


class SimulateEntry(_Strict):
    """`simulate`: a stretch of the conversation whose user turns the case's simulator writes."""

    max_turns: int | None = Field(None, ge=1, le=1000, description="at most this many user turns (default: until "
                                                                  "the conversation's max_turns)")
    until: str | None = Field(None, min_length=1, description="a checkpoint id: the stretch ends once it is "
                                                              "reached")


class TurnEntry(_Strict):
    """One step of `turns`: a fixed user turn (`input`, with the `assert` its reply must satisfy and `options` for
    its request), or a simulated stretch (`simulate`)."""

    input: JsonInput = None
    assert_: JsonAssert = Field(None, alias="assert")
    assertions: JsonAssert = Field(None, description="alias of `assert`")
    options: CaseOptions | None = Field(None, description="this turn's request options, over the case's")
    simulate: SimulateEntry | None = None


class InteractiveEntry(_Strict):
    """`interactive`: the case is written for a person at a terminal."""

    enabled: bool = False
    timeout: GoTimeout | None = Field(None, description="how long to wait for each of the person's turns (Go "
                                                        "duration; default 5m)")


class CaseEntry(_Strict):
    """One test case as written in a suite file (docs/test-cases.md)."""

    id: str = Field(min_length=1, description="unique case id")
    input: JsonInput = None
    name: str | None = None
    description: AnyJson = Field(None, description="documentation only, ignored")
    mode: AnyJson = Field(None, description="documentation only, ignored")
    assert_: JsonAssert = Field(None, alias="assert")
    assertions: JsonAssert = Field(None, description="alias of `assert`")
    expected: AnyJson = Field(None, description="deep-equality expectation; ignored when there is an `assert`")
    options: CaseOptions | None = None
    user: str | None = None
    team: str | None = None
    metadata: dict[str, Any] | None = None
    skip: Annotated[Any, WithJsonSchema({"anyOf": [{"type": "boolean"}, {"type": "string"}, {"type": "null"}],
                                         "description": "true, or the reason to skip"})] = None
    timeout: GoTimeout | None = Field(None, description="Go duration: 300ms, 30s, 1m30s")
    before: str | None = None
    after: str | None = None
    tags: list[str] | None = None
    simulator: SimulatorEntry | None = Field(None, description="dynamic mode: who plays the user")
    checkpoints: list[CheckpointEntry] | None = Field(None, description="dynamic mode: what the conversation "
                                                                        "must reach")
    max_turns: int | None = Field(None, ge=1, le=1000, description="conversations: user turns at most (default "
                                                                  "20)")
    turns: list[TurnEntry] | None = Field(None, description="the conversation as steps: fixed user turns and "
                                                            "simulated stretches, in order")
    guards: list[GuardEntry] | None = Field(None, description="conversations: what every reply must satisfy")
    final: JsonAssert = Field(None, description="conversations: checked once at the end, against the last reply "
                                                "and the whole conversation")
    interactive: InteractiveEntry | None = Field(None, description="written for a person at a terminal "
                                                                   "(--interactive, --skip-interactive)")

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

    @property
    def timeout_seconds(self) -> float | None:
        return timeout_seconds(self.timeout)

    @property
    def skip_reason(self) -> str | None:
        return skip_reason(self.skip)


def case_json_schema() -> dict[str, Any]:
    """The JSON Schema of one test case (for `agenttest schema`), the options of each assertion type included."""
    schema = CaseEntry.model_json_schema(by_alias=True)
    defs = schema.setdefault("$defs", {})
    defs["AssertionEntry"] = AssertionEntry.model_json_schema(by_alias=True)
    defs["AssertionEntry"]["allOf"] = _typed_options(defs)
    defs["AssertionType"] = {"enum": known_types(), "description": "an assertion type"}   # `containz` is flagged
    named = {"$ref": "#/$defs/AssertionType"}
    defs["AssertionEntry"]["properties"]["type"]["anyOf"] = [named, {"type": "null"}]
    one = {"$ref": "#/$defs/AssertionEntry"}
    forms = [one, {"type": "array", "items": one}, named, {"type": "null"}]
    for key in ("assert", "assertions"):
        schema["properties"][key]["anyOf"] = forms
    schema["properties"]["final"]["anyOf"] = forms
    for model in ("CheckpointEntry", "GuardEntry"):
        for key in ("assert", "assertion"):
            defs[model]["properties"][key]["anyOf"] = forms
    for key in ("assert", "assertions"):
        defs["TurnEntry"]["properties"][key]["anyOf"] = forms
    return schema


def _typed_options(defs: dict[str, Any]) -> list[dict[str, Any]]:
    """One rule for each options model of the assertion types: an assertion of a type it serves, when it has an
    `options` object, has that model's (its schema is added to `defs`)."""
    served: dict[type[AssertionOptions], list[str]] = {}
    for name, kind in sorted(REGISTRY.items()):
        if kind.options is not None:
            served.setdefault(kind.options, []).append(name)
    rules = []
    for model, names in served.items():
        defs[model.__name__] = model.model_json_schema()
        rules.append({"if": {"properties": {"type": {"enum": names}, "options": {"type": "object"}},
                             "required": ["type", "options"]},
                      "then": {"properties": {"options": {"$ref": f"#/$defs/{model.__name__}"}}}})
    return rules
