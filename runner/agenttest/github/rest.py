"""GitHub's REST API as the pull-request loop calls it.

One aiohttp session. The token goes to the API's own origin only (`$GITHUB_API_URL`, so GitHub Enterprise Server
works alike) and is a registered secret, so no message or artifact shows it. Pages follow the `Link` header
verbatim. An artifact download answers with a redirect to storage, which is followed without the token (the
storage URL's query is a signature: it is never shown either). Rate limits (`Retry-After`, `X-RateLimit-Reset`),
5xx replies and broken connections are waited out while the run's time allows. Every failure is mapped in one place
— aiohttp's exceptions in `_mapped`, statuses in `_status_error`, as httpx maps httpcore's — onto one exception,
GitHubError, whose message says what was asked and why it failed: never a traceback.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
import urllib.parse
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ValidationError
from yarl import URL

from .. import __version__
from ..agents import transport
from ..agents.network import aiohttp, env_proxy, tls_context
from ..report.escape import one_line
from ..secrets import register_secret
from ..validation import first_error
from . import environment

API_VERSION = "2022-11-28"          # the version of GitHub's OpenAPI description the replies are read as
DEFAULT_API_URL = environment.DEFAULT_API_URL
USER_AGENT = f"agenttest/{__version__}"

# Read at call time, so tests can shrink them.
REQUEST_TIMEOUT = 30.0      # one request, reply included
RETRIES = 3                 # further attempts after a rate limit, a 5xx or a broken connection
BACKOFF = 2.0               # seconds before retrying a 5xx or a broken connection; doubles per retry
UNSPECIFIED_WAIT = 60.0     # a rate limit that names no time: GitHub's docs say to wait at least a minute
MAX_PAGES = 50              # of 100 items: more comments than any pull request has
JSON_LIMIT = 16 * 2**20     # bytes of one JSON reply

Kind = Literal["unauthorized", "forbidden", "not_found", "gone", "invalid", "rate_limited", "server", "network",
               "timeout", "bad_reply", "too_large"]
Model = TypeVar("Model", bound=BaseModel)
_LINK = re.compile(r'<([^>]*)>\s*;\s*rel="?([^",;]*)"?')


class GitHubError(Exception):
    """A request to GitHub that failed, in one line: what was asked and why it failed. `kind` sorts the failures
    (a `forbidden` write, a `rate_limited` wait past the deadline, …) so that the caller can say what that means
    for it; `status` is the HTTP status, when there was a reply."""

    def __init__(self, kind: Kind, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.kind: Kind = kind
        self.message = message
        self.status = status


def api_url(environ: Mapping[str, str]) -> str:
    """Where the REST API is: `$GITHUB_API_URL` (the runner sets it; `https://HOST/api/v3` on GitHub Enterprise
    Server), else github.com's."""
    return environment.api_url(environ)


def repo_path(repository: str, *segments: str | int) -> str:
    """`/repos/OWNER/NAME/…` for `OWNER/NAME`, each segment percent-encoded (a workflow file name may hold any
    character)."""
    owner, _, name = repository.partition("/")
    if not owner or not name or "/" in name:
        raise GitHubError("invalid", f"{repository!r} is no repository name (OWNER/NAME)")
    return "/" + "/".join(urllib.parse.quote(str(part), safe="") for part in ("repos", owner, name, *segments))


