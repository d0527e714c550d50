"""The pull-request loop end to end: the real `agenttest` CLI and `agenttest action`, in subprocesses, against the
GitHub REST emulator on 127.0.0.1 (tests/fakes/github_api.py), with an in-process agent whose replies a file steers.

Each run is a workflow run as the runner describes it (GITHUB_EVENT_NAME, the event payload, GITHUB_RUN_ID, …):
the comment is created once and edited in place, an older run leaves a newer run's comment alone, a fork's
read-only token and GitHub's faults are notices with the exit code unchanged, a duplicate from a race is removed,
and `--baseline auto` fetches the base branch's report (or the branch's last one on a push) before any case runs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from action.test_action import parse_github_output, run_action
from agenttest.github.comment import RunStamp, marker
from fakes.github_api import (
    APP_LOGIN,
    APP_TOKEN,
    BOT,
    FORK,
    PAT,
    PAT_LOGIN,
    REPOSITORY,
    TOKEN,
    FakeGitHub,
    not_found,
    read_only_token,
    too_many_requests,
    zip_of,
)

HEAD_SHA = "c0ffee0000000000000000000000000000000007"
AGENT = """
from pathlib import Path

def respond(request):
    text = request["messages"][-1]["content"]
    broken = Path(__file__).with_name("broken.txt")
    if broken.exists() and text in broken.read_text().split():
        return "nope"
    return "echo: " + text
