"""Name lookups answered at the test's edge: a `.invalid` name (RFC 6761: never resolves anywhere) gets the answer the
system resolver gives for a name that does not exist, without asking DNS, so the suite runs with no network."""

from __future__ import annotations

import socket

from aiohttp.abc import ResolveResult
from aiohttp.resolver import DefaultResolver


class InvalidNamesResolver(DefaultResolver):
    """aiohttp's default resolver, except that it answers `*.invalid` itself: "Name or service not known"."""

    async def resolve(self, host: str, port: int = 0,
                      family: socket.AddressFamily = socket.AF_INET) -> list[ResolveResult]:
        if host.rstrip(".").lower().endswith(".invalid"):
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return await super().resolve(host, port, family)
