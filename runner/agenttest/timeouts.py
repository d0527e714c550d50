"""Awaiting something for at most so many seconds, as cheaply as the interpreter allows."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable
from typing import TypeVar

T = TypeVar("T")

if sys.version_info >= (3, 11):
    async def within(awaitable: Awaitable[T], seconds: float) -> T:
        """`awaitable`'s result, or TimeoutError once `seconds` have passed (it is then cancelled).

        `asyncio.wait_for` on 3.11 runs the awaitable in a task of its own, with a timer: ~25 µs on the project's
        machine, paid on every agent call. `asyncio.timeout` cancels the task already running instead, which is
        what wait_for itself does from 3.12. An awaitable that swallows its cancellation and returns late has
        still run out of time: TimeoutError too."""
        async with asyncio.timeout(seconds) as scope:
            result = await awaitable
        if scope.expired():
            raise TimeoutError
        return result
else:
    async def within(awaitable: Awaitable[T], seconds: float) -> T:
        """`awaitable`'s result, or TimeoutError once `seconds` have passed (it is then cancelled). 3.10's
        `asyncio.wait_for` returns the result of an awaitable that swallowed its cancellation and returned late:
        that call has still run out of time, as on 3.11."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        result = await asyncio.wait_for(awaitable, seconds)
        if loop.time() >= deadline:
            raise asyncio.TimeoutError
        return result
