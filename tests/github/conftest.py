"""The GitHub REST emulator (tests/fakes/github_api.py) for these tests, and a client of it that waits for nothing:
its waits are recorded instead, and its clock is the emulator's."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from agenttest.github.rest import GitHubClient
from fakes.github_api import EPOCH, TOKEN, FakeGitHub, github_api

__all__ = ["github_api"]


class Waits:
    """A `sleep` that records how long it was asked to wait, and returns at once."""

    def __init__(self) -> None:
        self.seconds: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.seconds.append(seconds)


@pytest.fixture
def waits() -> Waits:
    return Waits()


@pytest.fixture
def client(github_api: FakeGitHub, waits: Waits) -> Callable[..., GitHubClient]:
    """A GitHubClient of the emulator, with the emulator's token (or `token`), `budget` seconds to spend."""
    def make(token: str = TOKEN, budget: float = 600.0, api_url: str | None = None) -> GitHubClient:
        return GitHubClient(token, api_url or github_api.api_url, budget=budget, sleep=waits, clock=lambda: EPOCH)
    return make
