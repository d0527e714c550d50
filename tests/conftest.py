"""What every test gets: process-wide registries of its own, name lookups that never leave the machine, and a user
cache of its own (the helper cache and its key: a judge's reply cached by one test must not answer another, nor any
run on the machine outside the tests)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agenttest.agents import transport
from fakes.resolver import InvalidNamesResolver
from isolation import fresh_registries


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked `slow` first, in their order, the others after them in theirs: xdist hands tests out in this
    order, and a long test (a pip install, a pytest of its own) handed out last runs alone at the end while the
    other workers wait, where handed out first it runs beside the short ones."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.fixture(autouse=True)
def fresh_process_registries() -> Iterator[None]:
    """No secret registered and no URL shown before the test, whatever ran before it in this process."""
    with fresh_registries():
        yield


@pytest.fixture(autouse=True)
def resolver_at_the_edge(monkeypatch: pytest.MonkeyPatch) -> None:
    """The agents' connection pools ask `InvalidNamesResolver`: a `.invalid` host is refused without DNS."""
    monkeypatch.setattr(transport, "RESOLVER", InvalidNamesResolver)


@pytest.fixture(autouse=True)
def own_user_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("user-cache")))
