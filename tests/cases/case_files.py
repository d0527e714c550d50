"""Helpers for writing suite files in tests (imported by the tests of this directory and its conftest)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agenttest.cases import Case, InvalidCase, Suite

Load = Callable[..., Suite]
LoadOne = Callable[..., "Case | InvalidCase"]


def write(path: Path, content: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8", newline="")
    return path


def jsonl(*entries: Any) -> str:
    return "".join(json.dumps(entry) + "\n" for entry in entries)
