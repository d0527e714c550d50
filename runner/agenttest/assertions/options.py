"""How an assertion type declares its `options`: a model whose fields are the options, each typed, bounded and
described once, with the message a wrong value gets. `base.prepare_assertion` reads them when the suite loads."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, WrapValidator
from pydantic_core import PydanticCustomError


class AssertionOptions(BaseModel):
    """The `options` of an assertion type: each option a typed field, documented by its `description`, which
    `agenttest schema` shows too.

    Strict (`"true"` is not true) and read once, when the suite loads. Keys a type does not know are ignored, as
    they always were (Yao reads `options.connector` and `options.metadata` of any assertion); a type whose
    options are all known says `extra="forbid"`, and a misspelt key is then an error with a hint.
    """

    model_config = ConfigDict(strict=True, frozen=True, extra="ignore")


def when_invalid(problem: str, *, sentence: bool = False) -> WrapValidator:
    """For an option's annotation: every invalid value gets one message in place of pydantic's, `<problem>, got
    <value>`, said of the option's field (`options.threshold: expected a number from 0 to 1, got 2`). With
    `sentence`, `problem` is what the option must be, and the message a sentence naming it, without a field
    (`tool_sequence option 'mode' must be one of …, got "loose"`: the wording these options have always had)."""

    def check(value: Any, handler: Callable[[Any], Any]) -> Any:
        try:
            return handler(value)
        except ValidationError:
            raise PydanticCustomError("invalid_option", "{problem}",
                                      {"problem": problem, "sentence": sentence}) from None

    return WrapValidator(check)


@cache
def defaults(model: type[AssertionOptions]) -> AssertionOptions:
    """The options of an assertion that gives none: one instance per model, shared (it is frozen), since most
    assertions give none and a suite may hold thousands."""
    return model()
