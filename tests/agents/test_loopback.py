"""The transport's short way to a local http:// agent (agents/loopback.py) against raw servers on 127.0.0.1: it
sends what aiohttp sends, reads every framing aiohttp reads, keeps connections alive within the pool's limit, and
each fault becomes the verdict aiohttp's would have (every test runs both ways and compares)."""

from __future__ import annotations

import asyncio
import gzip
import os
import subprocess
import sys
import zlib
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeVar

import pytest

from agenttest.agents import loopback
from agenttest.agents.transport import HttpTransport
from agenttest.errors import AgentCallError

T = TypeVar("T")
Handler = Callable[[bytes, asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


class Raw:
    """A server on 127.0.0.1 in the test's loop: each request's head and body go to `handler`, which writes the
    reply by hand; connections are kept open for the next request unless the handler closes them."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.heads: list[bytes] = []
        self.bodies: list[bytes] = []
        self.connections = 0
        self.open = 0
        self.most_open = 0
        self.server: asyncio.Server | None = None

    async def __aenter__(self) -> Raw:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        assert self.server is not None
        self.server.close()

    def url(self, path: str = "/chat") -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}{path}"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self.open += 1
        self.most_open = max(self.most_open, self.open)
        try:
            while not writer.is_closing():
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                               if line.lower().startswith(b"content-length:")), 0)
                body = await reader.readexactly(length)
                self.heads.append(head)
                self.bodies.append(body)
                await self.handler(head, reader, writer)
        except asyncio.CancelledError:      # the test's loop ends while a handler waits: nothing to report
            return
        finally:
            self.open -= 1
            writer.close()


def reply(body: bytes, *, status: str = "200 OK", headers: str = "Content-Type: application/json\r\n",
          length: int | None = None) -> Handler:
    async def handle(head: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        size = len(body) if length is None else length
        writer.write(f"HTTP/1.1 {status}\r\n{headers}Content-Length: {size}\r\n\r\n".encode() + body)
        await writer.drain()
        if length is not None:
            writer.close()
    return handle


@pytest.fixture(params=["short way", "aiohttp"])
def way(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Each test once over the short way (which must then have sent a request) and once with it turned off,
    through aiohttp alone."""
    if request.param == "aiohttp":
        monkeypatch.setattr(loopback, "eligible", lambda url, resolver_set: None)
        yield "aiohttp"
        return
    sent: list[bytes] = []
    exchange = loopback._Connection.exchange

    async def counted(self: Any, response: loopback.Response, data: bytes) -> None:
        sent.append(data)
        await exchange(self, response, data)

    monkeypatch.setattr(loopback._Connection, "exchange", counted)
    yield "short way"
    assert sent, "the short way sent no request"


async def call(url: str, *, body: Any = None, headers: dict[str, str] | None = None, pool_size: int = 4,
               client: HttpTransport | None = None, stream: bool = False,
               method: str = "POST") -> tuple[int, str, bytes | list[bytes]]:
    own = client is None
    client = client or HttpTransport(pool_size=pool_size, retries=0)
    try:
        async with client.send(url, {"q": 1} if body is None else body, headers or {}, None,
                               method=method) as response:
            if stream:
                return response.status, response.content_type, [chunk async for chunk in response.content.iter_any()]
            return response.status, response.content_type, await response.read()
    finally:
        if own:
            await client.aclose()


async def verdict(awaitable: Awaitable[Any]) -> str:
    with pytest.raises(AgentCallError) as caught:
        await awaitable
    return caught.value.message


def both_ways(run: Callable[[], Awaitable[T]]) -> dict[str, T]:
    """What `run` gives over the short way, and with it turned off."""
    got: dict[str, T] = {}
    for name in ("short way", "aiohttp"):
        with pytest.MonkeyPatch.context() as patch:
            if name == "aiohttp":
                patch.setattr(loopback, "eligible", lambda url, resolver_set: None)
            got[name] = asyncio.run(run())  # type: ignore[arg-type]
    return got


def test_the_request_is_the_one_aiohttp_sends() -> None:
    """Header for header (order aside) and byte for byte of body, with the agent's own headers, any spelling."""
    async def run() -> tuple[bytes, set[bytes], bytes]:
        async with Raw(reply(b"{}")) as server:
            await call(server.url("/v1/chat/completions?x=1&y=%20z"), body={"q": "é", "n": [1, 2]},
                       headers={"Authorization": "Bearer k", "x-trace": "a", "X-Name": "café"})
            port = server.url("").rsplit(":", 1)[1].encode()
            line, *fields = server.heads[0].replace(b":" + port, b":PORT").rstrip(b"\r\n").split(b"\r\n")
            return line, set(fields), server.bodies[0]

    sent = both_ways(run)
    assert sent["short way"] == sent["aiohttp"]
    line, fields, body = sent["short way"]
    assert line == b"POST /v1/chat/completions?x=1&y=%20z HTTP/1.1"
    assert {b"Authorization: Bearer k", b"x-trace: a", b"Host: 127.0.0.1:PORT", "X-Name: café".encode()} <= fields
    assert body == '{"q":"é","n":[1,2]}'.encode()


def test_the_short_way_is_taken_for_a_loopback_address_only() -> None:
    assert loopback.eligible("http://127.0.0.1:8080/v1", resolver_set=False) is not None
    assert loopback.eligible("http://[::1]:8080/v1", resolver_set=False) is not None
    assert loopback.eligible("http://localhost:8080/v1", resolver_set=False) is not None
    assert loopback.eligible("http://localhost:8080/v1", resolver_set=True) is None     # a test's resolver answers
    assert loopback.eligible("https://127.0.0.1:8080/v1", resolver_set=False) is None
    assert loopback.eligible("http://agent:8080/v1", resolver_set=False) is None
    assert loopback.eligible("http://10.1.2.3:8080/v1", resolver_set=False) is None     # may not answer at all
    assert loopback.eligible("http://user:pw@127.0.0.1:8080/v1", resolver_set=False) is None
    target = loopback.eligible("http://[::1]:8080/v1?a=b", resolver_set=False)
    assert target is not None and (target.host_header, target.path) == ("[::1]:8080", "/v1?a=b")
    head = loopback.request_head("POST", target, {}, {"X-Bad": "a\r\nInjected: 1"})
    assert head is None                                 # aiohttp refuses it, in its own words


def test_connections_are_kept_alive_within_the_pools_limit(way: str) -> None:
    async def slow(head: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(0.02)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")

    async def run() -> Raw:
        async with Raw(slow) as server:
            client = HttpTransport(pool_size=2, retries=0)
            try:
                for _ in range(3):
                    assert await call(server.url(), client=client) == (200, "application/octet-stream", b"ok")
                replies = await asyncio.gather(*(call(server.url(), client=client) for _ in range(6)))
            finally:
                await client.aclose()
            assert {body for _, _, body in replies} == {b"ok"}
            return server

    server = asyncio.run(run())
    assert server.most_open <= 2 and server.connections <= 2, (server.most_open, server.connections)


@pytest.mark.parametrize("framing", ["chunked", "until closed", "gzip", "deflate", "raw deflate",
                                     "not last chunked", "lenient head"])
def test_every_framing_reads_to_the_same_body(framing: str, way: str) -> None:
    text = b'{"choices": "' + b"x" * 5000 + b'"}'

    async def handle(head: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if framing == "chunked":
            writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
            for start in range(0, len(text), 1000):
                piece = text[start:start + 1000]
                writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                await writer.drain()
            writer.write(b"0\r\n\r\n")
        elif framing in ("until closed", "not last chunked"):
            coding = b"Transfer-Encoding: chunked, identity\r\n" if framing == "not last chunked" else b""
            writer.write(b"HTTP/1.1 200 OK\r\nConnection: close\r\n" + coding + b"\r\n" + text)
            writer.close()
        elif framing == "lenient head":     # bare LF and a folded header: aiohttp forgives both
            writer.write(b"HTTP/1.1 200 OK\nX-Folded: a\r\n  b\r\nContent-Length: %d\r\n\r\n%s" % (len(text), text))
        else:
            packed = (gzip.compress(text) if framing == "gzip" else zlib.compress(text) if framing == "deflate"
                      else zlib.compress(text)[2:-4])
            encoding = "gzip" if framing == "gzip" else "deflate"
            writer.write(f"HTTP/1.1 200 OK\r\nContent-Encoding: {encoding}\r\nContent-Length: {len(packed)}\r\n"
                         "\r\n".encode() + packed)

    async def run() -> tuple[Any, Any]:
        async with Raw(handle) as server:
            client = HttpTransport(pool_size=1, retries=0)
            try:
                return await call(server.url(), client=client), await call(server.url(), client=client)
            finally:
                await client.aclose()

    first, second = asyncio.run(run())
    assert first[2] == second[2] == text


def test_a_stream_arrives_chunk_by_chunk(way: str) -> None:
    async def handle(head: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
        for n in range(3):
            event = b"data: %d\n\n" % n
            writer.write(b"%x\r\n%s\r\n" % (len(event), event))
            await writer.drain()
            await asyncio.sleep(0.01)
        writer.write(b"0\r\n\r\n")

    async def run() -> tuple[int, str, Any]:
        async with Raw(handle) as server:
            return await call(server.url(), stream=True)

    status, content_type, chunks = asyncio.run(run())
    assert (status, content_type) == (200, "text/event-stream")
    assert b"".join(chunks) == b"data: 0\n\ndata: 1\n\ndata: 2\n\n" and len(chunks) >= 2


async def _closed_without_reply(head: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    writer.close()


async def _not_http(head: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    writer.write(b"SSH-2.0-OpenSSH_9.6\r\nthis is not HTTP\r\n\r\n")
    writer.close()


async def _corrupt_gzip(head: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 10\r\n\r\n0123456789")


async def _chunked_error(head: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    pieces = (b'{"error": ', b'{"message": "model overloaded"}}')
    writer.write(b"HTTP/1.1 500 Oops\r\nTransfer-Encoding: chunked\r\n\r\n" +
                 b"".join(b"%x\r\n%s\r\n" % (len(piece), piece) for piece in pieces) + b"0\r\n\r\n")


async def _two_replies(head: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    writer.write(b"HTTP/1.1 500 Oops\r\nContent-Length: 4\r\n\r\nboom"
                 b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")


async def _see_other(head: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    if head.startswith(b"POST"):
        writer.write(b"HTTP/1.1 303 See Other\r\nLocation: /elsewhere\r\nContent-Length: 0\r\n\r\n")
    else:
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")


async def _bad_length(head: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2, 2\r\n\r\nok")


async def _nul_in_a_header(head: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    writer.write(b"HTTP/1.1 200\r\nX-Bad: a\x00b\r\nContent-Length: 2\r\n\r\nok")     # no reason phrase


async def _redirect_to_no_url(head: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    writer.write(b"HTTP/1.1 302 Found\r\nLocation: http://[::1\r\nContent-Length: 0\r\n\r\n")


FAULTS: dict[str, tuple[Handler, str]] = {
    "error body in chunks": (_chunked_error, "HTTP 500 from URL: model overloaded"),
    "a second reply after the first": (_two_replies, "HTTP 500 from URL: boom"),
    "a 303 to a POST": (_see_other, "URL redirected the POST (HTTP 303) to URL2 as a GET, without its body"),
    "a bad Content-Length": (_bad_length, "invalid HTTP reply from URL: Invalid character in Content-Length"),
    "a NUL in a header": (_nul_in_a_header, "invalid HTTP reply from URL: "),
    "a redirect to no URL": (_redirect_to_no_url, "invalid HTTP reply from URL: InvalidUrlRedirectClientError: "
                                                  "http://[::1 - Server attempted redirecting to a location that "
                                                  "does not look like a URL"),
    "corrupt gzip": (_corrupt_gzip, "broke while reading the reply: ClientPayloadError: 400, message: Can not "
                                    "decode content-encoding: gzip"),
    "cut off": (reply(b'{"a": 1', length=40), "was cut off after 7 bytes of 40 (connection closed mid-body)"),
    "closed without a reply": (_closed_without_reply, "closed the connection without a reply"),
    "not HTTP": (_not_http, "invalid HTTP reply from URL: "),
    "HTTP 500": (reply(b'{"error": {"message": "boom"}}', status="500 Internal Server Error"),
                 "HTTP 500 from URL: boom"),
}


WORDED_BY_LLHTTP = ("a bad Content-Length", "a NUL in a header")


@pytest.mark.parametrize("fault", list(FAULTS))
def test_each_fault_is_the_verdict_aiohttp_gives(fault: str) -> None:
    handler, said = FAULTS[fault]

    async def run() -> tuple[str, int]:
        async with Raw(handler) as server:
            client = HttpTransport(pool_size=1, retries=0)
            try:    # twice through a pool of one: a fault leaves its connection's place free
                messages = [await verdict(call(server.url(), client=client)) for _ in range(2)]
            finally:
                await client.aclose()
            assert messages[0] == messages[1]
            asked = sum(head.startswith(b"POST /chat ") for head in server.heads)
            return messages[0].replace(server.url("/elsewhere"), "URL2").replace(server.url(), "URL"), asked

    got = both_ways(run)
    assert said in got["short way"][0], got
    if fault != "not HTTP":     # a server that does not speak HTTP is asked again, by aiohttp, for its words
        assert got["short way"][1] == 2, got     # once a call
    if fault in WORDED_BY_LLHTTP:   # an HTTP server's malformed head: llhttp's words, not aiohttp's
        assert got["aiohttp"][0].startswith("invalid HTTP reply from URL: "), got
    else:
        assert got["short way"][0] == got["aiohttp"][0]


def test_a_refused_connection_goes_through_aiohttp() -> None:
    async def refused() -> Any:
        server = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
        url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/chat"
        server.close()
        await server.wait_closed()
        return await call(url)
    assert "cannot connect to http://127.0.0.1:" in asyncio.run(verdict(refused()))


def test_a_stale_connection_and_a_cancelled_call_leave_the_pool_usable(way: str) -> None:
    async def once(head: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if b"slow" in head:
            await asyncio.sleep(5)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        await writer.drain()
        writer.close()          # keep-alive offered, then the server drops the idle connection

    errors: list[dict[str, Any]] = []

    async def run() -> list[Any]:
        asyncio.get_running_loop().set_exception_handler(lambda loop, context: errors.append(context))
        async with Raw(once) as server:
            client = HttpTransport(pool_size=1, retries=0)
            try:
                first = await call(server.url(), client=client)
                await asyncio.sleep(0.05)
                second = await call(server.url(), client=client)
                await asyncio.sleep(0.05)       # the server's close reaches the client before the next call
                with pytest.raises(asyncio.TimeoutError):
                    await asyncio.wait_for(call(server.url("/slow"), client=client), 0.1)
                third = await call(server.url(), client=client)
            finally:
                await client.aclose()
            await asyncio.sleep(0.05)       # the closed connections' last callbacks
            return [first, second, third]

    assert [got[2] for got in asyncio.run(run())] == [b"ok", b"ok", b"ok"]
    assert errors == []         # nothing the loop had to report (a callback that raised, a lost exception)


@pytest.mark.parametrize("raw", [
    None, "application/json", "application/json; charset=utf-8", "Application/JSON;charset=UTF-8",
    'text/plain; charset="iso-8859-1"', "text/event-stream", "text/html; charset=utf-8; q=1", "json", "",
    "application/json;", "text/plain; format=flowed", " text/plain ; charset = utf-8 ",
])
def test_a_content_type_reads_as_aiohttp_reads_it(raw: str | None) -> None:
    from aiohttp.helpers import parse_content_type

    expected = ("application/octet-stream", {}) if raw is None else parse_content_type(raw)
    assert loopback.content_type(raw) == (expected[0], dict(expected[1]))


def test_aiohttp_is_imported_only_for_an_agent_the_short_way_does_not_take() -> None:
    """A run whose agents are all local never imports aiohttp (~60 ms); one that calls elsewhere imports it when
    its transport is made, before any case is timed."""
    probe = ("import sys; from agenttest.agents.transport import HttpTransport; "
             "HttpTransport(4, 0, urls=sys.argv[1:]); print('aiohttp' in sys.modules)")
    said = {}
    for url in ("http://127.0.0.1:8000/v1", "http://localhost:8000/v1", "https://api.example.com/v1",
                "http://agent:8000/v1"):
        env = {key: value for key, value in os.environ.items() if not key.lower().endswith("_proxy")}
        done = subprocess.run([sys.executable, "-c", probe, url], capture_output=True, text=True, env=env,
                              check=True)
        said[url] = done.stdout.strip()
    assert said == {"http://127.0.0.1:8000/v1": "False", "http://localhost:8000/v1": "False",
                    "https://api.example.com/v1": "True", "http://agent:8000/v1": "True"}


def test_closing_the_transport_ends_a_call_waiting_for_its_reply(way: str) -> None:
    async def silent(head: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(30)

    async def run() -> str:
        async with Raw(silent) as server:
            client = HttpTransport(pool_size=4, retries=0)
            task = asyncio.ensure_future(verdict(call(server.url(), client=client)))
            await asyncio.sleep(0.1)
            await client.aclose()
            return (await asyncio.wait_for(task, 5)).replace(server.url(), "URL")

    assert asyncio.run(run()) == "URL closed the connection without a reply"


def test_a_307_is_followed_with_one_request_to_each_place(way: str) -> None:
    async def moved(head: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if head.startswith(b"POST /chat "):
            writer.write(b"HTTP/1.1 307 Temporary Redirect\r\nLocation: /moved\r\nContent-Length: 0\r\n\r\n")
        else:
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nmoved")

    async def run() -> tuple[Any, list[bytes]]:
        async with Raw(moved) as server:
            got = await call(server.url())
            return got, [head.split(b"\r\n")[0] for head in server.heads]

    got, lines = asyncio.run(run())
    assert got[2] == b"moved"
    assert lines == [b"POST /chat HTTP/1.1", b"POST /moved HTTP/1.1"]


def test_an_idempotent_call_on_a_dropped_idle_connection_goes_again(way: str) -> None:
    dropped: list[bytes] = []

    async def drop_once(head: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if head.startswith(b"GET /second ") and not dropped:
            dropped.append(head)
            writer.close()          # as if the idle connection had timed out just as the next request came
            return
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")

    async def run() -> list[Any]:
        async with Raw(drop_once) as server:
            client = HttpTransport(pool_size=1, retries=0)
            try:
                first = await call(server.url("/first"), client=client, method="GET")
                second = await call(server.url("/second"), client=client, method="GET")
            finally:
                await client.aclose()
            return [first[2], second[2], server.connections]

    assert asyncio.run(run()) == [b"ok", b"ok", 2]


def test_a_compressed_body_that_stops_short_is_a_broken_reply() -> None:
    """aiohttp reads an empty body here; the short way says the reply broke (and no data is lost silently)."""
    packed = gzip.compress(b"x" * 5000)[:-20]

    async def handle(head: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head_lines = b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n" % len(packed)
        writer.write(head_lines + packed)

    async def run() -> str:
        async with Raw(handle) as server:
            return (await verdict(call(server.url()))).replace(server.url(), "URL")

    assert asyncio.run(run()) == ("connection to URL broke while reading the reply: ClientPayloadError: 400, message: "
                                  "Can not decode content-encoding: gzip")


def test_closing_the_pool_ends_every_call_it_holds() -> None:
    """One call mid-body, one waiting for its head, one waiting for a connection: aclose() ends each (aiohttp
    leaves the one mid-body waiting), and leaves no connection open."""
    async def handle(head: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if b"/body " in head:
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc")
        await asyncio.sleep(30)

    async def run() -> tuple[list[str], int]:
        async with Raw(handle) as server:
            client = HttpTransport(pool_size=2, retries=0)
            calls = [asyncio.ensure_future(verdict(call(server.url(path), client=client)))
                     for path in ("/body", "/head", "/waits")]
            await asyncio.sleep(0.2)
            pool = client._loopback
            await client.aclose()
            said = await asyncio.wait_for(asyncio.gather(*calls), 5)
            assert pool is not None
            return [message.replace(server.url(""), "") for message in said], len(pool._all)

    said, still_open = asyncio.run(run())
    assert said == ["the reply from /body was cut off after 3 bytes of 10 (connection closed mid-body)",
                    "/head closed the connection without a reply", "/waits closed the connection without a reply"]
    assert still_open == 0
