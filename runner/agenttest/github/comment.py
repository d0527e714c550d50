"""The one pull-request comment agenttest keeps current.

A comment per pull request and `--comment-key`, found across every page of the pull request's comments by the
hidden marker on its first line, among the comments of GitHub Actions' own account (a marker copied into someone
else's comment is not ours): created once, then edited in place, which notifies nobody again. The marker holds who
wrote the comment — the workflow run, its attempt, when it started — so that a run older than the one that last
wrote it (a re-run of an earlier commit, a slow job) leaves it alone. Two jobs that found no comment and both posted
one converge without a lock: after posting, each looks again, keeps the oldest comment with the newest run's body
and deletes the others ("oldest marker comment wins", buildinternet/uploads#554).

A failure of GitHub is an outcome saying what could not be done and why (`CommentOutcome`, `failed`), never an
exception: the run's exit code does not depend on the comment.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Literal

from pydantic import BaseModel

from .rest import GitHubClient, GitHubError, parsed, repo_path

BOT = "github-actions[bot]"         # the author of what a workflow's GITHUB_TOKEN writes
COMMENT_LIMIT = 65_536              # characters; GitHub refuses a longer body (422 "body is too long")
BYTE_LIMIT = 262_144                # UTF-8 bytes: GitHub refuses a larger body too (infracost/infracost#2119)
MARKER_ROOM = 200                   # characters the marker line and its line break take at most
PAGE_SIZE = 100                     # comments a page (GitHub's most); read at call time, so tests can shrink it
KEY = re.compile(r"[A-Za-z0-9._/-]{1,64}")
_MARKER = re.compile(r"<!-- agenttest:comment key=(?P<key>\S+) run=(?P<run>\d+)\.(?P<attempt>\d+) at=(?P<at>\S*) -->")

Action = Literal["created", "updated", "unchanged", "left", "not_created", "failed"]


@dataclass(frozen=True, order=True)
class RunStamp:
    """Who writes a comment, in the order runs are newer: the workflow run (run ids grow with every run of a
    repository), its attempt (a re-run), then its start time (RFC 3339 in UTC, compared as text). A run outside
    GitHub Actions is run 0: it never overwrites a comment a workflow run wrote."""

    run_id: int = 0
    attempt: int = 0
    at: str = ""


def run_stamp(run_id: str | int | None, attempt: str | int | None, started_at: str | None) -> RunStamp:
    """The stamp of a run from `$GITHUB_RUN_ID`, `$GITHUB_RUN_ATTEMPT` (either may be unset) and the report's
    `started_at`."""
    def number(value: str | int | None) -> int:
        return int(value) if isinstance(value, int) or (isinstance(value, str) and value.isdigit()) else 0

    at = ""
    if started_at:
        try:
            moment = datetime.fromisoformat(started_at.replace("Z", "+00:00"))
        except ValueError:
            moment = None
        if moment is not None and moment.tzinfo is not None:
            at = moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return RunStamp(number(run_id), number(attempt), at)


def comment_key_problem(key: str) -> str | None:
    """Why `key` cannot be a `--comment-key` (None when it can): 1 to 64 letters, digits, `.`, `_`, `/`, `-`."""
    if KEY.fullmatch(key):
        return None
    return f"--comment-key {key!r}: use 1 to 64 letters, digits, '.', '_', '/' or '-'"


def marker(key: str, stamp: RunStamp) -> str:
    """The hidden first line of the comment of `key`, written by the run `stamp`."""
    problem = comment_key_problem(key)
    if problem:
        raise ValueError(problem)
    return f"<!-- agenttest:comment key={key} run={stamp.run_id}.{stamp.attempt} at={stamp.at} -->"


def read_marker(body: str) -> tuple[str, RunStamp] | None:
    """The key and the writer's stamp of a comment's marker (its first line), or None: not one of ours."""
    found = _MARKER.fullmatch(body.split("\n", 1)[0].rstrip("\r"))
    if found is None:
        return None
    return found["key"], RunStamp(int(found["run"]), int(found["attempt"]), found["at"])


@dataclass(frozen=True)
class CommentOutcome:
    """What became of the comment: `action`, the comment's URL when there is one, and why, in words."""

    action: Action
    url: str | None = None
    reason: str = ""
    kind: str | None = None         # with `failed`: the GitHubError kind (`forbidden`, `rate_limited`, …)

    @property
    def output(self) -> str:
        """The `comment` step output: the comment's URL, or why there is none."""
        return self.url if self.url and self.action != "failed" else self.reason


class _User(BaseModel):
    login: str


class _Comment(BaseModel):
    id: int
    html_url: str
    body: str | None = None
    user: _User | None = None


