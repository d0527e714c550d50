"""A regular expression's search of untrusted text, stopped when it runs too long.

A pattern that backtracks catastrophically on a reply (`^(\\w+\\s?)*$` on 34 letters and a `!`) holds the run's one
thread for as long as it takes — minutes, hours — and with it the case timeouts, SIGINT and SIGTERM (handled when
the event loop turns) and every artifact: a suite or a reply from a fork could stall a CI job until the job's own
limit, where an interrupt must still end a run within seconds (docs/security.md). Python's `re` runs a search in C,
but checks for signals as it goes, so a Python signal handler can stop it: in a process the run owns (the CLI), on
its main thread, each search runs under a timer (`setitimer`, ~0.6 µs a search) whose SIGALRM handler raises
`TooSlow`. Elsewhere — the Python API and the pytest plugin (the caller's process), another thread, Windows (no
SIGALRM) — a search runs as it is.
"""

from __future__ import annotations

import re
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from threading import get_ident, main_thread
from types import FrameType

SEARCH_SECONDS = 2.0
if hasattr(signal, "setitimer"):
    from signal import ITIMER_REAL, setitimer


class TooSlow(Exception):
    """A search stopped after SEARCH_SECONDS."""

    def __init__(self, pattern: str) -> None:
        super().__init__(f"the pattern '{pattern}' was stopped after {SEARCH_SECONDS:g}s on this text: it backtracks "
                         "catastrophically on it (a repeated group that can match the same text in many ways, such "
                         "as (\\w+\\s?)*)")
        self.pattern = pattern


_armed: list[int | None] = [None]       # the main thread's id while `owned` has the handler installed
_searching: list[re.Pattern[str] | None] = [None]   # the timed search running: only it is stopped by the alarm
_main = main_thread().ident


def _alarm(signum: int, frame: FrameType | None) -> None:
    pattern = _searching[0]
    if pattern is not None:
        _searching[0] = None
        raise TooSlow(pattern.pattern)


@contextmanager
def owned() -> Iterator[None]:
    """While a run owns the process: each `search` on the main thread is timed. (Code that puts a SIGALRM handler
    of its own in place meanwhile — only an async agent on the main thread could — gets the alarm of a search that
    ran SEARCH_SECONDS.)"""
    if not hasattr(signal, "setitimer") or get_ident() != _main:
        yield
        return
    previous = signal.signal(signal.SIGALRM, _alarm)
    _armed[0] = _main
    try:
        yield
    finally:
        _armed[0] = None
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def search(pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    """`pattern.search(text)`, stopped by `TooSlow` after SEARCH_SECONDS where it can be (see the module)."""
    if _armed[0] != get_ident():        # not in a run's process, or off its main thread
        return pattern.search(text)
    _searching[0] = pattern
    setitimer(ITIMER_REAL, SEARCH_SECONDS)
    try:
        return pattern.search(text)
    finally:
        _searching[0] = None            # first: an alarm from here on stops nothing
        setitimer(ITIMER_REAL, 0)
