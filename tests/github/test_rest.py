"""The REST client against the emulator: pages followed by `Link`, the token sent to the API only and masked, the
artifact's redirect to storage followed without it, rate limits waited out within the run's time, and every fault
one GitHubError whose message says what was asked and why it failed."""

from __future__ import annotations

import asyncio
import base64
import socket
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import pytest

from agenttest import secrets
from agenttest.github import rest
from agenttest.github.rest import GitHubClient, GitHubError, api_url, next_link, repo_path
from fakes.github_api import (
    REPOSITORY,
    REPOSITORY_ID,
    TOKEN,
    FakeGitHub,
    Fault,
    body_too_long,
    not_found,
    read_only_token,
    secondary_rate_limit,
    server_error,
    too_many_requests,
    zip_of,
)
from fakes.raw_server import RawServer, cut_body
from fakes.server import ScriptedServer, json_reply, slow

from .conftest import Waits

T = TypeVar("T")
Client = Callable[..., GitHubClient]
COMMENTS = repo_path(REPOSITORY, "issues", 7, "comments")


def using(client: GitHubClient, call: Callable[[GitHubClient], Awaitable[T]]) -> T:
    async def run() -> T:
        async with client:
            return await call(client)
    return asyncio.run(run())


def failure(client: GitHubClient, call: Callable[[GitHubClient], Awaitable[Any]]) -> GitHubError:
    with pytest.raises(GitHubError) as caught:
        using(client, call)
    return caught.value


async def every_page(client: GitHubClient, path: str = COMMENTS) -> list[list[Any]]:
    return [page async for page in client.pages(path)]


def test_pages_follow_the_link_header_as_given(github_api: FakeGitHub, client: Client) -> None:
    for number in range(35):
        github_api.add_comment(f"comment {number}", user="octocat")
    pages = using(client(), every_page)
    assert [len(page) for page in pages] == [30, 5]
    assert [c["body"] for page in pages for c in page] == [f"comment {n}" for n in range(35)]
    assert [r.path for r in github_api.calls("GET")] == [
        f"/repos/{REPOSITORY}/issues/7/comments", f"/repositories/{REPOSITORY_ID}/issues/7/comments"]


@pytest.mark.parametrize("link", ["https://elsewhere.example/steal?page=2", "//elsewhere.example/steal",
                                  "mailto:steal@elsewhere.example"])
def test_a_next_page_off_the_api_is_not_followed(github_api: FakeGitHub, client: Client, link: str) -> None:
    """The token goes to the API's origin only, whatever a Link header says."""
    github_api.inject(Fault(200, [], headers={"Link": f'<{link}>; rel="next"'}))
    error = failure(client(), every_page)
    assert error.kind == "bad_reply"
    assert error.message == f"GET {COMMENTS}: the next page is not on the API's host ({link})"
    assert len(github_api.calls()) == 1


def test_requests_carry_the_token_the_api_version_and_who_we_are(github_api: FakeGitHub, client: Client) -> None:
    using(client(), lambda c: c.get(COMMENTS))
    sent = github_api.calls()[0].headers
    assert sent["Authorization"] == f"Bearer {TOKEN}"
    assert sent["X-GitHub-Api-Version"] == "2022-11-28" and sent["Accept"] == "application/vnd.github+json"
    assert sent["User-Agent"].startswith("agenttest/")
    assert secrets.mask(f"token={TOKEN}") == "token=***"       # registered: no message can show it


def test_the_artifact_download_reaches_storage_without_the_token(github_api: FakeGitHub, client: Client) -> None:
    archive = zip_of({"report.json": "{}"})
    github_api.add_artifact(github_api.add_run(), archive)
    url = f"{github_api.api_url}/repos/{REPOSITORY}/actions/artifacts/11/zip"
    assert using(client(), lambda c: c.download(url, limit=1 << 20)) == archive
    (api,), (storage,) = github_api.calls(), github_api.calls(server="storage")
    assert api.headers["Authorization"] == f"Bearer {TOKEN}"
    assert "Authorization" not in storage.headers and "X-GitHub-Api-Version" not in storage.headers
    assert storage.query["sig"]


def test_a_download_url_on_another_host_gets_no_request(github_api: FakeGitHub, client: Client) -> None:
    error = failure(client(), lambda c: c.download("https://elsewhere.example/repos/o/r/actions/artifacts/1/zip",
                                                   limit=1 << 20))
    assert error.kind == "bad_reply" and error.message == \
        "GET /repos/o/r/actions/artifacts/1/zip: the download URL is not the API's (https://elsewhere.example)"
    assert github_api.requests == []


