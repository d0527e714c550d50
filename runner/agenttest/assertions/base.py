"""The assertion registry: each type is a small named function that turns a subject into a verdict."""

from __future__ import annotations

import importlib
import inspect
import json
from collections.abc import Awaitable, Callable, ItemsView, Iterator, KeysView, Mapping, ValuesView
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ..agents.base import AgentResponse
from ..errors import HelperError, SuiteError, Where
from ..hints import did_you_mean
from ..secrets import shorten

if TYPE_CHECKING:
    from ..agents.helpers import HelperCaller
    from .options import AssertionOptions


NO_OPTIONS: Mapping[str, Any] = MappingProxyType({})   # the options of all that give none: one, read-only


def no_options() -> Mapping[str, Any]:
    """The default options (a field's default must be hashable: the one read-only mapping, from a factory)."""
    return NO_OPTIONS


@dataclass(slots=True)
class AssertionSpec:
    """One assertion as written in a case, validated at load time.

    `prepared` holds what the type's `prepare` step built once (a compiled regex, a parsed JSONPath, a loaded
    schema, a resolved callable) so evaluation does no parsing; `typed_options`, `options` as the type's model
    read them (None for a type without one).
    """

    type: str
    value: Any = None
    path: str | None = None
    message: str | None = None
    negate: bool = False
    options: Mapping[str, Any] = field(default_factory=no_options)
    use: str | None = None
    script: str | None = None
    base_dir: Path = field(default_factory=Path.cwd)
    root: Path | None = field(default=None, compare=False)   # files it names must lie inside (the suite's
                                                             # repository); None: base_dir
    prepared: Any = None
    _typed_options: Any = field(default=None, repr=False, compare=False)    # see `typed_options`
    helper_agent: str | None = None     # the agent this assertion asks (a judge), set by `prepare`
    warnings: tuple[str, ...] = ()     # said at load time; the assertion is still valid

    @property
    def typed_options(self) -> Any:
        """`options` as the type's model read them (`prepare_assertion`); None for a type without a model. An
        assertion that gives no options has the model's defaults (one instance, shared), made when first read:
        loading a suite needs no options model, nor pydantic, for the assertions that give none."""
        if isinstance(self._typed_options, _Defaults):
            self._typed_options = self._typed_options.options()
        return self._typed_options

    @typed_options.setter
    def typed_options(self, value: Any) -> None:
        self._typed_options = value


@dataclass
class Verdict:
    """What one assertion function decides."""

    passed: bool
    message: str
    expected: Any = None
    actual: Any = None
    score: float | None = None
    details: dict[str, Any] | None = None     # a judge's reason, suggestions and votes
    decided: bool = True    # False: no verdict (a script raised, or answered no bool): a failure `negate` keeps


@dataclass
class EvalContext:
    """Everything an assertion may look at for one agent response. `helpers` calls judges; `conversation` is the
    whole conversation up to this response, in dynamic mode."""

    response: AgentResponse
    input: Any = None
    latency_ms: float = 0.0
    helpers: HelperCaller | None = None
    conversation: list[dict[str, Any]] | None = None
    deadline: float | None = None       # the case's (time.monotonic): an async script holding the loop past it stops

    @property
    def output(self) -> Any:
        return self.response.subject()

    @property
    def text(self) -> str:
        return subject_text(self.output)


@dataclass(slots=True)
class AssertionResult:
    """The verdict of one assertion as kept in the report."""

    type: str
    passed: bool
    message: str
    expected: Any = None
    actual: Any = None
    negate: bool = False
    score: float | None = None
    details: dict[str, Any] | None = None
    error_kind: str | None = None     # the assertion could not decide (a judge that failed): the case is an error
    actual_is_output: bool = False    # `actual` is the case's (large) output, which the report keeps once

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type, "passed": self.passed, "message": self.message,
                               "expected": self.expected}
        if self.actual_is_output:
            out["actual_is_output"] = True
        else:
            out["actual"] = self.actual
        if self.negate:
            out["negate"] = True
        if self.score is not None:
            out["score"] = self.score
        if self.details:
            out["details"] = self.details
        if self.error_kind:
            out["error_kind"] = self.error_kind
        return out


Evaluate = Callable[[AssertionSpec, EvalContext], "Verdict | Awaitable[Verdict]"]
Prepare = Callable[[AssertionSpec], None]


