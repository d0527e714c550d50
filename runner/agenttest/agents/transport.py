"""The network providers' transport: one connection pool per agent — the short way's to an agent on this machine
(`agents.loopback`), an aiohttp session's to any other — retries with backoff, and every network fault turned into
an AgentCallError verdict whose message says what happened and where.

aiohttp (~60 ms to import) is imported when a call needs it: an agent's URL the short way does not take (the
transport is told them when it is made, so the import happens before any case is timed), or a call it hands on."""

from __future__ import annotations

import asyncio
import json
import math
import os
import random
import socket
import ssl
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson
from yarl import URL

from .. import __version__
from ..errors import AgentCallError
from ..secrets import mask
from . import loopback
from .replies import snippet
from .urls import display_url, without_user_info

# Read at call time, so tests can shrink them.
BACKOFF_BASE = 0.5        # seconds before the first retry; doubles per retry
BACKOFF_CAP = 8.0         # longest backoff between two attempts
RETRY_AFTER_CAP = 30.0    # longest `Retry-After` we honour
CONNECT_TIMEOUT = 30.0    # opening a connection; the reply itself is bounded by the case's deadline

# Who answers a new pool's name lookups: None is aiohttp's default (the system's resolver). The test suite puts its
# own here so that it never needs the network.
RESOLVER: Callable[[], aiohttp.abc.AbstractResolver] | None = None

if TYPE_CHECKING:
    import aiohttp

USER_AGENT = f"agenttest/{__version__}"
_ERROR_BODY_LIMIT = 8192  # bytes of an error reply read for the message


@dataclass
class _Fault:
    """One failed attempt: what to tell the user, and whether another attempt may help."""

    message: str
    kind: str
    retryable: bool
    retry_after: float | None = None
    status: int | None = None

    def error(self, attempts: int, deadline_near: bool = False) -> AgentCallError:
        """The verdict after `attempts` attempts, saying why no further one was made."""
        tried = f"after {attempts} attempt{'s' if attempts > 1 else ''}"
        if deadline_near:
            return AgentCallError(f"{self.message} ({tried}; no retry: the case's deadline is near)", kind=self.kind,
                                  status=self.status)
        return AgentCallError(f"{self.message} ({tried})" if attempts > 1 else self.message, kind=self.kind,
                              status=self.status)


