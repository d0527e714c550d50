"""The transport's short way to an agent on this machine over plain http:// (a local server, or one in the same CI
job): HTTP/1.1 on asyncio's own protocol, parsed by httptools (llhttp, the parser aiohttp bundles too).

aiohttp's client spends ~0.06 ms of Python on each call beyond the socket work (the URL, the header maps, its
request and response objects, timers and traces): 10,000 calls, 64 at a time, to a local 50 ms agent took the
transport 1.4 s of CPU through aiohttp and 0.75 s this way (bench/README.md). What a call to a local agent sends
and receives is the plain part of HTTP: one request with a body, one reply with Content-Length, chunked, or up to
the connection's end, kept alive in a pool of idle connections. Everything else goes to aiohttp, which already
does it and says what went wrong in the words the transport turns into verdicts:

- an origin that is not `http://` at a loopback address (or `localhost`), has credentials in its URL, or goes
  through a proxy (`eligible`); a header that cannot be written as it is given;
- a connection that cannot be opened (`request` returns None): aiohttp opens one and tells why not;
- a peer that does not begin its reply with a status line (`NotHttp`, not `status_seen`): it does not speak HTTP,
  and aiohttp is asked for its words on what came back; a 307 or 308 (`REDIRECTS`): aiohttp sends the request to
  where it points. No other request is sent twice (the transport, `HttpTransport._short_way`).

What comes back reads as an aiohttp `ClientResponse` reads for the transport's callers: `status`, `headers`,
`content_type`/`charset`/`content_length`, `read()`, `content.read(n)`, `content.iter_any()`, `release()`,
`close()`. A fault raises a `Fault` for each of aiohttp's exceptions the transport tells apart (`Disconnected`,
`Broken`, `CutShort`, `Undecodable`), which it words as it words aiohttp's: every verdict's message is the one an
aiohttp call gives. Nothing here imports aiohttp (~60 ms): a run whose agents are all local never does.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import os
import re
import socket
import sys
import zlib
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

import httptools
from multidict import CIMultiDict, CIMultiDictProxy
from yarl import URL

REDIRECTS = frozenset((301, 302, 303, 307, 308))   # aiohttp follows these; the short way sends them to it
KEEP_ALIVE = 15.0           # seconds an idle connection is kept, as aiohttp's connector keeps one
_METHODS = frozenset(("POST", "PUT", "PATCH", "DELETE", "GET"))
_ACCEPT = (("Accept", "*/*"), ("Accept-Encoding", "gzip, deflate"))    # aiohttp's defaults without brotli
_NO_BODY = frozenset((204, 304))
_STATUS_LINE = re.compile(rb"HTTP/\d\.\d \d{3}")     # how an HTTP server's reply begins
_STATUS_LENGTH = 12
# aiohttp parses replies leniently but in Python's development mode (its DEBUG)
_LENIENT = not (sys.flags.dev_mode or (not sys.flags.ignore_environment and os.environ.get("PYTHONASYNCIODEBUG")))
_FRAMING = frozenset(("content-length", "transfer-encoding", "expect"))   # aiohttp's to honour
_IDEMPOTENT = frozenset(("GET", "PUT", "DELETE"))      # aiohttp sends these again on a fresh connection
_NO_HEADERS: CIMultiDictProxy[str] = CIMultiDictProxy(CIMultiDict())


class Fault(Exception):
    """A call on the short way that failed: the transport says it as it says aiohttp's same fault."""


class Disconnected(Fault):
    """The connection closed before any reply (aiohttp's `ServerDisconnectedError`)."""


class Broken(Fault):
    """The connection failed before any reply (aiohttp's `ClientOSError`): `os_error` says how."""

    def __init__(self, os_error: OSError) -> None:
        super().__init__(str(os_error))
        self.os_error = os_error


class NotHttp(Fault):
    """A reply whose head is not HTTP as llhttp reads it. From a server that sent no status line (it does not speak
    HTTP) the transport asks aiohttp, which says it its way; from one that did, the request is not sent again (an
    HTTP server acted on it) and llhttp's words are said."""

    def __init__(self, reason: str, status_seen: bool) -> None:
        super().__init__(reason)
        self.status_seen = status_seen