def test_a_download_larger_than_its_limit_stops(github_api: FakeGitHub, client: Client) -> None:
    github_api.add_artifact(github_api.add_run(), zip_of({"report.json": "x" * 5000, "other": b"\x00" * 10}))
    url = f"{github_api.api_url}/repos/{REPOSITORY}/actions/artifacts/11/zip"
    error = failure(client(), lambda c: c.download(url, limit=100))
    assert error.kind == "too_large" and "artifact download from http://127.0.0.1:" in error.message
    assert "sig=" not in error.message          # the storage URL's signature is never shown


def test_an_expired_artifact_is_gone(github_api: FakeGitHub, client: Client) -> None:
    github_api.add_artifact(github_api.add_run(), b"PK", expired=True)
    url = f"{github_api.api_url}/repos/{REPOSITORY}/actions/artifacts/11/zip"
    error = failure(client(), lambda c: c.download(url, limit=1 << 20))
    assert (error.kind, error.status) == ("gone", 410) and "Artifact has expired" in error.message


@pytest.mark.parametrize(("fault", "kind", "said"), [
    (read_only_token(), "forbidden", "HTTP 403 (Resource not accessible by integration)"),
    (not_found(), "not_found", "HTTP 404 (Not Found)"),
    (body_too_long(), "invalid", "HTTP 422 (Validation Failed: body is too long (maximum is 65536 characters))"),
])
def test_a_refusal_is_one_typed_error_at_once(github_api: FakeGitHub, client: Client, waits: Waits, fault: Fault,
                                              kind: str, said: str) -> None:
    github_api.inject(fault)
    error = failure(client(), lambda c: c.post(COMMENTS, {"body": "hello"}))
    assert error.kind == kind and error.message == f"POST {COMMENTS}: {said}"
    assert len(github_api.calls()) == 1 and waits.seconds == []


def test_a_wrong_token_is_unauthorized(github_api: FakeGitHub, client: Client) -> None:
    error = failure(client(token="ghs_notTheRightOne123"), lambda c: c.get(COMMENTS))
    assert (error.kind, error.status) == ("unauthorized", 401) and "Bad credentials" in error.message
    assert "ghs_notTheRightOne123" not in error.message


def test_no_token_is_said_before_any_request() -> None:
    with pytest.raises(GitHubError) as caught:
        GitHubClient("", "http://127.0.0.1:9")
    assert caught.value.kind == "unauthorized" and "GITHUB_TOKEN" in caught.value.message


def test_server_errors_are_retried_with_backoff(github_api: FakeGitHub, client: Client, waits: Waits) -> None:
    github_api.inject(server_error(502, times=2))
    assert using(client(), lambda c: c.get(COMMENTS)) == []
    assert waits.seconds == [2.0, 4.0] and len(github_api.calls()) == 3


def test_a_server_that_keeps_failing_is_one_error(github_api: FakeGitHub, client: Client, waits: Waits) -> None:
    github_api.inject(server_error(503, times=0))
    error = failure(client(), lambda c: c.get(COMMENTS))
    assert error.kind == "server" and error.message.startswith(f"GET {COMMENTS}: HTTP 503 (<html>")
    assert "Unicorn!" in error.message and len(github_api.calls()) == 1 + rest.RETRIES


@pytest.mark.parametrize(("fault", "wait"), [
    (too_many_requests(retry_after=7), 7.0),                    # 429 Retry-After
    (secondary_rate_limit(retry_after=61), 61.0),              # 403 secondary limit, retry-after
    (secondary_rate_limit(reset_in=30), 31.0),                  # 403, no request left until x-ratelimit-reset
    (secondary_rate_limit(), 60.0),                             # 403, no time named: a minute
])
def test_rate_limits_are_waited_out(github_api: FakeGitHub, client: Client, waits: Waits, fault: Fault,
                                    wait: float) -> None:
    github_api.inject(fault)
    created = using(client(), lambda c: c.post(COMMENTS, {"body": "hello"}))
    assert created["body"] == "hello" and waits.seconds == [wait]
    assert len(github_api.calls("POST")) == 2 and len(github_api.comments_on()) == 1


def test_a_rate_limit_past_the_deadline_is_not_waited(github_api: FakeGitHub, client: Client, waits: Waits) -> None:
    github_api.inject(too_many_requests(retry_after=60))
    error = failure(client(budget=30), lambda c: c.post(COMMENTS, {"body": "hello"}))
    assert error.kind == "rate_limited" and error.status == 429
    assert error.message == (f"POST {COMMENTS}: HTTP 429 (API rate limit exceeded for installation ID 4242.) "
                             "(no retry: waiting 60s more would pass the run's deadline)")
    assert waits.seconds == [] and github_api.comments_on() == []


