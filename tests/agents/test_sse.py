"""The event-stream reader against a real local server: comments, multi-line data, event types, every line ending
and multi-byte characters split across network chunks."""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp import web

from agenttest.agents.sse import SSEEvent, iter_sse
from agenttest.agents.transport import HttpTransport
from fakes.server import ScriptedServer, sse_reply


def read_events(*chunks: str) -> list[SSEEvent]:
    with ScriptedServer("/events", sse_reply(list(chunks))) as server:
        async def run() -> list[SSEEvent]:
            client = HttpTransport(pool_size=1, retries=0)
            try:
                async with client.send(server.endpoint, {}, {}, None) as response:
                    return [event async for event in iter_sse(response)]
            finally:
                await client.aclose()
        return asyncio.run(run())


def test_sse_events_comments_multiline_data_and_event_types() -> None:
    events = read_events(": keep-alive\n\n", "event: delta\ndata: {\"a\": 1}\n\n", "data: line one\ndata: line two\n\n",
                         "data:no-space\nid: 7\nretry: 100\n\n", "data:  two spaces\n\n")
    assert events == [SSEEvent('{"a": 1}', "delta"), SSEEvent("line one\nline two"), SSEEvent("no-space"),
                      SSEEvent(" two spaces")]


def test_sse_any_line_ending_even_split_across_chunks() -> None:
    events = read_events("data: a\r\n\r\nda", "ta: b\r", "\n\r", "\ndata: c\r\rdata: é".encode().decode(),
                         "\n\n")
    assert [e.data for e in events] == ["a", "b", "c", "é"]


def test_sse_multibyte_characters_split_across_chunks() -> None:
    with ScriptedServer("/events") as server:
        async def reply(request: web.Request, body: Any) -> web.StreamResponse:
            response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
            await response.prepare(request)
            encoded = "data: héllo wörld\n\n".encode()
            for i in range(len(encoded)):
                await response.write(encoded[i:i + 1])
            await response.write_eof()
            return response
        server.enqueue(reply)

        async def run() -> list[SSEEvent]:
            client = HttpTransport(pool_size=1, retries=0)
            try:
                async with client.send(server.endpoint, {}, {}, None) as response:
                    return [event async for event in iter_sse(response)]
            finally:
                await client.aclose()
        assert [e.data for e in asyncio.run(run())] == ["héllo wörld"]


def test_sse_last_event_without_blank_line_is_kept() -> None:
    assert [e.data for e in read_events("data: one\n\n", "data: [DONE]")] == ["one", "[DONE]"]