def parsed(model: type[Model], data: Any, what: str) -> Model:
    """A reply read as `model` (only the fields agenttest uses), or GitHubError saying which field was wrong."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise GitHubError("bad_reply", f"{what}: unexpected reply ({first_error(exc, model)})") from None


class GitHubClient:
    """The REST API at `api_url` with `token`, for at most `budget` seconds from now: a wait that would end later
    (a rate limit, a retry) is not made, and the request fails saying so. `sleep` and `clock` (epoch seconds, for
    `X-RateLimit-Reset`) are the real ones outside tests. Use as `async with`."""

    def __init__(self, token: str, api_url: str = DEFAULT_API_URL, *, budget: float = 120.0,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
                 clock: Callable[[], float] = time.time) -> None:
        if not token:
            raise GitHubError("unauthorized", "no GitHub token (GITHUB_TOKEN; the Action passes its github-token "
                                              "input)")
        register_secret(token)
        self.api_url = api_url.rstrip("/")
        base = URL(self.api_url)
        if base.scheme not in ("http", "https") or not base.host:
            raise GitHubError("invalid", f"GITHUB_API_URL {api_url!r} is no http(s) URL")
        self._origin = base.origin()
        self._token = token
        self._deadline = time.monotonic() + budget
        self._sleep = sleep
        self._clock = clock
        self._session: aiohttp.ClientSession | None = None

    async def __aenter__(self) -> GitHubClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def get(self, path: str, params: Mapping[str, str | int] | None = None) -> Any:
        _, _, data = await self._send("GET", self.api_url + path, f"GET {path}", params=params)
        return _json(data, f"GET {path}")

    async def post(self, path: str, body: Any) -> Any:
        _, _, data = await self._send("POST", self.api_url + path, f"POST {path}", body=body)
        return _json(data, f"POST {path}")

    async def patch(self, path: str, body: Any) -> Any:
        _, _, data = await self._send("PATCH", self.api_url + path, f"PATCH {path}", body=body)
        return _json(data, f"PATCH {path}")

    async def delete(self, path: str) -> None:
        await self._send("DELETE", self.api_url + path, f"DELETE {path}")

    async def pages(self, path: str, params: Mapping[str, str | int] | None = None) -> AsyncIterator[list[Any]]:
        """Each page of a list, following `Link: <…>; rel="next"` as given: GitHub's next links name the
        repository by id (`/repositories/42/…`), not as the first request did."""
        url = self.api_url + path
        for page in range(1, MAX_PAGES + 1):
            what = f"GET {path}" + (f" (page {page})" if page > 1 else "")
            _, headers, data = await self._send("GET", url, what, params=params if page == 1 else None)
            items = _json(data, what)
            if not isinstance(items, list):
                raise GitHubError("bad_reply", f"{what}: unexpected reply (no list)")
            yield items
            following = next_link(headers.get("Link"))
            if following is None:
                return
            following_url = _parsed_url(url, what).join(_parsed_url(following, what))
            if not following_url.is_absolute() or following_url.origin() != self._origin:  # the token stays home
                raise GitHubError("bad_reply", f"{what}: the next page is not on the API's host ({following})")
            url = str(following_url)
        raise GitHubError("bad_reply", f"GET {path}: more than {MAX_PAGES} pages")

    async def download(self, url: str, *, limit: int) -> bytes:
        """An artifact's archive: the API answers with a redirect to storage (valid for a minute), which is
        fetched without the token (GitHub's own client does the same); at most `limit` bytes."""
        target = _parsed_url(url, "the artifact download")
        what = f"GET {target.path}"
        if not target.is_absolute() or target.origin() != self._origin:    # the token goes nowhere else
            elsewhere = target.origin() if target.is_absolute() else "no host"
            raise GitHubError("bad_reply", f"{what}: the download URL is not the API's ({elsewhere})")
        status, headers, data = await self._send("GET", url, what, ok=(200, 302), limit=limit)
        if status == 200:           # served directly, as GitHub Enterprise Server may
            return data
        location = headers.get("Location")
        if not location:
            raise GitHubError("bad_reply", f"{what}: HTTP 302 without a Location")
        storage = target.join(_parsed_url(location, f"{what}: its Location"))
        if storage.scheme not in ("http", "https"):
            raise GitHubError("bad_reply", f"{what}: redirected to a {storage.scheme or 'relative'} URL, not http(s)")
        shown = f"{storage.origin()}{storage.path}"     # the query is the storage's signature: a credential
        _, _, data = await self._send("GET", str(storage), f"the artifact download from {shown}", limit=limit,
                                      api=False)
        return data

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None:
            resolver = transport.RESOLVER() if transport.RESOLVER else None
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=4, resolver=resolver),
                headers={"User-Agent": USER_AGENT},
                cookie_jar=aiohttp.DummyCookieJar(),     # nothing one host sets reaches another
                trust_env=False,                         # no ~/.netrc credentials; proxies: env_proxy
            )
        return self._session

    def _headers(self, url: URL, api: bool) -> dict[str, str]:
        if not api:
            return {}
        headers = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": API_VERSION}
        if url.origin() == self._origin:
            headers["Authorization"] = f"Bearer {self._token}"
        return headers

    async def _send(self, method: str, url: str, what: str, *, params: Mapping[str, str | int] | None = None,
                    body: Any = None, ok: tuple[int, ...] = (200, 201, 204), limit: int = JSON_LIMIT,
                    api: bool = True) -> tuple[int, Mapping[str, str], bytes]:
        """One request, retried after a rate limit, a 5xx or a broken connection while the run's time allows:
        (status, headers, body) of a reply whose status is in `ok`, else GitHubError."""
        attempt = 0
        while True:
            attempt += 1
            try:
                status, headers, data = await self._attempt(method, URL(url), what, params, body, limit, api)
            except GitHubError as exc:
                if exc.kind != "network":
                    raise
                error, wait = exc, BACKOFF * 2 ** (attempt - 1)
            else:
                if status in ok:
                    return status, headers, data
                error = _status_error(what, status, headers, data)
                wait = self._retry_wait(error, headers, attempt)
            if wait is None or attempt > RETRIES:
                raise error
            if time.monotonic() + wait >= self._deadline:
                raise GitHubError(error.kind, f"{error.message} (no retry: waiting {wait:g}s more would pass the "
                                              "run's deadline)", error.status)
            await self._sleep(wait)

    async def _attempt(self, method: str, url: URL, what: str, params: Mapping[str, str | int] | None, body: Any,
                       limit: int, api: bool) -> tuple[int, Mapping[str, str], bytes]:
        remaining = self._deadline - time.monotonic()
        if remaining <= 0:
            raise GitHubError("timeout", f"{what}: the run's time for GitHub is up")
        timeout = min(REQUEST_TIMEOUT, remaining)
        proxy = env_proxy(url)
        with _mapped(what, str(url.origin()), timeout):
            async with self._client().request(
                    method, url, params=params, json=body, headers=self._headers(url, api),
                    allow_redirects=not api, timeout=aiohttp.ClientTimeout(total=timeout), proxy=proxy,
                    ssl=tls_context() if url.scheme == "https" else True) as response:
                return response.status, response.headers.copy(), await _read(response, limit, what)

    def _retry_wait(self, error: GitHubError, headers: Mapping[str, str], attempt: int) -> float | None:
        """How long to wait before trying again, or None when trying again cannot help."""
        if error.kind == "rate_limited":
            return rate_limit_wait(headers, self._clock())
        if error.kind == "server":
            return BACKOFF * 2 ** (attempt - 1)
        return None


