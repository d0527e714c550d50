"""Run entries with bounded concurrency; results keep input order; `stop` (fail-fast, a spent budget) and
interrupts end scheduling; `add` puts more entries up next while the run is on (`--runs auto`)."""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

from ..results import CaseResult

Entry = TypeVar("Entry")
FLUSH_EVERY = 0.05     # seconds: the longest `flush` waits while entries finish without the loop turning


class Scheduler(Generic[Entry]):
    """N workers pull entries in input order. After `stop(reason)` (fail-fast, a spent budget: called from
    `on_finish`) or `interrupt()` (a signal) nothing new starts; an interrupt also cancels what is in flight.
    Entries that never finished get a `skipped` result saying why, so the counts always add up.

    `add(entries)` — from `on_finish`, as `--runs auto` asks for a case's next runs — puts entries ahead of those
    not yet started, so the case they belong to is decided soon; a worker with nothing to start waits while
    others are at work, for what they may add. Results come in the order the entries ended up in.

    `later(call)` — from `on_start` and `on_finish`, for what need not hold up the next request (telling the
    reporters) — calls it once the event loop has run the workers it woke with it, in order, all before `run`
    returns. `flush` is called after them (the reporters' writes go out together): at the end of the loop's turn
    that made them, and at least every FLUSH_EVERY seconds while entries finish without the loop turning."""

    def __init__(self, entries: list[Entry], run_one: Callable[[Entry], Awaitable[CaseResult]],
                 skipped: Callable[[Entry, str], CaseResult], parallel: int = 4,
                 on_start: Callable[[Entry], None] | None = None,
                 on_finish: Callable[[CaseResult, Entry], None] | None = None, keep: bool = True,
                 flush: Callable[[], None] | None = None) -> None:
        self._entries: list[Entry | None] = list(entries)       # ours to add to
        self._keep = keep       # False: a finished entry and its result are let go (`on_finish` had them)
        self._run_one = run_one
        self._skipped = skipped
        self._parallel = max(1, parallel)
        self._on_start = on_start or (lambda entry: None)
        self._on_finish = on_finish or (lambda result, entry: None)
        self._next = 0
        self._stop_reason: str | None = None
        self._workers: list[asyncio.Task[None]] = []
        self._results: list[CaseResult | object | None] = [None] * len(self._entries)
        self._busy = 0                          # workers running an entry
        self._changed = asyncio.Event()         # an entry was added, a worker went idle, or scheduling stopped
        self._later: deque[tuple[Callable[..., None], tuple[object, ...]]] = deque()
        self._later_due = False                 # a drain of `_later` is scheduled on the loop
        self._later_failed: BaseException | None = None
        self._drains = 0                        # how many times `_later` was drained
        self._flush = flush or (lambda: None)
        self._flushed = 0.0                     # time.monotonic() of the last flush
        self.interrupted = False

    @property
    def running(self) -> bool:
        return any(not worker.done() for worker in self._workers)

    def stop(self, reason: str) -> None:
        if self._stop_reason is None:
            self._stop_reason = reason
        self._changed.set()

    def add(self, entries: list[Entry]) -> None:
        """Run `entries` next, before the entries not yet started (after a stop: skipped, as those are)."""
        if not entries:
            return
        self._entries[self._next:self._next] = entries
        self._results[self._next:self._next] = [None] * len(entries)
        self._changed.set()

    def interrupt(self) -> None:
        self.interrupted = True
        self.stop("interrupted")
        for worker in self._workers:
            worker.cancel()

    async def run(self) -> list[CaseResult]:
        """Every entry's result, in the order the entries ended up in (none unless the scheduler keeps them)."""
        results = self._results
        self._workers = [asyncio.create_task(self._work(results)) for _ in range(self._parallel)]
        outcomes = await asyncio.gather(*self._workers, return_exceptions=True)
        for outcome in outcomes:
            if isinstance(outcome, Exception):  # our bug: let it surface with its traceback
                raise outcome
        reason = self._stop_reason or "not run"
        self._next = len(results)       # what `on_finish` adds from here on comes last, and is skipped in turn
        for index, result in enumerate(results):
            if result is None:   # never started: reported like any other result, so every count adds up
                entry = self._entries[index]
                self._finished(index, self._skipped(entry, reason), entry)  # type: ignore[arg-type]
        self._drain()
        self._flushing()
        if self._later_failed is not None:      # our bug in what was put off: let it surface with its traceback
            raise self._later_failed
        return results if self._keep else []  # type: ignore[return-value]

    def later(self, call: Callable[..., None], *args: object) -> None:
        """Call `call(*args)` once the workers the event loop woke with this one have sent their next requests
        (telling the reporters: the console, events.jsonl, the result log), in the order asked; all of them before
        `run` returns. A case's reply that is in is followed by the next case's request at once, the reports after:
        at 64 cases in flight, the replies come in together, and reporting each before the next request went out
        kept every request of the group waiting for the reports of those before it."""
        self._later.append((call, args))
        if not self._later_due:
            self._later_due = True
            asyncio.get_running_loop().call_soon(self._drain_due)

    def _drain_due(self) -> None:
        self._later_due = False
        self._drain()
        self._flushing()

    def _flushing(self) -> None:
        self._flushed = time.monotonic()
        try:
            self._flush()
        except Exception as exc:    # as in `_drain`: ours, kept for `run` to raise
            if self._later_failed is None:
                self._later_failed = exc

    def _drain(self) -> None:
        self._drains += 1
        later = self._later
        while later:
            call, args = later.popleft()
            try:
                call(*args)
            except Exception as exc:    # reporters catch their own: this is ours, kept for `run` to raise
                if self._later_failed is None:
                    self._later_failed = exc

    def _finished(self, index: int, result: CaseResult, entry: Entry) -> None:
        """Keep (or let go of) the entry's result, then tell `on_finish`: it may add entries, after this one."""
        if self._keep:
            self._results[index] = result
        else:
            self._results[index], self._entries[index] = _DONE, None
        self._on_finish(result, entry)

    async def _work(self, results: list[CaseResult | object | None]) -> None:
        drains = -1         # `_drains` when this worker's last entry finished
        while self._stop_reason is None:
            if self._next >= len(self._entries):
                if not self._busy:          # nothing to start, and nobody left to add any
                    return
                self._changed.clear()
                await self._changed.wait()
                continue
            index = self._next
            self._next += 1
            entry: Entry = self._entries[index]  # type: ignore[assignment]
            self._busy += 1
            try:
                self._on_start(entry)
                result = await self._run_one(entry)
            except asyncio.CancelledError as exc:   # what the case had done, if it says
                partial = getattr(exc, "result", None)
                if not isinstance(partial, CaseResult):
                    partial = self._skipped(entry, "interrupted")
                self._finished(index, partial, entry)
                return
            finally:
                self._busy -= 1
                self._changed.set()
            if self._drains == drains:      # the loop did not turn since this worker's last entry (a replay, an
                self._drain()               # agent that never waits): what it put off is told now, in order
                if time.monotonic() - self._flushed >= FLUSH_EVERY:
                    self._flushing()
            self._finished(index, result, entry)    # may add entries: before this worker looks for its next one
            drains = self._drains


_DONE = object()    # the result of an entry that finished, when the scheduler does not keep results
