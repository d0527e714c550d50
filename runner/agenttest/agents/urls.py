"""Agent URLs: checked when the config is read, shown in messages without their password or any secret."""

from __future__ import annotations

from yarl import URL

from ..errors import ConfigError
from ..secrets import mask


def display_url(url: str) -> str:
    """The URL as error messages show it: no password, no registered secret."""
    try:
        parsed = URL(url)
    except ValueError:
        return mask(url)
    if parsed.password:
        parsed = parsed.with_password("***")
    return mask(str(parsed))


def check_url(url: str, where: str) -> str:
    """An absolute http(s) URL, or a ConfigError naming the setting."""
    try:
        parsed = URL(url)
    except ValueError as exc:
        raise ConfigError(f"{where}: invalid URL {display_url(url)!r}: {exc}") from exc
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise ConfigError(f"{where}: {display_url(url)!r} must be an absolute http:// or https:// URL")
    return url