def next_link(header: str | None) -> str | None:
    """The `rel="next"` URL of a `Link` header, or None on the last page."""
    for url, rel in _LINK.findall(header or ""):
        if "next" in rel.split():
            return url
    return None


def rate_limit_wait(headers: Mapping[str, str], now: float) -> float:
    """Seconds to wait out a rate limit, as GitHub's docs say: `Retry-After` when given; else, when no request is
    left, until `X-RateLimit-Reset` (epoch seconds; one more for its rounding down); else at least a minute."""
    try:
        return max(0.0, float(headers["Retry-After"]))
    except (KeyError, ValueError):
        pass
    if headers.get("X-RateLimit-Remaining") == "0":
        try:
            return max(0.0, float(headers["X-RateLimit-Reset"]) - now) + 1.0
        except (KeyError, ValueError):
            pass
    return UNSPECIFIED_WAIT


@contextmanager
def _mapped(what: str, origin: str, timeout: float) -> Iterator[None]:
    """aiohttp's exceptions as GitHubError: `network` (tried again) when the connection to `origin` failed or
    broke — in the agents' words (`transport._connection_fault`) —, else `bad_reply`."""
    try:
        yield
    except asyncio.TimeoutError:        # aiohttp's total timeout (ServerTimeoutError is one too)
        raise GitHubError("network", f"{what}: no reply within {timeout:g}s") from None
    except aiohttp.ClientConnectionError as exc:
        raise GitHubError("network", f"{what}: {transport._connection_fault(exc, origin).message}") from None
    except aiohttp.ClientPayloadError:
        raise GitHubError("network", f"{what}: the reply from {origin} was cut off") from None
    except aiohttp.ClientError as exc:
        raise GitHubError("bad_reply", f"{what}: invalid HTTP reply from {origin} ({one_line(exc, 200)})") from None


async def _read(response: aiohttp.ClientResponse, limit: int, what: str) -> bytes:
    """The reply's body, or GitHubError once it grows past `limit` bytes (whatever its Content-Length says)."""
    if response.content_length is not None and response.content_length > limit:
        raise GitHubError("too_large", f"{what}: the reply is {response.content_length} bytes, more than the "
                                       f"{limit} read")
    chunks, size = [], 0
    async for chunk in response.content.iter_chunked(1 << 16):
        size += len(chunk)
        if size > limit:
            raise GitHubError("too_large", f"{what}: the reply is more than the {limit} bytes read")
        chunks.append(chunk)
    return b"".join(chunks)


def _json(data: bytes, what: str) -> Any:
    if not data:
        return None
    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        text = one_line(data[:200].decode("utf-8", "replace"), 100)
        raise GitHubError("bad_reply", f"{what}: the reply is not JSON ({text})") from None


def _said(data: bytes) -> str:
    """What GitHub said about a failure: its `message` and each of its `errors`' message, else the reply's text;
    on one line, secrets masked."""
    try:
        payload = json.loads(data)
    except (ValueError, RecursionError):
        return one_line(data[:2000].decode("utf-8", "replace"), 200)
    if not isinstance(payload, dict):
        return one_line(payload, 200)
    parts = [payload.get("message")] + [error.get("message") or error.get("code")
                                        for error in payload.get("errors") or [] if isinstance(error, dict)]
    return one_line(": ".join(str(part) for part in parts if part), 300)


def _status_error(what: str, status: int, headers: Mapping[str, str], data: bytes) -> GitHubError:
    said = _said(data)
    message = f"{what}: HTTP {status}" + (f" ({said})" if said else "")
    limited = status == 429 or (status == 403 and ("Retry-After" in headers
                                                   or headers.get("X-RateLimit-Remaining") == "0"
                                                   or "rate limit" in said.lower()))
    kind: Kind
    if limited:
        kind = "rate_limited"
    elif status >= 500:
        kind = "server"
    else:
        kind = {401: "unauthorized", 403: "forbidden", 404: "not_found", 410: "gone"}.get(status, "invalid")
    return GitHubError(kind, message, status)


def _parsed_url(text: str, what: str) -> URL:
    """A URL GitHub gave (a next page, a download, a redirect), or GitHubError when it is none."""
    try:
        return URL(text)
    except (ValueError, TypeError):
        raise GitHubError("bad_reply", f"{what}: {one_line(text, 100)!r} is no URL") from None
