"""The pull-request loop of a run (docs/pull-requests.md): `--baseline auto` and `--comment`, wired in.

The launch path builds a `PullRequestLoop` from the run's options and the runner's environment before the run. With
`--baseline auto` its `find_baseline` goes to the engine (`Reporting.find_baseline`), which calls it once the run is
prepared and checked, before any case runs, so that every artifact holds the comparison: the base branch of a pull
request (`$GITHUB_EVENT_PATH`), the branch a merge queue's group merges into, or the branch of a push — anything
else, or no token or repository, is no baseline, with the reason. After the run, once every artifact is written
and whatever the verdict, `after_run` posts or edits the comment (`--comment`) and writes the `comment` and
`baseline` step outputs.

A failure of GitHub — a fork's read-only token, a missing permission, a 404, a 5xx, a rate limit longer than the run
may wait — is one `::notice::` or `::warning::` naming what and why (a plain line outside GitHub Actions), and the
step output says it: never an exception, never a change of the run's exit code.
"""

from __future__ import annotations

import asyncio
import dataclasses
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..analysis import run_ok
from ..artifacts import COMMENT_FILE
from ..files import write_text
from ..option_table import shard_of
from ..report.reporting import AUTO
from . import environment
from .commands import workflow_command
from .environment import RunFacts, read_event
from .links import SourceLinks
from .log import print_commands, write_line
from .outputs import write_outputs

if TYPE_CHECKING:     # the REST client (aiohttp), the baseline and the comment load only when GitHub is asked
    from ..options import PlainOptions, RunOptions
    from ..report.base import Reporting
    from .baseline import Baseline
    from .comment import CommentOutcome
    from .comment_markdown import CommentLinks

PULL_REQUEST_EVENTS = ("pull_request", "pull_request_target")
MERGE_GROUP = "merge_group"     # a merge queue's run: compared with the branch its group merges into
BUDGET = 120.0      # seconds each of the baseline and the comment may spend on GitHub, waits for rate limits included
NO_TOKEN = "no GitHub token (set GITHUB_TOKEN; the Action passes its github-token input)"
NO_AUTHOR = ("the token is not the workflow's GITHUB_TOKEN, so its comments are its owner's: set comment-author "
             "(--comment-author) to the login it comments as, so that only its comments count as this run's")
# What changed against the baseline, for `--comment auto` (a comment is created only then, or when a case failed).
CHANGES = ("regressions", "fixes", "introduced", "new", "removed", "noise")


@dataclass(frozen=True)
class PullRequest:
    """The pull request of a `pull_request` or `pull_request_target` event, from its payload."""

    number: int
    base_ref: str | None = None
    head_sha: str | None = None
    head_repository: str | None = None      # OWNER/NAME; another than the run's repository for a fork


def pull_request_of(event_name: str | None, payload: Mapping[str, Any]) -> PullRequest | None:
    """The pull request an event payload is about, or None (another event, or a payload without one)."""
    if event_name not in PULL_REQUEST_EVENTS:
        return None
    pull = payload.get("pull_request")
    if not isinstance(pull, Mapping):
        return None
    number = pull.get("number", payload.get("number"))
    if not isinstance(number, int) or isinstance(number, bool) or number <= 0:
        return None
    base = pull.get("base") if isinstance(pull.get("base"), Mapping) else {}
    head = pull.get("head") if isinstance(pull.get("head"), Mapping) else {}
    repo = head.get("repo") if isinstance(head.get("repo"), Mapping) else {}

    def text(value: Any) -> str | None:
        return value if isinstance(value, str) and value else None

    return PullRequest(number, text(base.get("ref")), text(head.get("sha")), text(repo.get("full_name")))


def queued_onto(event_name: str | None, payload: Mapping[str, Any]) -> str | None:
    """The branch a `merge_group` event's group merges into (`merge_group.base_ref`, `refs/heads/main` → `main`),
    or None (another event, or a payload without one)."""
    if event_name != MERGE_GROUP:
        return None
    group = payload.get("merge_group")
    ref = group.get("base_ref") if isinstance(group, Mapping) else None
    if not isinstance(ref, str) or not ref.startswith("refs/heads/") or ref == "refs/heads/":
        return None
    return ref.removeprefix("refs/heads/")


