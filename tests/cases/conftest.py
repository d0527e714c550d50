"""Suites written as real files under a temporary repository that is also the working directory."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from case_files import Load, LoadOne, jsonl, write

from agenttest.cases import Case, InvalidCase, Suite, load_suite


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """The repository root, also the working directory the `-i` values are relative to."""
    return tmp_path


@pytest.fixture
def load(repo: Path) -> Load:
    def _load(*inputs: str, cwd: Path | None = None) -> Suite:
        return load_suite(list(inputs), cwd=cwd or repo, repo_root=repo)

    return _load


@pytest.fixture
def load_text(repo: Path, load: Load) -> Callable[[str | bytes], Suite]:
    """Write `tests/suite.jsonl` with the given content and load it."""

    def _load_text(content: str | bytes, name: str = "tests/suite.jsonl") -> Suite:
        write(repo / name, content)
        return load(name)

    return _load_text


@pytest.fixture
def load_one(load_text: Callable[[str | bytes], Suite]) -> LoadOne:
    """Load one entry (a dict, written as one JSONL line) and return what it became."""

    def _load_one(entry: Any) -> Case | InvalidCase:
        [result] = load_text(jsonl(entry)).entries
        return result

    return _load_one


@pytest.fixture
def error_of(load_one: LoadOne) -> Callable[[Any], str]:
    """The message of the InvalidCase one entry becomes (fails the test if it is a valid Case)."""

    def _error_of(entry: Any) -> str:
        result = load_one(entry)
        assert isinstance(result, InvalidCase), f"expected an invalid case, got {result}"
        return result.message

    return _error_of
