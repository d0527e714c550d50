"""Async user code that holds the run's event loop, stopped.

An `async def` agent, tool or hook runs on the run's event loop; one that blocks in it — `time.sleep`, `requests`,
a loop that never awaits — holds every case with it: the timeouts (timers of that loop) never fire, `--parallel`
runs one case at a time, and SIGINT and SIGTERM (handled when the loop turns) wait for it, so a CI job's cancel
waited for the agent and the run then ended as if nothing had asked it to stop. (A sync function runs in a thread
of its own: it holds nothing.)

In a process the run owns (the CLI), on its main thread, while cases run (`watched`): a heartbeat on the loop says
when it last turned, and

- a SIGINT or SIGTERM that comes while the loop is held raises `LoopHeld` in the code holding it (so that the loop
  turns and takes the signal as usual: the run stops, exit 130), and interrupts a blocking system call to do so;
  no case's async user function starts until the loop has taken it (`unless_stopping`);
- a watchdog thread that finds the loop held past the deadline of an async user call in flight (`awaiting`) sends
  the main thread SIGUSR2, whose handler raises `LoopHeld` there: the call ends as an error naming the line.

Only an async user call of a case (an agent, a tool, a script assertion: `awaiting` knows its task and deadline)
is ever stopped, never agenttest's own code, another task, or a hook (an After hook cleans up after an
interrupt). The run's worker threads leave these signals to the main thread (`quiet_thread`).

Elsewhere — the Python API and the pytest plugin (the caller's process and signals), another thread, Windows (no
`pthread_kill`), or SIGUSR2 already someone's — nothing is watched.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import signal
import threading
from collections.abc import Iterator
from time import monotonic
from types import FrameType
from typing import Any

HELD = 1.0          # seconds without a turn of the loop: it is held
GRACE = 0.5         # past a call's deadline before the watchdog stops it (a loop that turns late by less is busy)
BEAT = 0.25         # the heartbeat's and the watchdog's period


class LoopHeld(Exception):
    """Raised in async user code that held the run's event loop."""

    def __init__(self, seconds: float, when: str) -> None:
        super().__init__(f"held the run's event loop for {seconds:.1f}s ({when}): a blocking call in async code "
                         "(time.sleep, requests, a loop that never awaits) stops every case — await an async "
                         "equivalent, or make the function sync (it then runs in a thread of its own)")


class _Watch:
    def __init__(self) -> None:
        self.turned = monotonic()
        # Async user calls in flight that a case's deadline bounds: the task each runs on, and the deadline.
        self.calls: dict[int, tuple[asyncio.Task[Any] | None, float]] = {}
        self.nudged = 0.0
        self.signalled: int | None = None     # SIGINT or SIGTERM came: the run is stopping
        self.closed = False

    def held(self) -> float:
        """Seconds since the loop last turned; 0 while it turns."""
        seconds = monotonic() - self.turned
        return seconds if seconds >= HELD else 0.0

    def overdue(self) -> bool:
        now = monotonic()
        return any(now > deadline + GRACE for _, deadline in list(self.calls.values()))

    def on_signal(self, signum: int, frame: FrameType | None) -> None:
        """SIGINT or SIGTERM, the Python side (the loop hears it through its wakeup fd): what holds the loop now
        is stopped; what holds it later, by the watchdog."""
        self.signalled = signum
        self.on_nudge(signum, frame)

    def on_nudge(self, signum: int, frame: FrameType | None) -> None:
        """SIGUSR2 from the watchdog (or a signal): raise in the code holding the loop when it is an async user call
        this watch knows (`awaiting`) — never in agenttest's own code, a hook's teardown, or another case's task —
        and a signal came or its deadline passed."""
        held = self.held()
        if self.closed or not held:
            return
        try:
            task = asyncio.current_task()
        except RuntimeError:        # no loop running: nothing of a case's is
            return
        deadlines = [deadline for holder, deadline in list(self.calls.values()) if holder is task]
        if not deadlines:
            return
        if self.signalled is not None:
            why = f"{signal.Signals(self.signalled).name} came meanwhile"
        elif any(monotonic() > deadline + GRACE for deadline in deadlines):
            why = "past its case's deadline"
        else:
            return
        self.turned = self.nudged = monotonic()     # the loop turns now: no second nudge lands elsewhere
        raise LoopHeld(held, why)

    def watchdog(self, stop: threading.Event, main: int) -> None:
        quiet_thread()      # the process's signals go to the main thread, never this one
        while not stop.wait(BEAT):
            if self.held() and (self.signalled is not None or self.overdue()) and monotonic() - self.nudged > HELD:
                self.nudged = monotonic()
                signal.pthread_kill(main, signal.SIGUSR2)