class HttpTransport:
    """One connection pool per agent, created lazily inside the running loop and closed by `aclose`."""

    def __init__(self, pool_size: int, retries: int, urls: Iterable[str] = ()) -> None:
        """`urls`, those the agent will call: aiohttp is imported now when the short way takes none of them."""
        self._pool_size = pool_size
        self._retries = retries
        self._session: aiohttp.ClientSession | None = None
        self._proxies: dict[URL, URL | None] = {}
        self._by_url: dict[str, URL | None] = {}
        self._loopback: loopback.Pool | None = None
        self._heads: dict[tuple[Any, ...], loopback.Head | None] = {}
        if any(self._target(url) is None for url in urls):
            _aiohttp()

    def _client(self) -> aiohttp.ClientSession:
        aiohttp = _aiohttp()
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=self._pool_size, resolver=RESOLVER() if RESOLVER else None),
                timeout=aiohttp.ClientTimeout(total=None, sock_connect=CONNECT_TIMEOUT),
                headers={"User-Agent": USER_AGENT},
                # Proxies from HTTP(S)_PROXY/NO_PROXY are looked up once per origin in `_proxy`, not per request:
                # trust_env=True costs two thread hops on every call (netrc and proxy lookups).
                trust_env=False,
            )
        return self._session

    def _proxy(self, url: str) -> URL | None:
        """The proxy the environment chooses for `url`'s origin (`network.env_proxy`), looked up once per origin,
        and kept by the URL too: parsing it again on every call cost ~2 µs of each."""
        if url in self._by_url:
            return self._by_url[url]
        origin = URL(url).origin()
        if origin not in self._proxies:
            from .network import env_proxy

            self._proxies[origin] = env_proxy(origin)
        if len(self._by_url) < 1024:        # an agent's endpoints: a handful of URLs
            self._by_url[url] = self._proxies[origin]
        return self._proxies[origin]

    def _head(self, method: str, url: str, headers: Mapping[str, str]) -> loopback.Head | None:
        """The head of a request the short way sends (`agents.loopback`), or None when aiohttp sends it: worked
        out once for each method, URL and headers (an agent's calls share them)."""
        key = (method, url, *headers.items())
        if key in self._heads:
            return self._heads[key]
        target = self._target(url)
        head = loopback.request_head(method, target, {"User-Agent": USER_AGENT}, headers) if target else None
        if len(self._heads) < 1024:
            self._heads[key] = head
        return head

    def _target(self, url: str) -> loopback.Target | None:
        """Where the short way would take a call to `url`: None when it does not (`loopback.eligible`), or when the
        environment may name a proxy for it (aiohttp finds which)."""
        target = loopback.eligible(url, resolver_set=RESOLVER is not None)
        if target is None or (loopback.proxies_possible() and self._proxy(url) is not None):
            return None
        return target

    async def _short_way(self, method: str, head: loopback.Head, data: bytes, shown: str) -> tuple[Any, str | None]:
        """The reply over the short way; or None and the URL aiohttp is to send the request to: no connection
        could be opened (aiohttp says why), the other end does not speak HTTP (aiohttp words what it got), or the
        reply is a redirect aiohttp would follow with the request (aiohttp follows it from where it points)."""
        pool = self._loopback = loopback.Pool.of_this_loop(self._loopback, self._pool_size, CONNECT_TIMEOUT)
        try:
            response = await pool.request(head.target, method, head.bytes_for(data))
        except loopback.NotHttp as exc:
            if exc.status_seen:
                raise
            return None, None
        if response is None or response.status not in loopback.REDIRECTS or "Location" not in response.headers:
            return response, None
        response.close()
        location = response.headers["Location"]
        try:
            where = str(head.target.url.join(URL(location)))
        except ValueError:      # as aiohttp says it
            return _invalid(shown, _said(f"InvalidUrlRedirectClientError: {location} - Server attempted redirecting "
                                         "to a location that does not look like a URL")), None
        if method != "GET" and (response.status == 303 or (response.status in (301, 302) and method == "POST")):
            # aiohttp would follow it as a GET without the body, which `_through_aiohttp` refuses: said at once
            return _redirected(shown, method, response.status, where, "GET"), None
        return None, where

    def send(self, url: str, body: Any, headers: Mapping[str, str], deadline: float | None,
             method: str = "POST") -> _Sending:
        """Send `body` as JSON and yield the successful response (`async with … as response`). Connection errors,
        429 and 5xx are retried with exponential backoff and jitter (or `Retry-After`), never waiting past
        `deadline`; every other fault, and a connection that breaks while the caller reads the reply, raises
        AgentCallError."""
        return _Sending(self, url, body, headers, deadline, method)

    async def _respond(self, url: str, body: Any, headers: Mapping[str, str], deadline: float | None,
                       method: str) -> aiohttp.ClientResponse:
        """The successful response to `body` (see `send`), after the retries it took."""
        shown = display_url(url)
        data = _json_body(body)
        headers = {"Content-Type": "application/json", **headers}
        attempts = 0
        while True:
            attempts += 1
            head = self._head(method, url, headers)
            response: Any = None
            elsewhere: str | None = None    # where aiohttp is to send it instead, when not to `url`
            try:
                if head is not None:
                    response, elsewhere = await self._short_way(method, head, data, shown)
            except loopback.Fault as exc:
                outcome: Any = _short_way_fault(exc, shown)
            else:
                outcome = response or await self._through_aiohttp(elsewhere or url, method, data, headers, shown)
            if isinstance(outcome, _Fault):
                fault = outcome
            elif outcome.status < 400:
                return outcome
            else:
                fault = await _status_fault(outcome, shown)
            if not fault.retryable or attempts > self._retries:
                raise fault.error(attempts)
            delay = fault.retry_after if fault.retry_after is not None else _backoff(attempts)
            if deadline is not None and time.monotonic() + delay >= deadline:
                raise fault.error(attempts, deadline_near=True)
            await asyncio.sleep(delay)

    async def _through_aiohttp(self, url: str, method: str, data: bytes, headers: Mapping[str, str],
                               shown: str) -> Any:
        """One attempt through aiohttp: its response, or the _Fault it came to."""
        aiohttp = _aiohttp()
        proxy = self._proxy(url)
        try:
            from .network import tls_context

            tls = tls_context() if url[:6].lower() == "https:" or (proxy and proxy.scheme == "https") else True
            response = await self._client().request(method, url, data=data, headers=headers, proxy=proxy, ssl=tls)
        except aiohttp.ClientProxyConnectionError as exc:    # the proxy, not the agent, is out of reach
            return _connection_fault(exc, f"the proxy {display_url(str(proxy))} for {shown}")
        except aiohttp.ClientError as exc:
            return _connection_fault(exc, shown)
        if response.history and response.method != method:     # a 301/302/303 turned the POST into a GET
            response.release()
            return _redirected(shown, method, response.history[0].status, str(response.url), response.method)
        return response

    async def aclose(self) -> None:
        """Close the pool; a later `send` opens a new one."""
        if self._loopback is not None:
            await self._loopback.close()
            self._loopback = None
        if self._session is not None:
            await self._session.close()
            self._session = None


