"""Calling the agent under test (`engine.target.call_agent`): a call that may wait is cut by the case's time; a
replayed call, answered from the cassettes at once, sets no timer (issue #27: a 10,000-case replay made and
cancelled one a case), yet answers and fails as it always did — even with no time left."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agenttest.agents.base import AgentRequest, AgentResponse
from agenttest.agents.meter import Meter, MeteredAgent
from agenttest.agents.replay import Cassettes, ReplayingAgent
from agenttest.engine.target import call_agent
from agenttest.errors import AgentCallError

CASE = ("tests/s.jsonl", "c1")


def _request(text: str) -> AgentRequest:
    return AgentRequest(agent="llm", messages=[{"role": "user", "content": text}], context={"test_id": "c1"},
                        case=CASE)


def _replaying(tmp_path: Path) -> MeteredAgent:
    """The agent a replay calls: a ReplayingAgent behind the run's meter, over a cassette holding one call."""
    recorder = Cassettes(tmp_path / "tapes")
    recorder.record(_request("hello"), CASE, AgentResponse(content="hi there", usage={"total_tokens": 3}))
    recorder.save()
    return MeteredAgent(ReplayingAgent("llm", Cassettes(tmp_path / "tapes")), Meter(), lambda request: None)


@pytest.mark.parametrize("seconds", [5.0, 0.0])
def test_a_replayed_call_answers_without_a_timer(tmp_path: Path, seconds: float) -> None:
    agent = _replaying(tmp_path)

    async def call() -> tuple[AgentResponse, int]:
        loop = asyncio.get_running_loop()
        response, _ = await call_agent(agent, _request("hello"), seconds)
        return response, len(loop._scheduled)       # type: ignore[attr-defined]

    response, timers = asyncio.run(call())
    assert (response.content, response.usage, timers) == ("hi there", {"total_tokens": 3}, 0)
    with pytest.raises(AgentCallError, match="replay: no recording of this target call"):
        asyncio.run(call_agent(_replaying(tmp_path), _request("bye"), seconds))


def test_a_call_that_may_wait_is_cut_by_the_time_left() -> None:
    timers: list[int] = []

    class Slow:
        id = "slow"

        async def call(self, request: AgentRequest) -> AgentResponse:
            timers.append(len(asyncio.get_running_loop()._scheduled))       # type: ignore[attr-defined]
            await asyncio.sleep(5)
            return AgentResponse(content="late")

    with pytest.raises(asyncio.TimeoutError):
        asyncio.run(call_agent(MeteredAgent(Slow(), Meter(), lambda request: None), _request("hello"), 0.05))
    assert timers == [1]        # the case's timeout, set before the call began
