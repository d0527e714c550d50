"""Fixtures for the network providers: a fake OpenAI server that fails the test on any request the real API would
reject, fast retries, and the transport's waits between attempts recorded."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace

import pytest

from agenttest.agents import transport
from fakes.openai_server import FakeOpenAI


@pytest.fixture(autouse=True)
def fast_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    """Backoff in milliseconds, so retry tests take no time (Retry-After is still honoured as sent)."""
    monkeypatch.setattr(transport, "BACKOFF_BASE", 0.01)
    monkeypatch.setattr(transport, "BACKOFF_CAP", 0.04)


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """How long the transport waits before each retry, in seconds: recorded, not waited (the retry comes at once),
    so a test checks the wait it chose rather than the time that passed."""
    recorded: list[float] = []

    async def wait(seconds: float) -> None:
        recorded.append(seconds)

    monkeypatch.setattr(transport, "asyncio", SimpleNamespace(sleep=wait))
    return recorded


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server
    assert server.invalid == [], "requests the real API would reject"
