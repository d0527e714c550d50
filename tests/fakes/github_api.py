"""A local GitHub REST API for the pull-request loop's tests, and its pytest fixture `github_api`.

Two real HTTP servers on 127.0.0.1 (aiohttp in a thread, as the other fakes): the API, serving the endpoints
agenttest calls with GitHub's shapes, and artifact storage on another port, to which the API's artifact download
redirects and which refuses any request carrying an `Authorization` header. Every reply of the API is checked
against GitHub's own OpenAPI description, and every request too (`github_openapi.Contract`); what does not conform
is kept in `contract_problems`, which the fixture asserts empty.

As GitHub does: `Link` pagination (`per_page` default 30, at most 100; the links name the repository by id,
`/repositories/ID/…`), comments in ascending id order, a comment body over 65,536 characters refused (422), workflow
runs newest first and filtered by branch, event, status (a status or a conclusion) and head SHA, artifacts with
their `expired` flag (410 on download), rate-limit headers on every reply, 401 without the token. Its clock is
`EPOCH` plus one second per write, never the wall clock. `prefix` serves it under a path, as GitHub Enterprise
Server serves `/api/v3`.

Faults are switched on per test with `inject` and the functions below that build them (a fork's read-only token,
404, 5xx, 429 with `Retry-After`, secondary and primary rate limits, 422 body too long), `race` (another job's
comment lands between our look and our post) and `ignore_filters` (a server that returns runs its query filters
should have left out — how a fork's run on a branch named `main` gets through). `zip_of` builds artifact archives,
a `../` entry or a 50 MB one included. Every request is recorded (server, method, path, query, headers, body).
"""

from __future__ import annotations

import hashlib
import hmac
import io
import json
import re
import urllib.parse
import zipfile
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import pytest
from aiohttp import web
from multidict import CIMultiDict

from .github_openapi import Contract
from .server import ThreadedServer

BOT = "github-actions[bot]"          # who comments with a workflow's GITHUB_TOKEN
TOKEN = "ghs_emulatorToken0123456789abcdefABCDEF"
# Other tokens the emulator takes, and whom each writes as: a maintainer's personal access token, and a GitHub App's
# installation token (`ghs_` too, as the workflow's, but it writes as the app's bot).
PAT, PAT_LOGIN = "ghp_maintainerToken0123456789abcdefABCD", "octo-maintainer"
APP_TOKEN, APP_LOGIN = "ghs_appInstallation0123456789abcdefABCD", "agent-checks[bot]"
REPOSITORY, REPOSITORY_ID = "octo/agents", 1296269
FORK, FORK_ID = "forker/agents", 8765432
EPOCH = 1_800_000_000               # the emulator's clock (2027-01-15T08:00:00Z), and its rate limits' reset base
COMMENT_LIMIT = 65_536              # what GitHub's 422 says: "body is too long (maximum is 65536 characters)"
DOCS = "https://docs.github.com/rest"
_SIGNING_KEY = b"emulated storage account key"
_contract = Contract()


@dataclass
class Recorded:
    """One request as it arrived: `server` is `api` or `storage`; `headers` look up names in any case."""

    server: str
    method: str
    path: str
    query: dict[str, str]
    headers: CIMultiDict[str]
    body: Any


@dataclass
class Fault:
    """A scripted reply: requests whose method is in `methods` and whose path (as `/repos/OWNER/NAME/…`) matches
    the regular expression `path` get it instead of the real one, `times` times (0: for good)."""

    status: int
    body: Any = None                    # JSON, or text (`content_type` then says what it is)
    headers: dict[str, str] = field(default_factory=dict)
    methods: tuple[str, ...] = ("GET", "POST", "PATCH", "DELETE")
    path: str = ""
    times: int = 1
    content_type: str = "application/json"


@dataclass
class Comment:
    id: int
    number: int
    body: str
    user: str
    created: int
    updated: int


