"""The shared HTTP transport against real local servers: retries, Retry-After, deadlines, every connection fault,
and the connection pool."""

from __future__ import annotations

import asyncio
import socket
import ssl
import time
from email.utils import formatdate
from typing import Any

import pytest
import trustme
from aiohttp import web

from agenttest.agents import transport
from agenttest.agents.sse import iter_sse
from agenttest.agents.transport import HttpTransport, parse_retry_after
from agenttest.agents.urls import display_url
from agenttest.errors import AgentCallError
from agenttest.secrets import register_secret
from fakes.server import ScriptedServer, ThreadedServer, disconnect, json_reply, sse_reply, status_reply, text_reply


def post(url: str, *, retries: int = 2, deadline: float | None = None, pool_size: int = 4) -> tuple[int, Any]:
    """One call through a fresh transport: (status, parsed JSON body)."""
    async def run() -> tuple[int, Any]:
        client = HttpTransport(pool_size=pool_size, retries=retries)
        try:
            async with client.send(url, {"q": 1}, {}, deadline) as response:
                return response.status, await response.json()
        finally:
            await client.aclose()
    return asyncio.run(run())


def failure(url: str, **kwargs: Any) -> AgentCallError:
    with pytest.raises(AgentCallError) as caught:
        post(url, **kwargs)
    return caught.value


def unused_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# --- retries ---------------------------------------------------------------------------------------------------

def test_5xx_is_retried_until_it_succeeds() -> None:
    with ScriptedServer("/chat", json_reply({"ok": True})) as server:
        server.enqueue(status_reply(503), status_reply(502))
        assert post(server.endpoint) == (200, {"ok": True})
        assert len(server.requests) == 3
        assert server.requests[0] == {"q": 1}
        assert server.headers[0]["Content-Type"] == "application/json"
        assert server.headers[0]["User-Agent"].startswith("agenttest/")


def test_retries_are_bounded_and_the_message_says_what_and_where() -> None:
    with ScriptedServer("/chat", status_reply(503, "overloaded, try later")) as server:
        error = failure(server.endpoint, retries=2)
        assert len(server.requests) == 3
    assert error.kind == "agent"
    assert error.message == f"HTTP 503 from {server.endpoint}: overloaded, try later (after 3 attempts)"


def test_no_retries_with_zero() -> None:
    with ScriptedServer("/chat", status_reply(500)) as server:
        error = failure(server.endpoint, retries=0)
        assert len(server.requests) == 1
    assert error.message == f"HTTP 500 from {server.endpoint}: status 500"


@pytest.mark.parametrize("status", [400, 401, 404, 422])
def test_client_errors_are_not_retried(status: int) -> None:
    with ScriptedServer("/chat", status_reply(status, "bad request shape")) as server:
        error = failure(server.endpoint)
        assert len(server.requests) == 1
    assert error.message == f"HTTP {status} from {server.endpoint}: bad request shape"
    assert error.kind == "agent"


def test_429_honours_retry_after_seconds(waits: list[float]) -> None:
    with ScriptedServer("/chat", json_reply({"ok": True})) as server:
        server.enqueue(status_reply(429, "rate limited", retry_after="0.3"))
        assert post(server.endpoint)[0] == 200
        assert waits == [0.3]                        # not the fast test backoff (~0.01 s)
        assert len(server.requests) == 2


def test_retry_after_http_date_and_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    assert parse_retry_after("2") == 2.0
    assert parse_retry_after("0") == 0.0
    assert parse_retry_after(None) is None
    assert parse_retry_after("soon") is None
    assert parse_retry_after("-5") == 0.0
    assert parse_retry_after("nan") is None
    assert parse_retry_after("inf") == transport.RETRY_AFTER_CAP
    assert parse_retry_after("3600") == transport.RETRY_AFTER_CAP
    in_ten = parse_retry_after(formatdate(time.time() + 10, usegmt=True))
    assert in_ten is not None and 8 <= in_ten <= 10
    assert parse_retry_after(formatdate(time.time() - 100, usegmt=True)) == 0.0
    monkeypatch.setattr(transport, "RETRY_AFTER_CAP", 5.0)
    assert parse_retry_after("3600") == 5.0


def test_retry_never_waits_past_the_deadline(waits: list[float]) -> None:
    with ScriptedServer("/chat", status_reply(429, "slow down", retry_after="20")) as server:
        error = failure(server.endpoint, deadline=time.monotonic() + 2)
        assert waits == []                           # it gave up at once, without waiting for the deadline
        assert len(server.requests) == 1
    assert error.message == (f"HTTP 429 from {server.endpoint}: slow down "
                             "(after 1 attempt; no retry: the case's deadline is near)")


