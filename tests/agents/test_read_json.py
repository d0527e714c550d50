"""`read_json` (orjson where it reads as the json module does) gives exactly what `parse_json(read_text(…))` gives:
the same values of the same types, in the same order, and the same error for what is no JSON — for the bodies where
the two parsers part ways (integers beyond 64 bits, NaN, lone surrogates, deep nesting, other charsets, bytes that
are not UTF-8) as for a plain chat completion. Real HTTP on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import math
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from agenttest.agents.replies import parse_json, read_json, read_text
from agenttest.errors import AgentCallError

COMPLETION = (b'{"id":"chatcmpl-1","object":"chat.completion","created":1764680000,"model":"m","choices":[{"index":0,'
              b'"message":{"role":"assistant","content":"ok case 7"},"finish_reason":"stop"}],'
              b'"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}}')
BODIES: list[tuple[bytes, str]] = [
    (COMPLETION, "application/json"),
    (COMPLETION, "application/json; charset=UTF-8"),
    (b'{"n": 18446744073709551616, "m": -9223372036854775809, "k": 123456789012345678901234567890}',
     "application/json"),
    (b'{"n": 9223372036854775807, "u": 18446744073709551615, "f": 0.1234567890123456789}', "application/json"),
    (b'{"x": NaN, "y": -Infinity}', "application/json"),
    (b'{"s": "\\ud800 alone"}', "application/json"),
    (b'{"s": "caf\xe9"}', "application/json; charset=latin-1"),
    (b'{"s": "\xff\xfe broken"}', "application/json"),
    (b"[" * 300 + b"]" * 300, "application/json"),
    (b"[" * 2000 + b"]" * 2000, "application/json"),
    (b'{"a": 1, "b": [1.5, -0.0, 1e-400, 2.5e-324], "a": {"c": null}}', "application/json"),
    (b"\xef\xbb\xbf{}", "application/json"),
    (b"not json at all", "text/plain"),
    (b"", "application/json"),
    (b'{"dangling": ', "application/json"),
]


def _same(a: Any, b: Any) -> bool:
    """Equal values of equal types (NaN equal to NaN, -0.0 not to 0.0), walked without recursion: from Python 3.13
    the json module reads 2,000 levels of nesting."""
    pending = [(a, b)]
    while pending:
        a, b = pending.pop()
        if type(a) is not type(b):
            return False
        if isinstance(a, float):
            if not ((math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))):
                return False
        elif isinstance(a, list):
            if len(a) != len(b):
                return False
            pending.extend(zip(a, b, strict=True))
        elif isinstance(a, dict):
            if list(a) != list(b):
                return False
            pending.extend((a[k], b[k]) for k in a)
        elif a != b:
            return False
    return True


async def _both(server: TestServer, index: int) -> tuple[Any, Any]:
    async def outcome(read: Any) -> Any:
        async with aiohttp.ClientSession() as session, session.get(server.make_url(f"/{index}")) as response:
            try:
                return "value", await read(response)
            except AgentCallError as exc:
                return "error", exc.message

    old = await outcome(lambda response: _old(response))
    new = await outcome(lambda response: read_json(response, "the agent"))
    return old, new


async def _old(response: aiohttp.ClientResponse) -> Any:
    return parse_json(await read_text(response), response, "the agent")


@pytest.mark.parametrize("index", range(len(BODIES)))
def test_read_json_reads_as_the_json_module(index: int) -> None:
    async def body(request: web.Request) -> web.Response:
        raw, content_type = BODIES[int(request.match_info["i"])]
        return web.Response(body=raw, headers={"Content-Type": content_type})

    async def main() -> tuple[Any, Any]:
        app = web.Application()
        app.router.add_get("/{i}", body)
        async with TestServer(app, host="127.0.0.1") as server:
            return await _both(server, index)

    old, new = asyncio.run(main())
    assert old[0] == new[0] and _same(old[1], new[1]), (BODIES[index], old, new)


def test_the_bodies_cover_both_parsers() -> None:
    """The cases above reach orjson (a plain completion) and the json module (each thing orjson reads otherwise)."""
    assert json.loads(COMPLETION)["choices"][0]["message"]["content"] == "ok case 7"
    assert any(b"NaN" in raw for raw, _ in BODIES) and any(b"18446744073709551616" in raw for raw, _ in BODIES)
