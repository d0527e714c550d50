"""Timing assertions: how long the agent call took."""

from __future__ import annotations

import math

from ..durations import format_ms
from ..errors import SuiteError
from .base import AssertionSpec, EvalContext, Verdict, assertion, describe


def _prepare_latency(spec: AssertionSpec) -> None:
    value = spec.value
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value) or value < 0:
        raise SuiteError(f"latency assertion 'value' must be a non-negative number of milliseconds, "
                         f"got {describe(value)}")


@assertion("latency", prepare=_prepare_latency)
def latency(spec: AssertionSpec, ctx: EvalContext) -> Verdict:
    """The agent call took at most `value` milliseconds.

    `value`: the limit in milliseconds (a non-negative number).
    """
    took = ctx.latency_ms
    if took <= spec.value:
        return Verdict(True, f"latency {format_ms(took)} is within {format_ms(spec.value)}", expected=spec.value,
                       actual=took)
    return Verdict(False, f"latency {format_ms(took)} exceeds {format_ms(spec.value)}", expected=spec.value,
                   actual=took)
