"""`within`: at most so many seconds, even for an awaitable that will not be cancelled."""

from __future__ import annotations

import asyncio

import pytest

from agenttest.timeouts import within


async def _stubborn() -> str:
    try:
        await asyncio.sleep(5)
    except asyncio.CancelledError:      # a user's agent that swallows its cancellation and answers anyway
        await asyncio.sleep(0.05)
        return "late"
    return "never"


def test_an_awaitable_that_swallows_its_cancellation_still_times_out() -> None:
    with pytest.raises(asyncio.TimeoutError):
        asyncio.run(within(_stubborn(), 0.05))


def test_an_awaitable_in_time_gives_its_result() -> None:
    async def quick() -> str:
        await asyncio.sleep(0)
        return "ok"

    assert asyncio.run(within(quick(), 1)) == "ok"
