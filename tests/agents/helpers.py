"""Building an agent from agenttest.yaml-style settings and calling it the way the engine does."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from agenttest.agents.base import AgentRequest, AgentResponse
from agenttest.agents.registry import PROVIDERS, ConnectorSettings, ProviderContext


def make_agent(provider: str, config_dir: Path, *, retries: int = 2, pool_size: int = 4,
               connectors: dict[str, ConnectorSettings] | None = None, connector_override: str | None = None,
               **settings: Any) -> Any:
    """Validate `settings` as agenttest.yaml would, then create the agent the way the engine does."""
    entry = PROVIDERS[provider]
    parsed = entry.settings.model_validate({"provider": provider, **settings})
    ctx = ProviderContext(config_dir=config_dir, pool_size=pool_size, retries=retries,
                          connectors=connectors or {}, connector_override=connector_override)
    return entry.create("agent.under.test", parsed, ctx)


def request(content: Any = "hi", *, messages: list[dict[str, Any]] | None = None, deadline: float | None = None,
            **options: Any) -> AgentRequest:
    return AgentRequest(agent="agent.under.test", messages=messages or [{"role": "user", "content": content}],
                        options=options, context={"chat_id": "test-T1-abc", "test_id": "T1"}, deadline=deadline)


def call(agent: Any, *requests: AgentRequest) -> list[AgentResponse]:
    """Send the requests one after another on one loop (as one run does), then close the agent."""
    async def run() -> list[AgentResponse]:
        try:
            return [await agent.call(r) for r in requests]
        finally:
            await agent.aclose()
    return asyncio.run(run())


def call_one(agent: Any, req: AgentRequest | None = None) -> AgentResponse:
    return call(agent, req or request())[0]

