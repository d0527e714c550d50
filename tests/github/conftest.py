"""The GitHub REST emulator (tests/fakes/github_api.py) for these tests."""

from __future__ import annotations

from fakes.github_api import github_api

__all__ = ["github_api"]
