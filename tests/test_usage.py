"""Amounts of money as every report writes them."""

from __future__ import annotations

import pytest

from agenttest.usage import format_usd


@pytest.mark.parametrize(("value", "text"), [
    (0, "$0.0000"), (0.0123, "$0.0123"), (1234.5, "$1,234.5000"), (0.0001, "$0.0001"),
    (0.00001, "$0.000010"), (0.0000042, "$0.0000042"), (0.00009999, "$0.00010"), (-0.0000042, "-$0.0000042"),
])
def test_small_amounts_keep_two_significant_digits(value: float, text: str) -> None:
    assert format_usd(value) == text
