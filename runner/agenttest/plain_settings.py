"""agenttest.yaml checked without its pydantic models, for `agenttest validate` (issue #27: pydantic's import alone
takes ~6× the bare interpreter's start).

`plain_config` says whether a config (its `${VAR}`s expanded) is of the plain shapes: known keys whose values each
model takes as they are — a string where it wants a string, true or false where it wants a boolean, nothing it would
coerce or refuse — and no nested model (a `price`, an http agent's `response`). Such a config has no problem, so
`project.load_project` builds its settings only when they are first used. For anything else it says no, and the
models check the config as always and say what is wrong: no message comes from here.

The tables name each field's type as pydantic shows the model's annotation; tests/test_plain_settings.py checks
them against the models (and the run options against `options.RunOptions`), and generated configs against both.
"""

from __future__ import annotations

import math
import types
from collections.abc import Callable
from typing import Annotated, Any, Literal, Union, get_args, get_origin, get_type_hints

from .durations import parse_timeout
from .option_table import OPTION_NAMES, Limit, OptionTable, agent_option

Check = Callable[[Any], bool]


def _text(value: Any) -> bool:
    return type(value) is str


def _object(value: Any) -> bool:
    return type(value) is dict and all(type(key) is str for key in value)


def _texts(value: Any) -> bool:
    return type(value) is list and all(type(item) is str for item in value)


def _one_of(*choices: str) -> Check:
    return lambda value: type(value) is str and value in choices


# What each annotation (as pydantic shows it, with the field's limits) takes as it is.
TAKES: dict[str, Check] = {
    "<class 'str'>": _text,
    "str | None": lambda value: value is None or type(value) is str,
    "<class 'bool'>": lambda value: type(value) is bool,
    "<class 'int'> [Ge(ge=1)]": lambda value: type(value) is int and value >= 1,
    "typing.Any": lambda value: True,
    "dict[str, typing.Any]": _object,
    "dict[str, str]": lambda value: _object(value) and all(type(item) is str for item in value.values()),
    "list[str]": _texts,
    "list[str] | str": lambda value: type(value) is str or _texts(value),
    "str | list[dict[str, typing.Any]] | None": lambda value: value is None or type(value) is str or (
        type(value) is list and all(_object(item) for item in value)),
    "typing.Literal['POST', 'PUT', 'PATCH']": _one_of("POST", "PUT", "PATCH"),
    "typing.Optional[typing.Literal['sse']]": lambda value: value is None or _one_of("sse")(value),
    "typing.Literal['validator', 'simulator', 'generator']": _one_of("validator", "simulator", "generator"),
}

# The fields of each settings model of agents.settings: (annotation, required). A field left out here (`price`, an
# http agent's `response`: nested models) is of the plain shapes only when it is not given.
_COMMON = {"provider": ("<class 'str'>", True), "description": ("<class 'str'>", False),
           "tools": ("str | list[dict[str, typing.Any]] | None", False), "input_tools": ("list[str]", False)}
_ENDPOINT = {"connector": ("str | None", False), "base_url": ("str | None", False), "api_key": ("str | None", False),
             "model": ("str | None", False), "headers": ("dict[str, str]", False),
             "params": ("dict[str, typing.Any]", False)}
MODELS: dict[str, dict[str, tuple[str, bool]]] = {
    "OpenAISettings": {**_COMMON, **_ENDPOINT, "system": ("str | None", False), "stream": ("<class 'bool'>", False),
                       "mock_tools": ("dict[str, typing.Any]", False), "tool_callables": ("dict[str, str]", False),
                       "max_tool_steps": ("<class 'int'> [Ge(ge=1)]", False)},
    "HttpSettings": {**_COMMON, "url": ("<class 'str'>", True),
                     "method": ("typing.Literal['POST', 'PUT', 'PATCH']", False),
                     "headers": ("dict[str, str]", False), "body": ("typing.Any", False),
                     "stream": ("typing.Optional[typing.Literal['sse']]", False)},
    "PythonSettings": {**_COMMON, "callable": ("<class 'str'>", True)},
    "ExecSettings": {**_COMMON, "command": ("list[str] | str", True), "cwd": ("str | None", False),
                     "env": ("dict[str, str]", False)},
    "BuiltinSettings": {"builtin": ("typing.Literal['validator', 'simulator', 'generator']", True),
                        "description": ("<class 'str'>", False), **_ENDPOINT, "stream": ("<class 'bool'>", False),
                        "prompt": ("str | None", False)},
    "ConnectorSettings": {"type": ("<class 'str'>", False), "base_url": ("<class 'str'>", False),
                          "api_key": ("str | None", False), "model": ("<class 'str'>", True),
                          "headers": ("dict[str, str]", False), "params": ("dict[str, typing.Any]", False)},
}
# The built-in providers' models (agents.registry.PROVIDERS); another provider's entry is for its model to check.
PROVIDER_MODELS = {"openai": "OpenAISettings", "http": "HttpSettings", "python": "PythonSettings",
                   "exec": "ExecSettings"}