class AssertionType:
    """A registered assertion type: its name, its evaluate function, its load-time `prepare`, the model of its
    `options` — a class, or `.module:Name` in this package, imported when first wanted (`options`) — and whether
    its evaluate is a coroutine (a judge, a script): it may take time to decide."""

    def __init__(self, name: str, evaluate: Evaluate, prepare: Prepare | None = None,
                 options: type[AssertionOptions] | str | None = None, waits: bool = False) -> None:
        self.name = name
        self.evaluate = evaluate
        self.prepare = prepare
        self._options = options
        self.waits = waits

    @property
    def has_options(self) -> bool:
        """Whether the type has an options model (without importing it)."""
        return self._options is not None

    @property
    def options(self) -> type[AssertionOptions] | None:
        """The model of the type's `options` (None: it reads none)."""
        if isinstance(self._options, str):
            module, _, name = self._options.partition(":")
            self._options = getattr(importlib.import_module(module, __package__), name)
        return self._options

    def __repr__(self) -> str:
        return f"AssertionType(name={self.name!r}, options={self._options!r}, waits={self.waits!r})"


# The built-in types of the other modules of this package, by module: each imported when a suite first names one
# of its types or when the whole table is read, so that a run of text assertions loads none of them (issue #27).
LAZY_TYPES = {"agent": "judge", "script": "script", "json_path": "structured", "type": "structured",
              "json_schema": "structured", "latency": "timing", "tool_called": "tools", "tool_result": "tools",
              "tool_sequence": "tools"}


class Registry(dict[str, AssertionType]):
    """The assertion types by name: a dict whose built-in types (`LAZY_TYPES`) are registered by their module the
    first time they are looked up, or the whole table read (iterated, counted, listed)."""

    def _load(self, name: object) -> None:
        module = LAZY_TYPES.get(name) if isinstance(name, str) else None
        if module is not None and not dict.__contains__(self, name):
            importlib.import_module(f".{module}", __package__)

    def _load_all(self) -> None:
        for module in dict.fromkeys(LAZY_TYPES.values()):
            importlib.import_module(f".{module}", __package__)

    def __setitem__(self, name: str, kind: AssertionType) -> None:
        # A built-in type is registered before anything registered under its name later, which replaces it: as when
        # every module was imported at start. (Its own module, registering it, is in sys.modules already.)
        self._load(name)
        dict.__setitem__(self, name, kind)

    def __missing__(self, name: str) -> AssertionType:
        self._load(name)
        if dict.__contains__(self, name):
            return dict.__getitem__(self, name)
        raise KeyError(name)

    def __contains__(self, name: object) -> bool:
        self._load(name)
        return dict.__contains__(self, name)

    def get(self, name: str, default: Any = None) -> Any:  # type: ignore[override]
        self._load(name)
        return dict.get(self, name, default)

    def __iter__(self) -> Iterator[str]:
        self._load_all()
        return dict.__iter__(self)

    def __len__(self) -> int:
        self._load_all()
        return dict.__len__(self)

    def keys(self) -> KeysView[str]:  # type: ignore[override]
        self._load_all()
        return dict.keys(self)

    def values(self) -> ValuesView[AssertionType]:  # type: ignore[override]
        self._load_all()
        return dict.values(self)

    def items(self) -> ItemsView[str, AssertionType]:  # type: ignore[override]
        self._load_all()
        return dict.items(self)


REGISTRY: dict[str, AssertionType] = Registry()


def assertion(*names: str, prepare: Prepare | None = None,
              options: type[AssertionOptions] | str | None = None) -> Callable[[Evaluate], Evaluate]:
    """Register an evaluate function under one or more type names, with an optional load-time `prepare` and the
    model of its `options` (a class, or `.module:Name` in this package: imported when first wanted)."""

    def register(func: Evaluate) -> Evaluate:
        for name in names:
            REGISTRY[name] = AssertionType(name=name, evaluate=func, prepare=prepare, options=options,
                                           waits=inspect.iscoroutinefunction(func))
        return func

    return register


def known_types() -> list[str]:
    return sorted(REGISTRY)


def prepare_assertion(spec: AssertionSpec) -> None:
    """Load-time check of one assertion, its options read through its type's model: an unknown type, a bad value or
    a bad option raises SuiteError (field-level message)."""
    kind = REGISTRY.get(spec.type)
    if kind is None:
        raise SuiteError(f"unknown assertion type {spec.type!r} (valid: {', '.join(known_types())})")
    if kind.has_options:
        spec.typed_options = _read_options(kind.name, kind.options, spec.options) if spec.options else \
            _Defaults.of(kind)      # made when first read (`AssertionSpec.typed_options`)
    if kind.prepare is not None:
        kind.prepare(spec)


