"""The `options` models of the assertion types, in pydantic, apart from the types themselves: the registry names
them (`assertion(..., options=".option_models:SubstringOptions")`) and they are imported when an assertion gives
options or reads its defaults, so loading `{"type": "contains", "value": …}` — what `agenttest validate` does for
most suites — loads no pydantic (issue #27)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import ConfigDict, Field, field_validator

from .judge import MAX_SAMPLES
from .options import AssertionOptions, when_invalid
from .tools import SEQUENCE_MODES, SequenceMode


class SubstringOptions(AssertionOptions):
    """`options` of a `contains` or `not_contains` assertion."""

    ignore_case: Annotated[bool, when_invalid("true or false", sentence=True)] = Field(
        False, description="compare case-insensitively")


class JudgeOptions(AssertionOptions):
    """`options` of an `agent` assertion."""

    model_config = ConfigDict(extra="forbid")

    connector: Annotated[str, Field(min_length=1), when_invalid("expected a connector name")] | None = Field(
        None, description="the connector the judge uses (default: the judge agent's own)")
    metadata: Annotated[dict[Any, Any], when_invalid("expected an object")] | None = Field(
        None, description="sent to the judge beside the criteria, input and output (which it may not override); "
                          "`criteria` may stand here instead of in `value`")
    threshold: Annotated[float, Field(ge=0, le=1), when_invalid("expected a number from 0 to 1")] | None = Field(
        None, description="`score ≥ threshold` decides instead of `passed`, and the verdict then needs a score")
    samples: Annotated[int, Field(ge=1, le=MAX_SAMPLES),
                       when_invalid(f"expected a whole number from 1 to {MAX_SAMPLES}")] = Field(
        1, description="ask the judge this many times (each request says so in its `options.metadata.samples`): "
                       "the majority decides, a tie fails, and the split is reported")

    @field_validator("metadata", mode="before")
    @classmethod
    def _empty_is_none(cls, value: Any) -> Any:
        return value or None    # `[]`, `""`, `0` and `false` have always meant no metadata


class SequenceOptions(AssertionOptions):
    """`options` of a `tool_sequence` assertion."""

    mode: Annotated[SequenceMode, when_invalid(f"one of {', '.join(SEQUENCE_MODES)}", sentence=True)] = Field(
        "strict", description="`strict`: exactly these calls in this order; `unordered`: exactly these calls in any "
                              "order; `subset`: these calls in this order, other calls may come before, between and "
                              "after them; `superset`: every call made is one of these (not all need be made)")