_owned = [False]                        # whether a run owns the process (`owned`)
_watch: list[_Watch | None] = [None]    # the watch while cases run (`watched`)
_tokens = itertools.count()


@contextlib.contextmanager
def owned() -> Iterator[None]:
    """While a run owns the process, on its main thread (the CLI): its cases may be watched (`watched`)."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "pthread_kill"):
        yield
        return
    _owned[0] = True
    try:
        yield
    finally:
        _owned[0] = False


@contextlib.contextmanager
def watched() -> Iterator[None]:
    """While cases run on the running loop (inside the run's own SIGINT/SIGTERM handling): see the module."""
    if not _owned[0] or threading.current_thread() is not threading.main_thread() \
            or signal.getsignal(signal.SIGUSR2) not in (signal.SIG_DFL, None):
        yield
        return
    loop = asyncio.get_running_loop()
    watch = _Watch()
    beat: list[asyncio.TimerHandle] = []

    def heartbeat() -> None:
        watch.turned = monotonic()
        beat[:] = [loop.call_later(BEAT, heartbeat)]

    heartbeat()
    previous: dict[int, Any] = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    for signum in previous:
        signal.signal(signum, watch.on_signal)      # interrupting system calls: a blocking read is one
    signal.signal(signal.SIGUSR2, watch.on_nudge)
    stop = threading.Event()
    watchdog = threading.Thread(target=watch.watchdog, args=(stop, threading.main_thread().ident),
                                name="agenttest-watchdog", daemon=True)
    watchdog.start()
    _watch[0] = watch
    try:
        yield
    finally:
        watch.closed = True         # a nudge still on its way does nothing
        _watch[0] = None
        stop.set()
        watchdog.join(1.0)          # before SIGUSR2 is the default again, which would end the process
        beat[0].cancel()
        signal.signal(signal.SIGUSR2, signal.SIG_DFL)
        for signum, handler in previous.items():
            if handler is not None:
                signal.signal(signum, handler)
                signal.siginterrupt(signum, False)  # as the loop installed its own


def quiet_thread() -> None:
    """In a thread of the run's while its cases are watched: SIGINT, SIGTERM and SIGUSR2 go to the main thread,
    where they can stop what holds the loop, rather than to this one."""
    if _watch[0] is not None:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM, signal.SIGUSR2})


async def unless_stopping(deadline: float | None) -> None:
    """Before a case's async user function starts: once a signal came, the loop takes it first (the run stops,
    cancelling this call) rather than the next case's call holding it again. (A hook, with no deadline, runs: an
    After hook cleans up after an interrupt.)"""
    watch = _watch[0]
    if watch is not None and watch.signalled is not None and deadline is not None:
        await asyncio.sleep(BEAT)


@contextlib.contextmanager
def awaiting(deadline: float | None) -> Iterator[None]:
    """Around awaiting an async user function whose case must end by `deadline` (time.monotonic): the code that
    holds the loop in it may be stopped (`on_nudge`). Without a deadline (a hook), nothing is watched."""
    watch = _watch[0]
    if watch is None or deadline is None:
        yield
        return
    token = next(_tokens)
    watch.turned = monotonic()          # the loop is turning: it runs this
    watch.calls[token] = (asyncio.current_task(), deadline)
    try:
        yield
    finally:
        watch.calls.pop(token, None)
