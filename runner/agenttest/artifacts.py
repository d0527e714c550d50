"""The files of a run's artifacts: their names in the output directory, and where a run writes each.

The names are the step outputs that point at the files (docs/github-actions.md); `run`, `merge`, the console's last line
and `--help` all take them from here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from .workspace import repository_root, write_refusal

if TYPE_CHECKING:
    from .config import RunConfig

ARTIFACT_FILES = {
    "report": "report.json",
    "junit": "junit.xml",
    "summary": "summary.md",
    "ctrf": "ctrf.json",
    "events": "events.jsonl",
}
COMMENT_FILE = "comment.md"     # the pull-request comment as posted (github.pull_request), beside them


def artifact_files(output_dir: Path) -> dict[str, Path]:
    """Each artifact in `output_dir`, by its name."""
    return {name: output_dir / file for name, file in ARTIFACT_FILES.items()}


def artifact_paths(config: RunConfig) -> dict[str, Path]:
    """Where a run writes each artifact: the output directory, unless `--junit`/`--summary` say otherwise."""
    return {**artifact_files(config.output_dir), "junit": config.junit, "summary": config.summary}


def remove_stale(output_dir: Path, cwd: Path, names: Iterable[str] | None = None) -> list[str]:
    """Remove from `output_dir` the artifacts an earlier run left there (`names`: these of agenttest's file names;
    all by default), for a run that stopped before any case ran and wrote none of its own, or one that wrote these
    elsewhere (`--junit`, `--summary`): a stale green report must not pass for this run's. Each is removed only when
    it is a regular file (never a symlink, a directory or another file) that reads as agenttest wrote it — a file of
    the user's that bears one of its names stays — and nothing where a run would refuse to write
    (`workspace.write_refusal`: a folder leading out of the repository). The names removed, in order."""
    root = repository_root(cwd)
    if not output_dir.is_dir() or write_refusal(output_dir, root):
        return []
    removed = []
    for name in (*ARTIFACT_FILES.values(), COMMENT_FILE) if names is None else names:
        path = output_dir / name
        if path.is_symlink() or not path.is_file() or write_refusal(path, root, within=output_dir) \
                or not written_by_agenttest(path):
            continue
        try:
            path.unlink()
        except OSError:         # not ours to remove after all (permissions): left as it is
            continue
        removed.append(name)
    return removed


def written_by_agenttest(path: Path) -> bool:
    """Whether the start of the artifact file `path` is what agenttest writes there."""
    try:
        with path.open("rb") as handle:
            head = handle.read(4096)
    except OSError:
        return False
    looks = _LOOKS.get(path.name)
    return looks is not None and looks(head)


# How each artifact starts (report.json and ctrf.json as `files.json_chunks` lays them out).
_LOOKS: dict[str, Callable[[bytes], bool]] = {
    "report.json": lambda head: head.startswith(b'{\n  "summary": {'),
    "junit.xml": lambda head: b'<testsuites name="agenttest"' in head,
    "summary.md": lambda head: head.startswith(b"## ") and b" agenttest: " in head.split(b"\n", 1)[0],
    "ctrf.json": lambda head: b'"generatedBy": "agenttest"' in head,
    "events.jsonl": lambda head: head.startswith(b'{"type":"start"'),
    COMMENT_FILE: lambda head: head.startswith(b"<!-- agenttest:comment "),
}
