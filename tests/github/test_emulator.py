"""The GitHub REST emulator answers as GitHub does: every reply, its faults included, conforms to GitHub's own OpenAPI
description (kept in tests/data/github-openapi/), and that check refuses what GitHub would not send."""

from __future__ import annotations

import asyncio
import copy
import json
from typing import Any

import aiohttp
from multidict import CIMultiDict

from fakes.github_api import (
    REPOSITORY_ID,
    TOKEN,
    FakeGitHub,
    read_only_token,
    secondary_rate_limit,
    server_error,
    too_many_requests,
    zip_of,
)
from fakes.github_openapi import Contract

Reply = tuple[int, CIMultiDict[str], Any]


async def fetch(method: str, url: str, *, token: str | None = TOKEN, body: Any = None,
                headers: dict[str, str] | None = None) -> Reply:
    """One request, redirects not followed, the body read as JSON when it is JSON."""
    sent = {**({"Authorization": f"Bearer {token}"} if token else {}), **(headers or {})}
    async with aiohttp.ClientSession() as session, \
            session.request(method, url, json=body, headers=sent, allow_redirects=False) as response:
        raw = await response.read()
        try:
            data: Any = json.loads(raw) if raw else None
        except ValueError:
            data = raw
        return response.status, response.headers.copy(), data


def test_every_reply_conforms_to_githubs_description(github_api: FakeGitHub) -> None:
    for number in range(35):
        github_api.add_comment(f"comment {number}", user="octocat")
    run = github_api.add_run()
    github_api.add_artifact(run, zip_of({"report.json": "{}"}))
    expired = github_api.add_artifact(github_api.add_run(fork=True, event="pull_request"), b"", expired=True)
    repo = f"{github_api.api_url}/repos/octo/agents"

    async def scenario() -> list[int]:
        statuses = []
        status, headers, _ = await fetch("GET", f"{repo}/issues/7/comments")
        statuses.append(status)
        status, _, comment = await fetch("POST", f"{repo}/issues/7/comments", body={"body": "hello"})
        statuses.append(status)
        next_page = headers["Link"].split(">")[0].lstrip("<")
        for method, url, body in [
                ("GET", next_page, None),
                ("GET", f"{repo}/issues/comments/{comment['id']}", None),
                ("PATCH", f"{repo}/issues/comments/{comment['id']}", {"body": "hello again"}),
                ("DELETE", f"{repo}/issues/comments/{comment['id']}", None),
                ("GET", f"{repo}/actions/workflows/ci.yml/runs?branch=main&event=push&status=success&per_page=20"
                        "&exclude_pull_requests=true", None),
                ("GET", f"{repo}/actions/runs/{run.id}/artifacts?name=agenttest-results&per_page=100", None),
                ("GET", f"{repo}/actions/artifacts/11/zip", None),
                ("GET", f"{repo}/actions/artifacts/{expired.id}/zip", None),
                ("POST", f"{repo}/issues/7/comments", {"body": "x" * 65_537}),
                ("GET", f"{repo}/issues/8/comments", None)]:
            statuses.append((await fetch(method, url, body=body))[0])
        for fault in (read_only_token(), too_many_requests(retry_after=3), secondary_rate_limit(retry_after=60),
                      server_error(502)):
            github_api.faults = [fault]
            statuses.append((await fetch("POST", f"{repo}/issues/7/comments", body={"body": "hi"}))[0])
        return statuses

    assert asyncio.run(scenario()) == [200, 201, 200, 200, 200, 204, 200, 200, 302, 410, 422, 404,
                                       403, 429, 403, 502]
    assert github_api.contract_problems == []
    assert len(github_api.calls()) == 16