def test_backoff_grows_exponentially_with_jitter_and_a_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(transport, "BACKOFF_BASE", 0.5)
    monkeypatch.setattr(transport, "BACKOFF_CAP", 8.0)
    for attempt, step in [(1, 0.5), (2, 1.0), (3, 2.0), (4, 4.0), (5, 8.0), (9, 8.0)]:
        delays = {transport._backoff(attempt) for _ in range(50)}
        assert all(step / 2 <= d <= step for d in delays)
        assert len(delays) > 1   # jittered


# --- connection faults ------------------------------------------------------------------------------------------

def test_connection_refused_is_infra_and_retried(waits: list[float]) -> None:
    url = f"http://127.0.0.1:{unused_port()}/chat"
    error = failure(url, retries=2)
    assert error.kind == "infra"
    assert error.message == f"cannot connect to {url}: Connection refused (after 3 attempts)"
    assert len(waits) == 2 and 0.005 <= waits[0] <= 0.01 and 0.01 <= waits[1] <= 0.02    # the backoff's steps


def test_unknown_host_is_infra_and_names_the_host() -> None:
    error = failure("http://agenttest-no-such-host.invalid/chat")
    assert error.kind == "infra"
    assert error.message == ("cannot resolve host 'agenttest-no-such-host.invalid' (DNS) for "
                             "http://agenttest-no-such-host.invalid/chat: Name or service not known")   # not retried


@pytest.fixture(scope="module")
def tls_server() -> Any:
    """An HTTPS server whose certificate no system CA signed."""
    ca = trustme.CA()
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1").configure_cert(context)
    with ScriptedServer("/chat", json_reply({"ok": True}), ssl_context=context) as server:
        yield server


def test_untrusted_certificate_is_an_infra_error_not_retried(tls_server: ScriptedServer) -> None:
    error = failure(tls_server.endpoint)
    assert error.kind == "infra"
    assert error.message.startswith(f"TLS certificate verification failed for {tls_server.endpoint}: ")
    assert error.message.endswith(": unable to get local issuer certificate")
    assert tls_server.requests == []


def test_tls_to_a_plain_http_server_is_an_infra_error() -> None:
    with ScriptedServer("/chat") as server:
        url = server.endpoint.replace("http://", "https://")
        error = failure(url)
    assert error.kind == "infra"
    assert error.message.startswith(f"TLS handshake with {url} failed: ")


def test_dropped_connection_without_reply_is_retried() -> None:
    with ScriptedServer("/chat", json_reply({"ok": True})) as server:
        server.enqueue(disconnect())
        assert post(server.endpoint) == (200, {"ok": True})
        assert len(server.requests) == 2
    with ScriptedServer("/chat", disconnect()) as server:
        error = failure(server.endpoint, retries=1)
    assert error.message == f"{server.endpoint} closed the connection without a reply (after 2 attempts)"
    assert error.kind == "agent"