class _Sending:
    """`HttpTransport.send`'s `async with`: the response while the caller reads it, released after; a connection
    that breaks meanwhile is an AgentCallError. (A class, not an `asynccontextmanager`: its generator cost every
    call ~3 µs.)"""

    __slots__ = ("_request", "_response", "_transport")

    def __init__(self, transport: HttpTransport, *request: Any) -> None:
        self._transport = transport
        self._request = request
        self._response: aiohttp.ClientResponse | None = None

    async def __aenter__(self) -> aiohttp.ClientResponse:
        self._response = await self._transport._respond(*self._request)
        return self._response

    async def __aexit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: Any) -> None:
        response = self._response
        assert response is not None
        try:
            if _broke(exc):
                response.close()
                raise AgentCallError(_broken_reply(exc, response, display_url(self._request[0]))) from exc
        finally:
            response.release()


def _backoff(attempt: int) -> float:
    """Exponential backoff with "equal jitter": half the step fixed, half random, so retries of parallel cases
    spread out instead of hitting a rate-limited endpoint together."""
    step = min(BACKOFF_CAP, BACKOFF_BASE * 2 ** (attempt - 1))
    return step / 2 + random.uniform(0, step / 2)


def parse_retry_after(value: str | None) -> float | None:
    """`Retry-After` as seconds (capped), from a number of seconds or an HTTP-date; None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        from email.utils import parsedate_to_datetime  # here: only a date in Retry-After needs it (~3 ms of start)

        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        seconds = when.timestamp() - time.time()
    if math.isnan(seconds):
        return None
    return min(max(seconds, 0.0), RETRY_AFTER_CAP)


def _json_body(body: Any) -> bytes:
    """The request's JSON as UTF-8: orjson's (~0.2 µs for a chat request, against ~4 µs), or the json module's for
    what orjson refuses (an integer beyond 64 bits, a key that is not a string)."""
    try:
        return orjson.dumps(body)
    except TypeError:       # orjson.JSONEncodeError included
        return json.dumps(body, ensure_ascii=False).encode("utf-8")


def _aiohttp() -> Any:
    """aiohttp, imported on first use (`agents.network` imports it)."""
    from .network import aiohttp

    return aiohttp


def _loaded_aiohttp() -> Any:
    """aiohttp if something imported it: an exception that is none of its own needs no import to tell."""
    return sys.modules.get("aiohttp")


def _broke(exc: BaseException | None) -> bool:
    """Whether `exc`, raised while a reply was read, is the connection's fault (either way's)."""
    if isinstance(exc, loopback.Fault):
        return True
    aiohttp = _loaded_aiohttp()
    return aiohttp is not None and isinstance(exc, aiohttp.ClientError)


def _short_way_fault(exc: loopback.Fault, shown: str) -> _Fault:
    """What the short way's fault says, in the words of aiohttp's (`_connection_fault`)."""
    if isinstance(exc, loopback.Disconnected):
        return _disconnected(shown)
    if isinstance(exc, loopback.Broken):
        return _failed(shown, exc.os_error)
    assert isinstance(exc, loopback.NotHttp), exc     # the rest come while the body is read (`_broken_reply`)
    return _invalid(shown, _said(str(exc)))


def _disconnected(shown: str) -> _Fault:
    return _Fault(f"{shown} closed the connection without a reply", "agent", retryable=True)


def _failed(shown: str, error: BaseException) -> _Fault:
    return _Fault(f"connection to {shown} failed: {_reason(error)}", "infra", retryable=True)


def _redirected(shown: str, method: str, status: int, where: str, became: str) -> _Fault:
    return _Fault(f"{shown} redirected the {method} (HTTP {status}) to {display_url(where)} as a {became}, without "
                  "its body: set the agent's URL to where it points", "agent", retryable=False)


def _invalid(shown: str, said: str) -> _Fault:
    return _Fault(f"invalid HTTP reply from {shown}: {said}", "agent", retryable=False)


def _connection_fault(exc: aiohttp.ClientError, shown: str) -> _Fault:
    aiohttp = _aiohttp()
    if isinstance(exc, aiohttp.ClientConnectorCertificateError):
        return _Fault(f"TLS certificate verification failed for {shown}: {_reason(exc.certificate_error)}",
                      "infra", retryable=False)
    if isinstance(exc, aiohttp.ClientSSLError):
        return _Fault(f"TLS handshake with {shown} failed: {_reason(exc.os_error)}", "infra", retryable=False)
    if isinstance(exc, aiohttp.ClientConnectorError):
        if isinstance(exc.os_error, socket.gaierror):
            # "name not known" will not change on retry; "temporary failure in name resolution" may.
            return _Fault(f"cannot resolve host {exc.host!r} (DNS) for {shown}: {_reason(exc.os_error)}", "infra",
                          retryable=exc.os_error.errno == socket.EAI_AGAIN)
        return _Fault(f"cannot connect to {shown}: {_reason(exc.os_error)}", "infra", retryable=True)
    if isinstance(exc, aiohttp.ServerTimeoutError):
        return _Fault(f"cannot connect to {shown}: timed out after {CONNECT_TIMEOUT:g}s", "infra", retryable=True)
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        return _disconnected(shown)
    if isinstance(exc, aiohttp.ClientOSError):
        return _failed(shown, exc)
    return _invalid(shown, _describe(exc))


async def _status_fault(response: aiohttp.ClientResponse, shown: str) -> _Fault:
    try:
        raw = await response.content.read(_ERROR_BODY_LIMIT)
    except Exception as exc:
        if not _broke(exc):
            raise
        raw = b""
    finally:
        response.release()
    detail = _error_detail(raw.decode("utf-8", errors="replace"))
    status = response.status
    retryable = status == 429 or status >= 500
    return _Fault(f"HTTP {status} from {shown}" + (f": {detail}" if detail else ""), "agent", retryable,
                  parse_retry_after(response.headers.get("Retry-After")) if retryable else None, status)


def _error_detail(text: str) -> str:
    """The readable part of an error body: OpenAI-style `error.message`, a `message`/`detail`, else the text."""
    try:
        parsed = json.loads(text)
    except ValueError:
        return snippet(text)
    if isinstance(parsed, dict):
        error = parsed.get("error")
        for candidate in (error.get("message") if isinstance(error, dict) else error,
                          parsed.get("message"), parsed.get("detail")):
            if isinstance(candidate, str) and candidate.strip():
                return snippet(candidate)
    return snippet(text)


def _broken_reply(exc: aiohttp.ClientError, response: aiohttp.ClientResponse, shown: str) -> str:
    """Why a reply could not be read to its end, in our words: aiohttp says a body cut short is a "400"."""
    if isinstance(exc, loopback.CutShort) or _cut_short_by_aiohttp(exc):
        stream = response.content
        received = getattr(stream, "total_raw_bytes", stream.total_bytes)     # aiohttp ≥ 3.12: before decoding
        of = f" of {response.content_length}" if response.content_length is not None else ""
        return f"the reply from {shown} was cut off after {received} bytes{of} (connection closed mid-body)"
    return f"connection to {shown} broke while reading the reply: {_describe(exc)}"


def _cut_short_by_aiohttp(exc: BaseException) -> bool:
    aiohttp = _loaded_aiohttp()
    if aiohttp is None:
        return False
    cut_short = (aiohttp.http_exceptions.ContentLengthError, aiohttp.http_exceptions.TransferEncodingError)
    return isinstance(exc, aiohttp.ClientPayloadError) and isinstance(exc.__cause__, cut_short)


def _reason(error: BaseException | None) -> str:
    """Why a socket operation failed, in the OS's words ("Connection refused", "Name or service not known")."""
    if error is None:
        return "unknown error"
    if isinstance(error, ssl.SSLCertVerificationError) and error.verify_message:
        return str(error.verify_message)
    if isinstance(error, ssl.SSLError):
        return str(error.reason or error).lower().replace("_", " ")
    if isinstance(error, OSError) and error.errno is not None and error.errno > 0:
        return os.strerror(error.errno)
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    return str(error) or type(error).__name__


def _describe(exc: BaseException) -> str:
    """What went wrong, on one line. A reply aiohttp could not parse comes as a ClientResponseError whose status
    (400) is aiohttp's own, not the server's: only its message is said."""
    if isinstance(exc, loopback.Undecodable):
        return exc.described()
    aiohttp = _loaded_aiohttp()
    if aiohttp is not None and isinstance(exc, aiohttp.ClientResponseError) and exc.message:
        return _said(str(exc.message))
    text = str(exc)
    return _said(f"{type(exc).__name__}: {text}" if text.strip() else type(exc).__name__)


def _said(message: str) -> str:
    """A message on one line, without credentials or secrets."""
    return mask(without_user_info(" ".join(message.split())))
