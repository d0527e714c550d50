"""Run blocking user code (sync agents, hooks) off the event loop, in threads that never delay exit.

asyncio.to_thread uses the loop's default executor, whose threads asyncio.run joins on shutdown: a sync agent
stuck past its timeout would hold the whole run open. A daemon thread per call is abandoned instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


async def run_in_thread(func: Callable[..., T], *args: Any) -> T:
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()
    context = contextvars.copy_context()

    def settle(outcome: Callable[[], None]) -> None:
        if not future.done():
            outcome()

    def deliver(outcome: Callable[[], None]) -> None:
        # The run may have ended (loop closed) while an abandoned call was still going: nobody waits for it.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(settle, outcome)

    def target() -> None:
        try:
            value = context.run(func, *args)
        except BaseException as exc:  # handed to the awaiting coroutine, which decides
            error = exc
            deliver(lambda: future.set_exception(error))
        else:
            deliver(lambda: future.set_result(value))

    threading.Thread(target=target, name=f"agenttest-{getattr(func, '__name__', 'call')}", daemon=True).start()
    return await future