class PullRequestLoop:
    """The baseline fetched and the comment kept for one run; see the module's docstring."""

    def __init__(self, options: RunOptions | PlainOptions, facts: RunFacts, *, cwd: Path, comment_default: str = "off",
                 output_dir: Path | None = None) -> None:
        self.facts = facts
        self.cwd = cwd
        self.output_dir = output_dir        # where comment.md goes: what was (or would have been) posted
        self.mode = options.comment or comment_default
        self.key = options.comment_key
        self.author = options.comment_author
        self.artifact = options.baseline_artifact
        self.shard = options.shard
        self.given = options.baseline
        self.baseline: Baseline | None = None
        self.comment: CommentOutcome | None = None
        self.event_problem: str | None = None
        payload: dict[str, Any] = {}
        if facts.event_name in (*PULL_REQUEST_EVENTS, MERGE_GROUP) and (self.mode != "off" or self.given == AUTO):
            payload, self.event_problem = read_event(facts.event_path)
        self.pull_request = pull_request_of(facts.event_name, payload)
        self.queued_onto = queued_onto(facts.event_name, payload)

    @classmethod
    def from_environment(cls, options: RunOptions | PlainOptions, *, cwd: Path, output_dir: Path,
                         comment_default: str = "off", token: str | None = None) -> PullRequestLoop:
        """The loop of a run or a merge in this workflow run (`run_facts`), `token` (the Action's input) over
        `GITHUB_TOKEN`, the token registered as a secret."""
        from ..secrets import register_secret

        facts = environment.run_facts()
        if token:
            facts = dataclasses.replace(facts, token=token)
        if facts.token:
            register_secret(facts.token)
        return cls(options, facts, cwd=cwd, comment_default=comment_default, output_dir=output_dir)

    @property
    def fetches_baseline(self) -> bool:
        return self.given == AUTO

    # --- the baseline ---------------------------------------------------------------------------------------------

    async def find_baseline(self, reporting: Reporting) -> None:
        """`Reporting.find_baseline`: the base branch's report handed to the run, or why there is none (said once
        in the log)."""
        baseline = await self.fetch_baseline()
        reporting.baseline_source = self.baseline_source()
        if baseline.report is not None:
            reporting.baseline = baseline.report
            reporting.baseline_path = baseline.run_url or AUTO

    async def fetch_baseline(self) -> Baseline:
        """The base branch's report (`self.baseline`), or why there is none: said once in the log."""
        baseline = self.baseline = await self._fetch_baseline()
        if baseline.report is None:
            self._say("notice", f"agenttest: {baseline.reason}")
        else:
            shown = f" — {baseline.run_url}" if baseline.run_url else ""
            write_line(sys.stdout, f"Comparing with the base branch's report: {baseline.reason}{shown}")
        return baseline

    def baseline_source(self) -> dict[str, Any]:
        """report.json's `metadata.baseline`: where the fetched baseline came from, or why there is none."""
        baseline = self.baseline
        assert baseline is not None
        if baseline.report is None:
            return {"found": False, "reason": baseline.reason, "skipped": baseline.skipped}
        return {"found": True, "description": baseline.reason, "run_url": baseline.run_url,
                "run_number": baseline.run_number, "branch": baseline.branch, "sha": baseline.sha,
                "skipped": baseline.skipped}

    def _baseline_branch(self) -> tuple[str | None, str]:
        """The branch whose last report to compare with, or None and why there is none."""
        facts, event = self.facts, self.facts.event_name
        if not facts.repository:
            return None, "no baseline: not a GitHub Actions run (GITHUB_REPOSITORY is not set)"
        if event in PULL_REQUEST_EVENTS:
            if self.pull_request is None or not self.pull_request.base_ref:
                return None, (f"no baseline: {self.event_problem or 'the event payload names no pull request'} "
                              "(its base branch is the one compared with)")
            return self.pull_request.base_ref, ""
        if event == MERGE_GROUP:
            if not self.queued_onto:
                return None, (f"no baseline: {self.event_problem or 'the event payload names no base branch'} "
                              "(a merge queue's group is compared with the branch it merges into)")
            return self.queued_onto, ""
        if event == "push":
            if not facts.ref_name:
                return None, "no baseline: GITHUB_REF_NAME does not name the branch pushed to"
            return facts.ref_name, ""
        return None, (f"no baseline: a {event or 'run without an'} event has no base branch (baseline auto "
                      "compares a pull request with its base branch, a push with its branch's last run)")

    async def _fetch_baseline(self) -> Baseline:
        from .baseline import Baseline, find_baseline, workflow_file
        from .rest import GitHubClient, GitHubError

        branch, why = self._baseline_branch()
        if branch is None:
            return Baseline(None, why)
        workflow = workflow_file(self.facts.workflow_ref)
        if workflow is None:
            return Baseline(None, "no baseline: GITHUB_WORKFLOW_REF does not name the workflow's file, whose runs "
                                  "hold the reports")
        if not self.facts.token:
            return Baseline(None, f"no baseline: {NO_TOKEN}")
        run_id = self.facts.run_id
        try:
            async with GitHubClient(self.facts.token, self.facts.api_url, budget=BUDGET) as client:
                return await find_baseline(client, self.facts.repository or "", workflow, branch,
                                           artifact=self.artifact,
                                           current_run=int(run_id) if run_id and run_id.isdigit() else None)
        except GitHubError as exc:      # a GITHUB_API_URL that is no URL, a repository that is no name
            return Baseline(None, f"no baseline: {exc.message}")

    def baseline_output(self) -> str:
        """The `baseline` step output: the run the baseline came from, the report given, or why there is none."""
        if self.fetches_baseline:
            return self.baseline.output if self.baseline is not None else "no baseline: the run ended before it " \
                                                                          "was fetched"
        if self.given:
            return self.given
        return "no baseline: none was asked for (baseline: auto compares with the base branch)"

    # --- the comment ----------------------------------------------------------------------------------------------

    def after_run(self, report: Mapping[str, Any]) -> None:
        """Once every artifact of a run is written: the comment posted or edited (or why not), then the `comment`
        and `baseline` step outputs when `$GITHUB_OUTPUT` is set. An interrupted run posts none: it must end
        within seconds."""
        reason = "no comment: the run was interrupted" if report.get("interrupted") else self._why_no_comment()
        if reason is None:
            self.comment = asyncio.run(self._publish(report))
            self._tell(self.comment)
        elif reason == f"no comment: {NO_AUTHOR}":      # a setting to fix, not a state of the pull request
            self._say("warning", f"agenttest: {reason}")
        output = self.comment.output if self.comment is not None else reason or ""
        try:
            write_outputs(environment.output_file(), {"comment": output, "baseline": self.baseline_output()})
        except OSError as exc:
            write_line(sys.stderr, f"✗ cannot write the step outputs comment and baseline: {exc.strerror or exc}")

    def _why_no_comment(self) -> str | None:
        """Why this run posts no comment, or None when it tries to."""
        facts = self.facts
        if self.mode == "off":
            return "no comment: comment is off"
        if self.shard and shard_of(self.shard)[1] > 1:
            return (f"no comment: shard {self.shard} holds part of the run (agenttest merge --comment posts the "
                    "whole run's)")
        if self.pull_request is None:
            if facts.event_name in PULL_REQUEST_EVENTS:
                return f"no comment: {self.event_problem or 'the event payload names no pull request'}"
            if facts.event_name is None:
                return "no comment: not a GitHub Actions run of a pull request (GITHUB_EVENT_NAME is not set)"
            return f"no comment: a {facts.event_name} event has no pull request to comment on"
        if not facts.repository:
            return "no comment: GITHUB_REPOSITORY is not set"
        if not facts.token:
            return f"no comment: {NO_TOKEN}"
        if self._author() is None:
            return f"no comment: {NO_AUTHOR}"
        return None

    def _author(self) -> str | None:
        """Whose comments are this run's: `comment-author`, else GitHub Actions' own account for a workflow's token
        (`ghs_…`); None for another token, whose owner agenttest cannot ask about with every kind of token."""
        if self.author:
            return self.author
        from .comment import BOT

        return BOT if (self.facts.token or "").startswith("ghs_") else None

    def _creates(self, report: Mapping[str, Any]) -> bool:
        """Whether a comment is created when there is none yet (an existing one is always edited): `always`;
        `failures` when a case did not pass; `auto` then too, or when something changed against the baseline."""
        if self.mode == "always":
            return True
        failed = not run_ok(report)
        if self.mode == "failures":
            return failed
        comparison = report.get("comparison")
        changed = isinstance(comparison, Mapping) and any(comparison.get(group) for group in CHANGES)
        return failed or changed

    async def _publish(self, report: Mapping[str, Any]) -> CommentOutcome:
        from .comment import CommentOutcome, marker, publish_comment, run_stamp
        from .comment_markdown import render_comment
        from .rest import GitHubClient, GitHubError

        facts, pull = self.facts, self.pull_request
        assert pull is not None and facts.token is not None and facts.repository is not None
        create = self._creates(report)
        body = render_comment(report, self._links(), self.baseline)
        stamp = run_stamp(facts.run_id, facts.run_attempt, (report.get("metadata") or {}).get("started_at"))
        self._keep(f"{marker(self.key, stamp)}\n{body}")
        author = self._author()     # only its comments are ours: a pasted marker makes no comment ours
        assert author is not None
        try:
            async with GitHubClient(facts.token, facts.api_url, budget=BUDGET) as client:
                outcome = await publish_comment(client, facts.repository, pull.number, self.key, body, stamp,
                                                create=create, author=author)
        except GitHubError as exc:      # a GITHUB_API_URL that is no URL
            return CommentOutcome("failed", reason=f"no comment: {exc.message}", kind=exc.kind)
        if outcome.action == "not_created":
            wanted = "no case failed" if self.mode == "failures" else "every case passed and nothing changed"
            return dataclasses.replace(outcome, reason=f"no comment: {wanted} (comment: {self.mode} creates none "
                                                        "then, and edits one that is there)")
        if outcome.action == "failed" and outcome.kind == "forbidden" and self._from_fork():
            return dataclasses.replace(outcome, reason=(
                f"no comment: pull request #{pull.number} comes from the fork {pull.head_repository}, whose "
                "workflow token is read-only — comment from a workflow_run workflow instead (docs/pull-requests.md)"
                f"; GitHub said: {outcome.reason.removeprefix('no comment: ')}"))
        return outcome

    def _keep(self, text: str) -> None:
        """comment.md in the output directory: the comment as it is posted — or as a fork's run, whose token cannot
        post it, hands it to a `workflow_run` workflow that can (docs/pull-requests.md)."""
        if self.output_dir is None:
            return
        try:
            write_text(self.output_dir / COMMENT_FILE, text)
        except OSError as exc:
            write_line(sys.stderr, f"✗ cannot write {self.output_dir / COMMENT_FILE}: {exc.strerror or exc}")

    def _from_fork(self) -> bool:
        pull, repository = self.pull_request, self.facts.repository
        return bool(pull and pull.head_repository and repository
                    and pull.head_repository.lower() != repository.lower())

    def _links(self) -> CommentLinks:
        """Suite lines at the pull request's head commit (the run checked out a merge commit), the run, and its
        artifacts."""
        from .comment_markdown import CommentLinks

        facts, pull = self.facts, self.pull_request
        source = SourceLinks.from_environment(self.cwd)
        head = pull.head_sha if pull is not None else None
        if facts.repository and head:
            source = dataclasses.replace(source, blob_url=f"{facts.server_url}/{facts.repository}/blob/{head}")
        run = facts.run_url
        return CommentLinks(source=source, run=run, artifacts=f"{run}#artifacts" if run else None)

    def _tell(self, outcome: CommentOutcome) -> None:
        """The comment's fate in the log: a line when it was written or left, a notice (a fork, whose token is
        read-only by design) or a warning (anything else) when it could not be."""
        if outcome.action != "failed":
            shown = f" — {outcome.url}" if outcome.url else ""
            write_line(sys.stdout, f"Pull-request comment: {outcome.reason}{shown}")
            return
        self._say("notice" if outcome.kind == "forbidden" and self._from_fork() else "warning",
                  f"agenttest: {outcome.reason}")

    def _say(self, level: str, message: str) -> None:
        """One notice or warning: a workflow command in GitHub Actions (printed once the run's log guard is
        resumed, before the annotations, whose closing line ends the log), a plain line on stderr elsewhere."""
        if environment.in_github_actions():
            print_commands(sys.stdout, [workflow_command(level, message)], first=True)
        else:
            write_line(sys.stderr, f"{level}: {message}")
