"""Server-sent events (text/event-stream) read from a streaming reply, by the WHATWG rules."""

from __future__ import annotations

import codecs
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import aiohttp

_LINE_END = re.compile(r"\r\n|\r|\n")


@dataclass
class SSEEvent:
    """One server-sent event: its type (default `message`) and its data lines joined with newlines."""

    data: str
    event: str = "message"


class _SSEParser:
    """WHATWG event-stream rules: `:` comments, one optional space after the colon, dispatch at a blank line."""

    def __init__(self) -> None:
        self._data: list[str] = []
        self._event = ""

    def line(self, line: str) -> SSEEvent | None:
        """Take one line (without its ending); the blank line that ends an event returns it."""
        if line == "":
            return self.dispatch()
        if not line.startswith(":"):
            name, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if name == "data":
                self._data.append(value)
            elif name == "event":
                self._event = value
        return None

    def dispatch(self) -> SSEEvent | None:
        """The event gathered so far (None when it has no data), and start the next one."""
        event = SSEEvent("\n".join(self._data), self._event or "message") if self._data else None
        self._data, self._event = [], ""
        return event


async def iter_sse(response: aiohttp.ClientResponse) -> AsyncIterator[SSEEvent]:
    """Events of a text/event-stream reply, whatever its line endings (\\n, \\r\\n or \\r, even split across
    network chunks). A last event without its closing blank line is still dispatched."""
    decoder = codecs.getincrementaldecoder("utf-8-sig")(errors="replace")     # a leading BOM is no data
    parser = _SSEParser()
    pending = ""
    async for chunk in response.content.iter_any():
        text = pending + decoder.decode(chunk)
        held = ""
        if text.endswith("\r"):     # may be the first half of a \r\n split across chunks
            text, held = text[:-1], "\r"
        *lines, rest = _LINE_END.split(text)
        pending = rest + held
        for line in lines:
            event = parser.line(line)
            if event is not None:
                yield event
    for line in _LINE_END.split(pending + decoder.decode(b"", final=True)):
        event = parser.line(line)
        if event is not None:
            yield event
    event = parser.dispatch()
    if event is not None:
        yield event
