"""Assertions: importing this package registers the text assertions; the other built-in types are registered by
their module when the registry is first asked for one of them (`base.LAZY_TYPES`)."""

import importlib
from types import ModuleType

from . import text
from .base import (
    REGISTRY,
    AssertionResult,
    AssertionSpec,
    AssertionType,
    EvalContext,
    Verdict,
    assertion,
    describe,
    evaluate_all,
    failure_message,
    json_equal,
    known_types,
    prepare_assertion,
    subject_text,
)

__all__ = [
    "REGISTRY",
    "AssertionResult",
    "AssertionSpec",
    "AssertionType",
    "EvalContext",
    "Verdict",
    "assertion",
    "describe",
    "evaluate_all",
    "failure_message",
    "json_equal",
    "judge",
    "known_types",
    "prepare_assertion",
    "script",
    "structured",
    "subject_text",
    "text",
    "timing",
    "tools",
]


def __getattr__(name: str) -> ModuleType:
    """The modules of the types registered when first wanted (`assertions.judge`, …), imported when named."""
    if name in ("judge", "script", "structured", "timing", "tools"):
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
