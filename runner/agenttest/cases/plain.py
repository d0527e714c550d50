"""Suite entries read without their pydantic models, for `agenttest validate` (issue #27: pydantic's import alone
takes ~6× the bare interpreter's start, more than the 12× a check of 1,000 cases may take).

An entry of the plain shapes — a single-turn case whose keys hold values that `schema.CaseEntry` takes as they are
(a string where it wants a string, true or false where it wants a boolean, no coercion, no nested model) — is read
here into a `PlainCase`, which the loader reads as it reads a CaseEntry; an assertion likewise into a
`PlainAssertion`. Anything else is None, and the model reads it (and says what is wrong): no message comes from here,
and what is accepted here the models accept too, with the same values (tests/cases/test_plain.py checks both on
generated entries). `schema` shares the two properties below, so they cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..durations import parse_duration, parse_timeout


def skip_reason(skip: Any) -> str | None:
    """`skip` as a case keeps it: None to run it, else the reason ("" for `skip: true`)."""
    if skip is None or skip is False:
        return None
    return "" if skip is True else skip


def timeout_seconds(timeout: str | None) -> float | None:
    return None if timeout is None else parse_duration(timeout)


def _any(value: Any) -> bool:
    return True


def _text(value: Any) -> bool:
    return value is None or type(value) is str


def _id(value: Any) -> bool:
    return type(value) is str and value != ""


def _timeout(value: Any) -> bool:
    if value is None:
        return True
    if type(value) is not str:
        return False
    try:
        parse_timeout(value)
    except Exception:       # the model says what is wrong with it
        return False
    return True


def _object(value: Any) -> bool:
    return value is None or (type(value) is dict and all(type(key) is str for key in value))


def _strings(value: Any) -> bool:
    return value is None or (type(value) is list and all(type(item) is str for item in value))


def _max_turns(value: Any) -> bool:
    return value is None or (type(value) is int and 1 <= value <= 1000)


def _skip(value: Any) -> bool:
    return value is None or type(value) in (bool, str)


def _absent(value: Any) -> bool:
    return value is None


# Each key of a case as written: its field in CaseEntry and what the field takes as it is. The nested models
# (`options`, a conversation's `simulator`, `checkpoints`, `turns`, `guards`, `interactive`) only as null.
_CASE_KEYS: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "id": ("id", _id), "input": ("input", _any), "name": ("name", _text), "description": ("description", _any),
    "mode": ("mode", _any), "assert": ("assert_", _any), "assertions": ("assertions", _any),
    "expected": ("expected", _any), "options": ("options", _absent), "user": ("user", _text),
    "team": ("team", _text), "metadata": ("metadata", _object), "skip": ("skip", _skip),
    "timeout": ("timeout", _timeout), "before": ("before", _text), "after": ("after", _text),
    "tags": ("tags", _strings), "simulator": ("simulator", _absent), "checkpoints": ("checkpoints", _absent),
    "max_turns": ("max_turns", _max_turns), "turns": ("turns", _absent), "guards": ("guards", _absent),
    "final": ("final", _any), "interactive": ("interactive", _absent),
}
CASE_FIELDS = tuple(field for field, _ in _CASE_KEYS.values())


class PlainCase:
    """A case entry of the plain shapes, with CaseEntry's fields (those not given: None), `model_fields_set` and
    properties."""

    id: str
    input: Any = None
    name: str | None = None
    description: Any = None
    mode: Any = None
    assert_: Any = None
    assertions: Any = None
    expected: Any = None
    options: None = None
    user: str | None = None
    team: str | None = None
    metadata: dict[str, Any] | None = None
    skip: Any = None
    timeout: str | None = None
    before: str | None = None
    after: str | None = None
    tags: list[str] | None = None
    simulator: None = None
    checkpoints: None = None
    max_turns: int | None = None
    turns: None = None
    guards: None = None
    final: Any = None
    interactive: None = None

    def __init__(self, fields: dict[str, Any]) -> None:
        self.__dict__.update(fields)
        self.model_fields_set = set(fields)

    @property
    def timeout_seconds(self) -> float | None:
        return timeout_seconds(self.timeout)

    @property
    def skip_reason(self) -> str | None:
        return skip_reason(self.skip)


def plain_case(value: Any) -> PlainCase | None:
    """`value` read as CaseEntry would read it, when it is of the plain shapes; else None."""
    if type(value) is not dict or "id" not in value:
        return None
    fields: dict[str, Any] = {}
    for key, item in value.items():
        known = _CASE_KEYS.get(key)
        if known is None or not known[1](item):
            return None
        # The model copies the objects and lists it checks (their items are not copied); the others it keeps.
        fields[known[0]] = type(item)(item) if key in ("metadata", "tags") and item is not None else item
    return PlainCase(fields)


_ALIASES = {"pattern": "regex", "name": "tool_called"}    # an alias of `value`, and the one type it serves


class PlainAssertion:
    """An assertion entry of the plain shapes, with what the loader reads of an AssertionEntry."""

    __slots__ = ("kind", "message", "negate", "options", "path", "resolved_value", "script", "use")

    def __init__(self, item: dict[str, Any], value_key: str | None) -> None:
        self.kind: str = item.get("type") or "equals"
        self.resolved_value: Any = item[value_key] if value_key else None
        self.path: str | None = item.get("path")
        self.message: str | None = item.get("message")
        self.negate: bool = item.get("negate", False)
        options = item.get("options")
        self.options: dict[str, Any] | None = dict(options) if options is not None else None
        self.use: str | None = item.get("use")
        self.script: str | None = item.get("script")


_ASSERTION_KEYS: dict[str, Callable[[Any], bool]] = {
    "type": _text, "value": _any, "pattern": _any, "name": _any, "path": _text, "message": _text,
    "negate": lambda value: type(value) is bool, "options": _object, "use": _text, "script": _text,
}


def plain_assertion(item: Any) -> PlainAssertion | None:
    """`item` read as AssertionEntry would read it, when it is of the plain shapes; else None."""
    if type(item) is not dict or not all(key in _ASSERTION_KEYS and _ASSERTION_KEYS[key](value)
                                         for key, value in item.items()):
        return None
    given = [key for key in ("value", "pattern", "name") if key in item]
    if len(given) > 1:
        return None
    value_key = given[0] if given else None
    if value_key in _ALIASES and (item.get("type") or "equals") != _ALIASES[value_key]:
        return None
    return PlainAssertion(item, value_key)
