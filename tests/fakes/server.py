"""Real HTTP servers for tests: aiohttp.web on 127.0.0.1 (random port) in a background thread, so the code under
test can call them from its own event loop — or from a subprocess running the CLI — and scripted replies for every
fault a network agent can show (statuses, Retry-After, slow replies, garbage, cut streams)."""

from __future__ import annotations

import asyncio
import json
import ssl
import threading
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

# A reply: gets the request and its parsed JSON body (None when the body is not JSON) and answers it.
Reply = Callable[[web.Request, Any], Awaitable[web.StreamResponse]]


class ThreadedServer:
    """Serves `app` on 127.0.0.1 from a thread of its own until `stop()` (or the end of a `with` block)."""

    def __init__(self, app: web.Application, ssl_context: ssl.SSLContext | None = None) -> None:
        self.app = app
        self.port = 0
        self._ssl = ssl_context
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    @property
    def origin(self) -> str:
        return f"{'https' if self._ssl else 'http'}://127.0.0.1:{self.port}"

    def url(self, path: str = "") -> str:
        return self.origin + path

    def start(self) -> ThreadedServer:
        ready = threading.Event()
        failure: list[BaseException] = []

        def serve() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            runner = web.AppRunner(self.app, shutdown_timeout=0.2, access_log=None)
            try:
                loop.run_until_complete(runner.setup())
                site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=self._ssl)
                loop.run_until_complete(site.start())
                self.port = runner.addresses[0][1]
            except BaseException as exc:
                failure.append(exc)
                ready.set()
                return
            ready.set()
            loop.run_forever()
            loop.run_until_complete(runner.cleanup())
            # A handler whose client went away is no longer the runner's to stop: one answering slowly (or never)
            # is cancelled here rather than destroyed pending with the loop.
            left = asyncio.all_tasks(loop)
            for task in left:
                task.cancel()
            if left:
                loop.run_until_complete(asyncio.wait(left))
            loop.close()

        self._thread = threading.Thread(target=serve, name="test-server", daemon=True)
        self._thread.start()
        ready.wait(10)
        if failure:
            raise failure[0]
        return self

    def stop(self) -> None:
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)

    def __enter__(self) -> ThreadedServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


class ScriptedServer(ThreadedServer):
    """Answers POSTs to `path` with the queued replies in order (then with `default`), and records what it got."""

    def __init__(self, path: str, default: Reply | None = None, ssl_context: ssl.SSLContext | None = None) -> None:
        app = web.Application()
        app.router.add_route("*", path, self._handle)
        super().__init__(app, ssl_context)
        self.path = path
        self.default = default or json_reply({"content": "ok"})
        self.requests: list[Any] = []             # parsed JSON bodies (raw text when not JSON)
        self.headers: list[dict[str, str]] = []
        self.methods: list[str] = []
        self._queue: deque[Reply] = deque()

    @property
    def endpoint(self) -> str:
        return self.url(self.path)

    def enqueue(self, *replies: Reply) -> None:
        self._queue.extend(replies)

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        text = await request.text()
        try:
            body = json.loads(text)
        except ValueError:
            body = None
        self.requests.append(body if body is not None else text)
        self.headers.append(dict(request.headers))
        self.methods.append(request.method)
        reply = self._queue.popleft() if self._queue else self.default
        return await reply(request, body)


def json_reply(payload: Any, status: int = 200, headers: dict[str, str] | None = None) -> Reply:
    async def reply(request: web.Request, body: Any) -> web.StreamResponse:
        return web.json_response(payload, status=status, headers=headers)
    return reply


def text_reply(text: str, content_type: str = "text/plain", status: int = 200) -> Reply:
    async def reply(request: web.Request, body: Any) -> web.StreamResponse:
        return web.Response(body=text.encode(), status=status, headers={"Content-Type": content_type})
    return reply


def status_reply(status: int, message: str = "", retry_after: str | None = None) -> Reply:
    """An error status with an OpenAI-style error body."""
    headers = {"Retry-After": retry_after} if retry_after is not None else None
    payload = {"error": {"message": message or f"status {status}", "type": "server_error", "param": None,
                         "code": None}}
    return json_reply(payload, status=status, headers=headers)


def slow(seconds: float, then: Reply) -> Reply:
    async def reply(request: web.Request, body: Any) -> web.StreamResponse:
        await asyncio.sleep(seconds)
        return await then(request, body)
    return reply


def sse_reply(events: list[str], *, cut: bool = False, pause: float = 0.0) -> Reply:
    """An event stream of the given raw events (each written as its own network chunk). With `cut`, the connection
    is dropped after them instead of the stream being finished."""
    async def reply(request: web.Request, body: Any) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await response.prepare(request)
        for event in events:
            await response.write(event.encode())
            if pause:
                await asyncio.sleep(pause)
        if cut:
            assert request.transport is not None
            request.transport.abort()
            return response
        await response.write_eof()
        return response
    return reply


async def held_open(request: web.Request, limit: float = 60) -> bool:
    """Send nothing more and keep the connection open until the client closes it (True), or `limit` seconds pass
    (False, a bound only so that a client that never lets go fails its test instead of hanging it)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + limit
    while request.transport is not None and not request.transport.is_closing():
        if loop.time() > end:
            return False
        await asyncio.sleep(0.01)
    return True


def disconnect() -> Reply:
    """Drop the connection without answering."""
    async def reply(request: web.Request, body: Any) -> web.StreamResponse:
        assert request.transport is not None
        request.transport.abort()
        return web.Response()
    return reply
