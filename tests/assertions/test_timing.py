"""The latency assertion."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from agenttest.assertions import AssertionResult
from agenttest.errors import SuiteError

Check = Callable[..., AssertionResult]


def test_within_the_limit(check: Check) -> None:
    result = check({"type": "latency", "value": 1000}, "hi", latency_ms=850.0)
    assert (result.passed, result.message, result.expected, result.actual) == (
        True, "latency 850ms is within 1000ms", 1000, 850.0)


def test_the_limit_itself_passes(check: Check) -> None:
    assert check({"type": "latency", "value": 1000}, "hi", latency_ms=1000.0).passed


def test_over_the_limit(check: Check) -> None:
    result = check({"type": "latency", "value": 1000}, "hi", latency_ms=1000.4)
    assert (result.passed, result.message) == (False, "latency 1000.4ms exceeds 1000ms")


def test_fractional_limit(check: Check) -> None:
    assert check({"type": "latency", "value": 2.5}, "hi", latency_ms=2.0).message == "latency 2ms is within 2.5ms"


@pytest.mark.parametrize("value", [None, "1s", -1, True, float("nan")])
def test_value_must_be_a_non_negative_number(check: Check, value: Any) -> None:
    with pytest.raises(SuiteError, match="latency assertion 'value' must be a non-negative number of milliseconds"):
        check({"type": "latency", "value": value}, "hi")
