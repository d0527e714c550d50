"""A gate for user code that must block — an agent, hook or script called in the test's own process, which imports
this module: `gate.current.wait()` blocks until the test opens the gate, so a caller that went on meanwhile
abandoned the call rather than waited for it, however slow the machine."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager


class Gate:
    """Closed until `opened()` ends; `reached` is set once a call blocks at it."""

    def __init__(self) -> None:
        self.reached = threading.Event()
        self._open = threading.Event()

    def wait(self, *args: object) -> str:
        """Block until the gate opens. After 60 s it opens by itself, so that a caller waiting for the call fails
        its test instead of hanging it."""
        self.reached.set()
        self._open.wait(60)
        return "too late"


current = Gate()


@contextmanager
def closed() -> Iterator[Gate]:
    """A new closed gate as `current` for the block, opened when the block ends (releasing the calls it held)."""
    global current
    current = Gate()
    try:
        yield current
    finally:
        current._open.set()
