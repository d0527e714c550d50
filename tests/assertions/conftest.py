"""Run one assertion the way the engine does: load-time `prepare_assertion`, then `evaluate_all`."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agenttest.agents.base import AgentResponse
from agenttest.assertions import AssertionResult, AssertionSpec, EvalContext, evaluate_all, prepare_assertion


def _check(assertion: dict[str, Any], response: AgentResponse | str | None = None, *, input: Any = None,
           latency_ms: float = 0.0, base_dir: Path | None = None) -> AssertionResult:
    """Prepare `assertion` (AssertionSpec fields) and evaluate it; a string response is the reply's content."""
    spec = AssertionSpec(**assertion, base_dir=base_dir or Path.cwd())
    prepare_assertion(spec)
    if not isinstance(response, AgentResponse):
        response = AgentResponse(content=response)
    [result] = asyncio.run(evaluate_all([spec], EvalContext(response, input=input, latency_ms=latency_ms)))
    return result


@pytest.fixture
def check() -> Callable[..., AssertionResult]:
    return _check