def test_a_refused_connection_is_a_network_error(client: Client, waits: Waits) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    error = failure(client(api_url=f"http://127.0.0.1:{port}"), lambda c: c.get(COMMENTS))
    assert error.kind == "network" and error.status is None
    assert error.message == (f"GET {COMMENTS}: cannot connect to http://127.0.0.1:{port}: Connection refused")
    assert waits.seconds == [2.0, 4.0, 8.0]


def test_a_server_that_does_not_answer_is_a_network_error(client: Client, waits: Waits,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rest, "REQUEST_TIMEOUT", 0.2)
    monkeypatch.setattr(rest, "RETRIES", 1)
    with ScriptedServer("/{tail:.*}", default=slow(60, json_reply([]))) as silent:
        error = failure(client(api_url=silent.url()), lambda c: c.get(COMMENTS))
    assert (error.kind, error.message) == ("network", f"GET {COMMENTS}: no reply within 0.2s")
    assert waits.seconds == [2.0] and silent.methods == ["GET", "GET"]


def test_a_reply_cut_short_is_a_network_error(client: Client, waits: Waits) -> None:
    with RawServer(cut_body(b'[{"id": 1', announced=500)) as cutting:
        error = failure(client(api_url=cutting.url()), lambda c: c.get(COMMENTS))
    assert error.kind == "network"
    assert error.message == f"GET {COMMENTS}: the reply from {cutting.url()} was cut off"


@pytest.mark.parametrize(("location", "said"), [
    ("ftp://storage.example/blob", "redirected to a ftp URL, not http(s)"),
    ("http://[::1", "'http://[::1' is no URL"),
])
def test_a_redirect_to_no_storage_is_a_bad_reply(github_api: FakeGitHub, client: Client, location: str,
                                                said: str) -> None:
    github_api.add_artifact(github_api.add_run(), zip_of({"report.json": "{}"}))
    github_api.inject(Fault(302, headers={"Location": location}, path="/zip$"))
    url = f"{github_api.api_url}/repos/{REPOSITORY}/actions/artifacts/11/zip"
    error = failure(client(), lambda c: c.download(url, limit=1 << 20))
    assert error.kind == "bad_reply" and said in error.message
    assert github_api.calls(server="storage") == []


def test_a_reply_that_is_not_json_is_a_bad_reply(github_api: FakeGitHub, client: Client) -> None:
    github_api.inject(Fault(200, "<html>maintenance</html>", content_type="text/html"))
    error = failure(client(), lambda c: c.get(COMMENTS))
    assert error.kind == "bad_reply"
    assert error.message == f"GET {COMMENTS}: the reply is not JSON (<html>maintenance</html>)"


def test_a_proxy_from_the_environment_gets_its_credentials(client: Client, monkeypatch: pytest.MonkeyPatch,
                                                          recwarn: pytest.WarningsRecorder) -> None:
    """HTTP_PROXY is honoured, its user and password sent to the proxy (in its URL: aiohttp 3.14 deprecates
    `proxy_auth`, and warns of it)."""
    for name in ("NO_PROXY", "no_proxy", "http_proxy", "HTTPS_PROXY", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    with ScriptedServer("/{tail:.*}", default=json_reply([{"body": "via proxy"}])) as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.url().replace("http://", "http://pu%40x:pw@"))
        pages = using(client(api_url="http://api.github.invalid"), every_page)
    assert [c["body"] for c in pages[0]] == ["via proxy"]
    assert proxy.headers[0]["Proxy-Authorization"] == "Basic " + base64.b64encode(b"pu@x:pw").decode()
    assert proxy.headers[0]["Authorization"] == f"Bearer {TOKEN}"      # the token still goes to the API
    assert not [w for w in recwarn if issubclass(w.category, DeprecationWarning)]


def test_github_enterprise_server_is_reached_through_its_api_url(client: Client) -> None:
    with FakeGitHub(prefix="/api/v3") as enterprise:
        enterprise.add_comment("hello")
        pages = using(client(api_url=api_url({"GITHUB_API_URL": enterprise.api_url})), every_page)
    assert [c["body"] for c in pages[0]] == ["hello"]
    assert [r.path for r in enterprise.calls()] == [f"/api/v3{COMMENTS}"]


def test_the_api_url_and_paths() -> None:
    assert api_url({}) == "https://api.github.com"
    assert repo_path("octo/agents", "actions", "workflows", "agent evals.yml", "runs") == \
        "/repos/octo/agents/actions/workflows/agent%20evals.yml/runs"
    with pytest.raises(GitHubError, match="is no repository name"):
        repo_path("octo", "issues")
    with pytest.raises(GitHubError, match="is no http"):
        GitHubClient(TOKEN, "ftp://example.com")
    assert next_link('<https://a/x?page=2>; rel="next", <https://a/x?page=5>; rel="last"') == "https://a/x?page=2"
    assert next_link('<https://a/x?page=1>; rel="prev"') is None and next_link(None) is None
