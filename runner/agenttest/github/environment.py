"""What the GitHub Actions runner tells a step through its environment: every read of a `GITHUB_*`, `RUNNER_*` or
`INPUT_*` variable goes through here.

Each function takes the environment to read (a test passes its own) and reads the process's by default. An empty
variable counts as unset, as `@actions/core` reads it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path


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


def read_inputs(environ: Mapping[str, str], names: Iterable[str]) -> dict[str, str | None]:
    """`INPUT_<NAME>` for each input, as the runner names them (upper case, spaces to `_`, hyphens kept), trimmed;
    an empty value is unset, as with `@actions/core`."""
    values: dict[str, str | None] = {}
    for name in names:
        raw = environ.get("INPUT_" + name.replace(" ", "_").upper(), "").strip()
        values[name] = raw or None
    return values
