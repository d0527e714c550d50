"""aiohttp as every network agent imports it, and the TLS context an https agent is called with.

aiohttp builds two TLS contexts when it is imported, each loading the system's CA certificates: ~0.1 s and ~3 MB
on the project's machine (bench/README.md), paid by every run although a run's agents are mostly http:// (a local
server, or one in the same CI job). It is imported here with OpenSSL's certificate locations pointed at nothing,
so those contexts are built empty, and the environment is put back at once (only while the process has a single
thread, so nothing else can see the change). aiohttp's contexts are then never used: the transport calls every
https origin (and through every https proxy) with `tls_context()`, built on first use, from the locations in
effect then (`SSL_CERT_FILE`/`SSL_CERT_DIR` included), as aiohttp would have.
"""

from __future__ import annotations

import os
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from yarl import URL

_LOCATIONS = ("SSL_CERT_FILE", "SSL_CERT_DIR")    # read by OpenSSL when a context loads its default paths


@contextmanager
def _no_certificate_locations() -> Iterator[None]:
    """OpenSSL's certificate locations pointed at nothing for the block, when no other thread could see it (the
    CLI's process; an application using the Python API with threads of its own pays aiohttp's import in full)."""
    if threading.active_count() > 1:
        yield
        return
    saved = {name: os.environ.get(name) for name in _LOCATIONS}
    try:
        os.environ.update(dict.fromkeys(_LOCATIONS, os.devnull))
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


with _no_certificate_locations():   # a no-op when aiohttp was imported already (by a python agent, say)
    import aiohttp

__all__ = ["aiohttp", "env_proxy", "tls_context"]


def env_proxy(url: URL) -> URL | None:
    """The proxy that HTTP(S)_PROXY / NO_PROXY choose for `url`, as curl and requests honour them, its credentials
    in its URL (`http://user:pass@proxy`): aiohttp sends those as Proxy-Authorization, on the request to the proxy
    (an http:// URL) or on its CONNECT (https://), as it sends `proxy_auth`'s. aiohttp 3.14 deprecates `proxy_auth`
    for `proxy_headers`, which reach only a CONNECT: a plain http:// request through the proxy would go without."""
    try:
        proxy, auth = aiohttp.helpers.get_env_proxy_for_url(url)
    except LookupError:
        return None
    return proxy.with_user(auth.login).with_password(auth.password) if auth is not None else proxy


@cache
def tls_context() -> ssl.SSLContext:
    """The verifying TLS context of every https call, as aiohttp makes its default one: the system's (or
    `SSL_CERT_FILE`'s) CA certificates, HTTP/1.1 offered by ALPN."""
    context = ssl.create_default_context()
    context.set_alpn_protocols(("http/1.1",))
    return context
