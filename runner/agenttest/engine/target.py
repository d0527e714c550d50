"""The one way agenttest calls an agent under test — for a case, for each turn of a conversation, and for the Python
API, which promises to behave as a case does: the request it sends, and what a failed call becomes."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from typing import Any

from ..agents.base import Agent, AgentRequest, AgentResponse
from ..errors import AgentCallError
from ..timeouts import within


def target_request(agent_id: str, messages: list[dict[str, Any]], options: Mapping[str, Any],
                   context: dict[str, Any], *, connector: str | None = None, deadline: float | None = None,
                   case: tuple[str, str] | None = None) -> AgentRequest:
    """The request to the agent under test (docs/configuration.md): a case's `options` as they are, except that the
    history is always skipped (each case, each API call, stands alone), and `connector`, when given, over the
    options' own."""
    sent: dict[str, Any] = {key: value for key, value in options.items() if key != "skip"}
    sent["skip"] = {**(options.get("skip") or {}), "history": True}
    if connector:
        sent["connector"] = connector
    return AgentRequest(agent=agent_id, messages=messages, options=sent, context=context, deadline=deadline,
                        case=case)


async def call_agent(agent: Agent, request: AgentRequest, seconds: float) -> tuple[AgentResponse, float]:
    """The agent's response to `request` and how long it took (ms). A failed call raises AgentCallError: the agent's
    own, or — for any other exception, a provider's bug — one of kind `agent` naming it (it must cost one case, not
    the run). The time running out raises asyncio.TimeoutError, which the caller words (a case says its own
    timeout)."""
    started = time.monotonic()
    try:
        response = await (within(agent.call(request), seconds) if _waits(agent, seconds) else agent.call(request))
    except (AgentCallError, asyncio.TimeoutError):
        raise
    except Exception as exc:
        raise AgentCallError(f"{type(exc).__name__}: {exc}") from exc
    return response, (time.monotonic() - started) * 1000


def _waits(agent: Agent, seconds: float) -> bool:
    """Whether the call needs a timer to cut it: not when the agent answers at once (`waits = False`: a replayed
    call), which no timer could cut — one fires only once the call gives the event loop a turn, and such a call
    never does. (Each timer made and cancelled cost ~8 µs of a 10,000-case replay's case, its handles piling up
    on the loop until the run's one step of it ended.) So on every Python: a replayed call answers even with no
    time left, as `asyncio.timeout` lets a call that never yields finish."""
    return getattr(agent, "waits", True)
