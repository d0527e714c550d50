"""SIGINT and SIGTERM during a run: before any case has run they cancel the work (`cancelled_by_signals`), once
cases run they stop the scheduling and cancel what is in flight (`Interrupts`); a second signal exits at once."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

from ..errors import EXIT_INTERRUPTED
from .schedule import Scheduler


@contextlib.contextmanager
def signals_handled(on_signal: Callable[[int], None]) -> Iterator[None]:
    """While inside, SIGINT and SIGTERM call `on_signal(signum)` on the running event loop (where the loop can
    take them: not on Windows, nor off the main thread)."""
    loop = asyncio.get_running_loop()
    installed = []
    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):   # Windows, non-main thread
            loop.add_signal_handler(signum, on_signal, signum)
            installed.append(signum)
    try:
        yield
    finally:
        for signum in installed:
            loop.remove_signal_handler(signum)


@contextlib.contextmanager
def cancelled_by_signals() -> Iterator[None]:
    """While no case has run (generators at work): SIGINT/SIGTERM cancel the work and end the run as interrupted
    (KeyboardInterrupt, exit 130) — there is nothing to report yet."""
    task = asyncio.current_task()
    signalled: list[int] = []

    def on_signal(signum: int) -> None:
        signalled.append(signum)
        if task is not None:
            task.cancel()

    try:
        with signals_handled(on_signal):
            yield
    except asyncio.CancelledError:
        if signalled:
            raise KeyboardInterrupt from None
        raise


class Interrupts:
    """While cases run: SIGINT/SIGTERM stop scheduling and cancel the cases and the global hook in flight; a second
    signal exits at once."""

    def __init__(self, scheduler: Scheduler[Any]) -> None:
        self.scheduler = scheduler
        self._guarded: asyncio.Task[Any] | None = None
        self._also: list[Scheduler[Any]] = []

    def watch(self, scheduler: Scheduler[Any]) -> None:
        """A signal interrupts `scheduler` too (the rechecks after the cases): the run's own still says it was
        interrupted."""
        self._also.append(scheduler)

    @contextlib.contextmanager
    def handled(self) -> Iterator[Interrupts]:
        with signals_handled(self.on_signal):
            yield self

    def on_signal(self, signum: int) -> None:
        if self.scheduler.interrupted:
            os._exit(EXIT_INTERRUPTED)
        print(f"\n⚠ {signal.Signals(signum).name}: stopping, writing partial results…", file=sys.stderr)
        self.scheduler.interrupt()
        for scheduler in self._also:
            scheduler.interrupt()
        if self._guarded is not None:
            self._guarded.cancel()

    async def guard(self, awaitable: Awaitable[Any]) -> Any:
        """Await a global hook so that a signal cancels it (CancelledError reaches the caller)."""
        self._guarded = asyncio.ensure_future(awaitable)
        try:
            return await self._guarded
        finally:
            self._guarded = None
