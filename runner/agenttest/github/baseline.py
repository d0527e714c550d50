"""`--baseline auto`: the base branch's last report.json, found and fetched by agenttest itself.

The last successful run of the same workflow on the base branch that a push in this repository triggered — never a
run from a fork, whatever its branch is called: filtering on the branch alone lets a fork's pull request from its
own `main` plant the baseline (GHSA-5xr6-xhww-33m4), so the run's repository and head repository must both be this
one — and of that run the artifact the composite action uploads; expired ones are skipped, a few runs back. The
archive is downloaded through the API and only `report.json` is read from it, in memory, size-capped: no entry is
extracted or written anywhere, so a `../` name can do nothing. The report is then checked as `--baseline` checks a
file. No baseline is never an error: `Baseline.reason` says why there is none.
"""

from __future__ import annotations

import hashlib
import io
import tempfile
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ..errors import AgentTestError
from .rest import GitHubClient, GitHubError, parsed, repo_path

ARTIFACT = "agenttest-results"      # the composite action's `baseline-artifact` default
RUNS_BACK = 5                       # runs tried before giving up (each may have no artifact, or an expired one)
RUNS_LISTED = 20                    # the newest runs asked for, of which the trusted ones are tried
# Read at call time, so tests can shrink them.
ARCHIVE_LIMIT = 64 * 2**20          # bytes of a downloaded artifact
REPORT_LIMIT = 16 * 2**20           # bytes of report.json once inflated


@dataclass(frozen=True)
class Baseline:
    """The base branch's report.json (None when there is none) and where it came from, or why there is none."""

    report: dict[str, Any] | None
    reason: str
    run_url: str | None = None
    run_number: int | None = None
    sha: str | None = None
    branch: str | None = None
    skipped: list[str] = field(default_factory=list)     # the runs passed over on the way, and why

    @property
    def output(self) -> str:
        """The `baseline` step output: the run the report came from, or why there is none."""
        return self.run_url if self.report is not None and self.run_url else self.reason


class _Skip(Exception):
    """A run that has no usable report: try the one before it."""


class _Repository(BaseModel):
    full_name: str


class _Run(BaseModel):
    id: int
    run_number: int
    event: str
    conclusion: str | None = None
    head_branch: str | None = None
    head_sha: str
    html_url: str
    repository: _Repository
    head_repository: _Repository | None = None     # null for a deleted fork (rest-api-description#1586)


class _Runs(BaseModel):
    workflow_runs: list[_Run]


class _ArtifactRun(BaseModel):
    repository_id: int | None = None
    head_repository_id: int | None = None


class _Artifact(BaseModel):
    id: int
    name: str
    expired: bool
    size_in_bytes: int
    archive_download_url: str
    digest: str | None = None
    workflow_run: _ArtifactRun | None = None


class _Artifacts(BaseModel):
    artifacts: list[_Artifact]


def workflow_file(workflow_ref: str | None) -> str | None:
    """The workflow's file name from `$GITHUB_WORKFLOW_REF` (`OWNER/REPO/.github/workflows/ci.yml@refs/heads/x`),
    which the runs API takes in place of the workflow's id."""
    if not workflow_ref or "/.github/workflows/" not in workflow_ref:
        return None
    return workflow_ref.split("/.github/workflows/", 1)[1].split("@", 1)[0] or None


async def find_baseline(client: GitHubClient, repository: str, workflow: str, branch: str, *,
                        artifact: str = ARTIFACT, current_run: int | None = None,
                        runs_back: int = RUNS_BACK) -> Baseline:
    """The report.json of the last successful push run of `workflow` on `branch` in `repository` (not the run
    `current_run`, this one), from its `artifact`; or why there is none."""
    try:
        runs = await _trusted_runs(client, repository, workflow, branch, current_run)
    except GitHubError as exc:
        return Baseline(None, _why_not_listed(exc, repository, workflow))
    if not runs:
        return Baseline(None, f"no baseline: no successful run of {workflow} on {branch} triggered by a push in "
                              f"{repository} yet")
    skipped = []
    for run in runs[:runs_back]:
        try:
            report = await _report_of(client, repository, run, artifact)
        except _Skip as skip:
            skipped.append(f"run {run.run_number}: {skip}")
            continue
        except GitHubError as exc:
            return Baseline(None, f"no baseline: {_fetch_failure(exc)}", skipped=skipped)
        return Baseline(report, f"run {run.run_number} of {workflow} on {branch} ({run.head_sha[:7]})",
                        run.html_url, run.run_number, run.head_sha, branch, skipped)
    return Baseline(None, f"no baseline: no usable {artifact!r} artifact in the last {len(skipped)} successful "
                          f"runs of {workflow} on {branch} ({'; '.join(skipped)})", skipped=skipped)


