"""held_loop's core on a real event loop, in this process's main thread: only an async user call the watch knows
(its task, its case's deadline) is stopped when it holds the loop — never other code that holds it meanwhile — and
the handlers are what they were afterwards. (The CLI end to end: tests/e2e/test_held_loop.py.)"""

from __future__ import annotations

import asyncio
import signal
import threading
import time

import pytest

from agenttest import held_loop
from agenttest.held_loop import LoopHeld


async def _watched_call(deadline: float, seconds: float) -> str:
    """A case's async call that blocks the loop for `seconds`."""
    with held_loop.awaiting(deadline):
        time.sleep(seconds)
        return "done"


def test_only_a_known_call_past_its_deadline_is_stopped_never_other_code_holding_the_loop() -> None:
    before = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGUSR2)}

    async def main() -> tuple[str, BaseException | str]:
        with held_loop.watched():
            async def overdue_but_waiting() -> None:    # keeps the watchdog nudging while others hold the loop
                with held_loop.awaiting(time.monotonic() - 10):
                    await asyncio.sleep(5)

            waiting = asyncio.ensure_future(overdue_but_waiting())
            await asyncio.sleep(0)
            time.sleep(1.8)          # agenttest's own (or a hook's) code holding the loop: never interrupted
            other = "ran to its end"
            try:
                result: BaseException | str = await _watched_call(time.monotonic() + 0.1, 30)
            except LoopHeld as exc:
                result = exc
            waiting.cancel()
            return other, result

    with held_loop.owned():
        started = time.monotonic()
        other, result = asyncio.run(main())
    assert other == "ran to its end"
    assert isinstance(result, LoopHeld) and "(past its case's deadline)" in str(result)
    assert time.monotonic() - started < 10
    assert {signum: signal.getsignal(signum) for signum in before} == before


def test_nothing_is_watched_outside_a_process_the_run_owns() -> None:
    async def main() -> str:
        with held_loop.watched():
            assert signal.getsignal(signal.SIGUSR2) == signal.SIG_DFL
            return await _watched_call(time.monotonic() - 10, 1.6)     # the Python API: the caller's process

    assert asyncio.run(main()) == "done"


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_stops_a_known_call_holding_the_loop(signum: int) -> None:
    async def main() -> BaseException | str:
        loop = asyncio.get_running_loop()
        stopped: list[int] = []
        loop.add_signal_handler(signum, stopped.append, signum)      # as the run's Interrupts do
        try:
            with held_loop.watched():
                threading.Timer(1.3, signal.pthread_kill, (threading.main_thread().ident, signum)).start()
                try:
                    return await _watched_call(time.monotonic() + 60, 30)
                except LoopHeld as exc:
                    await asyncio.sleep(0.05)       # the loop takes the signal too
                    assert stopped == [signum]
                    return exc
        finally:
            loop.remove_signal_handler(signum)

    with held_loop.owned():
        result = asyncio.run(main())
    assert isinstance(result, LoopHeld) and f"({signal.Signals(signum).name} came meanwhile)" in str(result)