@dataclass
class Run:
    id: int
    workflow: str
    branch: str
    event: str
    status: str
    conclusion: str | None
    sha: str
    number: int
    attempt: int
    head_repository: str
    created: int


@dataclass
class Artifact:
    id: int
    name: str
    run: Run
    data: bytes
    expired: bool


def error(status: int, message: str, docs: str = DOCS) -> dict[str, str]:
    """GitHub's error body (`basic-error`)."""
    return {"message": message, "documentation_url": docs, "status": str(status)}


def read_only_token() -> Fault:
    """A pull request from a fork: its GITHUB_TOKEN is read-only, every write refused."""
    return Fault(403, error(403, "Resource not accessible by integration",
                            f"{DOCS}/issues/comments#create-an-issue-comment"),
                 methods=("POST", "PATCH", "DELETE"), times=0)


def not_found(path: str = "", methods: tuple[str, ...] = ("GET", "POST", "PATCH", "DELETE")) -> Fault:
    return Fault(404, error(404, "Not Found"), path=path, methods=methods, times=0)


def server_error(status: int = 502, times: int = 1, path: str = "") -> Fault:
    """A 5xx as GitHub's front end sends it: an HTML page, not JSON."""
    page = f"<html><head><title>{status} Server Error</title></head><body>Unicorn! Something went wrong.</body></html>"
    return Fault(status, page, content_type="text/html", times=times, path=path)


def too_many_requests(retry_after: int, times: int = 1) -> Fault:
    return Fault(429, error(429, "API rate limit exceeded for installation ID 4242."),
                 headers={"Retry-After": str(retry_after)}, times=times)


