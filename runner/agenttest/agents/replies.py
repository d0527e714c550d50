"""Reading an agent's reply body: its content type, its text, its JSON, and a short quote of it for messages."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ..bounds import TOO_DEEP
from ..errors import AgentCallError
from ..secrets import mask, mask_head

if TYPE_CHECKING:
    import aiohttp

_SNIPPET = 300            # characters of a reply quoted in an error message


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
