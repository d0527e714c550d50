"""`--baseline auto` against the emulator: the base branch's last successful push run of the same workflow, never a
fork's, its artifact (expired ones skipped) downloaded without the token, only report.json read and checked; and
every way there is none, a reason."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agenttest.github import baseline as baseline_module
from agenttest.github.baseline import Baseline, find_baseline, report_entry, workflow_file
from agenttest.github.rest import GitHubClient
from fakes.github_api import (
    DOCS,
    REPOSITORY,
    FakeGitHub,
    Fault,
    Run,
    error,
    not_found,
    server_error,
    too_many_requests,
    zip_of,
)

Client = Callable[..., GitHubClient]


def report(*cases: tuple[str, str], shard: str | None = None) -> dict[str, Any]:
    """A report.json of cases (id, status) in suites/a.jsonl."""
    results = [{"id": case_id, "status": status, "file": "suites/a.jsonl", "line": n, "duration_ms": 5}
               for n, (case_id, status) in enumerate(cases, start=1)]
    passed = sum(1 for _, status in cases if status == "passed")
    summary = {"total": len(cases), "passed": passed, "failed": len(cases) - passed, "skipped": 0, "errors": 0,
               "timeouts": 0, "duration_ms": 10, "agent_id": "assistant"}
    metadata = {"version": "0.1.0", "started_at": "2027-01-15T07:00:00+00:00", **({"shard": shard} if shard else {})}
    return {"summary": summary, "results": results, "metadata": metadata}


BASE = report(("greets", "passed"), ("refunds", "passed"))
POISON = report(("greets", "failed"), ("refunds", "failed"))


def archive(content: dict[str, Any] | str | bytes, **others: bytes | str) -> bytes:
    text = content if isinstance(content, (str, bytes)) else json.dumps(content)
    return zip_of({"report.json": text, "junit.xml": "<testsuites/>", **others})


def fetch(client: GitHubClient, **options: Any) -> Baseline:
    async def run() -> Baseline:
        async with client:
            return await find_baseline(client, REPOSITORY, "ci.yml", "main", **options)
    return asyncio.run(run())


def push_run(github_api: FakeGitHub, content: dict[str, Any] | str | bytes = BASE, **options: Any) -> Run:
    run = github_api.add_run(**options)
    github_api.add_artifact(run, archive(content))
    return run


def test_the_last_successful_push_run_on_the_base_branch_gives_the_baseline(github_api: FakeGitHub,
                                                                             client: Client) -> None:
    older = push_run(github_api, report(("greets", "failed")))
    run = push_run(github_api)
    push_run(github_api, POISON, conclusion="failure")
    push_run(github_api, POISON, branch="feature")
    found = fetch(client())
    assert found.report == BASE
    assert found.reason == f"run {run.number} of ci.yml on main ({run.sha[:7]})"
    assert found.output == found.run_url == f"https://github.com/{REPOSITORY}/actions/runs/{run.id}"
    assert (found.sha, found.branch, found.skipped) == (run.sha, "main", [])
    runs, artifacts, download = github_api.calls()
    assert runs.path == f"/repos/{REPOSITORY}/actions/workflows/ci.yml/runs"
    assert runs.query == {"branch": "main", "event": "push", "status": "success", "exclude_pull_requests": "true",
                          "per_page": "20"}
    assert (artifacts.path, artifacts.query) == (f"/repos/{REPOSITORY}/actions/runs/{run.id}/artifacts",
                                                 {"name": "agenttest-results", "per_page": "100"})
    assert download.path.endswith("/zip") and older.id != run.id
    (storage,) = github_api.calls(server="storage")
    assert "Authorization" not in storage.headers


def test_a_forks_run_is_never_the_baseline_whatever_its_branch(github_api: FakeGitHub, client: Client) -> None:
    """A fork's pull request from its own `main` (and one claiming a push) comes back from a server that ignores
    the query's filters: neither is looked at, the repository's own push run is."""
    github_api.ignore_filters = True
    own = push_run(github_api)
    push_run(github_api, POISON, fork=True, event="pull_request")
    push_run(github_api, POISON, fork=True, event="push")
    found = fetch(client())
    assert found.report == BASE and found.run_number == own.number
    assert [r.path for r in github_api.calls(path="artifacts$")] == \
        [f"/repos/{REPOSITORY}/actions/runs/{own.id}/artifacts"]


def test_this_run_is_not_its_own_baseline(github_api: FakeGitHub, client: Client) -> None:
    earlier = push_run(github_api)
    current = push_run(github_api, POISON)
    found = fetch(client(), current_run=current.id)
    assert found.run_number == earlier.number and found.report == BASE


def test_expired_artifacts_are_skipped_a_few_runs_back(github_api: FakeGitHub, client: Client) -> None:
    good = push_run(github_api)
    gone_on_download = github_api.add_run()            # listed as live, 410 once fetched
    artifact = github_api.add_artifact(gone_on_download, archive(POISON))
    github_api.inject(Fault(410, error(410, "Artifact has expired", f"{DOCS}/actions/artifacts#download-an-artifact"),
                            path=f"/artifacts/{artifact.id}/zip$"))
    flagged = github_api.add_run()
    github_api.add_artifact(flagged, archive(POISON), expired=True)
    bare = github_api.add_run()
    found = fetch(client())
    assert found.report == BASE and found.run_number == good.number
    assert found.skipped == [f"run {bare.number}: no 'agenttest-results' artifact",
                             f"run {flagged.number}: its artifact has expired",
                             f"run {gone_on_download.number}: its artifact has expired"]


def test_no_usable_run_says_why_for_each(github_api: FakeGitHub, client: Client) -> None:
    for _ in range(7):
        github_api.add_artifact(github_api.add_run(), archive(BASE), expired=True)
    found = fetch(client())
    assert found.report is None and found.output == found.reason
    assert found.reason.startswith("no baseline: no usable 'agenttest-results' artifact in the last 5 successful "
                                   "runs of ci.yml on main (run 7: its artifact has expired; run 6: ")
    assert len(github_api.calls(path="artifacts$")) == 5 and github_api.calls(path="/zip$") == []


def test_no_run_yet_is_a_reason(github_api: FakeGitHub, client: Client) -> None:
    push_run(github_api, branch="feature")
    found = fetch(client())
    assert found == Baseline(None, "no baseline: no successful run of ci.yml on main triggered by a push in "
                                   f"{REPOSITORY} yet")


def test_an_unknown_workflow_is_a_reason(github_api: FakeGitHub, client: Client) -> None:
    found = fetch(client())
    assert found.report is None and found.reason.startswith(
        f"no baseline: no workflow ci.yml in {REPOSITORY}, or the token may not see it (GET /repos/{REPOSITORY}/"
        "actions/workflows/ci.yml/runs: HTTP 404 (Not Found)) — on a private repository the job needs "
        "`permissions: actions: read`")


@pytest.mark.parametrize(("fault", "reason"), [
    (Fault(403, error(403, "Resource not accessible by integration"), path="/runs$"),
     "no baseline: GitHub refused to list the workflow's runs (GET /repos/octo/agents/actions/workflows/ci.yml/"
     "runs: HTTP 403 (Resource not accessible by integration)) — give the job `permissions: actions: read`"),
    (too_many_requests(retry_after=3600), "no baseline: GitHub's rate limit (GET /repos/octo/agents/actions/"
                                          "workflows/ci.yml/runs: HTTP 429"),
    (server_error(502, times=0, path="/zip$"), "no baseline: GitHub could not be reached or answered wrongly "
                                               "(GET /repos/octo/agents/actions/artifacts/11/zip: HTTP 502"),
    (not_found(path="/artifacts$"), "no baseline: GitHub could not be reached or answered wrongly (GET /repos/"
                                    "octo/agents/actions/runs/"),
])
def test_a_fault_of_github_is_a_reason(github_api: FakeGitHub, client: Client, fault: Fault, reason: str) -> None:
    push_run(github_api)
    github_api.inject(fault)
    found = fetch(client(budget=60))
    assert found.report is None and found.reason.startswith(reason), found.reason


def test_only_report_json_is_read_and_a_dotdot_entry_is_never_written(github_api: FakeGitHub, client: Client,
                                                                      tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    run = github_api.add_run()
    github_api.add_artifact(run, zip_of({"../../escaped.txt": "pwned", "/abs.txt": "pwned",
                                         "report.json": json.dumps(BASE), "../report.json": json.dumps(POISON)}))
    assert fetch(client()).report == BASE
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["work"]


@pytest.mark.parametrize(("entries", "why"), [
    ({"../report.json": json.dumps(BASE)}, "the artifact holds no report.json"),
    ({"agenttest-results/report.json": json.dumps(BASE)}, "the artifact holds no report.json"),
    ({"report.json": b" " * (50 * 2**20)}, "its report.json is 52428800 bytes, more than the 16777216 read"),
    ({"report.json": '{"summary": {"total": "2"}, "results": []}'},
     "its report.json cannot be compared with (summary.total: expected an integer"),
    ({"report.json": json.dumps(report(("greets", "passed"), shard="1/2"))},
     "its report.json cannot be compared with (the report of shard 1/2 only"),
])
def test_an_artifact_without_a_usable_report_is_passed_over(github_api: FakeGitHub, client: Client,
                                                           entries: dict[str, Any], why: str) -> None:
    good = push_run(github_api)
    bad = github_api.add_run()
    github_api.add_artifact(bad, zip_of(entries))
    found = fetch(client())
    assert found.run_number == good.number and found.report == BASE
    assert found.skipped[0].startswith(f"run {bad.number}: {why}"), found.skipped


def test_an_archive_that_is_not_the_one_uploaded_is_passed_over(github_api: FakeGitHub, client: Client) -> None:
    """The artifact's SHA-256 digest (upload-artifact v4+) must match what storage served."""
    good = push_run(github_api)
    bad = push_run(github_api, POISON)
    url = f"{github_api.api_url}/repos/{REPOSITORY}/actions/artifacts/12"
    listed = {"id": 12, "node_id": "MDg6QXJ0aWZhY3QxMg", "name": "agenttest-results", "size_in_bytes": 500,
              "url": url, "archive_download_url": f"{url}/zip", "expired": False,
              "created_at": "2027-01-15T08:00:00Z", "expires_at": "2027-04-15T08:00:00Z",
              "updated_at": "2027-01-15T08:00:00Z", "digest": "sha256:" + "0" * 64}
    github_api.inject(Fault(200, {"total_count": 1, "artifacts": [listed]}, path=f"/runs/{bad.id}/artifacts$"))
    found = fetch(client())
    assert found.run_number == good.number
    assert found.skipped == [f"run {bad.number}: the artifact downloaded is not the one uploaded (its SHA-256 "
                             "digest differs)"]


def test_an_artifact_larger_than_the_limit_is_not_downloaded(github_api: FakeGitHub, client: Client,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(baseline_module, "ARCHIVE_LIMIT", 100)
    push_run(github_api)
    found = fetch(client())
    assert found.report is None and "more than the 100 read" in found.skipped[0]
    assert github_api.calls(path="/zip$") == []


def test_report_entry_refuses_what_is_no_zip() -> None:
    with pytest.raises(baseline_module._Skip, match="no readable zip archive"):
        report_entry(b"{}")
    assert report_entry(zip_of({"report.json": "{}"})) == b"{}"


def test_the_workflow_file_from_the_workflow_ref() -> None:
    assert workflow_file("octo/agents/.github/workflows/agent evals.yml@refs/heads/main") == "agent evals.yml"
    assert workflow_file("octo/agents/.github/workflows/ci.yml@refs/pull/7/merge") == "ci.yml"
    assert workflow_file(None) is None and workflow_file("octo/agents") is None
