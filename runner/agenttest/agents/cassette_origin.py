"""Whether the cassettes a run replays were changed by the change under test: a pull request controls its own
cassettes, recorded judge verdicts included, so a green replay of cassettes it changed is worth what the pull
request says, and a reviewer must be told.

In a pull request (GitHub Actions: `pull_request.base.sha` of `$GITHUB_EVENT_PATH`) the cassette directory is
compared with the base commit; elsewhere with HEAD (changes not yet committed). Files git does not track yet count
as changed. Whatever goes wrong — no git, a directory outside the repository, a shallow clone without the base
commit — is a "could not tell" with the reason, never a failed run.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..github.environment import read_event, run_facts
from ..workspace import git_root

_GIT_SECONDS = 30


def cassette_origin(directory: Path, shown: str, environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """What report.json says of the replayed cassettes (`replay`): the directory as the user named it, what it
    was compared with (`compared_with`: a commit, or `HEAD`; `pull_request_base` when that commit is the pull
    request's base), and the files changed there (`changed`, paths from the repository root) — or, when that
    could not be told, why (`could_not_tell`)."""
    env = environ if environ is not None else os.environ
    base = _pull_request_base(env)
    origin: dict[str, Any] = {"directory": shown, "compared_with": base or "HEAD", "pull_request_base": bool(base)}
    try:
        origin["changed"] = _changed_files(directory, base or "HEAD")
    except _CannotTell as exc:
        origin["could_not_tell"] = str(exc)
    return origin


class _CannotTell(Exception):
    """Why the cassettes could not be compared."""


class _GitFailed(_CannotTell):
    """git ran and said no."""


def _pull_request_base(environ: Mapping[str, str]) -> str | None:
    """The base commit of the pull request the run is for, from the GitHub event (read as the rest of agenttest
    reads it: `github.environment`, size-capped); None outside one."""
    event, _ = read_event(run_facts(environ).event_path)
    pull_request = event.get("pull_request")
    base = pull_request.get("base") if isinstance(pull_request, dict) else None
    sha = base.get("sha") if isinstance(base, dict) else None
    return sha if isinstance(sha, str) and sha and all(c in "0123456789abcdef" for c in sha) else None


def _changed_files(directory: Path, base: str) -> list[str]:
    """The files under `directory` that differ from `base` (committed since, changed in the working tree, or not
    tracked), relative to the repository root, sorted. The directory is compared as it is named, its symlinks kept:
    `tapes` replaced by a symlink to another directory of the base commit is a change (the symlink and the files it
    took the place of), not the other directory's unchanged files."""
    named = Path(os.path.normpath(directory.absolute()))
    root = git_root(named.parent if named.is_symlink() else named)
    top = next((folder for folder in (named, *named.parents)
                if not folder.is_symlink() and folder.resolve() == root), None) if root else None
    if root is None or top is None:
        raise _CannotTell("it is not in a git repository")
    inside = named.relative_to(top).as_posix()
    try:
        _git(root, "cat-file", "-e", f"{base}^{{commit}}")
    except _GitFailed:
        raise _CannotTell(f"the pull request's base commit {base[:12]} is not in this clone (check out with "
                          "fetch-depth: 0)" if base != "HEAD" else "the repository has no commit yet") from None
    changed = _git(root, "diff", "--name-only", "-z", "--no-renames", "--no-ext-diff", base, "--", inside)
    untracked = _git(root, "ls-files", "--others", "--exclude-standard", "-z", "--", inside)
    return sorted({name for name in (changed + "\0" + untracked).split("\0") if name})


def _git(root: Path, *args: str) -> str:
    """git's output (as it is: with -z, names end in NUL); _CannotTell with git's first line of complaint when it
    fails (or is not there). The repository may belong to another user (a container runs as root): it is named
    safe for this one call; git writes no lock and runs no monitor for it."""
    command = ["git", "-C", str(root), "-c", f"safe.directory={root}", "-c", "core.fsmonitor=false", *args]
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=_GIT_SECONDS, env=env,
                              stdin=subprocess.DEVNULL, check=False)
    except FileNotFoundError:
        raise _CannotTell("git is not installed") from None
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise _CannotTell(f"git failed: {exc}") from None
    if done.returncode != 0:
        complaint = next((line for line in done.stderr.splitlines() if line.strip()), f"exit {done.returncode}")
        raise _GitFailed(f"git {args[0]} failed: {complaint.strip()}")
    return done.stdout
