"""Go-style durations (`300ms`, `1m30s`): parsing for flags and cases, formatting for messages."""

from __future__ import annotations

import re

_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_PART = re.compile(r"([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h)")


def parse_duration(text: str) -> float:
    """Seconds in a Go duration string; raises ValueError with the reason."""
    s = text.strip()
    if s in ("0", "+0", "-0"):
        return 0.0
    sign = 1.0
    if s and s[0] in "+-":
        sign = -1.0 if s[0] == "-" else 1.0
        s = s[1:]
    if not s:
        raise ValueError(f"invalid duration {text!r}")
    total, pos = 0.0, 0
    while pos < len(s):
        match = _PART.match(s, pos)
        if not match:
            raise ValueError(f"invalid duration {text!r} (use e.g. 300ms, 30s, 1m30s, 2h)")
        total += float(match.group(1)) * _UNITS[match.group(2)]
        pos = match.end()
    if sign < 0:
        raise ValueError(f"invalid duration {text!r}: must not be negative")
    return total


def parse_timeout(text: str) -> float:
    """A timeout: a Go duration of more than nothing (`0s` would time out every case at once)."""
    seconds = parse_duration(text)
    if seconds <= 0:
        raise ValueError(f"invalid timeout {text!r}: must be more than 0")
    return seconds


def format_duration(seconds: float) -> str:
    """Go's time.Duration.String(): `2m0s`, `1.5s`, `300ms`, `1h0m0s`."""
    if seconds == 0:
        return "0s"
    nanos = round(seconds * 1e9)
    if nanos < 1_000:
        return f"{nanos}ns"
    if nanos < 1_000_000:
        return f"{_trim(nanos / 1e3)}µs"
    if nanos < 1_000_000_000:
        return f"{_trim(nanos / 1e6)}ms"
    hours, rest = divmod(nanos, 3_600_000_000_000)
    minutes, rest = divmod(rest, 60_000_000_000)
    secs = _trim(rest / 1e9)
    if hours:
        return f"{hours}h{minutes}m{secs}s"
    if minutes:
        return f"{minutes}m{secs}s"
    return f"{secs}s"


def format_elapsed(seconds: float) -> str:
    """Short human duration for the console (Yao's layout): `<1ms`, `120ms`, `2.7s`, `1.8m`."""
    if seconds < 1e-3:
        return "<1ms"
    if seconds < 1:
        return f"{round(seconds * 1e3)}ms"
    if seconds < 60:
        return f"{seconds:.1f}s"
    return f"{seconds / 60:.1f}m"


def format_ms(value: float) -> str:
    """Milliseconds to one decimal, without a trailing `.0` (so 1000.4 never shows as 1000): `3.6ms`, `2000ms`."""
    return f"{value:.1f}".removesuffix(".0") + "ms"


def _trim(value: float) -> str:
    text = f"{value:.9f}".rstrip("0").rstrip(".")
    return text or "0"
