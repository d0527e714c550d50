"""What every test gets: process-wide registries of its own, and name lookups that never leave the machine."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agenttest.agents import transport
from fakes.resolver import InvalidNamesResolver
from isolation import fresh_registries


@pytest.fixture(autouse=True)
def fresh_process_registries() -> Iterator[None]:
    """No secret registered and no URL shown before the test, whatever ran before it in this process."""
    with fresh_registries():
        yield


@pytest.fixture(autouse=True)
def resolver_at_the_edge(monkeypatch: pytest.MonkeyPatch) -> None:
    """The agents' connection pools ask `InvalidNamesResolver`: a `.invalid` host is refused without DNS."""
    monkeypatch.setattr(transport, "RESOLVER", InvalidNamesResolver)