class _Defaults:
    """The options of an assertion that gives none, until first read: its type's defaults. One per type, shared by
    its assertions, which keeps the defaults once made: reading them cost each of 10,000 cases an import
    statement and a cache lookup."""

    __slots__ = ("kind", "made")

    def __init__(self, kind: AssertionType) -> None:
        self.kind = kind
        self.made: AssertionOptions | None = None

    @classmethod
    def of(cls, kind: AssertionType) -> _Defaults:
        pending = _PENDING.get(kind.name)
        if pending is None or pending.kind is not kind:
            pending = _PENDING[kind.name] = cls(kind)
        return pending

    def options(self) -> AssertionOptions:
        if self.made is None:
            from .options import defaults

            model = self.kind.options
            assert model is not None
            self.made = defaults(model)
        return self.made


_PENDING: dict[str, _Defaults] = {}


def _read_options(name: str, model: type[AssertionOptions], written: dict[str, Any]) -> AssertionOptions:
    """`written` as `model` reads it; SuiteError naming the option as its `when_invalid` says. A misspelt key is
    reported first, since it may be what makes another option look wrong."""
    from pydantic import ValidationError

    try:
        return model.model_validate(written)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        error = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
        loc = [str(part) for part in error["loc"]]
        where = Where(field=".".join(["options", *loc]))
        if error["type"] == "extra_forbidden":
            known = list(model.model_fields)
            article = "an" if name[:1] in tuple("aeiou") else "a"
            raise SuiteError(f"unknown option {loc[-1]!r} for {article} {name} assertion"
                             f"{did_you_mean(loc[-1], known)} (options: {', '.join(known)})", where) from None
        value = error["input"]
        got = json_type(value) if isinstance(value, (dict, list)) else describe(value)
        if error.get("ctx", {}).get("sentence"):
            raise SuiteError(f"{name} option {loc[-1]!r} must be {error['msg']}, got {got}") from None
        raise SuiteError(f"{error['msg']}, got {got}", where) from None


async def evaluate_all(specs: list[AssertionSpec], ctx: EvalContext) -> list[AssertionResult]:
    """Evaluate every assertion (no short-circuit), applying `negate` and the `message` override."""
    results = []
    for spec in specs:
        try:
            outcome = REGISTRY[spec.type].evaluate(spec, ctx)
            verdict = await outcome if inspect.isawaitable(outcome) else outcome
        except HelperError as exc:   # no verdict at all: neither negated nor replaced by `message`
            results.append(AssertionResult(type=spec.type, passed=False, message=exc.message, expected=spec.value,
                                           negate=spec.negate, error_kind=exc.kind))
            continue
        except Exception as exc:  # a user's script or a broken value must not take down the run
            verdict = Verdict(False, f"{spec.type} assertion raised {type(exc).__name__}: {exc}", decided=False)
        results.append(_finish(spec, verdict))
    return results


def may_wait(specs: list[AssertionSpec]) -> bool:
    """Whether evaluating these assertions may wait (for a judge, a script): only then can a timeout cut it."""
    return any(REGISTRY[spec.type].waits for spec in specs)


def failure_message(results: list[AssertionResult]) -> str:
    """Every failure joined with `; ` (Yao's `error`)."""
    return "; ".join(r.message for r in results if not r.passed)


def undecided(results: list[AssertionResult]) -> AssertionResult | None:
    """The first assertion that could not decide (its judge failed), if any: the case is then an `error`."""
    return next((r for r in results if r.error_kind), None)


def _finish(spec: AssertionSpec, verdict: Verdict) -> AssertionResult:
    """The assertion's result: its verdict turned over by `negate`, its failure's message replaced by `message`. No
    verdict (`decided` False) is a failure either way, and says why itself."""
    passed, message = verdict.passed, verdict.message
    if not verdict.decided:
        return AssertionResult(type=spec.type, passed=False, message=message, expected=verdict.expected,
                               actual=verdict.actual, negate=spec.negate)
    if spec.negate:
        passed = not passed
        message = "negated assertion passed" if passed else f"negated: {message}"
    if not passed and spec.message:
        message = spec.message
    return AssertionResult(type=spec.type, passed=passed, message=message, expected=verdict.expected,
                           actual=verdict.actual, negate=spec.negate, score=verdict.score, details=verdict.details)


def subject_text(value: Any) -> str:
    """Text of a subject: strings as they are, None as "", anything else compact JSON with sorted keys."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return _compact_json(value)


def describe(value: Any, limit: int = 200) -> str:
    """A value as failure messages show it: compact JSON (strings quoted, so `"5"` and `5` differ), cut at `limit`."""
    return shorten(_compact_json(value), limit)


def _compact_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def json_type(value: Any) -> str:
    """The JSON type name of a value; a bool is `boolean`, never `number`."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def json_equal(a: Any, b: Any) -> bool:
    """Deep equality as JSON sees it: objects order-insensitive, 1 == 1.0, true != 1, arrays ordered."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b
