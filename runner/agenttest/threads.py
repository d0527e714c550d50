"""Call user code (agents, hooks, scripts) the one way: off the event loop, in threads that never delay exit.

asyncio.to_thread uses the loop's default executor, whose threads asyncio.run joins on shutdown: a sync agent
stuck past its timeout would hold the whole run open. A daemon thread per call is abandoned instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import inspect
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from .held_loop import awaiting, quiet_thread, unless_stopping
from .user_errors import record

T = TypeVar("T")


async def call_user(func: Callable[..., Any], *args: Any, deadline: float | None = None) -> Any:
    """Call a user's function, sync or async, and return what it returns (awaited when it is awaitable).

    Only as many of `args` are passed as the function takes positionally. A sync function runs in a daemon thread,
    so it neither blocks the other cases nor escapes the case's timeout. `sys.exit`, `KeyboardInterrupt` and other
    non-`Exception` escapes become a RuntimeError, so user code can fail a case but never end the run; cancellation
    of the calling task (a timeout, Ctrl-C) still propagates. What the function raised is recorded for the case's
    report (`user_errors.record`); `user_errors.describe` says where in the user's code it was raised. An async
    function that holds the event loop past `deadline` (time.monotonic) is stopped there (`held_loop`).
    """
    args = args[:_arity(func, len(args))]
    try:
        if inspect.iscoroutinefunction(func):
            await unless_stopping(deadline)
            with awaiting(deadline):
                result = await func(*args)
        else:
            result = await run_in_thread(func, *args)
        if inspect.isawaitable(result):
            with awaiting(deadline):
                result = await result
    except asyncio.CancelledError as exc:
        if _being_cancelled():
            raise
        raise RuntimeError(_escape_message(exc)) from exc
    except Exception as exc:
        record(exc)
        raise
    except BaseException as exc:
        record(exc)
        raise RuntimeError(_escape_message(exc)) from exc
    return result


async def run_in_thread(func: Callable[..., T], *args: Any) -> T:
    """`func(*args)` in a new daemon thread (with the caller's context variables), awaited without blocking the loop.

    Whatever `func` raises is re-raised here, BaseExceptions included. When the awaiting task is cancelled the
    thread cannot be stopped: it runs on, its outcome is discarded, and it never keeps the process alive.
    """
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
        quiet_thread()
        try:
            value = context.run(func, *args)
        except BaseException as exc:  # handed to the awaiting coroutine, which decides
            error = exc
            deliver(lambda: future.set_exception(error))
        else:
            deliver(lambda: future.set_result(value))

    threading.Thread(target=target, name=f"agenttest-{getattr(func, '__name__', 'call')}", daemon=True).start()
    return await future


def _arity(func: Callable[..., Any], available: int) -> int:
    """How many of `available` positional arguments `func` accepts (all of them when it takes *args or hides its
    signature)."""
    try:
        taken = _positional(func)
    except TypeError:       # a callable that cannot be a key: looked at each time
        taken = _positional.__wrapped__(func)
    return available if taken is None else min(taken, available)


@functools.lru_cache(maxsize=256)
def _positional(func: Callable[..., Any]) -> int | None:
    """How many positional arguments `func` takes; None for any number (*args, or a signature it hides). Kept for
    each of the few functions a run calls (an agent is called once a case: inspect.signature took ~20 µs)."""
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return None
    count = 0
    for param in params:
        if param.kind == param.VAR_POSITIONAL:
            return None
        if param.kind in (param.POSITIONAL_ONLY, param.POSITIONAL_OR_KEYWORD):
            count += 1
    return count


def _being_cancelled() -> bool:
    """Whether the current task was asked to stop, as opposed to user code raising CancelledError on its own.
    Python 3.10 cannot tell the two apart, so there every CancelledError counts as ours."""
    task = asyncio.current_task()
    cancelling = getattr(task, "cancelling", None)
    return cancelling is None or cancelling() > 0


def _escape_message(exc: BaseException) -> str:
    if isinstance(exc, SystemExit):
        return f"called sys.exit({'' if exc.code is None else repr(exc.code)})"
    text = str(exc)
    return f"raised {type(exc).__name__}" + (f": {text}" if text else "")
