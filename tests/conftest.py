"""Every test's runs keep the user's cache (the helper cache and its key) in a directory of their own: a judge's
reply cached by one test must not answer another, nor any run on the machine outside the tests."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def own_user_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("user-cache")))