class CutShort(Fault):
    """A body that stopped short of its Content-Length or its last chunk (aiohttp's `ClientPayloadError` from a
    `ContentLengthError` or a `TransferEncodingError`)."""


class Undecodable(Fault):
    """A gzip or deflate body that does not decode; said as aiohttp's `ClientPayloadError` says it."""

    def __init__(self, encoding: str) -> None:
        super().__init__(f"400, message: Can not decode content-encoding: {encoding}")

    def described(self) -> str:
        return f"ClientPayloadError: {self}"


def proxies_possible() -> bool:
    """Whether a proxy may be configured for some URL: on Linux, a `*_proxy` variable in the environment (in any
    case, as `urllib.request.getproxies` reads them); elsewhere the system's settings may name one too."""
    if sys.platform in ("darwin", "win32"):
        return True
    return any(name[-6:].lower() == "_proxy" for name in os.environ)


class Target:
    """Where a call on the short way goes: the host and port to connect to, and the request line's target and
    `Host` header as aiohttp writes them."""

    __slots__ = ("host", "host_header", "key", "path", "port", "url")

    def __init__(self, url: URL) -> None:
        self.url = url
        self.host = url.raw_host or ""
        self.port = url.port or 80
        self.key = (self.host, self.port)
        shown = f"[{self.host}]" if ":" in self.host else self.host
        self.host_header = shown if url.is_default_port() else f"{shown}:{self.port}"
        self.path = url.raw_path_qs


def eligible(url: str, resolver_set: bool) -> Target | None:
    """The target of `url` when the short way may take it: http:// at a loopback address (127.0.0.0/8, ::1), or at
    `localhost` when the system resolves names (`resolver_set`: a test's resolver answers for names, and only
    aiohttp asks it); no user or password in the URL (aiohttp sends them as Basic credentials). A loopback
    connection is refused at once or opened: no second wait when aiohttp is to say why it failed."""
    try:
        parsed = URL(url)
    except (ValueError, TypeError):
        return None
    if parsed.scheme != "http" or parsed.raw_user is not None or parsed.raw_password is not None or not parsed.host:
        return None
    if parsed.host == "localhost":
        return None if resolver_set else Target(parsed)
    try:
        loopback = ipaddress.ip_address(parsed.host).is_loopback
    except ValueError:
        return None
    return Target(parsed) if loopback else None


def request_head(method: str, target: Target, defaults: Mapping[str, str],
                 headers: Mapping[str, str]) -> Head | None:
    """The request line and headers aiohttp would send (its session's `defaults`, the call's `headers`, then
    `Accept` and `Accept-Encoding` where not given; `Content-Length` comes with the body), or None for a method
    the short way does not take, a header aiohttp would refuse (a line break in it), or a body's framing or an
    `Expect` the headers set themselves (aiohttp's to honour)."""
    if method not in _METHODS or any(name.lower() in _FRAMING for name in headers):
        return None
    written = CIMultiDict(defaults)
    added: set[str] = set()
    for name, value in headers.items():
        if name in added:
            written.add(name, value)
        else:
            written[name] = value
            added.add(name)
    lines = [f"{method} {target.path} HTTP/1.1"]
    if "Host" not in written:
        lines.append(f"Host: {target.host_header}")
    lines.extend(f"{name}: {value}" for name, value in written.items())
    lines.extend(f"{name}: {value}" for name, value in _ACCEPT if name not in written)
    if any(character in line for line in lines for character in "\r\n\x00"):
        return None
    try:
        text = ("\r\n".join(lines) + "\r\n").encode("utf-8")     # as aiohttp writes them
    except UnicodeEncodeError:      # a lone surrogate: aiohttp's to refuse
        return None
    return Head(target, text)


class Head:
    """A request's head but its body's length, which each call adds (`bytes_for`); and where it goes."""

    __slots__ = ("_lines", "target")

    def __init__(self, target: Target, lines: bytes) -> None:
        self.target, self._lines = target, lines

    def bytes_for(self, body: bytes) -> bytes:
        return b"%sContent-Length: %d\r\n\r\n%s" % (self._lines, len(body), body)


