"""Secret values (API keys, `${…}` header values) that must never reach an artifact or a log line."""

from __future__ import annotations

import os
from typing import Any

from .actions_log import add_mask

MASK = "***"
_SECRETS: set[str] = set()
_MIN_LENGTH = 4   # masking "a" or "12" would mangle ordinary text


def register_secret(value: str) -> None:
    """Remember `value` for masking; in GitHub Actions also ask the runner to mask it (once, before any use),
    outside the run's stop-commands block, where the runner would ignore the request (see actions_log)."""
    if len(value) >= _MIN_LENGTH and value not in _SECRETS:
        _SECRETS.add(value)
        if os.environ.get("GITHUB_ACTIONS") == "true":
            add_mask(value)


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