def _fits(entry: Any, model: str) -> bool:
    """Whether `entry` is of the plain shapes for the settings model `model`."""
    fields = MODELS[model]
    return _object(entry) and all(key in fields and TAKES[fields[key][0]](value) for key, value in entry.items()) \
        and all(key in entry for key, (_, required) in fields.items() if required)


def plain_agent(entry: Any) -> bool:
    """Whether an entry of `agents:` is of the plain shapes (its provider a built-in one, or a `builtin:` helper)."""
    if not _object(entry):
        return False
    if "builtin" in entry:
        return _fits(entry, "BuiltinSettings")
    model = PROVIDER_MODELS.get(entry["provider"]) if type(entry.get("provider")) is str else None
    return model is not None and _fits(entry, model)


# The run options `options.RunOptions` checks with validators of its own (beyond the type in the table): those of
# them read here, and the others, left to the model.
_READ_HERE: dict[str, Check] = {
    "timeout": lambda value: type(value) is str and _parses(parse_timeout, value),
    "simulator": lambda value: value is None or type(value) is str,
    "judge": lambda value: value is None or type(value) is str,
    "cache": lambda value: value is None or (type(value) is str and bool(value.strip())),
}
VALIDATED = frozenset({*_READ_HERE, "min_pass_rate", "max_cost", "alpha", "runs", "shard", "comment_key",
                       "comment_author", "run"})


def _parses(parse: Callable[[str], Any], value: str) -> bool:
    try:
        parse(value)
    except Exception:       # the model says what is wrong with it
        return False
    return True


def _option_check(hint: Any) -> Check | None:
    """What a row of the table (`Annotated[type, limits…, Flag]`) takes as it is, in strict mode; None for a type
    left to the model (a float, `int | str`)."""
    kind, *metadata = get_args(hint) if get_origin(hint) is Annotated else (hint,)
    optional = False
    if get_origin(kind) in (Union, types.UnionType):
        kinds = [arg for arg in get_args(kind) if arg is not type(None)]
        optional = len(kinds) < len(get_args(kind))
        if len(kinds) != 1:
            return None
        kind = kinds[0]
    if get_origin(kind) is Literal:
        takes = _one_of(*get_args(kind))
    elif kind in (str, bool):
        takes = lambda value, kind=kind: type(value) is kind      # noqa: E731
    elif kind is int:
        limits = [limit for limit in metadata if isinstance(limit, Limit)]
        if any(limit.gt is not None or limit.lt is not None or limit.le is not None for limit in limits):
            return None
        least = max((limit.ge for limit in limits if limit.ge is not None), default=None)
        takes = lambda value: type(value) is int and (least is None or value >= least)  # noqa: E731
    else:
        return None
    return (lambda value: value is None or takes(value)) if optional else takes


def _option_checks() -> dict[str, Check]:
    hints = get_type_hints(OptionTable, include_extras=True)
    checks = {name: _READ_HERE.get(name) if name in VALIDATED else _option_check(hints[name]) for name in OPTION_NAMES}
    return {name: check for name, check in checks.items() if check is not None}


_OPTIONS: dict[str, Check] = {}


def plain_defaults(defaults: Any) -> bool:
    """Whether `defaults:` (its keys as written) is of the plain shapes: known run options, each of its type."""
    if not _OPTIONS:
        _OPTIONS.update(_option_checks())
    if not _object(defaults):
        return False
    normal = {key.replace("-", "_"): value for key, value in defaults.items()}
    return all(name in _OPTIONS and _OPTIONS[name](value) for name, value in normal.items())


def plain_options(values: dict[str, Any]) -> dict[str, Any] | None:
    """The run options as `options.RunOptions` would hold them — every option of the table in its order, the given
    value or else the default — when each value given (its key already known: `options.merge_options`) is of the
    plain shapes; else None, for the model to read and say what is wrong."""
    if not _OPTIONS:
        _OPTIONS.update(_option_checks())
    for name, value in values.items():
        check = _OPTIONS.get(name)
        if check is None or not check(value):
            return None
    read = {name: values[name] if name in values else getattr(OptionTable, name) for name in OPTION_NAMES}
    for name in ("simulator", "judge"):     # what the model's validator makes of them (`agents:ID` is ID)
        read[name] = agent_option(read[name])
    return read


