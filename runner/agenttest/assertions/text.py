"""Text assertions: deep equality, substrings and regular expressions on the response subject.

`regex` uses Python's `re`, not Go's RE2. Patterns written for Yao keep working, inline flags such as `(?i)`, `(?s)`
and `(?m)` included; Python also accepts lookaround and backreferences, which RE2 rejects. RE2-only syntax
(`\\p{Greek}`, `\\z`, `[[:alpha:]]`) is not understood, and a pathological pattern can backtrack where RE2 cannot.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..errors import SuiteError
from . import regex_limit
from .base import AssertionSpec, EvalContext, Verdict, assertion, describe, json_equal, subject_text

if TYPE_CHECKING:
    from .option_models import SubstringOptions


@assertion("equals", "")
def equals(spec: AssertionSpec, ctx: EvalContext) -> Verdict:
    """The subject deep-equals `value` (objects order-insensitive, `1 == 1.0`, `true != 1`, arrays ordered).

    `value`: the expected subject; without one, the subject must be null.
    """
    output = ctx.output
    if json_equal(output, spec.value):
        return Verdict(True, "values are equal", expected=spec.value, actual=output)
    return Verdict(False, f"expected {describe(spec.value)}, got {describe(output)}", expected=spec.value,
                   actual=output)


def _prepare_substrings(spec: AssertionSpec) -> None:
    """`value` is required: one substring, or a non-empty list of them; non-strings are matched as compact JSON."""
    if spec.value is None:
        raise SuiteError(f"{spec.type} assertion needs a 'value' (a string, or a list of strings)")
    if isinstance(spec.value, list) and not spec.value:
        raise SuiteError(f"{spec.type} assertion 'value' is an empty list")


@assertion("contains", prepare=_prepare_substrings, options=".option_models:SubstringOptions")
def contains(spec: AssertionSpec, ctx: EvalContext) -> Verdict:
    """The text of the subject contains `value`; a list `value` means every item."""
    items, absent = _substrings(spec, ctx)
    if absent:
        return Verdict(False, f"output does not contain {_quoted(absent)}", expected=spec.value, actual=ctx.output)
    return Verdict(True, f"output contains {_quoted(items)}", expected=spec.value, actual=ctx.output)


@assertion("not_contains", prepare=_prepare_substrings, options=".option_models:SubstringOptions")
def not_contains(spec: AssertionSpec, ctx: EvalContext) -> Verdict:
    """The text of the subject contains none of `value` (one string, or a list of them)."""
    items, absent = _substrings(spec, ctx)
    present = [item for item in items if item not in absent]
    if present:
        return Verdict(False, f"output should not contain {_quoted(present)}", expected=spec.value,
                       actual=ctx.output)
    return Verdict(True, f"output does not contain {_quoted(items)}", expected=spec.value, actual=ctx.output)


def _substrings(spec: AssertionSpec, ctx: EvalContext) -> tuple[list[str], list[str]]:
    """Every expected substring, and those missing from the text."""
    values = spec.value if isinstance(spec.value, list) else [spec.value]
    items = [subject_text(v) for v in values]
    text = ctx.text
    # No options given: the defaults (ignore_case false), read without building the options model (pydantic).
    options: SubstringOptions | None = spec.typed_options if spec.options else None
    if options is not None and options.ignore_case:
        text = text.casefold()
        return items, [item for item in items if item.casefold() not in text]
    return items, [item for item in items if item not in text]


def _quoted(items: list[str]) -> str:
    return ", ".join(f"'{item}'" for item in items)


def _prepare_regex(spec: AssertionSpec) -> None:
    """`value` must be a string pattern that compiles; the compiled pattern is kept in `prepared`."""
    if not isinstance(spec.value, str):
        raise SuiteError(f"regex assertion 'value' must be a string pattern, got {describe(spec.value)}")
    try:
        spec.prepared = re.compile(spec.value)
    except re.error as exc:
        raise SuiteError(f"invalid regex pattern {spec.value!r}: {exc}") from exc


@assertion("regex", prepare=_prepare_regex)
def regex(spec: AssertionSpec, ctx: EvalContext) -> Verdict:
    """The pattern `value` is found anywhere in the text of the subject (unanchored `re.search`).

    `value`: a Python regular expression; anchor it with `^…$` for a full match, `(?i)` for case-insensitive.
    """
    pattern: re.Pattern[str] = spec.prepared
    try:
        found = regex_limit.search(pattern, ctx.text)
    except regex_limit.TooSlow as exc:
        return Verdict(False, f"output not checked: {exc}", expected=spec.value, actual=ctx.output)
    if found:
        return Verdict(True, f"output matches pattern '{spec.value}'", expected=spec.value, actual=ctx.output)
    return Verdict(False, f"output does not match pattern '{spec.value}'", expected=spec.value, actual=ctx.output)