class Pool:
    """Connections to the short way's origins: at most `limit` in use at once (as aiohttp's connector counts
    them), the idle ones kept for the next call for `KEEP_ALIVE` seconds."""

    def __init__(self, limit: int, connect_timeout: float) -> None:
        self.loop = asyncio.get_running_loop()
        self._limit = limit if limit > 0 else 1 << 30       # 0: no limit, as aiohttp's connector reads it
        self._connect_timeout = connect_timeout
        self._in_use = 0
        self._waiters: deque[asyncio.Future[None]] = deque()
        self._idle: dict[tuple[str, int], list[_Connection]] = {}
        self._all: set[_Connection] = set()
        self.closed = False

    @classmethod
    def of_this_loop(cls, pool: Pool | None, limit: int, connect_timeout: float) -> Pool:
        """`pool` when it belongs to the running loop, else a new one (a Python API user's second `asyncio.run`)."""
        if pool is not None and pool.loop is asyncio.get_running_loop():
            return pool
        if pool is not None:
            pool.abandon()
        return cls(limit, connect_timeout)

    async def request(self, target: Target, method: str, message: bytes) -> Response | None:
        """The reply's head, its body still to read (`Response`); None when no connection could be opened."""
        await self._acquire()
        connection: _Connection | None = None
        try:
            connection = self._idle_connection(target.key)
            if connection is not None and method in _IDEMPOTENT:
                try:
                    return await self._exchange(connection, target, method, message)
                except (Disconnected, Broken):  # the server had dropped the idle connection: as aiohttp does,
                    connection.close()          # an idempotent call goes again on a fresh one
                    connection = None
            connection = connection or await self._connect(target)
            if connection is None:
                self._release_slot()
                return None
            return await self._exchange(connection, target, method, message)
        except BaseException:
            if connection is not None:
                connection.close()
            self._release_slot()
            raise

    async def _exchange(self, connection: _Connection, target: Target, method: str, message: bytes) -> Response:
        response = Response(self, connection, target, method)
        await connection.exchange(response, message)
        return response

    async def close(self) -> None:
        """Close every connection and take no more calls: one waiting for a connection or for its reply's head ends
        as closed without a reply, one reading a body as cut off."""
        self.closed = True
        while self._waiters:        # a call waiting for a connection: there will be none
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_exception(Disconnected())
        if self.loop.is_closed():
            self.abandon()
            return
        for connection in list(self._all):
            connection.abort()
        self._idle.clear()

    def abandon(self) -> None:
        """Let go of a pool whose loop has ended (a Python API user's earlier `asyncio.run`): its connections are
        shut down, as its loop can no longer close them."""
        for connection in list(self._all):
            connection.lost = True
            transport = connection.transport
            sock = transport.get_extra_info("socket") if transport is not None else None
            if sock is not None:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(RuntimeError):     # the loop is closed
                if transport is not None:
                    transport.close()
        self._all.clear()
        self._idle.clear()

    def _idle_connection(self, key: tuple[str, int]) -> _Connection | None:
        idle = self._idle.get(key)
        now = self.loop.time()
        while idle:
            connection = idle.pop()
            if connection.reusable() and now - connection.idle_since < KEEP_ALIVE:
                return connection
            connection.close()
        return None

    async def _connect(self, target: Target) -> _Connection | None:
        try:
            _, connection = await asyncio.wait_for(
                self.loop.create_connection(_Connection, target.host, target.port), self._connect_timeout)
        except (OSError, asyncio.TimeoutError):
            return None
        self._all.add(connection)
        connection.pool = self
        return connection

    async def _acquire(self) -> None:
        if self.closed:
            raise Disconnected()
        while self._in_use >= self._limit:
            waiter = self.loop.create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            except BaseException:
                if waiter.done() and not waiter.cancelled():
                    self._wake()        # it was handed the slot as it was cancelled: pass it on
                raise
        self._in_use += 1

    def _release_slot(self) -> None:
        self._in_use -= 1
        self._wake()

    def _wake(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    def done_with(self, connection: _Connection, key: tuple[str, int], keep: bool) -> None:
        """A response let go of its connection: kept for the next call when `keep`, else closed."""
        if keep and connection.reusable() and not self.closed:
            connection.idle_since = self.loop.time()
            self._idle.setdefault(key, []).append(connection)
        else:
            connection.close()
        self._release_slot()

    def forget(self, connection: _Connection) -> None:
        self._all.discard(connection)


class _Connection(asyncio.Protocol):
    """One keep-alive connection: the reply to its current request parsed as it arrives."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.pool: Pool | None = None
        self.idle_since = 0.0
        self.lost = False
        self._parser = httptools.HttpResponseParser(self)
        if _LENIENT:    # what aiohttp's response parser forgives, outside Python's development mode
            self._parser.set_dangerous_leniencies(lenient_headers=True, lenient_optional_cr_before_lf=True,
                                                  lenient_spaces_after_chunk_size=True)
        self._response: Response | None = None
        self._head: asyncio.Future[None] | None = None
        self._names: list[tuple[str, str]] = []
        self._complete = False
        self._stray = False         # bytes after the reply: the connection is not used again
        self._start = b""           # the reply's first bytes, until they show a status line or cannot
        self.status_seen = False    # the reply began with a status line: an HTTP server answered

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def reusable(self) -> bool:
        return not self.lost and self.transport is not None and not self.transport.is_closing()

    async def exchange(self, response: Response, data: bytes) -> None:
        """Send the request, and wait for the head of its reply (`response` gets it)."""
        self._response = response
        self._head = head = response.pool.loop.create_future()
        self._names = []
        self._complete = False
        self._start = b""
        self.status_seen = False
        assert self.transport is not None
        self.transport.write(data)
        await head

    def abort(self) -> None:
        """Closed while a call may wait for its reply: the call ends as if the server had closed the connection
        (before the head: closed without a reply; within the body: cut off)."""
        if self._response is not None and not self._complete:
            self._fail(CutShort("connection closed") if self._head_done() else Disconnected())
        self.close()

    def close(self) -> None:
        """Closed by its side: whatever arrives or breaks after is no one's to hear."""
        self._complete = True
        if self.transport is not None:
            self.transport.close()
        self.lost = True
        if self.pool is not None:
            self.pool.forget(self)

    # asyncio.Protocol
    def data_received(self, data: bytes) -> None:
        if self._response is None or self._complete:
            self.close()            # bytes no request asked for: the connection cannot be trusted for another
            return
        if not self.status_seen and len(self._start) < _STATUS_LENGTH:
            self._start += data[:_STATUS_LENGTH - len(self._start)]
            self.status_seen = _STATUS_LINE.match(self._start) is not None
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self._fail(NotHttp("Upgrade is not supported", self.status_seen))
        except httptools.HttpParserError as exc:
            reason = str(exc.__context__ or exc) if isinstance(exc, httptools.HttpParserCallbackError) else str(exc)
            if not self._stray:
                self._fail(NotHttp(reason, self.status_seen) if not self._head_done() else CutShort(reason))
        if self._stray:
            self.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        if self.pool is not None:
            self.pool.forget(self)
        response = self._response
        if response is None or self._complete:
            return
        if not self._head_done():
            self._fail(Broken(exc) if isinstance(exc, OSError) else Disconnected())
            return
        if response.till_closed and exc is None:
            self._done()
            return
        self._fail(CutShort(str(exc or "connection closed mid-body")))

    # httptools callbacks
    def on_message_begin(self) -> None:
        if self._complete:      # a second reply, or bytes that would start one: never the next call's
            self._stray = True

    def on_header(self, name: bytes, value: bytes) -> None:
        if self._stray:
            return
        if b"\x00" in value:   # llhttp, lenient, lets it through; aiohttp does not
            raise ValueError("Invalid header value char")
        value = value.rstrip(b" \t")     # llhttp strips the whitespace before a value, aiohttp the one after too
        self._names.append((name.decode("utf-8", "surrogateescape"), value.decode("utf-8", "surrogateescape")))

    def on_headers_complete(self) -> None:
        if self._stray:
            return
        status = self._parser.get_status_code()
        if 100 <= status < 200:         # an interim reply (100 Continue): the real one follows
            self._names = []
            return
        response = self._response
        assert response is not None and self._head is not None
        response.begin(status, CIMultiDictProxy(CIMultiDict(self._names)), self._parser.should_keep_alive())
        if not self._head.done():
            self._head.set_result(None)

    def on_body(self, body: bytes) -> None:
        if self._response is not None and not self._stray:
            self._response.content.feed(body)

    def on_message_complete(self) -> None:
        if self._head_done() and not self._stray:
            self._done()

    def _head_done(self) -> bool:
        head = self._head
        return head is not None and head.done() and not head.cancelled() and head.exception() is None

    def _done(self) -> None:
        self._complete = True
        assert self._response is not None
        self._response.content.finish()

    def _fail(self, error: BaseException) -> None:
        self._complete = True
        if self._head is not None and not self._head.done():
            self._head.set_exception(error)
        elif self._response is not None:
            self._response.content.fail(error)
        if self.transport is not None:
            self.transport.close()


class Response:
    """A reply on the short way, read as the transport's callers read an aiohttp `ClientResponse`."""

    history: tuple[Any, ...] = ()

    def __init__(self, pool: Pool, connection: _Connection, target: Target, method: str) -> None:
        self.pool = pool
        self.method = method
        self.url = target.url
        self.status = 0
        self.headers: CIMultiDictProxy[str] = _NO_HEADERS
        self.content = Body()
        self.till_closed = False
        self.chunked = False
        self._connection: _Connection | None = connection
        self._key = target.key
        self._keep_alive = False

    def begin(self, status: int, headers: CIMultiDictProxy[str], keep_alive: bool) -> None:
        self.status, self.headers, self._keep_alive = status, headers, keep_alive
        encoding = headers.get("Content-Encoding", "").strip().lower()
        if encoding in ("gzip", "deflate"):
            self.content.decode_as(encoding)
        codings = headers.get("Transfer-Encoding", "").lower().split(",")
        self.chunked = codings[-1].strip() == "chunked"     # only a last `chunked` frames the body
        self.till_closed = not self.chunked and "Content-Length" not in headers and status not in _NO_BODY
        if self.till_closed:
            self._keep_alive = False

    @property
    def content_type(self) -> str:
        """The Content-Type without its parameters, lowercased (`application/octet-stream` when none is given)."""
        return content_type(self.headers.get("Content-Type"))[0]

    @property
    def charset(self) -> str | None:
        return content_type(self.headers.get("Content-Type"))[1].get("charset")

    @property
    def content_length(self) -> int | None:
        length = self.headers.get("Content-Length")
        return None if length is None else int(length)

    async def read(self) -> bytes:
        return await self.content.read()

    async def text(self, encoding: str | None = None, errors: str = "strict") -> str:
        return (await self.read()).decode(encoding or self.charset or "utf-8", errors)

    async def json(self, *, loads: Callable[[str], Any] = json.loads) -> Any:
        """The body as JSON, as aiohttp's reads it (None for a blank one); any Content-Type is taken."""
        text = await self.text()
        return loads(text) if text.strip() else None

    def release(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            self.pool.done_with(connection, self._key, self._keep_alive and self.content.at_eof())

    def close(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            self.pool.done_with(connection, self._key, False)     # closes it


class Body:
    """A reply's body as it arrives, read as aiohttp's `StreamReader` is read: whole, `n` bytes at most, or each
    chunk as it comes. `total_raw_bytes` counts what the connection carried, `total_bytes` what it decoded to."""

    def __init__(self) -> None:
        self._chunks: deque[bytes] = deque()
        self._eof = False
        self._error: BaseException | None = None
        self._waiter: asyncio.Future[None] | None = None
        self._decoder: Any = None
        self._encoding = ""
        self.total_bytes = 0
        self.total_raw_bytes = 0

    def decode_as(self, encoding: str) -> None:
        self._encoding = encoding

    def feed(self, data: bytes) -> None:
        self.total_raw_bytes += len(data)
        self._add(self._decoded(data) if self._encoding else data)

    def finish(self) -> None:
        if self._error is not None:     # what came could not be decoded: the body has no end to reach
            return
        if self._decoder is not None:
            self._add(self._decoded(b"", last=True))
            if not self._decoder.eof:       # the compressed stream stops short of its end
                self.fail(Undecodable(self._encoding))
            if self._error is not None:
                return
        self._eof = True
        self._wake()

    def _add(self, data: bytes | None) -> None:
        if data:
            self.total_bytes += len(data)
            self._chunks.append(data)
            self._wake()

    def _decoded(self, data: bytes, last: bool = False) -> bytes | None:
        """`data` decompressed (with what the decoder held back, when `last`); None when it does not decode."""
        if self._decoder is None:
            if self._encoding == "gzip":
                wbits = 16 + zlib.MAX_WBITS
            else:   # deflate: zlib-wrapped as the RFC says, or raw as some servers send it
                wbits = zlib.MAX_WBITS if data[:1] and data[0] & 0x0F == 8 else -zlib.MAX_WBITS
            self._decoder = zlib.decompressobj(wbits)
        try:
            return self._decoder.flush() if last else self._decoder.decompress(data)
        except zlib.error:
            self.fail(Undecodable(self._encoding))
            return None

    def fail(self, error: BaseException) -> None:
        if not self._eof and self._error is None:
            self._error = error
            self._wake()

    def at_eof(self) -> bool:
        return self._eof and not self._chunks

    def _wake(self) -> None:
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def _wait(self) -> None:
        self._waiter = asyncio.get_running_loop().create_future()
        await self._waiter

    async def read(self, n: int = -1) -> bytes:
        """Everything to the end (`n` < 0), or what has arrived, at most `n` bytes (empty at the end)."""
        if n < 0:
            while not self._eof:
                if self._error is not None:
                    raise self._error
                await self._wait()
            data = b"".join(self._chunks)
            self._chunks.clear()
            return data
        while not self._chunks:
            if self._error is not None:
                raise self._error
            if self._eof:
                return b""
            await self._wait()
        taken: list[bytes] = []
        size = 0
        while self._chunks and size < n:     # what has arrived, up to n bytes, as aiohttp's StreamReader gives it
            chunk = self._chunks.popleft()
            if size + len(chunk) > n:
                self._chunks.appendleft(chunk[n - size:])
                chunk = chunk[:n - size]
            taken.append(chunk)
            size += len(chunk)
        return taken[0] if len(taken) == 1 else b"".join(taken)

    async def iter_any(self) -> AsyncIterator[bytes]:
        """Each chunk as it arrives, to the end."""
        while True:
            chunk = await self.read(1 << 30)
            if not chunk:
                return
            yield chunk


_TOKEN = r"[!#$%&'*+.^_`|~0-9A-Za-z-]+"
_PLAIN_TYPE = re.compile(rf"\s*({_TOKEN}/{_TOKEN})\s*(?:;\s*charset\s*=\s*(?:\"({_TOKEN})\"|({_TOKEN})))?\s*")
_TYPES: dict[str | None, tuple[str, dict[str, str]]] = {None: ("application/octet-stream", {})}


def content_type(raw: str | None) -> tuple[str, dict[str, str]]:
    """A Content-Type's type and parameters, as aiohttp's `parse_content_type` reads them: the common forms
    (`application/json`, with a charset) here, any other by aiohttp itself."""
    found = _TYPES.get(raw)
    if found is not None:
        return found
    plain = _PLAIN_TYPE.fullmatch(raw) if raw is not None else None
    if plain is not None:
        charset = plain.group(2) or plain.group(3)
        found = plain.group(1).lower(), ({"charset": charset} if charset else {})
    else:
        from .network import aiohttp

        parsed, parameters = aiohttp.helpers.parse_content_type(raw)
        found = parsed, dict(parameters)
    if len(_TYPES) < 64:
        _TYPES[raw] = found
    return found
