"""Assertions: importing this package registers every built-in assertion type."""

from . import judge, script, structured, text, timing, tools
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