def plain_config(expanded: dict[str, Any]) -> bool:
    """Whether the whole config (a mapping, `${VAR}`s expanded) is of the plain shapes: then it has no problem."""
    if not expanded.keys() <= {"version", "defaults", "connectors", "agents"}:
        return False
    version = expanded.get("version", 1)
    if not (type(version) is int and version == 1):
        return False
    connectors, agents = expanded.get("connectors", {}), expanded.get("agents", {})
    return plain_defaults(expanded.get("defaults", {})) and _object(connectors) and _object(agents) \
        and all(_fits(entry, "ConnectorSettings") for entry in connectors.values()) \
        and all(plain_agent(entry) for entry in agents.values())


# The models whose entries an agent of the plain shapes is read as without pydantic (`PlainSettings`): each field in
# the model's order with its default (`list` and `dict`: a new one for each agent, as the model's default factory).
# tests/test_plain_settings.py checks them against the models.
DEFAULTS: dict[str, dict[str, Any]] = {
    "OpenAISettings": {"provider": None, "description": "", "price": None, "tools": None, "input_tools": list,
                       "connector": None, "base_url": None, "api_key": None, "model": None, "headers": dict,
                       "params": dict, "system": None, "stream": False, "mock_tools": dict, "tool_callables": dict,
                       "max_tool_steps": 10},
}


def _as_held(annotation: str, value: Any) -> Any:
    """A value of the plain shapes as the model holds it: its own copy of each object and list it checks, the
    values inside an object of any values kept as they are."""
    if annotation in ("dict[str, str]", "dict[str, typing.Any]"):
        return dict(value)
    if annotation == "list[str]":
        return list(value)
    if annotation == "str | list[dict[str, typing.Any]] | None" and type(value) is list:
        return [dict(item) for item in value]
    return value


_NOT_JSON = object()


def _json_copy(value: Any) -> Any:
    """A copy of a value of plain JSON as `model_dump(mode="json")` makes it, or _NOT_JSON for anything else."""
    kind = type(value)
    if kind in (str, int, bool) or value is None or (kind is float and math.isfinite(value)):
        return value
    if kind is list:
        items = [_json_copy(item) for item in value]
        return _NOT_JSON if any(item is _NOT_JSON for item in items) else items
    if kind is dict and all(type(key) is str for key in value):
        copied = {key: _json_copy(item) for key, item in value.items()}
        return _NOT_JSON if any(item is _NOT_JSON for item in copied.values()) else copied
    return _NOT_JSON


class PlainSettings:
    """An agent's entry of the plain shapes (`plain_agent`) read as its settings model would read it, without
    pydantic: every field of the model, the value given or else the default. Anything else asked of it (the model's
    `model_dump`, `model_copy`, …) is asked of the model, built then by `read`."""

    def __init__(self, model: str, entry: dict[str, Any], read: Callable[[], Any]) -> None:
        fields = MODELS[model]
        for name, default in DEFAULTS[model].items():
            value = _as_held(fields[name][0], entry[name]) if name in entry else (
                default() if default in (list, dict) else default)
            self.__dict__[name] = value
        self.__dict__.update(_name=model, _read=read, _model=None)

    def __getattr__(self, name: str) -> Any:      # what is no field: the model's
        if not name.startswith("model_"):
            raise AttributeError(name)
        if self.__dict__["_model"] is None:
            self.__dict__["_model"] = self.__dict__["_read"]()
        return getattr(self.__dict__["_model"], name)

    def model_dump(self, *, mode: str = "python", exclude: set[str] | None = None, exclude_defaults: bool = False,
                   **more: Any) -> dict[str, Any]:
        """The model's `model_dump`. What a cassette records of the agent (`mode="json"`, `exclude_defaults`:
        agents.recorded_config) is read here when every value kept is plain JSON (strings with string keys, finite
        numbers, true, false, null); anything else by the model."""
        if mode == "json" and exclude_defaults and not more:
            defaults = DEFAULTS[self.__dict__["_name"]]
            kept = {name: self.__dict__[name] for name, default in defaults.items() if name not in (exclude or ())
                    and self.__dict__[name] != (default() if default in (list, dict) else default)}
            copied = _json_copy(kept)
            if copied is not _NOT_JSON:
                return copied  # type: ignore[no-any-return]
        return self.__getattr__("model_dump")(mode=mode, exclude=exclude, exclude_defaults=exclude_defaults, **more)

    def __repr__(self) -> str:      # as the model's
        model = self.__dict__["_name"]
        return f"{model}({', '.join(f'{name}={self.__dict__[name]!r}' for name in DEFAULTS[model])})"