def test_the_check_refuses_what_github_would_not_send(github_api: FakeGitHub) -> None:
    """Each shape the emulator sends, spoilt in one field, is refused: the check can fail."""
    github_api.add_comment("hello")
    run = github_api.add_run()
    github_api.add_artifact(run, zip_of({"report.json": "{}"}))
    repo = f"{github_api.api_url}/repos/octo/agents"

    async def replies() -> list[Any]:
        return [(await fetch("GET", url))[2] for url in (f"{repo}/issues/7/comments",
                                                         f"{repo}/actions/workflows/ci.yml/runs",
                                                         f"{repo}/actions/runs/{run.id}/artifacts")]

    comments, runs, artifacts = asyncio.run(replies())
    contract = Contract()
    assert contract.response_problems("issues/list-comments", 200, comments, {}) == []
    spoilt: list[tuple[str, Any, str]] = []
    for field, value in (("html_url", None), ("created_at", "yesterday"), ("user", {"login": "x"})):
        broken = copy.deepcopy(comments)
        if value is None:
            del broken[0][field]
        else:
            broken[0][field] = value
        spoilt.append(("issues/list-comments", broken, field))
    broken_runs = copy.deepcopy(runs)
    broken_runs["workflow_runs"][0]["head_repository"] = None       # as GitHub sends for a deleted fork
    spoilt.append(("actions/list-workflow-runs", broken_runs, "head_repository"))
    broken_artifacts = copy.deepcopy(artifacts)
    broken_artifacts["artifacts"][0]["expired"] = "no"
    spoilt.append(("actions/list-workflow-run-artifacts", broken_artifacts, "expired"))
    for operation, body, field in spoilt:
        problems = contract.response_problems(operation, 200, body, {})
        assert problems and any(field in problem for problem in problems), (operation, field, problems)
    assert contract.response_problems("issues/create-comment", 201, comments[0], {}) == \
        ["issues/create-comment → 201: no Location header"]
    assert contract.response_problems("actions/download-artifact", 200, None, {})
    assert contract.request_problems("issues/list-comments", {"per_page": "500", "sort": "x"}, None) == [
        "issues/list-comments: per_page=500 is above GitHub's maximum of 100",
        "issues/list-comments: unknown query parameter 'sort'"]
    assert contract.request_problems("actions/list-workflow-runs", {"status": "green"}, None)
    assert contract.request_problems("issues/create-comment", {}, {"text": "hi"})


def test_pages_link_to_the_repository_by_id_as_github_does(github_api: FakeGitHub) -> None:
    for number in range(35):
        github_api.add_comment(f"comment {number}", user="octocat")

    async def pages() -> tuple[Reply, Reply]:
        first = await fetch("GET", f"{github_api.api_url}/repos/octo/agents/issues/7/comments")
        return first, await fetch("GET", first[1]["Link"].split(">")[0].lstrip("<"))

    (_, headers, first), (_, last_headers, second) = asyncio.run(pages())
    assert len(first) == 30 and len(second) == 5
    assert headers["Link"] == (
        f'<{github_api.api_url}/repositories/{REPOSITORY_ID}/issues/7/comments?per_page=30&page=2>; rel="next", '
        f'<{github_api.api_url}/repositories/{REPOSITORY_ID}/issues/7/comments?per_page=30&page=2>; rel="last"')
    assert 'rel="prev"' in last_headers["Link"] and 'rel="next"' not in last_headers["Link"]
    assert [c["body"] for c in first + second] == [f"comment {n}" for n in range(35)]
    assert [c["id"] for c in first + second] == sorted(c["id"] for c in first + second)


def test_storage_refuses_the_token_and_a_forged_signature(github_api: FakeGitHub) -> None:
    archive = zip_of({"report.json": '{"summary": {}}'})
    github_api.add_artifact(github_api.add_run(), archive)

    async def scenario() -> list[Reply]:
        _, headers, _ = await fetch("GET", f"{github_api.api_url}/repos/octo/agents/actions/artifacts/11/zip")
        location = headers["Location"]
        return [await fetch("GET", location),
                await fetch("GET", location, token=None),
                await fetch("GET", location.replace("sig=", "sig=0"), token=None)]

    with_token, plain, forged = asyncio.run(scenario())
    assert with_token[0] == 400 and b"InvalidAuthenticationInfo" in with_token[2]
    assert plain[0] == 200 and plain[2] == archive
    assert forged[0] == 403 and b"AuthenticationFailed" in forged[2]


def test_without_the_token_github_says_bad_credentials(github_api: FakeGitHub) -> None:
    status, _, body = asyncio.run(fetch("GET", f"{github_api.api_url}/repos/octo/agents/issues/7/comments",
                                        token="ghs_wrong"))
    assert (status, body["message"]) == (401, "Bad credentials")


def test_served_under_a_path_as_github_enterprise_server_serves_api_v3() -> None:
    with FakeGitHub(prefix="/api/v3") as enterprise:
        enterprise.add_comment("hello")
        served = asyncio.run(fetch("GET", f"{enterprise.api_url}/repos/octo/agents/issues/7/comments"))
        beside = asyncio.run(fetch("GET", enterprise.api_url.removesuffix("/api/v3")
                                   + "/repos/octo/agents/issues/7/comments"))
    assert enterprise.api_url.endswith("/api/v3")
    assert served[0] == 200 and served[2][0]["url"].startswith(enterprise.api_url + "/repos/")
    assert beside[0] == 404
    assert enterprise.contract_problems == []