async def publish_comment(client: GitHubClient, repository: str, number: int, key: str, body: str,
                          stamp: RunStamp, *, create: bool = True, author: str | None = BOT) -> CommentOutcome:
    """Make the comment of `key` on pull request `number` show `body` (Markdown, at most COMMENT_LIMIT −
    MARKER_ROOM characters), written by the run `stamp`. `create=False` edits an existing comment but posts
    none. `author`: whose comments count (None: anyone's, for a token other than a workflow's)."""
    text = f"{marker(key, stamp)}\n{body}"
    if len(text) > COMMENT_LIMIT or len(text.encode("utf-8")) > BYTE_LIMIT:
        raise ValueError(f"the comment is {len(text)} characters: render it within the limit")
    path = repo_path(repository, "issues", number, "comments")
    try:
        ours = await _ours(client, path, key, author)
        created = None
        if not ours:
            if not create:
                return CommentOutcome("not_created", reason="no comment yet, and nothing that needs one")
            created = parsed(_Comment, await client.post(path, {"body": text}), f"POST {path}")
            ours = await _ours(client, path, key, author)     # a job racing this one may have posted too
            if all(comment.id != created.id for comment, _ in ours):
                ours = sorted([*ours, (created, stamp)], key=lambda pair: pair[0].id)
        outcome = await _converge(client, repository, ours, text, stamp, created)
    except GitHubError as exc:
        return CommentOutcome("failed", reason=_why(exc, number), kind=exc.kind)
    writer = created.user.login if created is not None and created.user is not None else None
    if writer is not None and author is not None and writer != author:     # the next run would not find it
        return dataclasses.replace(outcome, reason=f"{outcome.reason}, by {writer}, not {author}: set comment-author "
                                                   f"to {writer} so that the next run edits it")
    return outcome


async def _ours(client: GitHubClient, path: str, key: str, author: str | None) -> list[tuple[_Comment, RunStamp]]:
    """The comments of `key` on the pull request, oldest first, with their writers' stamps."""
    found = []
    async for page in client.pages(path, {"per_page": PAGE_SIZE}):
        for item in page:
            comment = parsed(_Comment, item, f"GET {path}")
            if author is not None and (comment.user is None or comment.user.login != author):
                continue
            mark = read_marker(comment.body or "")
            if mark is not None and mark[0] == key:
                found.append((comment, mark[1]))
    return sorted(found, key=lambda pair: pair[0].id)


async def _converge(client: GitHubClient, repository: str, ours: list[tuple[_Comment, RunStamp]], text: str,
                    stamp: RunStamp, created: _Comment | None) -> CommentOutcome:
    """Keep the oldest of `ours` showing the newest run's body (this run's, unless a newer one wrote since), and
    delete the others."""
    (kept, kept_stamp), others = ours[0], ours[1:]
    newest_stamp, newest_body = max(((mark, comment.body or "") for comment, mark in ours), key=lambda pair: pair[0])
    for comment, _ in others:
        await _delete(client, repository, comment.id)
    path = repo_path(repository, "issues", "comments", kept.id)
    if stamp < newest_stamp:
        if kept_stamp < newest_stamp:       # the newest run's body was on a duplicate just deleted
            await client.patch(path, {"body": newest_body})
        return CommentOutcome("left", kept.html_url, f"left as it is: a newer run ({_describe(newest_stamp)}) "
                                                     "wrote it")
    if created is not None and kept.id == created.id:
        return CommentOutcome("created", kept.html_url, "created")
    if kept.body == text:
        return CommentOutcome("unchanged", kept.html_url, "already up to date")
    await client.patch(path, {"body": text})
    return CommentOutcome("updated", kept.html_url, "edited in place" if created is None else
                          "edited in place (another job posted the same comment at the same time)")


async def _delete(client: GitHubClient, repository: str, comment_id: int) -> None:
    """Delete a duplicate; one already gone (another job deleted it) is no failure."""
    try:
        await client.delete(repo_path(repository, "issues", "comments", comment_id))
    except GitHubError as exc:
        if exc.kind != "not_found":
            raise


def _describe(stamp: RunStamp) -> str:
    return f"run {stamp.run_id}" + (f", attempt {stamp.attempt}" if stamp.attempt > 1 else "")


def _why(exc: GitHubError, number: int) -> str:
    """Why the comment could not be written, with what to do about it."""
    if exc.kind == "forbidden":
        return (f"no comment: GitHub refused it ({exc.message}) — a pull request from a fork gets a read-only "
                "token; otherwise give the job `permissions: pull-requests: write`")
    if exc.kind == "unauthorized":
        return f"no comment: GitHub did not accept the token ({exc.message})"
    if exc.kind == "not_found":
        return (f"no comment: pull request #{number} was not found, or the token may not see it ({exc.message})")
    if exc.kind == "rate_limited":
        return f"no comment: GitHub's rate limit ({exc.message})"
    if exc.kind == "invalid":
        return f"no comment: GitHub refused its body ({exc.message})"
    return f"no comment: GitHub could not be reached or answered wrongly ({exc.message})"
