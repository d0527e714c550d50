"""Secret values (API keys, `${…}` header values) that must never reach an artifact or a log line."""

from __future__ import annotations

import os
import sys
from typing import Any

MASK = "***"
_SECRETS: set[str] = set()
_MIN_LENGTH = 4   # masking "a" or "12" would mangle ordinary text


def register_secret(value: str) -> None:
    """Remember `value` for masking; in GitHub Actions also ask the runner to mask it (once, before any use)."""
    if len(value) >= _MIN_LENGTH and value not in _SECRETS:
        _SECRETS.add(value)
        if os.environ.get("GITHUB_ACTIONS") == "true":
            print(f"::add-mask::{_escape_command_data(value)}", file=sys.stdout, flush=True)


def _escape_command_data(value: str) -> str:
    """@actions/core's escapeData, so a multi-line secret stays one command (the runner masks each line too)."""
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def registered_secrets() -> list[str]:
    return sorted(_SECRETS, key=len, reverse=True)


def mask(text: str) -> str:
    """`text` with every registered secret replaced by ***."""
    for secret in registered_secrets():
        if secret in text:
            text = text.replace(secret, MASK)
    return text


def redact(value: Any) -> Any:
    """A JSON-like structure with every secret masked in its strings (keys included)."""
    if not _SECRETS:
        return value
    if isinstance(value, str):
        return mask(value)
    if isinstance(value, dict):
        return {redact(k): redact(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact(v) for v in value]
    return value
