"""Agent URLs: checked when the config is read, their credentials registered as secrets, and shown in messages
without user-info or any secret."""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Mapping

from ..errors import ConfigError
from ..secrets import MASK, mask, register_secret, secret_count

Span = tuple[int, int]
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
_USER_INFO = re.compile(r"(?<![A-Za-z0-9+.-])([A-Za-z][A-Za-z0-9+.-]*://)[^/?#@\s]*@")


def credential_spans(url: str) -> tuple[list[Span], list[Span]]:
    """Where the text of a URL holds credentials: the areas (its user-info, its query) and the parts in them (the
    user, the password, each query value), as (start, end) offsets; nothing when the text is no `scheme://` URL."""
    match = _SCHEME.match(url)
    if match is None:
        return [], []
    areas: list[Span] = []
    parts: list[Span] = []
    start = match.end()
    end = next((i for i in range(start, len(url)) if url[i] in "/?#"), len(url))
    at = url.rfind("@", start, end)
    if at >= 0:
        areas.append((start, at))
        colon = url.find(":", start, at)
        parts += [(start, colon), (colon + 1, at)] if colon >= 0 else [(start, at)]
    query = url.find("?", end)
    if query >= 0 and url.find("#", end, query) < 0:
        fragment = url.find("#", query)
        stop = fragment if fragment >= 0 else len(url)
        areas.append((query + 1, stop))
        offset = query + 1
        for pair in url[query + 1:stop].split("&"):
            equals = pair.find("=")
            if equals >= 0:
                parts.append((offset + equals + 1, offset + len(pair)))
            offset += len(pair) + 1
    return areas, parts


def register_part(text: str) -> None:
    """Register one credential part of a URL, as written and percent-decoded."""
    register_secret(text)
    register_secret(urllib.parse.unquote(text))


_shown: dict[str, tuple[int, str]] = {}     # url → (secrets registered then, how it is shown)


def display_url(url: str) -> str:
    """The URL as messages and artifacts show it: no user-info, a query value holding a secret shown as ***, any
    other registered secret masked. Worked out once per URL (every agent call names its endpoint), again when a
    secret was registered since."""
    known = secret_count()
    found = _shown.get(url)
    if found is not None and found[0] == known:
        return found[1]
    if len(_shown) >= 1024:
        _shown.clear()
    shown = _display_url(url)
    _shown[url] = (known, shown)
    return shown


def _display_url(url: str) -> str:
    from yarl import URL  # the providers that show URLs load it anyway (aiohttp's); reading a config does not

    try:
        parsed = URL(url)
    except ValueError:
        return mask(without_user_info(url))
    if parsed.raw_user is not None or parsed.raw_password is not None:
        parsed = parsed.with_user(None)
    if not parsed.raw_query_string:
        return mask(str(parsed))
    fragment = f"#{parsed.raw_fragment}" if parsed.raw_fragment else ""
    query = "&".join(_masked_pair(pair) for pair in parsed.raw_query_string.split("&"))
    return mask(f"{parsed.with_query(None).with_fragment(None)}?{query}{fragment}")


def _masked_pair(pair: str) -> str:
    """`name=value` of a query, with the value shown as *** when it holds a secret in any decoding."""
    name, equals, value = pair.partition("=")
    decoded = (value, urllib.parse.unquote(value), urllib.parse.unquote_plus(value))
    return f"{name}{equals}{MASK}" if any(mask(text) != text for text in decoded) else pair


def without_user_info(text: str) -> str:
    """`text` with the user-info (`user:password@`) of every URL in it removed."""
    return _USER_INFO.sub(r"\1", text)


_PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy")     # read in either case, as curl and aiohttp do


def register_proxy_credentials(environ: Mapping[str, str]) -> None:
    """Register as secrets the credentials of the proxies the environment names (`HTTP_PROXY`, `HTTPS_PROXY`,
    `ALL_PROXY`, in either case): the password, or the user-info when it is one token. An agent that prints its
    environment, or a message quoting a proxy URL, then shows them masked."""
    for name, value in environ.items():
        if name.lower() not in _PROXY_VARIABLES or "@" not in value:
            continue
        from yarl import URL  # here: a run without a proxy's credentials (a replay) needs no URL parser

        try:
            parsed = URL(value if "://" in value else f"http://{value}")
        except ValueError:
            continue
        credential = parsed.raw_password or parsed.raw_user
        if credential:
            register_part(credential)


def check_url(url: str, where: str) -> str:
    """An absolute http(s) URL, or a ConfigError naming the setting. Its password, if any, is registered as a
    secret (before anything shows the URL)."""
    from yarl import URL

    try:
        parsed = URL(url)
    except ValueError as exc:
        raise ConfigError(f"{where}: invalid URL {display_url(url)!r}: {exc}") from exc
    if parsed.raw_password:
        register_part(parsed.raw_password)
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise ConfigError(f"{where}: {display_url(url)!r} must be an absolute http:// or https:// URL")
    return url