def test_a_server_that_is_not_http_is_an_agent_error() -> None:
    async def garbage(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(1000)
        writer.write(b"SSH-2.0-OpenSSH_9.6\r\nthis is not HTTP\r\n\r\n")
        await writer.drain()
        writer.close()

    async def run() -> AgentCallError:
        server = await asyncio.start_server(garbage, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        client = HttpTransport(pool_size=1, retries=2)
        try:
            with pytest.raises(AgentCallError) as caught:
                async with client.send(f"http://127.0.0.1:{port}/chat", {}, {}, None):
                    pass
            return caught.value
        finally:
            await client.aclose()
            server.close()

    error = asyncio.run(run())
    assert error.kind == "agent"
    assert error.message.startswith("invalid HTTP reply from http://127.0.0.1:")
    said = error.message.split(": ", 1)[1]       # one line, without aiohttp's own "400" for a reply it cannot read
    assert "\n" not in error.message and "400" not in said and "ClientResponseError" not in said, error.message


def test_a_body_cut_mid_way_is_reported_while_reading() -> None:
    with ScriptedServer("/chat", sse_reply(["data: one\n\n", "data: two\n\n"], cut=True)) as server:
        async def run() -> list[str]:
            client = HttpTransport(pool_size=1, retries=2)
            seen: list[str] = []
            try:
                async with client.send(server.endpoint, {}, {}, None) as response:
                    async for event in iter_sse(response):
                        seen.append(event.data)
            finally:
                await client.aclose()
            return seen

        with pytest.raises(AgentCallError) as caught:
            asyncio.run(run())
        assert len(server.requests) == 1     # a reply that started is never sent again
    assert caught.value.message == f"the reply from {server.endpoint} was cut off after 22 bytes (connection closed " \
                                   "mid-body)"
    assert caught.value.kind == "agent"


def test_a_slow_reply_is_awaited_and_cancellation_leaves_no_error() -> None:
    async def slow_ok(request: web.Request) -> web.Response:
        await asyncio.sleep(0.3)
        return web.json_response({"ok": True})

    app = web.Application()
    app.router.add_post("/chat", slow_ok)
    with ThreadedServer(app) as server:
        assert post(server.url("/chat")) == (200, {"ok": True})

        async def cancelled() -> None:
            client = HttpTransport(pool_size=1, retries=2)
            try:
                async def one() -> None:
                    async with client.send(server.url("/chat"), {}, {}, None):
                        pass
                with pytest.raises(asyncio.TimeoutError):
                    await asyncio.wait_for(one(), 0.05)
                async with client.send(server.url("/chat"), {}, {}, None) as response:   # the pool still works
                    assert response.status == 200
            finally:
                await client.aclose()

        asyncio.run(cancelled())


# --- the pool ---------------------------------------------------------------------------------------------------

def test_one_pool_per_agent_sized_from_parallel() -> None:
    active = 0
    peak = 0
    peers: set[Any] = set()

    async def handler(request: web.Request) -> web.Response:
        nonlocal active, peak
        peers.add(request.transport.get_extra_info("peername") if request.transport else None)
        active += 1
        peak = max(peak, active)
        await asyncio.sleep(0.05)
        active -= 1
        return web.json_response({"ok": True})

    app = web.Application()
    app.router.add_post("/chat", handler)
    with ThreadedServer(app) as server:
        async def run() -> None:
            client = HttpTransport(pool_size=2, retries=0)

            async def one() -> None:
                async with client.send(server.url("/chat"), {}, {}, None) as response:
                    await response.read()
            try:
                await asyncio.gather(*(one() for _ in range(8)))
            finally:
                await client.aclose()

        asyncio.run(run())
    assert peak == 2           # never more connections than the pool allows…
    assert len(peers) == 2     # …and they are kept alive and reused


# --- secrets in messages ----------------------------------------------------------------------------------------

def test_error_messages_hide_passwords_and_registered_secrets() -> None:
    register_secret("sk-transport-secret-0001")
    assert display_url("https://user:hunter2pass@example.com/v1?key=sk-transport-secret-0001") == \
        "https://example.com/v1?key=***"
    with ScriptedServer("/chat", status_reply(401, "Incorrect API key provided: sk-transport-secret-0001")) as server:
        error = failure(server.endpoint)
    assert "sk-transport-secret-0001" not in error.message
    assert error.message.endswith("Incorrect API key provided: ***")


def test_long_error_bodies_are_quoted_short_on_one_line() -> None:
    with ScriptedServer("/chat", text_reply("<html>\n" + "x" * 5000 + "\n</html>", "text/html", 500)) as server:
        error = failure(server.endpoint, retries=0)
    assert "\n" not in error.message
    assert error.message.startswith(f"HTTP 500 from {server.endpoint}: <html> xxx")
    assert error.message.endswith("…") and len(error.message) < 400


def test_a_url_shown_before_a_secret_was_registered_is_masked_after() -> None:
    """display_url remembers how each URL is shown, until another secret is registered."""
    url = "https://example.com/v1/sk-late-registered-0002/chat"
    assert display_url(url) == url
    register_secret("sk-late-registered-0002")
    assert display_url(url) == "https://example.com/v1/***/chat"


def test_a_redirect_that_turns_the_post_into_a_get_is_an_error_not_a_silent_get() -> None:
    async def moved(request: web.Request) -> web.StreamResponse:
        raise web.HTTPFound("/elsewhere")

    async def elsewhere(request: web.Request) -> web.StreamResponse:
        return web.json_response({"method": request.method})

    async def kept(request: web.Request) -> web.StreamResponse:
        raise web.HTTPPermanentRedirect("/echo")              # 308 keeps the method and the body

    async def echo(request: web.Request) -> web.StreamResponse:
        return web.json_response({"method": request.method, "body": await request.json()})

    async def run() -> tuple[AgentCallError, Any]:
        app = web.Application()
        app.router.add_route("*", "/chat", moved)
        app.router.add_route("*", "/elsewhere", elsewhere)
        app.router.add_route("*", "/keep", kept)
        app.router.add_route("*", "/echo", echo)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = runner.addresses[0][1]
        client = HttpTransport(pool_size=1, retries=2)
        try:
            with pytest.raises(AgentCallError) as caught:
                async with client.send(f"http://127.0.0.1:{port}/chat", {"q": 1}, {}, None):
                    pass
            async with client.send(f"http://127.0.0.1:{port}/keep", {"q": 1}, {}, None) as response:
                followed = await response.json()
            return caught.value, followed
        finally:
            await client.aclose()
            await runner.cleanup()

    error, followed = asyncio.run(run())
    assert error.kind == "agent" and "redirected the POST (HTTP 302) to " in error.message
    assert error.message.endswith("/elsewhere as a GET, without its body: set the agent's URL to where it points")
    assert followed == {"method": "POST", "body": {"q": 1}}
