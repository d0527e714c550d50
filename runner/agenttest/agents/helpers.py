"""Helper agents — judges (Yao's validators), simulated users and generators — called the one way
(docs/configuration.md).

A helper is any agent of agenttest.yaml (a `builtin:` one, or the user's own). It gets one user message whose
content is a JSON object, and `options.metadata.test_mode` naming its role; its reply is read by `replies`. Every
call is counted by role, may be served from the helper cache, and fails as a HelperError of its role's kind, so a
broken helper is never a silent pass or fail, nor blamed on the agent under test.
"""

from __future__ import annotations

import asyncio
import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from ..errors import AgentCallError, HelperError
from ..hints import helper_name
from ..usage import Usage
from .base import Agent, AgentRequest, AgentResponse
from .cache import HelperCache

# Role → the `test_mode` a helper is told (Yao's names) and its error kind.
TEST_MODES = {"judge": "validator", "simulator": "simulator", "generator": "generator"}
_SKIP = {"history": True, "trace": True, "output": True}
T = TypeVar("T")


class HelperAgents(Protocol):
    """Where helpers come from (the run's AgentPool)."""

    def get(self, agent_id: str) -> Agent: ...

    def cacheable(self, agent_id: str) -> bool: ...

    def fingerprint(self, agent_id: str) -> str: ...

    def credentials(self, agent_id: str, connector: str | None = None) -> list[str]: ...
    def token_limit(self, agent_id: str, connector: str | None = None) -> str | None: ...


@dataclass
class HelperCaller:
    """Calls helper agents on behalf of one case (or of a run's generators).

    `context` is the case's request context; each call gets its own chat id. `cache` is None when replies must not
    be served from disk (no cache, or a repeat under `--runs`). `waiting_for` names the call in flight, so a case
    that runs out of time can say what it was waiting for."""

    agents: HelperAgents
    usage: Usage = field(default_factory=Usage)
    context: dict[str, Any] = field(default_factory=dict)
    deadline: float | None = None
    cache: HelperCache | None = None
    waiting_for: str | None = None
    case: tuple[str, str] | None = None       # the case the calls are made for (record/replay)

    async def ask(self, role: str, agent_id: str, payload: dict[str, Any], read: Callable[[AgentResponse], T], *,
                  connector: str | None = None, sample: int = 0, samples: int = 1) -> T:
        """Ask helper `agent_id`, in `role` (judge, simulator, generator), about `payload`, and `read` its reply (a
        parser that raises HelperError); `sample` of `samples` when it is asked the same several times. The reply
        may come from the cache; it is stored there only once it could be read. Raises HelperError of the role's
        kind."""
        request = self.request(role, agent_id, payload, connector=connector, samples=samples)
        cached_here = self.cache is not None and self.agents.cacheable(agent_id)
        key = HelperCache.key(request, self.agents.fingerprint(agent_id), sample) if cached_here else None
        credentials = self.agents.credentials(agent_id, connector) if cached_here else []
        if key is not None and self.cache is not None:
            cached = self.cache.lookup(key, credentials)
            if cached is not None:
                try:
                    self._check_whole(role, agent_id, cached, connector)
                    value = read(cached)
                except HelperError:
                    self.cache.forget(key)
                else:
                    self.usage.add(role, cached.usage, cached=True)
                    return value
        try:
            response = await self._send(role, agent_id, request)
        except Exception:             # a call that failed or timed out is still a call made: counted, no tokens
            self.usage.add(role, {})
            raise
        self.usage.add(role, response.usage)
        try:
            self._check_whole(role, agent_id, response, connector)
            value = read(response)
        except HelperError as exc:
            raise HelperError(f"{helper_name(role, agent_id)}: {exc.message}", exc.kind) from exc
        if key is not None and self.cache is not None:
            self.cache.store(key, credentials, request, response)
        return value

    def request(self, role: str, agent_id: str, payload: dict[str, Any], *,
                connector: str | None = None, samples: int = 1) -> AgentRequest:
        """The canonical request a helper gets: the payload as JSON in one user message, its role's `test_mode`
        (and `samples`, when it is asked several times, so that it can answer each one afresh)."""
        mode = TEST_MODES[role]
        options: dict[str, Any] = {"skip": dict(_SKIP), "metadata": {"test_mode": mode}}
        if samples > 1:
            options["metadata"]["samples"] = samples
        if connector:
            options["connector"] = connector
        chat_id = f"{mode}-{self.context.get('test_id', 'run')}-{secrets.token_hex(4)}"
        content = json.dumps(payload, ensure_ascii=False, default=str)
        return AgentRequest(agent=agent_id, messages=[{"role": "user", "content": content}], options=options,
                            context={**self.context, "chat_id": chat_id}, deadline=self.deadline, role=role,
                            case=self.case)

    def _check_whole(self, role: str, agent_id: str, response: AgentResponse, connector: str | None) -> None:
        """A reply cut off at its token limit is no answer, however much of one it looks like: a verdict's score,
        a user's half sentence, a generator's echo of its request. HelperError of the role's kind."""
        if response.finish_reason != "length":
            return
        limit = self.agents.token_limit(agent_id, connector)
        raise HelperError(f"its reply was cut off at its token limit ({limit or 'finish_reason: length'}): raise "
                          f"{'it' if limit else 'max_tokens'}", role)

    async def _send(self, role: str, agent_id: str, request: AgentRequest) -> AgentResponse:
        self.waiting_for = f"the {helper_name(role, agent_id)}"
        try:
            response = await self.agents.get(agent_id).call(request)
        except AgentCallError as exc:
            self.waiting_for = None
            raise HelperError(f"{helper_name(role, agent_id)}: {exc.message}", role) from exc
        except asyncio.CancelledError:   # the case ran out of time: `waiting_for` still says on what
            raise
        except Exception as exc:  # a provider bug costs this case, not the run
            self.waiting_for = None
            raise HelperError(f"{helper_name(role, agent_id)}: {type(exc).__name__}: {exc}", role) from exc
        self.waiting_for = None
        return response