"""
CASES = [{"id": "steady", "input": "a", "assert": {"type": "contains", "value": "echo: a"}},
         {"id": "flip", "input": "b", "assert": {"type": "contains", "value": "echo: b"}},
         {"id": "always-fails", "input": "c", "assert": {"type": "contains", "value": "never said"}}]


@dataclass
class Finished:
    code: int
    stdout: str
    stderr: str
    root: Path
    output_file: Path
    summary_file: Path

    @property
    def outputs(self) -> dict[str, str]:
        return parse_github_output(self.output_file.read_text())

    @property
    def report(self) -> dict[str, Any]:
        return json.loads((self.root / "agenttest-results" / "report.json").read_text())

    @property
    def log(self) -> str:
        return self.stdout + self.stderr


@dataclass
class Repo:
    """A checkout of octo/agents with its suite, and how the runner describes a workflow run of it."""

    root: Path
    api: FakeGitHub
    event: dict[str, Any] = field(default_factory=dict)

    def break_cases(self, *ids: str) -> None:
        (self.root / "broken.txt").write_text(" ".join({"flip": "b", "steady": "a"}[i] for i in ids))

    def env(self, run_id: int, *, event_name: str = "pull_request", ref_name: str = "feature") -> dict[str, str]:
        event_path = self.root.parent / f"event-{run_id}.json"
        event_path.write_text(json.dumps(self.event))
        files = self.root.parent / f"files-{run_id}"
        files.mkdir(exist_ok=True)
        return {"GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": event_name, "GITHUB_EVENT_PATH": str(event_path),
                "GITHUB_REPOSITORY": REPOSITORY, "GITHUB_RUN_ID": str(run_id), "GITHUB_RUN_ATTEMPT": "1",
                "GITHUB_WORKFLOW_REF": f"{REPOSITORY}/.github/workflows/ci.yml@refs/pull/7/merge",
                "GITHUB_SERVER_URL": "https://github.com", "GITHUB_API_URL": self.api.api_url,
                "GITHUB_SHA": "feedbeef" * 5, "GITHUB_REF_NAME": ref_name, "GITHUB_WORKSPACE": str(self.root),
                "GITHUB_OUTPUT": str(files / "output"), "GITHUB_STEP_SUMMARY": str(files / "summary")}

    def cli(self, run_id: int, *args: str, token: str | None = TOKEN, comment: str | None = "auto",
            **env_options: Any) -> Finished:
        """`agenttest run` in a run of the workflow; `--comment auto` unless `comment` says otherwise (None: the
        command line's default, off)."""
        if comment is not None:
            args = ("--comment", comment, *args)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_", "RUNNER_"))}
        env.update(self.env(run_id, **env_options))
        if token:
            env["GITHUB_TOKEN"] = token
        proc = subprocess.run([sys.executable, "-m", "agenttest", "-i", "evals/suite.jsonl", "--no-cache", *args],
                              cwd=self.root, env=env, capture_output=True, text=True, timeout=120,
                              stdin=subprocess.DEVNULL)
        return self._finished(proc.returncode, proc.stdout, proc.stderr, env)

    def merge(self, run_id: int, *args: str) -> Finished:
        """`agenttest merge ARGS` in a run of the workflow (the job after the shards'), with the workflow's token."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_", "RUNNER_"))}
        env.update(self.env(run_id), GITHUB_TOKEN=TOKEN)
        proc = subprocess.run([sys.executable, "-m", "agenttest", "merge", *args], cwd=self.root, env=env,
                              capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
        return self._finished(proc.returncode, proc.stdout, proc.stderr, env)

    def action(self, run_id: int, inputs: dict[str, str], **env_options: Any) -> Finished:
        env = self.env(run_id, **env_options)
        step = run_action(self.root, {"input": "evals/suite.jsonl", "github-token": TOKEN, **inputs},
                          env={k: v for k, v in env.items() if k not in ("GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY")})
        return Finished(step.code, step.stdout, step.stderr, self.root, step.output_file,
                        next(step.file_commands.glob("step_summary_*")))

    def _finished(self, code: int, stdout: str, stderr: str, env: dict[str, str]) -> Finished:
        return Finished(code, stdout, stderr, self.root, Path(env["GITHUB_OUTPUT"]), Path(env["GITHUB_STEP_SUMMARY"]))


def pull_request_event(head_repository: str = REPOSITORY) -> dict[str, Any]:
    return {"action": "synchronize", "number": 7,
            "pull_request": {"number": 7, "base": {"ref": "main", "sha": "ba5e" * 10},
                             "head": {"ref": "feature", "sha": HEAD_SHA, "repo": {"full_name": head_repository}}}}


@pytest.fixture
def repo(tmp_path: Path, github_api: FakeGitHub) -> Repo:
    root = tmp_path / "agents"
    (root / ".git").mkdir(parents=True)
    (root / "agenttest.yaml").write_text("version: 1\ndefaults:\n  name: echo\nagents:\n  echo:\n"
                                         "    provider: python\n    callable: echo_agent:respond\n")
    (root / "echo_agent.py").write_text(AGENT)
    (root / "evals").mkdir()
    (root / "evals" / "suite.jsonl").write_text("".join(json.dumps(case) + "\n" for case in CASES))
    return Repo(root, github_api, pull_request_event())


def baseline_report(repo: Repo) -> bytes:
    """report.json of a run where only `always-fails` failed: the base branch's, as its artifact holds it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_", "RUNNER_"))}
    proc = subprocess.run([sys.executable, "-m", "agenttest", "-i", "evals/suite.jsonl", "--no-cache",
                           "--output-dir", "../base-results"], cwd=repo.root, env=env, capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    return (repo.root.parent / "base-results" / "report.json").read_bytes()


def notices(text: str, level: str = "notice") -> list[str]:
    return [line for line in text.splitlines() if line.startswith(f"::{level}::")]


# --- the comment ----------------------------------------------------------------------------------------------------


def test_the_first_push_posts_one_comment_and_the_second_edits_it_in_place(repo: Repo) -> None:
    first = repo.cli(100)
    assert first.code == 1, first.log
    assert [r.method for r in repo.api.writes()] == ["POST"]
    [comment] = repo.api.comments_on(7)
    assert comment.body.startswith("<!-- agenttest:comment key=default run=100.1 at=")
    assert "❌ agenttest: 1 failed — 2 of 3 passed" in comment.body
    assert f"https://github.com/{REPOSITORY}/blob/{HEAD_SHA}/evals/suite.jsonl#L3" in comment.body
    assert f"[Workflow run](https://github.com/{REPOSITORY}/actions/runs/100)" in comment.body
    url = f"https://github.com/{REPOSITORY}/pull/7#issuecomment-{comment.id}"
    assert first.outputs["comment"] == url
    assert f"Pull-request comment: created — {url}" in first.stdout
    assert first.outputs["failed"] == "1"        # the run's own outputs are still there

    repo.break_cases("flip")
    second = repo.cli(101)
    assert second.code == 1, second.log
    assert [r.method for r in repo.api.writes()] == ["POST", "PATCH"]
    assert repo.api.writes()[1].path.endswith(f"/issues/comments/{comment.id}")
    [edited] = repo.api.comments_on(7)
    assert edited.id == comment.id and edited.body.startswith("<!-- agenttest:comment key=default run=101.1 ")
    assert "2 failed — 1 of 3 passed" in edited.body
    assert second.outputs["comment"] == url
    assert TOKEN not in json.dumps(second.report) + (repo.root / "agenttest-results" / "summary.md").read_text()


def test_a_run_older_than_the_one_that_wrote_the_comment_leaves_it_alone(repo: Repo) -> None:
    newer = repo.cli(205)
    assert newer.code == 1 and [r.method for r in repo.api.writes()] == ["POST"], newer.log
    before = repo.api.comments_on(7)[0].body
    repo.break_cases("flip")
    older = repo.cli(204)               # a slow job of an earlier commit, finishing last
    assert older.code == 1, older.log
    assert [r.method for r in repo.api.writes()] == ["POST"]
    assert repo.api.comments_on(7)[0].body == before
    assert "left as it is: a newer run (run 205) wrote it" in older.stdout
    assert older.outputs["comment"].endswith(f"#issuecomment-{repo.api.comments_on(7)[0].id}")


def test_comment_keys_keep_one_comment_each(repo: Repo) -> None:
    assert repo.cli(300, "--comment-key", "suite-a").code == 1
    assert repo.cli(301, "--comment-key", "suite-b").code == 1
    assert repo.cli(302, "--comment-key", "suite-a").code == 1
    assert [r.method for r in repo.api.writes()] == ["POST", "POST", "PATCH"]
    keys = [c.body.split(" ", 3)[2] for c in repo.api.comments_on(7)]
    assert keys == ["key=suite-a", "key=suite-b"]


def test_a_duplicate_from_a_race_is_removed(repo: Repo) -> None:
    other = "<!-- agenttest:comment key=default run=99.1 at=2027-01-15T07:00:00Z -->\nanother job's results"
    repo.api.race.append(other)         # lands between our look for a comment and our post
    step = repo.cli(100)
    assert step.code == 1, step.log
    assert [r.method for r in repo.api.writes()] == ["POST", "DELETE", "PATCH"]
    [kept] = repo.api.comments_on(7)
    assert kept.body.startswith("<!-- agenttest:comment key=default run=100.1 ")
    assert step.outputs["comment"].endswith(f"#issuecomment-{kept.id}")


@pytest.mark.parametrize("mode", ["auto", "failures"])
def test_a_green_run_creates_no_comment_but_edits_one_that_is_there(repo: Repo, mode: str) -> None:
    (repo.root / "evals" / "suite.jsonl").write_text("".join(json.dumps(case) + "\n" for case in CASES[:2]))
    green = repo.cli(400, comment=mode)
    assert green.code == 0, green.log
    assert repo.api.writes() == [] and repo.api.calls("GET", "/issues/7/comments")
    assert green.outputs["comment"].startswith("no comment: ")
    repo.break_cases("flip")
    assert repo.cli(401, comment=mode).code == 1
    (repo.root / "broken.txt").unlink()
    fixed = repo.cli(402, comment=mode)
    assert fixed.code == 0
    assert [r.method for r in repo.api.writes()] == ["POST", "PATCH"]
    assert "✅ agenttest: all 2 cases passed" in repo.api.comments_on(7)[0].body


def test_comment_off_and_events_without_a_pull_request_ask_github_nothing(repo: Repo) -> None:
    off = repo.cli(500, comment=None)           # the command line's default: off
    assert off.code == 1
    push = repo.cli(501, comment="always", event_name="push")
    assert push.code == 1
    assert repo.api.requests == []
    assert (off.outputs["comment"], push.outputs["comment"]) == (
        "no comment: comment is off", "no comment: a push event has no pull request to comment on")


# --- faults ---------------------------------------------------------------------------------------------------------


def test_a_forks_read_only_token_is_a_notice_and_the_exit_code_stays(repo: Repo) -> None:
    repo.event = pull_request_event(FORK)
    repo.api.inject(read_only_token())
    step = repo.action(600, {"comment": "always"})
    assert step.code == 1 and "Traceback" not in step.log, step.log
    [notice] = notices(step.stdout)
    assert notice.startswith(f"::notice::agenttest: no comment: pull request #7 comes from the fork {FORK}, "
                             "whose workflow token is read-only")
    assert "Resource not accessible by integration" in notice
    assert step.outputs["comment"].startswith(f"no comment: pull request #7 comes from the fork {FORK}")
    assert [r.method for r in repo.api.writes()] == ["POST"] and repo.api.comments_on(7) == []
    kept = (repo.root / "agenttest-results" / "comment.md").read_text()        # for a workflow_run to post
    assert kept == repo.api.writes()[0].body["body"]
    assert kept.startswith("<!-- agenttest:comment key=default run=600.1 at=")
    assert step.stdout.splitlines()[-1].startswith("::error::agenttest: 1 failed of 3 cases")
    without = repo.action(601, {"comment": "off"})
    assert without.code == step.code


@pytest.mark.parametrize(("fault", "said"), [
    (not_found(methods=("GET",)), "no comment: pull request #7 was not found, or the token may not see it"),
    (too_many_requests(retry_after=3600, times=0), "no comment: GitHub's rate limit"),
])
def test_github_failing_is_a_warning_and_the_exit_code_stays(repo: Repo, fault: Any, said: str) -> None:
    repo.api.inject(fault)
    step = repo.action(700, {})         # the action's default: comment auto
    assert step.code == 1 and "Traceback" not in step.log, step.log
    [warning] = notices(step.stdout, "warning")
    assert warning.startswith(f"::warning::agenttest: {said}")
    assert step.outputs["comment"].startswith(said)
    assert step.stdout.splitlines()[-1].startswith("::error::agenttest: 1 failed of 3 cases")


def test_no_token_is_said_and_nothing_is_asked(repo: Repo) -> None:
    step = repo.cli(800, "--baseline", "auto", token=None, comment="always")
    assert step.code == 1 and repo.api.requests == []
    said = "no GitHub token (set GITHUB_TOKEN; the Action passes its github-token input)"
    assert (step.outputs["comment"], step.outputs["baseline"]) == (f"no comment: {said}", f"no baseline: {said}")


# --- whose comments are ours ----------------------------------------------------------------------------------------


def forged_comment(repo: Repo) -> int:
    """Someone pastes the marker into a comment of their own, stamped as a much newer run, with a green verdict."""
    return repo.api.add_comment(f"{marker('default', RunStamp(999999, 1, ''))}\n## ✅ agenttest: all passed",
                                user="mallory").id


def test_with_another_token_only_the_comment_authors_comments_are_ours(repo: Repo) -> None:
    forged = forged_comment(repo)
    first = repo.cli(100, "--comment-author", PAT_LOGIN, token=PAT)
    assert first.code == 1, first.log
    assert [r.method for r in repo.api.writes()] == ["POST"]        # the forged one neither edited nor deleted
    mallorys, ours = repo.api.comments_on(7)
    assert mallorys.id == forged and mallorys.body.endswith("all passed") and ours.user == PAT_LOGIN
    assert "❌ agenttest: 1 failed — 2 of 3 passed" in ours.body and "all passed" not in ours.body
    second = repo.cli(101, "--comment-author", PAT_LOGIN, token=PAT)
    assert [r.method for r in repo.api.writes()] == ["POST", "PATCH"], second.log
    assert repo.api.writes()[1].path.endswith(f"/issues/comments/{ours.id}")
    assert repo.api.comments[forged].body.endswith("all passed")
    # Without the author, the pasted marker would have been taken for a newer run's comment: the test can fail.
    assert "left as it is" not in first.stdout + second.stdout


def test_another_token_without_comment_author_posts_nothing_and_says_why(repo: Repo) -> None:
    forged_comment(repo)
    step = repo.cli(100, token=PAT)
    assert step.code == 1 and repo.api.requests == [], step.log
    said = ("no comment: the token is not the workflow's GITHUB_TOKEN, so its comments are its owner's: set "
            "comment-author (--comment-author) to the login it comments as")
    assert step.outputs["comment"].startswith(said)
    assert [line for line in step.stdout.splitlines() if line.startswith(f"::warning::agenttest: {said}")]


def test_the_action_passes_comment_author(repo: Repo) -> None:
    forged = forged_comment(repo)
    step = repo.action(100, {"github-token": PAT, "comment-author": PAT_LOGIN})
    assert step.code == 1, step.log
    assert [r.method for r in repo.api.writes()] == ["POST"]
    assert [c.user for c in repo.api.comments_on(7)] == ["mallory", PAT_LOGIN]
    assert repo.api.comments[forged].body.endswith("all passed")


def test_an_apps_token_is_told_whom_it_writes_as(repo: Repo) -> None:
    first = repo.cli(100, token=APP_TOKEN)        # `ghs_` as the workflow's, but the app's bot writes
    assert first.code == 1 and [r.method for r in repo.api.writes()] == ["POST"], first.log
    [comment] = repo.api.comments_on(7)
    assert comment.user == APP_LOGIN != BOT
    assert (f"Pull-request comment: created, by {APP_LOGIN}, not {BOT}: set comment-author to {APP_LOGIN} so that "
            "the next run edits it") in first.stdout
    second = repo.cli(101, "--comment-author", APP_LOGIN, token=APP_TOKEN)
    assert [r.method for r in repo.api.writes()] == ["POST", "PATCH"], second.log
    assert f"Pull-request comment: edited in place — {second.outputs['comment']}" in second.stdout


def test_a_bad_comment_author_is_a_usage_error(repo: Repo) -> None:
    step = repo.cli(900, "--comment-author", "two words")
    assert step.code == 2 and "Traceback" not in step.log
    assert "--comment-author: 'two words': a GitHub login" in step.stderr
    assert repo.api.requests == []


def test_a_bad_comment_key_is_a_usage_error(repo: Repo) -> None:
    step = repo.cli(900, "--comment-key", "two words")
    assert step.code == 2 and "Traceback" not in step.log
    assert "--comment-key: 'two words': use 1 to 64 letters, digits, '.', '_', '/' or '-'" in step.stderr
    assert repo.api.requests == []


# --- baseline: auto -------------------------------------------------------------------------------------------------


def test_no_baseline_found_is_a_notice_the_output_the_summary_and_the_comment(repo: Repo) -> None:
    repo.api.add_run(branch="main")             # a successful run of main, whose artifact is missing
    step = repo.action(1000, {"baseline": "auto", "fail-on": "regression"})
    assert step.code == 1, step.log
    assert "⚠ no baseline was found: failing on any failure instead" in step.stderr    # not "needs --baseline"
    reason = ("no baseline: no usable 'agenttest-results' artifact in the last 1 successful runs of ci.yml on main "
              "(run 1: no 'agenttest-results' artifact)")
    assert notices(step.stdout) == [f"::notice::agenttest: {reason}"]
    assert step.outputs["baseline"] == reason
    assert "comparison" not in step.report
    assert step.report["metadata"]["baseline"] == {"found": False, "reason": reason,
                                                   "skipped": ["run 1: no 'agenttest-results' artifact"]}
    said = "**No comparison with the base branch:** no baseline: no usable 'agenttest-results' artifact"
    assert said in step.summary_file.read_text()
    assert said in (repo.root / "agenttest-results" / "summary.md").read_text()
    assert repo.api.comments_on(7)[0].body.count(said) == 1     # once, as in the summary


def test_baseline_auto_compares_with_the_base_branchs_report_before_any_case_runs(repo: Repo) -> None:
    base = baseline_report(repo)
    main = repo.api.add_run(branch="main")
    repo.api.add_artifact(main, zip_of({"report.json": base, "junit.xml": "<testsuites/>"}))
    repo.api.add_run(branch="main", sha="f0f0" * 10, fork=True)     # a fork's run, newer: never the baseline
    repo.break_cases("flip")
    step = repo.cli(1100, "--baseline", "auto", "--fail-on", "regression")
    assert step.code == 1, step.log
    comparison = step.report["comparison"]
    assert [entry["id"] for entry in comparison["regressions"]] == ["flip"]
    run_url = f"https://github.com/{REPOSITORY}/actions/runs/{main.id}"
    assert comparison["baseline"]["path"] == run_url
    assert step.report["metadata"]["baseline"]["found"] is True
    assert (step.outputs["baseline"], step.outputs["regressions"]) == (run_url, "1")
    assert f"Comparing with the base branch's report: run 1 of ci.yml on main ({main.sha[:7]}) — {run_url}" \
        in step.stdout
    [download] = repo.api.calls("GET", "/actions/artifacts/11/zip")
    assert download.headers["Authorization"] == f"Bearer {TOKEN}"
    [blob] = repo.api.calls("GET", server="storage")
    assert "Authorization" not in blob.headers
    summary = (repo.root / "agenttest-results" / "summary.md").read_text()
    assert f"Baseline: [run 1 of ci.yml on main ({main.sha[:7]})]({run_url})" in summary
    body = repo.api.comments_on(7)[0].body
    assert body.index("1 regression") < body.index("### Failures")
    assert f"**Baseline** [run 1]({run_url}) on `main`" in body
    assert notices(step.stdout) == []


def test_on_a_push_the_baseline_is_the_branchs_last_run(repo: Repo) -> None:
    base = baseline_report(repo)
    main = repo.api.add_run(branch="main")
    repo.api.add_artifact(main, zip_of({"report.json": b"{}"}))     # would not even load: not this one
    feature = repo.api.add_run(branch="feature")
    repo.api.add_artifact(feature, zip_of({"report.json": base}))
    repo.break_cases("flip")
    step = repo.cli(1200, "--baseline", "auto", event_name="push", ref_name="feature")
    assert step.code == 1, step.log
    assert step.report["metadata"]["baseline"]["branch"] == "feature"
    assert [entry["id"] for entry in step.report["comparison"]["regressions"]] == ["flip"]
    [listed] = repo.api.calls("GET", "/actions/workflows/ci.yml/runs")
    assert (listed.query["branch"], listed.query["event"]) == ("feature", "push")
    assert repo.api.calls("GET", f"/actions/runs/{main.id}/artifacts") == []
    assert step.outputs["comment"] == "no comment: a push event has no pull request to comment on"


# --- shards ---------------------------------------------------------------------------------------------------------


def test_shards_post_no_comment_and_merge_posts_the_whole_runs_compared_with_the_base_branch(repo: Repo) -> None:
    main = repo.api.add_run(branch="main")
    repo.api.add_artifact(main, zip_of({"report.json": baseline_report(repo)}), name="merged-results")
    repo.break_cases("flip")
    for k in (1, 2):
        shard = repo.cli(1400, "--shard", f"{k}/2", "--output-dir", f"shard-{k}", "--baseline", "auto",
                         "--fail-on", "never")
        assert shard.code == 0, shard.log
        assert shard.outputs["comment"] == (f"no comment: shard {k}/2 holds part of the run (agenttest merge "
                                            "--comment posts the whole run's)")
    assert repo.api.writes() == []              # a shard's slice never overwrites the pull request's comment

    merged = repo.merge(1401, "shard-1/report.json", "shard-2/report.json", "--output-dir", "agenttest-results",
                        "--baseline", "auto", "--baseline-artifact", "merged-results", "--comment", "auto",
                        "--fail-on", "regression")
    assert merged.code == 1, merged.log
    assert [entry["id"] for entry in merged.report["comparison"]["regressions"]] == ["flip"]
    assert merged.report["metadata"]["baseline"]["found"] is True
    [comment] = repo.api.comments_on(7)
    assert comment.body.startswith("<!-- agenttest:comment key=default run=1401.1 at=")
    assert "2 failed — 1 of 3 passed" in comment.body and "1 regression" in comment.body
    assert merged.outputs["comment"] == f"https://github.com/{REPOSITORY}/pull/7#issuecomment-{comment.id}"
    assert merged.outputs["baseline"] == merged.report["metadata"]["baseline"]["run_url"]
    assert "Compared with https://github.com/" in merged.stdout
    assert TOKEN not in (repo.root / "agenttest-results" / "comment.md").read_text()


def test_merge_without_a_baseline_to_fetch_says_why_and_a_bad_comment_key_is_a_usage_error(repo: Repo) -> None:
    for k in (1, 2):
        assert repo.cli(1500, "--shard", f"{k}/2", "--output-dir", f"shard-{k}", comment=None).code in (0, 1)
    shards = ("shard-1/report.json", "shard-2/report.json")
    bad = repo.merge(1501, *shards, "--comment", "auto", "--comment-key", "two words")
    assert bad.code == 2 and "Traceback" not in bad.log
    assert "--comment-key: 'two words': use 1 to 64 letters, digits, '.', '_', '/' or '-'" in bad.stderr
    merged = repo.merge(1502, *shards, "--baseline", "auto", "--comment", "always", "--fail-on", "regression")
    assert merged.code == 1, merged.log
    assert "⚠ no baseline was found: failing on any failure instead" in merged.stderr
    assert merged.report["metadata"]["baseline"]["found"] is False
    [comment] = repo.api.comments_on(7)
    assert comment.body.count("**No comparison with the base branch:** no baseline: no workflow ci.yml") == 1


def test_a_merge_queues_group_is_compared_with_the_branch_it_merges_into(repo: Repo) -> None:
    main = repo.api.add_run(branch="main")
    repo.api.add_artifact(main, zip_of({"report.json": baseline_report(repo)}))
    repo.break_cases("flip")
    repo.event = {"merge_group": {"base_ref": "refs/heads/main", "base_sha": "ba5e" * 10,
                                  "head_ref": "refs/heads/gh-readonly-queue/main/pr-7-c0ffee", "head_sha": HEAD_SHA}}
    step = repo.cli(1600, "--baseline", "auto", "--fail-on", "regression", event_name="merge_group",
                    ref_name="gh-readonly-queue/main/pr-7-c0ffee")
    assert step.code == 1, step.log
    assert step.report["metadata"]["baseline"]["branch"] == "main"
    assert [entry["id"] for entry in step.report["comparison"]["regressions"]] == ["flip"]
    [listed] = repo.api.calls("GET", "/actions/workflows/ci.yml/runs")
    assert (listed.query["branch"], listed.query["event"]) == ("main", "push")
    assert step.outputs["comment"] == "no comment: a merge_group event has no pull request to comment on"


def test_github_enterprise_through_its_api_url(tmp_path: Path) -> None:
    with FakeGitHub(prefix="/api/v3", server_url="https://ghe.example.com") as api:
        root = tmp_path / "agents"
        (root / ".git").mkdir(parents=True)
        (root / "agenttest.yaml").write_text("version: 1\ndefaults:\n  name: echo\nagents:\n  echo:\n"
                                             "    provider: python\n    callable: echo_agent:respond\n")
        (root / "echo_agent.py").write_text(AGENT)
        (root / "evals").mkdir()
        (root / "evals" / "suite.jsonl").write_text("".join(json.dumps(case) + "\n" for case in CASES))
        repo = Repo(root, api, pull_request_event())
        step = repo.cli(1300, comment="always")
        assert step.code == 1, step.log
        assert [r.path for r in api.writes()] == [f"/api/v3/repos/{REPOSITORY}/issues/7/comments"]
        assert step.outputs["comment"].startswith(f"https://ghe.example.com/{REPOSITORY}/pull/7#issuecomment-")
    assert not api.contract_problems
