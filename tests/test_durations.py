from __future__ import annotations

import pytest

from agenttest.durations import format_duration, format_elapsed, parse_duration


@pytest.mark.parametrize(("text", "seconds"), [
    ("300ms", 0.3), ("30s", 30), ("1m30s", 90), ("2h", 7200), ("1.5s", 1.5), ("0s", 0), ("0", 0), ("500us", 0.0005),
])
def test_parse(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "  ", "5", "5 m", "abc", "1x", "-1s", "m", "٣s"])
def test_parse_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        parse_duration(text)


@pytest.mark.parametrize(("seconds", "text"), [
    (120, "2m0s"), (300, "5m0s"), (0.2, "200ms"), (1.5, "1.5s"), (3600, "1h0m0s"), (90.5, "1m30.5s"), (0, "0s"),
])
def test_format_like_go(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text


def test_elapsed() -> None:
    assert [format_elapsed(s) for s in (0.0004, 0, 0.12, 2.73, 108)] == ["<1ms", "<1ms", "120ms", "2.7s", "1.8m"]
