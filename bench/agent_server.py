"""A small, fast OpenAI-compatible Chat Completions server for the benchmarks: raw asyncio, hand-parsed HTTP/1.1.

    python bench/agent_server.py --latency 0.05      # prints its port on stdout once listening

`POST /v1/chat/completions` waits `--latency` seconds (asyncio.sleep, so any number of calls wait together) and
answers `"ok " + the last user message` — deterministic, so a suite's assertions can pass — as a chat.completion,
or with `"stream": true` as server-sent chunks and `data: [DONE]` in a chunked body, as the real API does.
`GET /stats` gives the counts (connections, requests, chat completions) and the server's own CPU seconds.
Keep-alive and Content-Length (or a chunked request body); nothing else of HTTP is needed by the clients measured.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import sys
import time
from typing import Any

_REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed"}
_ids = itertools.count(1)


class Stats:
    """What the server has seen since it started."""

    def __init__(self) -> None:
        self.connections = 0
        self.chat_connections = 0       # connections that carried at least one chat completion
        self.requests = 0
        self.chat_completions = 0

    def to_dict(self) -> dict[str, Any]:
        return {"connections": self.connections, "chat_connections": self.chat_connections,
                "requests": self.requests,
                "chat_completions": self.chat_completions, "cpu_s": time.process_time()}


def reply_text(body: dict[str, Any]) -> str:
    """`ok ` + the text of the last user message (text parts joined, when its content is a list of parts)."""
    users = [m for m in body.get("messages") or [] if isinstance(m, dict) and m.get("role") == "user"]
    content = users[-1].get("content") if users else ""
    if isinstance(content, list):
        content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return f"ok {content}"


def completion(body: dict[str, Any], text: str) -> dict[str, Any]:
    """A non-streaming chat.completion carrying `text`."""
    return {"id": f"chatcmpl-{next(_ids)}", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model") or "bench", "system_fingerprint": "bench",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "logprobs": None,
                         "finish_reason": "stop"}],
            "usage": _usage(body, text)}


def chunks(body: dict[str, Any], text: str) -> list[dict[str, Any]]:
    """The chat.completion.chunk events of a streamed reply: the role, the text in two pieces, the finish, and
    the usage when `stream_options.include_usage` asks for it."""
    base = {"id": f"chatcmpl-{next(_ids)}", "object": "chat.completion.chunk", "created": int(time.time()),
            "model": body.get("model") or "bench", "system_fingerprint": "bench"}
    half = len(text) // 2
    deltas = [{"role": "assistant", "content": ""}, {"content": text[:half]}, {"content": text[half:]}]
    events = [{**base, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": None}]}
              for delta in deltas]
    events.append({**base, "choices": [{"index": 0, "delta": {}, "logprobs": None, "finish_reason": "stop"}]})
    if (body.get("stream_options") or {}).get("include_usage"):
        events.append({**base, "choices": [], "usage": _usage(body, text)})
    return events


def _usage(body: dict[str, Any], text: str) -> dict[str, int]:
    prompt = sum(len(str(m.get("content", ""))) for m in body.get("messages") or [] if isinstance(m, dict)) // 4
    answer = max(1, len(text) // 4)
    return {"prompt_tokens": prompt, "completion_tokens": answer, "total_tokens": prompt + answer}


class Server:
    """One asyncio server; each connection is a loop of requests until the client closes or asks to."""

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.stats = Stats()

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.stats.connections += 1
        served_chat = False
        try:
            while True:
                keep_alive, chat = await self._one_request(reader, writer)
                if chat and not served_chat:
                    self.stats.chat_connections += 1
                    served_chat = True
                if not keep_alive:
                    break
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError, ValueError):
            pass        # the client hung up or sent what is not HTTP: nothing to answer, close the connection
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()

    async def _one_request(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> tuple[bool, bool]:
        """Serve one request; whether the connection stays open, and whether it was a chat completion."""
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError as exc:
            if exc.partial.strip():
                raise
            return False, False     # the client closed an idle connection
        lines = head.decode("latin-1").split("\r\n")
        method, target, version = lines[0].split(" ", 2)
        headers = {}
        for line in lines[1:]:
            if line:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
        body = await _read_body(reader, headers)
        self.stats.requests += 1
        keep_alive = (headers.get("connection", "").lower() != "close") if version == "HTTP/1.1" else \
            headers.get("connection", "").lower() == "keep-alive"
        path = target.split("?", 1)[0]
        chat = path.rstrip("/").endswith("/chat/completions")
        if chat:
            if method != "POST":
                _respond(writer, 405, {"error": {"message": "use POST", "type": "invalid_request_error"}}, keep_alive)
            else:
                await self._chat(writer, body, keep_alive)
        elif path == "/stats" and method == "GET":
            _respond(writer, 200, self.stats.to_dict(), keep_alive)
        else:
            _respond(writer, 404, {"error": {"message": f"no route {path}", "type": "invalid_request_error"}},
                     keep_alive)
        await writer.drain()
        return keep_alive, chat

    async def _chat(self, writer: asyncio.StreamWriter, raw: bytes, keep_alive: bool) -> None:
        try:
            body = json.loads(raw)
            if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
                raise ValueError("messages must be a list")
        except ValueError as exc:
            _respond(writer, 400, {"error": {"message": f"bad request: {exc}", "type": "invalid_request_error"}},
                     keep_alive)
            return
        self.stats.chat_completions += 1
        await asyncio.sleep(self.latency)
        text = reply_text(body)
        if not body.get("stream"):
            _respond(writer, 200, completion(body, text), keep_alive)
            return
        events = [f"data: {json.dumps(chunk)}\n\n".encode() for chunk in chunks(body, text)]
        events.append(b"data: [DONE]\n\n")
        writer.write(_head(200, "text/event-stream", keep_alive, {"Transfer-Encoding": "chunked",
                                                                  "Cache-Control": "no-cache"}))
        for event in events:
            writer.write(b"%x\r\n%s\r\n" % (len(event), event))
        writer.write(b"0\r\n\r\n")


async def _read_body(reader: asyncio.StreamReader, headers: dict[str, str]) -> bytes:
    if "chunked" in headers.get("transfer-encoding", "").lower():
        parts = []
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";", 1)[0], 16)
            if size == 0:
                while (await reader.readuntil(b"\r\n")) != b"\r\n":   # trailers
                    pass
                return b"".join(parts)
            parts.append(await reader.readexactly(size))
            await reader.readexactly(2)
    length = int(headers.get("content-length") or 0)
    return await reader.readexactly(length) if length else b""


def _head(status: int, content_type: str, keep_alive: bool, extra: dict[str, str]) -> bytes:
    lines = [f"HTTP/1.1 {status} {_REASONS[status]}", f"Content-Type: {content_type}",
             f"Connection: {'keep-alive' if keep_alive else 'close'}",
             *(f"{name}: {value}" for name, value in extra.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _respond(writer: asyncio.StreamWriter, status: int, payload: dict[str, Any], keep_alive: bool) -> None:
    data = json.dumps(payload).encode()
    writer.write(_head(status, "application/json", keep_alive, {"Content-Length": str(len(data))}) + data)


async def serve(latency: float, host: str, port: int) -> None:
    server = Server(latency)
    listener = await asyncio.start_server(server.handle, host, port, backlog=4096)
    print(listener.sockets[0].getsockname()[1], flush=True)
    async with listener:
        await listener.serve_forever()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--latency", type=float, default=0.05, help="seconds before each reply (default 0.05)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 (default): any free port, printed on stdout")
    args = parser.parse_args(argv)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(args.latency, args.host, args.port))
    return 0


if __name__ == "__main__":
    sys.exit(main())
