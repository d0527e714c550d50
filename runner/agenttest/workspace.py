"""Where the user's repository is: `file://` attachments must stay inside it, and report paths are relative to it."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path


def repository_root(start: Path, environ: Mapping[str, str] | None = None) -> Path:
    """The git top-level above `start` (found by walking up to `.git`, no git call: a root-owned container would
    need `safe.directory`), else `$GITHUB_WORKSPACE`, else `start` itself."""
    start = start.resolve()
    for directory in [start, *start.parents]:
        if (directory / ".git").exists():
            return directory
    workspace = (environ if environ is not None else os.environ).get("GITHUB_WORKSPACE")
    return Path(workspace).resolve() if workspace else start


def attachment_root(suite_dir: Path, project_dir: Path | None = None) -> Path:
    """The directory a suite's `file://` attachments must stay inside: the git repository holding the suite; without
    one, the project (agenttest.yaml's directory) when the suite is inside it; else the suite's own directory.
    Never the working directory: running from `/` must not open `/etc` to a suite."""
    suite_dir = suite_dir.resolve()
    for directory in [suite_dir, *suite_dir.parents]:
        if (directory / ".git").exists():
            return directory
    if project_dir is not None and suite_dir.is_relative_to(project_dir.resolve()):
        return project_dir.resolve()
    return suite_dir
