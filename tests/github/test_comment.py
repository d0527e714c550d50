"""The one pull-request comment, against the emulator: created once, edited in place, found on any page, left alone
by an older run, one kept when two jobs race, and every fault of GitHub an outcome saying why."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from agenttest.github import comment
from agenttest.github.comment import (
    BOT,
    COMMENT_LIMIT,
    MARKER_ROOM,
    CommentOutcome,
    RunStamp,
    comment_key_problem,
    marker,
    publish_comment,
    read_marker,
    run_stamp,
)
from agenttest.github.rest import GitHubClient
from fakes.github_api import (
    REPOSITORY,
    TOKEN,
    FakeGitHub,
    body_too_long,
    not_found,
    read_only_token,
    secondary_rate_limit,
    server_error,
    too_many_requests,
)

from .conftest import Waits

Client = Callable[..., GitHubClient]
FIRST = RunStamp(101, 1, "2027-01-15T08:00:00Z")
SECOND = RunStamp(102, 1, "2027-01-15T09:00:00Z")


def publish(client: GitHubClient, body: str, stamp: RunStamp, key: str = "default", **options: object) \
        -> CommentOutcome:
    async def run() -> CommentOutcome:
        async with client:
            return await publish_comment(client, REPOSITORY, 7, key, body, stamp, **options)  # type: ignore[arg-type]
    return asyncio.run(run())


def bodies(github_api: FakeGitHub) -> list[str]:
    return [c.body for c in github_api.comments_on()]


def test_the_first_push_posts_one_comment(github_api: FakeGitHub, client: Client) -> None:
    outcome = publish(client(), "## all passed", FIRST)
    (posted,) = github_api.comments_on()
    assert outcome == CommentOutcome("created", f"https://github.com/{REPOSITORY}/pull/7#issuecomment-{posted.id}",
                                     "created")
    assert posted.user == BOT
    assert posted.body == "<!-- agenttest:comment key=default run=101.1 at=2027-01-15T08:00:00Z -->\n## all passed"
    assert [(r.method, r.path) for r in github_api.writes()] == [("POST", f"/repos/{REPOSITORY}/issues/7/comments")]
    assert outcome.output == outcome.url


def test_the_next_push_edits_the_same_comment(github_api: FakeGitHub, client: Client) -> None:
    first = publish(client(), "## 1 failed", FIRST)
    second = publish(client(), "## all passed", SECOND)
    assert (second.action, second.url) == ("updated", first.url)
    assert bodies(github_api) == [f"{marker('default', SECOND)}\n## all passed"]
    assert [r.method for r in github_api.writes()] == ["POST", "PATCH"]
    assert github_api.writes()[1].path == f"/repos/{REPOSITORY}/issues/comments/{github_api.comments_on()[0].id}"


def test_the_same_body_again_writes_nothing(github_api: FakeGitHub, client: Client) -> None:
    publish(client(), "## all passed", FIRST)
    assert publish(client(), "## all passed", FIRST).action == "unchanged"
    assert [r.method for r in github_api.writes()] == ["POST"]


def test_an_older_run_leaves_a_newer_runs_comment_alone(github_api: FakeGitHub, client: Client) -> None:
    publish(client(), "## from the newer commit", SECOND)
    outcome = publish(client(), "## from the older commit", FIRST)
    assert outcome.action == "left" and outcome.reason == "left as it is: a newer run (run 102) wrote it"
    assert bodies(github_api) == [f"{marker('default', SECOND)}\n## from the newer commit"]
    assert [r.method for r in github_api.writes()] == ["POST"]


def test_a_rerun_of_the_same_run_is_newer(github_api: FakeGitHub, client: Client) -> None:
    publish(client(), "## attempt 1", FIRST)
    rerun = RunStamp(101, 2, "2027-01-15T10:00:00Z")
    assert publish(client(), "## attempt 2", rerun).action == "updated"
    assert bodies(github_api) == [f"{marker('default', rerun)}\n## attempt 2"]


@pytest.mark.parametrize(("others", "page_size"), [(34, 30), (134, 100)])
def test_the_comment_is_found_on_a_later_page(github_api: FakeGitHub, client: Client,
                                              monkeypatch: pytest.MonkeyPatch, others: int, page_size: int) -> None:
    """A pull request of 35 comments puts ours on page 2 at GitHub's default of 30 a page; agenttest asks for 100,
    so it takes 135."""
    monkeypatch.setattr(comment, "PAGE_SIZE", page_size)
    for number in range(others):
        github_api.add_comment(f"review {number}", user="octocat")
    ours = github_api.add_comment(f"{marker('default', FIRST)}\n## 1 failed")
    assert publish(client(), "## all passed", SECOND).action == "updated"
    assert github_api.comments[ours.id].body.endswith("## all passed") and len(github_api.comments) == others + 1
    assert [r.query.get("page") for r in github_api.calls("GET")] == [None, "2"]
    assert [r.method for r in github_api.writes()] == ["PATCH"]


def test_two_racing_jobs_leave_one_comment_with_the_newest_runs_body(github_api: FakeGitHub,
                                                                      client: Client) -> None:
    """Another job (an older run) posted between this job's look and its post: both comments exist; the older
    comment is kept, shows this (newer) run's body, and this job's duplicate is deleted."""
    github_api.race = [f"{marker('default', FIRST)}\n## from the older commit"]
    outcome = publish(client(), "## from the newer commit", SECOND)
    (kept,) = github_api.comments_on()
    assert kept.body == f"{marker('default', SECOND)}\n## from the newer commit"
    assert outcome.action == "updated" and outcome.url.endswith(f"#issuecomment-{kept.id}")
    assert outcome.reason == "edited in place (another job posted the same comment at the same time)"
    assert [r.method for r in github_api.writes()] == ["POST", "DELETE", "PATCH"]


def test_a_racing_newer_run_wins_the_race(github_api: FakeGitHub, client: Client) -> None:
    github_api.race = [f"{marker('default', SECOND)}\n## from the newer commit"]
    outcome = publish(client(), "## from the older commit", FIRST)
    assert outcome.action == "left"
    assert bodies(github_api) == [f"{marker('default', SECOND)}\n## from the newer commit"]
    assert [r.method for r in github_api.writes()] == ["POST", "DELETE"]


def test_duplicates_left_by_an_earlier_race_are_folded_into_the_oldest(github_api: FakeGitHub,
                                                                      client: Client) -> None:
    oldest = github_api.add_comment(f"{marker('default', RunStamp(99, 1, ''))}\n## stale")
    github_api.add_comment(f"{marker('default', RunStamp(103, 1, ''))}\n## newest")
    outcome = publish(client(), "## from run 102", SECOND)
    assert outcome.action == "left"
    assert bodies(github_api) == [f"{marker('default', RunStamp(103, 1, ''))}\n## newest"]
    assert github_api.comments_on()[0].id == oldest.id


def test_a_marker_in_someone_elses_comment_is_not_ours(github_api: FakeGitHub, client: Client) -> None:
    forged = github_api.add_comment(f"{marker('default', RunStamp(999999, 1, ''))}\nall green!", user="mallory")
    assert publish(client(), "## 3 failed", FIRST).action == "created"
    assert github_api.comments[forged.id].body.endswith("all green!") and len(github_api.comments_on()) == 2


def test_each_key_keeps_its_own_comment(github_api: FakeGitHub, client: Client) -> None:
    publish(client(), "## suite a", FIRST, key="suite-a")
    publish(client(), "## suite b", FIRST, key="suite-b")
    publish(client(), "## suite a again", SECOND, key="suite-a")
    assert bodies(github_api) == [f"{marker('suite-a', SECOND)}\n## suite a again",
                                  f"{marker('suite-b', FIRST)}\n## suite b"]


def test_without_create_an_existing_comment_is_edited_and_none_posted(github_api: FakeGitHub,
                                                                        client: Client) -> None:
    assert publish(client(), "## all passed", FIRST, create=False) == \
        CommentOutcome("not_created", reason="no comment yet, and nothing that needs one")
    assert github_api.writes() == []
    publish(client(), "## 1 failed", FIRST)
    assert publish(client(), "## all passed", SECOND, create=False).action == "updated"


def test_a_forks_read_only_token_is_an_outcome_saying_why(github_api: FakeGitHub, client: Client) -> None:
    github_api.inject(read_only_token())
    outcome = publish(client(), "## all passed", FIRST)
    assert (outcome.action, outcome.kind, outcome.url) == ("failed", "forbidden", None)
    assert outcome.output == outcome.reason == (
        f"no comment: GitHub refused it (POST /repos/{REPOSITORY}/issues/7/comments: HTTP 403 (Resource not "
        "accessible by integration)) — a pull request from a fork gets a read-only token; otherwise give the job "
        "`permissions: pull-requests: write`")
    assert TOKEN not in outcome.reason and github_api.comments_on() == []


@pytest.mark.parametrize(("fault", "kind", "said"), [
    (not_found(), "not_found", "no comment: pull request #7 was not found, or the token may not see it"),
    (server_error(502, times=0), "server", "no comment: GitHub could not be reached or answered wrongly"),
    (body_too_long(), "invalid", "no comment: GitHub refused its body (POST /repos/octo/agents/issues/7/comments: "
                                 "HTTP 422 (Validation Failed: body is too long (maximum is 65536 characters)))"),
    (secondary_rate_limit(retry_after=3600), "rate_limited", "no comment: GitHub's rate limit"),
])
def test_each_fault_of_github_is_an_outcome_saying_why(github_api: FakeGitHub, client: Client, fault: object,
                                                       kind: str, said: str) -> None:
    github_api.inject(fault)  # type: ignore[arg-type]
    outcome = publish(client(budget=120), "## all passed", FIRST)
    assert (outcome.action, outcome.kind) == ("failed", kind) and outcome.reason.startswith(said)


def test_a_rate_limit_within_the_deadline_is_waited_out(github_api: FakeGitHub, client: Client,
                                                        waits: Waits) -> None:
    github_api.inject(too_many_requests(retry_after=5))
    assert publish(client(), "## all passed", FIRST).action == "created"
    assert waits.seconds == [5.0] and len(github_api.comments_on()) == 1


def test_the_marker_and_the_stamp() -> None:
    assert read_marker(f"{marker('suite/a-1.x', FIRST)}\r\nbody") == ("suite/a-1.x", FIRST)
    assert read_marker("## agenttest\n<!-- agenttest:comment key=default run=1.1 at= -->") is None
    assert read_marker("") is None
    assert run_stamp("9001", "2", "2027-01-15T09:00:00+01:00") == RunStamp(9001, 2, "2027-01-15T08:00:00Z")
    assert run_stamp(None, None, "not a time") == RunStamp(0, 0, "")
    assert RunStamp(0, 0, "2030-01-01T00:00:00Z") < RunStamp(1, 1, "2027-01-01T00:00:00Z")    # local < any CI run
    assert comment_key_problem("suite-a") is None
    assert comment_key_problem("x --> <script>") == ("--comment-key 'x --> <script>': use 1 to 64 letters, digits, "
                                                     "'.', '_', '/' or '-'")
    with pytest.raises(ValueError):
        marker("a b", FIRST)
    assert len(marker("k" * 64, RunStamp(10**12, 999, "2027-01-15T08:00:00Z"))) + 1 < MARKER_ROOM
    assert COMMENT_LIMIT == 65_536
