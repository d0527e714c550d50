"""pydantic ValidationErrors as one-line messages naming the field in the file's terms, with did-you-mean hints.

Used where user files are validated: the suite loader reports every problem of an entry (`describe_errors`), the
config every problem of the file (`config_errors`), the API the one to fix first (`first_error`). All read the
same `FieldError`s: the field's dotted path as written in the file (`assert[1].negate`, aliases included), and, for
an unknown key, a hint from the keys the model accepts at that place, found through optional, list and dict fields.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from .assertions.base import json_type
from .hints import closest, did_you_mean

if TYPE_CHECKING:       # a ValidationError comes with pydantic already loaded; checking a plain suite loads none
    from pydantic import BaseModel, ValidationError

Location = tuple[int | str, ...]

_EXPECTED = {
    "string_type": "a string", "bool_type": "true or false", "int_type": "an integer", "float_type": "a number",
    "dict_type": "an object", "model_type": "an object", "model_attributes_type": "an object",
    "list_type": "an array",
    # a lax field given a string that is not one (`price: {input: lots}`)
    "float_parsing": "a number", "int_parsing": "an integer", "bool_parsing": "true or false",
}
_BOUNDS = {"greater_than_equal": ("at least", "ge"), "less_than_equal": ("at most", "le"),
           "greater_than": ("more than", "gt"), "less_than": ("less than", "lt")}


@dataclass(frozen=True)
class FieldError:
    """One problem found by validation. `str()` gives `path: message` (`agents.a.comand: unknown key (…)`)."""

    kind: Literal["unknown_key", "missing", "invalid"]
    prefix: str         # where the validated object sits in the file (`agents.a`, `assert[1]`); "" at the top
    loc: Location       # pydantic's location inside that object; for an unknown key it ends with the key
    detail: str         # unknown_key: the did-you-mean hint (maybe ""); invalid: what is wrong; missing: ""

    @property
    def path(self) -> str:
        """The field, prefix included: `options.skip.trace`, `tags[1]`."""
        return field_path(self.prefix, self.loc)

    @property
    def parent(self) -> str:
        """The object holding the field (`options.skip` for `options.skip.trace`)."""
        return field_path(self.prefix, self.loc[:-1])

    @property
    def message(self) -> str:
        """What is wrong, without where."""
        if self.kind == "unknown_key":
            return f"unknown key{self.detail}"
        return "required" if self.kind == "missing" else self.detail

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


def field_errors(exc: ValidationError, model: type[BaseModel], prefix: str = "") -> list[FieldError]:
    """Every problem in `exc`, in pydantic's order. `model` is the validated model (its keys feed the hints);
    `prefix` is the path of the validated object in the file."""
    found: list[FieldError] = []
    for error in exc.errors(include_url=False):
        loc = tuple(error["loc"])
        kind = error["type"]
        if kind == "extra_forbidden":
            hint = did_you_mean(str(loc[-1]), _keys_at(model, loc[:-1]))
            found.append(FieldError("unknown_key", prefix, loc, hint))
        elif kind == "missing":
            found.append(FieldError("missing", prefix, loc, ""))
        elif kind in _EXPECTED:
            found.append(FieldError("invalid", prefix, loc,
                                    f"expected {_EXPECTED[kind]}, got {json_type(error['input'])}"))
        elif kind == "value_error":
            found.append(FieldError("invalid", prefix, loc, str(error.get("ctx", {}).get("error", error["msg"]))))
        elif kind == "finite_number":
            found.append(FieldError("invalid", prefix, loc, f"must be a finite number, got {error['input']!r}"))
        elif kind in _BOUNDS:
            word, key = _BOUNDS[kind]
            found.append(FieldError("invalid", prefix, loc, f"must be {word} {error.get('ctx', {}).get(key)}, "
                                                            f"got {error['input']!r}"))
        else:
            found.append(FieldError("invalid", prefix, loc, error["msg"]))
    return found


def first_error(exc: ValidationError, model: type[BaseModel], prefix: str = "") -> str:
    """The problem to report when only one is shown, as `path: message`.

    An unknown key comes first, since a misspelt key also makes the key it meant look missing:
    `agents.a.comand: unknown key (did you mean 'command'?)`, then `agents.a.command: required` or
    `version: <what is wrong>`.
    """
    errors = field_errors(exc, model, prefix)
    return str(next((error for error in errors if error.kind == "unknown_key"), errors[0]))


def config_errors(exc: ValidationError, model: type[BaseModel], prefix: str = "") -> list[str]:
    """Every problem as `path: message`, less a `required` key that a misspelt key next to it was meant to be
    (`agents.a.comand: unknown key (did you mean 'command'?)` says it all)."""
    errors = field_errors(exc, model, prefix)
    meant = {(error.parent, closest(str(error.loc[-1]), _keys_at(model, error.loc[:-1])))
             for error in errors if error.kind == "unknown_key"}
    return [str(error) for error in errors
            if not (error.kind == "missing" and (error.parent, str(error.loc[-1])) in meant)]


def describe_errors(exc: ValidationError, model: type[BaseModel], prefix: str = "") -> list[str]:
    """Every problem, one message each, in the suite files' wording.

    `options.skip.trace: expected true or false, got string`; an unknown key is reported on its object
    (`options: unknown key 'conector' (did you mean 'connector'?)`) and a missing field as Yao words it
    (`missing required field 'id'`).
    """
    messages: list[str] = []
    for error in field_errors(exc, model, prefix):
        if error.kind == "unknown_key":
            text = f"unknown key {str(error.loc[-1])!r}{error.detail}"
            messages.append(f"{error.parent}: {text}" if error.parent else text)
        elif error.kind == "missing":
            messages.append(f"missing required field {error.path!r}")
        else:
            messages.append(str(error))
    return messages


def field_path(prefix: str, loc: Sequence[int | str]) -> str:
    """`("options", "skip", "trace")` → `options.skip.trace`; integers become `[i]`."""
    path = prefix
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path = f"{path}.{part}" if path else str(part)
    return path


def _keys_at(model: type[BaseModel], loc: Location) -> list[str]:
    """The keys accepted at `loc` inside `model` as written in files (aliases): `("options", "skip")` → those of
    SkipOptions; [] when the value there is not a model."""
    found = _model_at(model, loc)
    return [info.alias or name for name, info in found.model_fields.items()] if found else []


def _model_at(annotation: Any, loc: Location) -> type[BaseModel] | None:
    """The model validating the value at `loc` in a value of type `annotation`, through `X | None`, list and dict
    fields; None when that value is not a model (or `loc` leads nowhere)."""
    from pydantic import BaseModel

    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _model_at(typing.get_args(annotation)[0], loc)
    if origin in (typing.Union, types.UnionType):
        return next((found for arg in typing.get_args(annotation) if (found := _model_at(arg, loc))), None)
    if origin is None and isinstance(annotation, type) and issubclass(annotation, BaseModel):
        if not loc:
            return annotation
        fields = {info.alias or name: info for name, info in annotation.model_fields.items()}
        info = fields.get(str(loc[0])) if isinstance(loc[0], str) else None
        return _model_at(info.annotation, loc[1:]) if info else None
    args = typing.get_args(annotation)
    if not loc or not isinstance(origin, type) or not args:
        return None
    if issubclass(origin, Mapping):
        return _model_at(args[-1], loc[1:])
    if issubclass(origin, Sequence) and isinstance(loc[0], int):
        return _model_at(args[0], loc[1:])
    return None
