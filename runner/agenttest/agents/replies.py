"""Reading an agent's reply body: its content type, its text, its JSON, and a short quote of it for messages."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import orjson

from ..bounds import TOO_DEEP
from ..errors import AgentCallError
from ..secrets import mask, mask_head

if TYPE_CHECKING:
    import aiohttp

_SNIPPET = 300            # characters of a reply quoted in an error message
# orjson reads a reply ~3× faster than the json module, and as it does, save for what these bytes rule out: an
# integer beyond 64 bits (it makes a float; such a number has 19 digits in a row at least) and nesting the json
# module finds too deep (orjson goes to 1,024; fewer than 256 brackets cannot nest that deep). What orjson refuses
# outright (NaN, a lone surrogate, bytes that are not UTF-8) is read by the json module, errors and all.
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
_LONG_NUMBER = b"0" * 19
_BRACKETS_ORJSON_READS = 256


def is_json_type(content_type: str) -> bool:
    """Whether a Content-Type (without parameters) is JSON: `application/json` or any `…+json`."""
    return content_type == "application/json" or content_type.endswith("+json")


def is_event_stream(content_type: str) -> bool:
    """Whether a Content-Type (without parameters) is server-sent events."""
    return content_type == "text/event-stream"


async def read_text(response: aiohttp.ClientResponse) -> str:
    """The whole body decoded with its declared charset (UTF-8 by default); undecodable bytes are replaced."""
    raw = await response.read()
    return raw.decode(response.charset or "utf-8", errors="replace")


def parse_json(text: str, response: aiohttp.ClientResponse, shown: str) -> Any:
    """The reply as JSON, or an AgentCallError quoting what came instead."""
    try:
        return json.loads(text)
    except RecursionError:
        raise AgentCallError(f"reply from {shown} is {TOO_DEEP}") from None
    except ValueError:
        what = f"HTTP {response.status}, {response.content_type}"
        raise AgentCallError(f"reply from {shown} is not valid JSON ({what}): {snippet(text) or '(empty body)'}") \
            from None


async def read_json(response: aiohttp.ClientResponse, shown: str) -> Any:
    """`parse_json` of `read_text`: the same value, or the same AgentCallError."""
    raw = await response.read()
    charset = response.charset
    if _orjson_reads_alike(raw, charset):
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass
    return parse_json(raw.decode(charset or "utf-8", errors="replace"), response, shown)


def _orjson_reads_alike(raw: bytes, charset: str | None) -> bool:
    """Whether orjson reads `raw` as the json module reads its text, should it read it at all."""
    return (charset is None or charset.lower() in ("utf-8", "utf8")) \
        and _LONG_NUMBER not in raw.translate(_DIGITS_AS_ZERO) \
        and raw.count(b"[") + raw.count(b"{") < _BRACKETS_ORJSON_READS


def json_or_text(text: str) -> Any:
    """The value when the whole text is a JSON object, array or string, else the text itself (a plain-text reply).

    Numbers, booleans and null stay text: `42` or `true` written by an agent is what it said, not a JSON value."""
    stripped = text.strip()
    if stripped[:1] in ("{", "[", '"'):
        try:
            return json.loads(stripped)
        except RecursionError:
            raise AgentCallError(f"agent reply is {TOO_DEEP}") from None
        except ValueError:
            pass
    return text


def snippet(text: str) -> str:
    """A short, one-line, secret-free quote of a reply for an error message. Secrets are masked before the text is
    flattened and cut (and once more after flattening, for a secret whose line breaks became spaces)."""
    head, whole = mask_head(text, 2 * _SNIPPET)      # room for whitespace runs that flattening shrinks
    flat = mask(" ".join(head.split()))
    return flat if whole and len(flat) <= _SNIPPET else flat[:_SNIPPET] + "…"
