"""Where the user's repository is: `file://` attachments must stay inside it, and report paths are relative to it."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Mapping
from pathlib import Path

from .github import environment


def repository_root(start: Path, environ: Mapping[str, str] | None = None) -> Path:
    """The git top-level above `start` (found by walking up to `.git`, no git call: a root-owned container would
    need `safe.directory`), else `$GITHUB_WORKSPACE`, else `start` itself."""
    return checkout_root(start, environ) or start.resolve()


def checkout_root(start: Path, environ: Mapping[str, str] | None = None) -> Path | None:
    """The checkout holding `start`: its git top-level, else `$GITHUB_WORKSPACE`; None outside both."""
    found = git_root(start)
    if found is not None:
        return found
    workspace = environment.workspace(environ)
    return workspace.resolve() if workspace else None


def git_root(start: Path) -> Path | None:
    """The git top-level holding `start`, if any."""
    start = start.resolve()
    return next((directory for directory in [start, *start.parents] if (directory / ".git").exists()), None)


def attachment_root(suite_dir: Path, project_dir: Path | None = None) -> Path:
    """The directory a suite's `file://` attachments must stay inside: the git repository holding the suite; without
    one, the project (agenttest.yaml's directory) when the suite is inside it; else the suite's own directory.
    Never the working directory: running from `/` must not open `/etc` to a suite."""
    suite_dir = suite_dir.resolve()
    found = git_root(suite_dir)
    if found is not None:
        return found
    if project_dir is not None and suite_dir.is_relative_to(project_dir.resolve()):
        return project_dir.resolve()
    return suite_dir


def resolved(path: Path) -> Path:
    """`path` with its symlinks followed, as `Path.resolve` gives it, except that symlinks that lead round in a circle
    are an OSError (ELOOP) on every Python: before 3.13 `resolve` raised RuntimeError, since 3.13 it leaves the
    loop in the path unresolved."""
    try:
        real = path.resolve()
    except RuntimeError:
        real = None
    for part in (path.absolute(), *path.absolute().parents):
        if part.is_symlink():
            try:
                part.stat()
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), str(part)) from None
    if real is None:        # a loop resolve() saw that the walk did not: say it all the same
        raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), str(path))
    return real


def write_refusal(path: Path, root: Path, within: Path | None = None) -> str | None:
    """Why agenttest must not write `path` (None when it may). A path named inside the repository must stay inside
    it once its symlinks are followed: a symlink a pull request committed (`agenttest-results -> ~/.ssh`,
    `tests -> /etc`) must not lead a write out of the checkout. A path named outside the repository is the user's
    choice; a file under such a directory (`within`, the directory named) must stay inside that directory."""
    lexical = Path(os.path.normpath(path.absolute()))
    try:
        real = resolved(path)
    except OSError as exc:
        return f"it leads into a symlink loop at {exc.filename}" if exc.errno == errno.ELOOP else \
            f"it cannot be resolved: {exc.strerror or exc}"
    top = root.resolve()
    if any(lexical.is_relative_to(place) for place in (root.absolute(), top)):
        if real.is_relative_to(top):
            return None
        return f"it leads through a symlink to {real}, outside the repository"
    if within is None or real.is_relative_to(within.resolve()) or real.is_relative_to(top):
        return None
    return f"it leads through a symlink to {real}, outside {within}"


MAX_SUITE_FILE_BYTES = 64 * 1024 * 1024     # a suite file, a JSON schema, an attachment, a script or hook module


class UnsafePath(ValueError):
    """A path a suite names that must not be read (docs/security.md); the message says why, naming the path
    as given."""


def checked_file(path: Path, root: Path, shown: str | None = None, *,
                 limit: int = MAX_SUITE_FILE_BYTES) -> Path:
    """`path` resolved (symlinks followed) when it is safe to read for a suite: inside `root`, not under `.git/`,
    a regular file (no device, FIFO or directory) of at most `limit` bytes. UnsafePath otherwise — before anything
    of the file is read. `shown` names it in the message (default: the path)."""
    name = shown or str(path)
    top = root.resolve()
    try:
        real = path.resolve()
    except (OSError, RuntimeError) as exc:        # RuntimeError: a symlink loop on Python < 3.13
        raise UnsafePath(f"cannot read {name}: {getattr(exc, 'strerror', None) or exc}") from None
    if not real.is_relative_to(top):
        raise UnsafePath(f"{name} is outside the repository")
    if not real.exists():
        raise UnsafePath(f"{name} not found ({real.relative_to(top).as_posix()})")
    if ".git" in real.relative_to(top).parts:
        raise UnsafePath(f"{name} is inside .git/, which a suite may not read")
    try:
        info = real.stat()
    except OSError as exc:
        raise UnsafePath(f"cannot read {name}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode):
        raise UnsafePath(f"{name} is not a file")
    if info.st_size > limit:
        raise UnsafePath(f"{name} is {info.st_size:,} bytes, more than the {limit:,} a suite may read")
    return real
