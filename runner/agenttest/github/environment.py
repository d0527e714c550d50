"""What the GitHub Actions runner tells a step through its environment: every read of a `GITHUB_*`, `RUNNER_*` or
`INPUT_*` variable goes through here.

Each function takes the environment to read (a test passes its own) and reads the process's by default. An empty
variable counts as unset, as `@actions/core` reads it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DEFAULT_SERVER_URL = "https://github.com"
DEFAULT_API_URL = "https://api.github.com"
EVENT_LIMIT = 16 * 2**20        # bytes of the event payload read ($GITHUB_EVENT_PATH); GitHub's are far smaller


def _variables(environ: Mapping[str, str] | None) -> Mapping[str, str]:
    return os.environ if environ is None else environ


def in_github_actions(environ: Mapping[str, str] | None = None) -> bool:
    """`$GITHUB_ACTIONS`: whether a GitHub Actions runner runs this step."""
    return _variables(environ).get("GITHUB_ACTIONS") == "true"


def _path(name: str, environ: Mapping[str, str] | None) -> Path | None:
    value = _variables(environ).get(name)
    return Path(value) if value else None


def workspace(environ: Mapping[str, str] | None = None) -> Path | None:
    """`$GITHUB_WORKSPACE`: the checkout, where a docker action's step runs."""
    return _path("GITHUB_WORKSPACE", environ)


def output_file(environ: Mapping[str, str] | None = None) -> Path | None:
    """`$GITHUB_OUTPUT`: the file the step's outputs are appended to."""
    return _path("GITHUB_OUTPUT", environ)


def step_summary_file(environ: Mapping[str, str] | None = None) -> Path | None:
    """`$GITHUB_STEP_SUMMARY`: the file the job summary's Markdown is appended to."""
    return _path("GITHUB_STEP_SUMMARY", environ)


def runner_name(environ: Mapping[str, str] | None = None) -> str | None:
    """`$RUNNER_NAME`: the runner that runs the job (junit.xml's hostname)."""
    return _variables(environ).get("RUNNER_NAME") or None


def blob_url(environ: Mapping[str, str] | None = None) -> str | None:
    """`https://github.com/OWNER/REPO/blob/SHA`, the commit under test on GitHub; None outside GitHub Actions."""
    variables = _variables(environ)
    server = variables.get("GITHUB_SERVER_URL", "https://github.com").rstrip("/")
    repository, sha = variables.get("GITHUB_REPOSITORY"), variables.get("GITHUB_SHA")
    return f"{server}/{repository}/blob/{sha}" if repository and sha else None


def api_url(environ: Mapping[str, str] | None = None) -> str:
    """`$GITHUB_API_URL`: where the REST API is (`https://HOST/api/v3` on GitHub Enterprise Server), else
    github.com's."""
    return _variables(environ).get("GITHUB_API_URL") or DEFAULT_API_URL


@dataclass(frozen=True)
class RunFacts:
    """What the runner says about the workflow run a step belongs to; None for what it does not say (outside
    GitHub Actions, all of it). `token` is `$GITHUB_TOKEN`: a secret, never shown."""

    event_name: str | None = None           # $GITHUB_EVENT_NAME: push, pull_request, …
    event_path: Path | None = None          # $GITHUB_EVENT_PATH: the webhook payload that started the run
    repository: str | None = None           # $GITHUB_REPOSITORY: OWNER/NAME
    run_id: str | None = None               # $GITHUB_RUN_ID
    run_attempt: str | None = None          # $GITHUB_RUN_ATTEMPT
    workflow_ref: str | None = None         # $GITHUB_WORKFLOW_REF: OWNER/NAME/.github/workflows/ci.yml@refs/…
    server_url: str = DEFAULT_SERVER_URL    # $GITHUB_SERVER_URL
    api_url: str = DEFAULT_API_URL          # $GITHUB_API_URL
    sha: str | None = None                  # $GITHUB_SHA: the commit checked out (a merge commit on pull_request)
    ref_name: str | None = None             # $GITHUB_REF_NAME: the branch of a push
    token: str | None = None                # $GITHUB_TOKEN

    @property
    def run_url(self) -> str | None:
        """The workflow run's page, when the run is known."""
        if not (self.repository and self.run_id):
            return None
        return f"{self.server_url}/{self.repository}/actions/runs/{self.run_id}"


def run_facts(environ: Mapping[str, str] | None = None) -> RunFacts:
    """The run's facts from its environment."""
    variables = _variables(environ)

    def get(name: str) -> str | None:
        return variables.get(name) or None

    return RunFacts(event_name=get("GITHUB_EVENT_NAME"), event_path=_path("GITHUB_EVENT_PATH", environ),
                    repository=get("GITHUB_REPOSITORY"), run_id=get("GITHUB_RUN_ID"),
                    run_attempt=get("GITHUB_RUN_ATTEMPT"), workflow_ref=get("GITHUB_WORKFLOW_REF"),
                    server_url=(get("GITHUB_SERVER_URL") or DEFAULT_SERVER_URL).rstrip("/"),
                    api_url=api_url(environ), sha=get("GITHUB_SHA"), ref_name=get("GITHUB_REF_NAME"),
                    token=get("GITHUB_TOKEN"))


def read_event(path: Path | None) -> tuple[dict[str, Any], str | None]:
    """The event payload at `path` (`$GITHUB_EVENT_PATH`) and None, or {} and why it could not be read (no path,
    no such file, too large, not a JSON object)."""
    if path is None:
        return {}, "GITHUB_EVENT_PATH is not set"
    try:
        with path.open("rb") as handle:
            data = handle.read(EVENT_LIMIT + 1)
    except OSError as exc:
        return {}, f"cannot read the event payload {path}: {exc.strerror or exc}"
    if len(data) > EVENT_LIMIT:
        return {}, f"the event payload {path} is more than {EVENT_LIMIT} bytes"
    try:
        payload = json.loads(data)
    except (ValueError, RecursionError):
        return {}, f"the event payload {path} is not JSON"
    if not isinstance(payload, dict):
        return {}, f"the event payload {path} is not a JSON object"
    return payload, None


def read_inputs(environ: Mapping[str, str], names: Iterable[str]) -> dict[str, str | None]:
    """`INPUT_<NAME>` for each input, as the runner names them (upper case, spaces to `_`, hyphens kept), trimmed;
    an empty value is unset, as with `@actions/core`."""
    values: dict[str, str | None] = {}
    for name in names:
        raw = environ.get("INPUT_" + name.replace(" ", "_").upper(), "").strip()
        values[name] = raw or None
    return values