def secondary_rate_limit(retry_after: int | None = None, reset_in: int | None = None, times: int = 1) -> Fault:
    """403 "secondary rate limit", naming when to come back by `retry-after`, by `x-ratelimit-reset` with no
    request left, or not at all."""
    headers = {"retry-after": str(retry_after)} if retry_after is not None else {}
    if reset_in is not None:
        headers.update({"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(EPOCH + reset_in)})
    message = ("You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you "
               "reach out to GitHub Support for help, please include the request ID 0400:1234:5678:9ABC.")
    return Fault(403, error(403, message, f"{DOCS}/using-the-rest-api/rate-limits-for-the-rest-api"), headers,
                 times=times)


def body_too_long() -> Fault:
    return Fault(422, _too_long(), methods=("POST", "PATCH"), times=0)


def zip_of(entries: Mapping[str, bytes | str]) -> bytes:
    """A zip archive holding `entries` (name → content), as upload-artifact makes one (deflated)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in entries.items():
            archive.writestr(zipfile.ZipInfo(name, (2027, 1, 15, 8, 0, 0)), content,
                             compress_type=zipfile.ZIP_DEFLATED)
    return buffer.getvalue()


def stamp(tick: int) -> str:
    return datetime.fromtimestamp(EPOCH + tick, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _too_long() -> dict[str, Any]:
    return {"message": "Validation Failed",
            "errors": [{"resource": "IssueComment", "code": "custom", "field": "body",
                        "message": f"body is too long (maximum is {COMMENT_LIMIT} characters)"}],
            "documentation_url": f"{DOCS}/issues/comments#create-an-issue-comment", "status": "422"}


Handler = Callable[[web.Request, "re.Match[str]", dict[str, str], Any], Awaitable[tuple[int, Any, dict[str, str]]]]


class FakeGitHub:
    """GitHub's REST API for one repository (`REPOSITORY`, pull request 7 open), and artifact storage."""

    def __init__(self, *, prefix: str = "", server_url: str = "https://github.com") -> None:
        self.prefix = prefix
        self.server_url = server_url
        self.pull_requests = {7}
        self.logins = {TOKEN: BOT, PAT: PAT_LOGIN, APP_TOKEN: APP_LOGIN}   # the tokens it takes, and who writes
        self.comments: dict[int, Comment] = {}
        self.runs: list[Run] = []
        self.artifacts: dict[int, Artifact] = {}
        self.requests: list[Recorded] = []
        self.contract_problems: list[str] = []
        self.faults: list[Fault] = []
        self.race: list[str] = []           # bodies another job posts just before our next comment lands
        self.ignore_filters = False
        self._tick = 0
        self._ids = iter(range(2_000_000_001, 3_000_000_000))
        self._used = 0
        api, storage = web.Application(), web.Application()
        api.router.add_route("*", "/{tail:.*}", self._api)
        storage.router.add_route("*", "/{tail:.*}", self._storage)
        self._api_server, self._storage_server = ThreadedServer(api), ThreadedServer(storage)
        R = r"/repos/[^/]+/[^/]+"
        self._routes: list[tuple[str, re.Pattern[str], str, Handler]] = [
            ("GET", re.compile(rf"{R}/issues/(?P<number>\d+)/comments"), "issues/list-comments", self._list_comments),
            ("POST", re.compile(rf"{R}/issues/(?P<number>\d+)/comments"), "issues/create-comment",
             self._create_comment),
            ("GET", re.compile(rf"{R}/issues/comments/(?P<id>\d+)"), "issues/get-comment", self._get_comment),
            ("PATCH", re.compile(rf"{R}/issues/comments/(?P<id>\d+)"), "issues/update-comment",
             self._update_comment),
            ("DELETE", re.compile(rf"{R}/issues/comments/(?P<id>\d+)"), "issues/delete-comment",
             self._delete_comment),
            ("GET", re.compile(rf"{R}/actions/workflows/(?P<workflow>[^/]+)/runs"), "actions/list-workflow-runs",
             self._list_runs),
            ("GET", re.compile(rf"{R}/actions/runs/(?P<run>\d+)/artifacts"), "actions/list-workflow-run-artifacts",
             self._list_artifacts),
            ("GET", re.compile(rf"{R}/actions/artifacts/(?P<id>\d+)/(?P<format>[^/]+)"),
             "actions/download-artifact", self._download),
        ]

    # --- lifecycle and what tests read ---------------------------------------------------------------------------

    def __enter__(self) -> FakeGitHub:
        self._api_server.start()
        self._storage_server.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._api_server.stop()
        self._storage_server.stop()

    @property
    def api_url(self) -> str:
        """What `$GITHUB_API_URL` would be."""
        return self._api_server.origin + self.prefix

    def calls(self, method: str | None = None, path: str = "", server: str = "api") -> list[Recorded]:
        """The recorded requests to `server`, of `method`, whose path matches the regular expression `path`."""
        return [r for r in self.requests if r.server == server and (method is None or r.method == method)
                and re.search(path, r.path)]

    def writes(self) -> list[Recorded]:
        return [r for r in self.calls() if r.method in ("POST", "PATCH", "DELETE")]

    def comments_on(self, number: int = 7) -> list[Comment]:
        return sorted((c for c in self.comments.values() if c.number == number), key=lambda c: c.id)

    # --- data -----------------------------------------------------------------------------------------------------

    def inject(self, *faults: Fault) -> None:
        self.faults.extend(faults)

    def add_comment(self, body: str, user: str = BOT, number: int = 7) -> Comment:
        self._tick += 1
        comment = Comment(next(self._ids), number, body, user, self._tick, self._tick)
        self.comments[comment.id] = comment
        return comment

    def add_run(self, *, workflow: str = "ci.yml", branch: str = "main", event: str = "push",
                conclusion: str | None = "success", sha: str | None = None, fork: bool = False,
                attempt: int = 1) -> Run:
        """A workflow run, newer than every run added before it. `fork`: from a fork of the repository."""
        self._tick += 1
        number = len(self.runs) + 1
        run = Run(id=30_433_642 + number * 1_000, workflow=workflow, branch=branch, event=event,
                  status="completed" if conclusion else "in_progress", conclusion=conclusion,
                  sha=sha or hashlib.sha1(f"commit {number}".encode()).hexdigest(), number=number, attempt=attempt,
                  head_repository=FORK if fork else REPOSITORY, created=self._tick)
        self.runs.append(run)
        return run

    def add_artifact(self, run: Run, data: bytes, name: str = "agenttest-results", expired: bool = False) -> Artifact:
        artifact = Artifact(id=len(self.artifacts) + 11, name=name, run=run, data=data, expired=expired)
        self.artifacts[artifact.id] = artifact
        return artifact

    # --- the API --------------------------------------------------------------------------------------------------

    async def _api(self, request: web.Request) -> web.StreamResponse:
        body = await _body(request)
        query = dict(request.query)
        self.requests.append(Recorded("api", request.method, request.path, query, CIMultiDict(request.headers),
                                      body))
        path = self._canonical(request.path)
        if path is None:
            return self._reply(None, 404, error(404, "Not Found"), {})
        if self._login(request) is None:
            return self._reply(None, 401, error(401, "Bad credentials"), {})
        for method, pattern, operation, handler in self._routes:
            match = pattern.fullmatch(path)
            if match and method == request.method:
                self.contract_problems += _contract.request_problems(operation, query, body)
                fault = self._fault(request.method, path)
                if fault is not None:
                    return self._reply(operation, fault.status, fault.body, fault.headers, fault.content_type)
                status, payload, headers = await handler(request, match, query, body)
                return self._reply(operation, status, payload, headers)
        return self._reply(None, 404, error(404, "Not Found"), {})

    def _login(self, request: web.Request) -> str | None:
        """Whom the request's token writes as; None: no token it takes."""
        scheme, _, token = request.headers.get("Authorization", "").partition(" ")
        return self.logins.get(token) if scheme in ("Bearer", "token") else None

    def _canonical(self, path: str) -> str | None:
        """The request's path as `/repos/OWNER/NAME/…` (from `/repositories/ID/…` too), or None when it is not
        one of this repository's."""
        if not path.startswith(self.prefix + "/"):
            return None
        path = path[len(self.prefix):]
        by_id = re.fullmatch(r"/repositories/(\d+)(/.*)", path)
        if by_id:
            return f"/repos/{REPOSITORY}{by_id.group(2)}" if int(by_id.group(1)) == REPOSITORY_ID else None
        by_name = re.fullmatch(r"/repos/([^/]+/[^/]+)(/.*)", path)
        if by_name and by_name.group(1).lower() == REPOSITORY.lower():
            return f"/repos/{REPOSITORY}{by_name.group(2)}"
        return None

    def _fault(self, method: str, path: str) -> Fault | None:
        for fault in self.faults:
            if method in fault.methods and re.search(fault.path, path):
                if fault.times == 1:
                    self.faults.remove(fault)
                elif fault.times > 1:
                    fault.times -= 1
                return fault
        return None

    def _reply(self, operation: str | None, status: int, payload: Any, headers: Mapping[str, str],
               content_type: str = "application/json") -> web.StreamResponse:
        self._used += 1
        all_headers = {"x-ratelimit-limit": "1000", "x-ratelimit-remaining": str(max(0, 1000 - self._used)),
                       "x-ratelimit-used": str(self._used), "x-ratelimit-reset": str(EPOCH + 3600),
                       "x-ratelimit-resource": "core", "x-github-api-version-selected": "2022-11-28",
                       **headers}
        if operation is not None and content_type == "application/json":
            self.contract_problems += _contract.response_problems(operation, status, payload, all_headers)
        if payload is None:
            return web.Response(status=status, headers=all_headers)
        if content_type == "application/json":
            return web.json_response(payload, status=status, headers=all_headers)
        return web.Response(status=status, text=payload, content_type=content_type, headers=all_headers)

    def _base(self, request: web.Request) -> str:
        return f"{request.scheme}://{request.host}{self.prefix}"

    def _page(self, request: web.Request, query: dict[str, str], items: list[Any]) -> tuple[list[Any], dict[str, str]]:
        """One page of `items` and its `Link` header, as GitHub paginates: `per_page` (at most 100, default 30) and
        `page`, the links pointing at `/repositories/ID/…` with the request's other parameters kept."""
        per_page = min(100, max(1, _number(query.get("per_page"), 30)))
        page = max(1, _number(query.get("page"), 1))
        last = max(1, -(-len(items) // per_page))
        rest = (self._canonical(request.path) or "").split("/", 4)[4]       # after /repos/OWNER/NAME/
        base = f"{self._base(request)}/repositories/{REPOSITORY_ID}/{rest}"

        def link(number: int, rel: str) -> str:
            return f'<{base}?{urllib.parse.urlencode({**query, "per_page": per_page, "page": number})}>; rel="{rel}"'

        links = []
        if page < last:
            links += [link(page + 1, "next"), link(last, "last")]
        if page > 1:
            links += [link(1, "first"), link(page - 1, "prev")]
        return items[(page - 1) * per_page: page * per_page], {"Link": ", ".join(links)} if links else {}

    async def _list_comments(self, request: web.Request, match: re.Match[str], query: dict[str, str],
                             body: Any) -> tuple[int, Any, dict[str, str]]:
        number = int(match["number"])
        if number not in self.pull_requests:
            return 404, error(404, "Not Found"), {}
        page, headers = self._page(request, query, self.comments_on(number))
        return 200, [self._comment(request, c) for c in page], headers

    async def _create_comment(self, request: web.Request, match: re.Match[str], query: dict[str, str],
                              body: Any) -> tuple[int, Any, dict[str, str]]:
        number = int(match["number"])
        if number not in self.pull_requests:
            return 404, error(404, "Not Found"), {}
        if not isinstance(body, dict) or not isinstance(body.get("body"), str):
            return 422, {"message": "Invalid request.\n\n\"body\" wasn't supplied.",
                         "documentation_url": f"{DOCS}/issues/comments#create-an-issue-comment", "status": "422"}, {}
        if len(body["body"]) > COMMENT_LIMIT:
            return 422, _too_long(), {}
        while self.race:
            self.add_comment(self.race.pop(0), number=number)
        comment = self.add_comment(body["body"], user=self._login(request) or BOT, number=number)
        shown = self._comment(request, comment)
        return 201, shown, {"Location": shown["url"]}

    async def _get_comment(self, request: web.Request, match: re.Match[str], query: dict[str, str],
                           body: Any) -> tuple[int, Any, dict[str, str]]:
        comment = self.comments.get(int(match["id"]))
        return (200, self._comment(request, comment), {}) if comment else (404, error(404, "Not Found"), {})

    async def _update_comment(self, request: web.Request, match: re.Match[str], query: dict[str, str],
                              body: Any) -> tuple[int, Any, dict[str, str]]:
        comment = self.comments.get(int(match["id"]))
        if comment is None:
            return 404, error(404, "Not Found"), {}
        if not isinstance(body, dict) or not isinstance(body.get("body"), str):
            return 422, {"message": "Validation Failed", "errors": [{"resource": "IssueComment", "code": "missing",
                                                                      "field": "body"}],
                         "documentation_url": f"{DOCS}/issues/comments#update-an-issue-comment", "status": "422"}, {}
        if len(body["body"]) > COMMENT_LIMIT:
            return 422, _too_long(), {}
        self._tick += 1
        comment.body, comment.updated = body["body"], self._tick
        return 200, self._comment(request, comment), {}

    async def _delete_comment(self, request: web.Request, match: re.Match[str], query: dict[str, str],
                              body: Any) -> tuple[int, Any, dict[str, str]]:
        if self.comments.pop(int(match["id"]), None) is None:
            return 404, error(404, "Not Found"), {}
        return 204, None, {}

    async def _list_runs(self, request: web.Request, match: re.Match[str], query: dict[str, str],
                         body: Any) -> tuple[int, Any, dict[str, str]]:
        workflow = urllib.parse.unquote(match["workflow"])
        if not any(run.workflow == workflow for run in self.runs):
            return 404, error(404, "Not Found"), {}
        runs = [run for run in reversed(self.runs) if run.workflow == workflow
                and (self.ignore_filters or (query.get("branch") in (None, run.branch)
                                             and query.get("event") in (None, run.event)
                                             and query.get("status") in (None, run.status, run.conclusion)
                                             and query.get("head_sha") in (None, run.sha)))]
        page, headers = self._page(request, query, runs)
        return 200, {"total_count": len(runs), "workflow_runs": [self._run(request, run) for run in page]}, headers

    async def _list_artifacts(self, request: web.Request, match: re.Match[str], query: dict[str, str],
                              body: Any) -> tuple[int, Any, dict[str, str]]:
        run_id = int(match["run"])
        if not any(run.id == run_id for run in self.runs):
            return 404, error(404, "Not Found"), {}
        found = [a for a in self.artifacts.values() if a.run.id == run_id and query.get("name") in (None, a.name)]
        page, headers = self._page(request, query, found)
        return 200, {"total_count": len(found), "artifacts": [self._artifact(request, a) for a in page]}, headers

    async def _download(self, request: web.Request, match: re.Match[str], query: dict[str, str],
                        body: Any) -> tuple[int, Any, dict[str, str]]:
        artifact = self.artifacts.get(int(match["id"]))
        if artifact is None or match["format"] != "zip":
            return 404, error(404, "Not Found"), {}
        if artifact.expired:
            return 410, error(410, "Artifact has expired", f"{DOCS}/actions/artifacts#download-an-artifact"), {}
        expires = stamp(self._tick + 60)
        query_string = urllib.parse.urlencode({"sv": "2025-01-05", "se": expires, "sr": "b", "sp": "r",
                                               "sig": _signature(artifact.id, expires)})
        return 302, None, {"Location": f"{self._storage_server.origin}/blobs/{artifact.id}.zip?{query_string}"}

    # --- storage --------------------------------------------------------------------------------------------------

    async def _storage(self, request: web.Request) -> web.StreamResponse:
        self.requests.append(Recorded("storage", request.method, request.path, dict(request.query),
                                      CIMultiDict(request.headers), await _body(request)))
        if "Authorization" in request.headers:      # a signed URL and a second credential: Azure refuses both
            return _storage_error(400, "InvalidAuthenticationInfo", "Authentication information is not given in "
                                  "the correct format. Check the value of Authorization header.")
        found = re.fullmatch(r"/blobs/(\d+)\.zip", request.path)
        artifact = self.artifacts.get(int(found.group(1))) if found else None
        expires = request.query.get("se", "")
        if artifact is None or not hmac.compare_digest(request.query.get("sig", ""),
                                                       _signature(artifact.id, expires)):
            return _storage_error(403, "AuthenticationFailed", "Server failed to authenticate the request. Make "
                                  "sure the value of Authorization header is formed correctly including the "
                                  "signature.")
        return web.Response(body=artifact.data, content_type="application/zip")

    # --- GitHub's shapes ------------------------------------------------------------------------------------------

    def _user(self, request: web.Request, login: str) -> dict[str, Any]:
        bot = login.endswith("[bot]")
        user_id = 41898282 if login == BOT else int(hashlib.sha1(login.encode()).hexdigest()[:7], 16)
        url = f"{self._base(request)}/users/{urllib.parse.quote(login)}"
        return {"login": login, "id": user_id, "node_id": f"MDQ6VXNlcj{user_id}", "gravatar_id": "",
                "avatar_url": f"https://avatars.githubusercontent.com/{'in/15368' if bot else f'u/{user_id}'}?v=4",
                "url": url, "html_url": f"{self.server_url}/{'apps/github-actions' if bot else login}",
                "followers_url": f"{url}/followers", "following_url": f"{url}/following{{/other_user}}",
                "gists_url": f"{url}/gists{{/gist_id}}", "starred_url": f"{url}/starred{{/owner}}{{/repo}}",
                "subscriptions_url": f"{url}/subscriptions", "organizations_url": f"{url}/orgs",
                "repos_url": f"{url}/repos", "events_url": f"{url}/events{{/privacy}}",
                "received_events_url": f"{url}/received_events", "type": "Bot" if bot else "User",
                "user_view_type": "public", "site_admin": False}

    def _comment(self, request: web.Request, comment: Comment) -> dict[str, Any]:
        url = f"{self._base(request)}/repos/{REPOSITORY}/issues/comments/{comment.id}"
        return {"id": comment.id, "node_id": f"IC_kwDOAE{comment.id}", "url": url,
                "html_url": f"{self.server_url}/{REPOSITORY}/pull/{comment.number}#issuecomment-{comment.id}",
                "body": comment.body, "user": self._user(request, comment.user),
                "created_at": stamp(comment.created), "updated_at": stamp(comment.updated),
                "issue_url": f"{self._base(request)}/repos/{REPOSITORY}/issues/{comment.number}",
                "author_association": "NONE" if comment.user == BOT else "CONTRIBUTOR",
                "performed_via_github_app": None,
                "reactions": {"url": f"{url}/reactions", "total_count": 0, "+1": 0, "-1": 0, "laugh": 0,
                              "hooray": 0, "confused": 0, "heart": 0, "rocket": 0, "eyes": 0}}

    def _repository(self, request: web.Request, full_name: str) -> dict[str, Any]:
        base = f"{self._base(request)}/repos/{full_name}"
        templates = {"archive": "/{archive_format}{/ref}", "assignees": "/assignees{/user}",
                     "blobs": "/git/blobs{/sha}", "branches": "/branches{/branch}",
                     "collaborators": "/collaborators{/collaborator}", "comments": "/comments{/number}",
                     "commits": "/commits{/sha}", "compare": "/compare/{base}...{head}",
                     "contents": "/contents/{+path}", "contributors": "/contributors", "deployments": "/deployments",
                     "downloads": "/downloads", "events": "/events", "forks": "/forks",
                     "git_commits": "/git/commits{/sha}", "git_refs": "/git/refs{/sha}", "git_tags": "/git/tags{/sha}",
                     "hooks": "/hooks", "issue_comment": "/issues/comments{/number}",
                     "issue_events": "/issues/events{/number}", "issues": "/issues{/number}", "keys": "/keys{/key_id}",
                     "labels": "/labels{/name}", "languages": "/languages", "merges": "/merges",
                     "milestones": "/milestones{/number}", "notifications": "/notifications{?since,all,participating}",
                     "pulls": "/pulls{/number}", "releases": "/releases{/id}", "stargazers": "/stargazers",
                     "statuses": "/statuses/{sha}", "subscribers": "/subscribers", "subscription": "/subscription",
                     "tags": "/tags", "teams": "/teams", "trees": "/git/trees{/sha}"}
        fork = full_name != REPOSITORY
        return {"id": FORK_ID if fork else REPOSITORY_ID, "node_id": f"R_kgDO{FORK_ID if fork else REPOSITORY_ID}",
                "name": full_name.split("/")[1], "full_name": full_name,
                "owner": self._user(request, full_name.split("/")[0]), "private": False,
                "html_url": f"{self.server_url}/{full_name}", "description": None, "fork": fork, "url": base,
                **{f"{name}_url": base + template for name, template in templates.items()}}

    def _run(self, request: web.Request, run: Run) -> dict[str, Any]:
        url = f"{self._base(request)}/repos/{REPOSITORY}/actions/runs/{run.id}"
        head = self._repository(request, run.head_repository)
        actor = self._user(request, run.head_repository.split("/")[0])
        return {"id": run.id, "name": "agent evals", "node_id": f"WFR_kwLOAE{run.id}", "check_suite_id": run.id * 7,
                "check_suite_node_id": f"CS_kwDOAE{run.id * 7}", "head_branch": run.branch, "head_sha": run.sha,
                "path": f".github/workflows/{run.workflow}", "run_number": run.number, "run_attempt": run.attempt,
                "referenced_workflows": [], "event": run.event, "status": run.status, "conclusion": run.conclusion,
                "workflow_id": 161335, "url": url, "html_url": f"{self.server_url}/{REPOSITORY}/actions/runs/{run.id}",
                "pull_requests": [], "created_at": stamp(run.created), "updated_at": stamp(run.created + 1),
                "actor": actor, "triggering_actor": actor, "run_started_at": stamp(run.created),
                "jobs_url": f"{url}/jobs", "logs_url": f"{url}/logs",
                "check_suite_url": f"{self._base(request)}/repos/{REPOSITORY}/check-suites/{run.id * 7}",
                "artifacts_url": f"{url}/artifacts", "cancel_url": f"{url}/cancel", "rerun_url": f"{url}/rerun",
                "previous_attempt_url": None,
                "workflow_url": f"{self._base(request)}/repos/{REPOSITORY}/actions/workflows/161335",
                "head_commit": {"id": run.sha, "tree_id": hashlib.sha1(run.sha.encode()).hexdigest(),
                                "message": f"commit {run.number}", "timestamp": stamp(run.created),
                                "author": {"name": "Mona Lisa", "email": "mona@example.com"},
                                "committer": {"name": "GitHub", "email": "noreply@github.com"}},
                "repository": self._repository(request, REPOSITORY), "head_repository": head,
                "head_repository_id": head["id"], "display_title": f"commit {run.number}"}

    def _artifact(self, request: web.Request, artifact: Artifact) -> dict[str, Any]:
        url = f"{self._base(request)}/repos/{REPOSITORY}/actions/artifacts/{artifact.id}"
        run = artifact.run
        return {"id": artifact.id, "node_id": f"MDg6QXJ0aWZhY3Q{artifact.id}", "name": artifact.name,
                "size_in_bytes": len(artifact.data), "url": url, "archive_download_url": f"{url}/zip",
                "expired": artifact.expired, "created_at": stamp(run.created), "updated_at": stamp(run.created),
                "expires_at": stamp(run.created + 90 * 86400),
                "digest": "sha256:" + hashlib.sha256(artifact.data).hexdigest(),
                "workflow_run": {"id": run.id, "repository_id": REPOSITORY_ID,
                                 "head_repository_id": FORK_ID if run.head_repository == FORK else REPOSITORY_ID,
                                 "head_branch": run.branch, "head_sha": run.sha}}


def _signature(artifact_id: int, expires: str) -> str:
    return hmac.new(_SIGNING_KEY, f"{artifact_id}|{expires}".encode(), hashlib.sha256).hexdigest()


def _storage_error(status: int, code: str, message: str) -> web.Response:
    xml = f'<?xml version="1.0" encoding="utf-8"?><Error><Code>{code}</Code><Message>{message}</Message></Error>'
    return web.Response(status=status, text=xml, content_type="application/xml")


def _number(value: str | None, default: int) -> int:
    try:
        return int(value) if value is not None else default
    except ValueError:
        return default


async def _body(request: web.Request) -> Any:
    raw = await request.read()
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", "replace")


@pytest.fixture
def github_api() -> Iterator[FakeGitHub]:
    """The emulator, started; at the end, every request and reply must have conformed to GitHub's description."""
    with FakeGitHub() as fake:
        yield fake
    assert not fake.contract_problems, "\n".join(fake.contract_problems)
