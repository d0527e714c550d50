"""What every test gets: process-wide registries of its own."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from isolation import fresh_registries


@pytest.fixture(autouse=True)
def fresh_process_registries() -> Iterator[None]:
    """No secret registered and no URL shown before the test, whatever ran before it in this process."""
    with fresh_registries():
        yield