async def _trusted_runs(client: GitHubClient, repository: str, workflow: str, branch: str,
                        current_run: int | None) -> list[_Run]:
    """The newest successful push runs of `workflow` on `branch`, this repository's own only. The query asks for
    just those; each is checked again here, for a server that answers otherwise (one was seen to ignore
    `status`)."""
    path = repo_path(repository, "actions", "workflows", workflow, "runs")
    data = await client.get(path, {"branch": branch, "event": "push", "status": "success",
                                   "exclude_pull_requests": "true", "per_page": RUNS_LISTED})

    def ours(repo: _Repository | None) -> bool:
        return repo is not None and repo.full_name.lower() == repository.lower()

    return [run for run in parsed(_Runs, data, f"GET {path}").workflow_runs
            if run.event == "push" and run.conclusion == "success" and run.head_branch == branch
            and ours(run.repository) and ours(run.head_repository) and run.id != current_run]


async def _report_of(client: GitHubClient, repository: str, run: _Run, name: str) -> dict[str, Any]:
    """The checked report.json of `run`'s artifact `name`; _Skip when the run has none that can be used."""
    path = repo_path(repository, "actions", "runs", run.id, "artifacts")
    listed = parsed(_Artifacts, await client.get(path, {"name": name, "per_page": 100}), f"GET {path}").artifacts
    found = [artifact for artifact in listed if artifact.name == name]
    if not found:
        raise _Skip(f"no {name!r} artifact")
    live = [artifact for artifact in found if not artifact.expired]
    if not live:
        raise _Skip("its artifact has expired")
    artifact = live[0]
    origin = artifact.workflow_run
    if origin is not None and origin.head_repository_id != origin.repository_id:
        raise _Skip("its artifact was made from a fork")
    if artifact.size_in_bytes > ARCHIVE_LIMIT:
        raise _Skip(f"its artifact is {artifact.size_in_bytes} bytes, more than the {ARCHIVE_LIMIT} read")
    try:
        archive = await client.download(artifact.archive_download_url, limit=ARCHIVE_LIMIT)
    except GitHubError as exc:
        if exc.kind in ("gone", "too_large"):
            raise _Skip("its artifact has expired" if exc.kind == "gone" else exc.message) from None
        raise
    if artifact.digest and artifact.digest.startswith("sha256:") \
            and hashlib.sha256(archive).hexdigest() != artifact.digest.removeprefix("sha256:"):
        raise _Skip("the artifact downloaded is not the one uploaded (its SHA-256 digest differs)")
    return _checked(report_entry(archive))


def report_entry(archive: bytes, limit: int | None = None) -> bytes:
    """The bytes of the archive's top-level `report.json`, read in memory, at most `limit` (REPORT_LIMIT) of them
    whatever its header says; no other entry is looked at. _Skip when there is none to read."""
    limit = REPORT_LIMIT if limit is None else limit
    try:
        with zipfile.ZipFile(io.BytesIO(archive)) as opened:
            entry = next((info for info in opened.infolist() if info.filename == "report.json"), None)
            if entry is None:
                raise _Skip("the artifact holds no report.json")
            if entry.file_size > limit:
                raise _Skip(f"its report.json is {entry.file_size} bytes, more than the {limit} read")
            with opened.open(entry) as handle:
                content = handle.read(limit + 1)
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError, OSError) as exc:
        raise _Skip(f"the artifact is no readable zip archive ({exc})") from None
    if len(content) > limit:
        raise _Skip(f"its report.json is more than the {limit} bytes read")
    return content


def _checked(content: bytes) -> dict[str, Any]:
    """report.json checked as `--baseline FILE` checks it (every field a comparison reads, not a shard's report);
    through a private temporary file, the one thing `load_baseline` reads."""
    from ..report.reporting import load_baseline  # imported only when a baseline is fetched

    with tempfile.TemporaryDirectory(prefix="agenttest-baseline-") as directory:
        path = Path(directory) / "report.json"
        path.write_bytes(content)
        try:
            return load_baseline(path, "auto")
        except AgentTestError as exc:       # the run is named already: not the file's name again
            why = exc.message.removeprefix("--baseline auto: ")
            raise _Skip(f"its report.json cannot be compared with ({why})") from None


def _why_not_listed(exc: GitHubError, repository: str, workflow: str) -> str:
    if exc.kind == "forbidden":
        return (f"no baseline: GitHub refused to list the workflow's runs ({exc.message}) — give the job "
                "`permissions: actions: read`")
    if exc.kind == "not_found":
        return (f"no baseline: no workflow {workflow} in {repository}, or the token may not see it ({exc.message}) "
                "— on a private repository the job needs `permissions: actions: read`")
    return f"no baseline: {_fetch_failure(exc)}"


def _fetch_failure(exc: GitHubError) -> str:
    if exc.kind == "rate_limited":
        return f"GitHub's rate limit ({exc.message})"
    if exc.kind == "forbidden":
        return f"GitHub refused the artifact ({exc.message}) — give the job `permissions: actions: read`"
    return f"GitHub could not be reached or answered wrongly ({exc.message})"
