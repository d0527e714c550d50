"""The repository stands alone: a fresh clone with nothing beside it collects every test, and no tracked file
reaches into the directory next to the repository (where the developers keep their design notes and no user's
clone has anything)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

# A path that leaves the repository for a sibling `shared` directory: `../shared`, `parent / "shared"`,
# `parents[2] / "shared"`, or the developers' absolute `/work/shared`.
OUTSIDE = re.compile(r"""(\.\./|/work/|\bparents?(\[\d+\])?\s*/\s*["'])shared\b""")


def _clone(tmp_path: Path) -> Path:
    """The repository's files as they stand in this checkout (tracked, and new ones not ignored: what the next
    commit may hold), copied alone into an empty directory, as a fresh clone of that commit would have them."""
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout: nothing to clone")
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                            check=True, capture_output=True, timeout=60).stdout.decode().split("\0")
    clone = tmp_path / "repo"
    for name in filter(None, listed):
        source = REPO / name
        if source.is_file():        # a file deleted but not yet committed is listed and gone
            (clone / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, clone / name)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["repo"]
    return clone


@pytest.mark.slow
def test_a_fresh_clone_collects_every_test(tmp_path: Path) -> None:
    clone = _clone(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "AGENTTEST_", "PYTEST_"))}
    env["PYTHONPATH"] = str(clone / "runner")       # the clone's package, not this checkout's editable install
    collected = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-n", "0", "-p", "no:cacheprovider"],
        cwd=clone, env=env, capture_output=True, text=True, timeout=300)
    output = collected.stdout + collected.stderr
    assert collected.returncode == 0, output
    assert re.search(r"^\d+ tests collected in ", output, re.MULTILINE), output    # not "…, 1 error in"


def test_no_tracked_file_reads_beside_the_repository(tmp_path: Path) -> None:
    clone = _clone(tmp_path)
    found = []
    this_file = Path(__file__).relative_to(REPO).as_posix()      # it spells out what it looks for
    for path in sorted(p for p in clone.rglob("*") if p.is_file()):
        name = path.relative_to(clone).as_posix()
        if name == this_file:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, IsADirectoryError):
            continue
        found += [f"{name}:{number}: {line.strip()}" for number, line in enumerate(text.splitlines(), 1)
                  if OUTSIDE.search(line)]
    assert found == []


def test_the_check_finds_each_way_of_reaching_beside_the_repository() -> None:
    for line in ('REPO.parent / "shared" / "data"', "Path(__file__).parents[2] / 'shared'", "cat ../shared/SPEC.md",
                 "see /work/shared/STYLE.md"):
        assert OUTSIDE.search(line), line
    assert not OUTSIDE.search("tmp_path / 'assets' / 'shared.png'")


def test_user_facing_text_cites_only_what_the_repository_holds() -> None:
    """The product contract the code was written from is not in the repository: text a user reads — the package
    (docstrings, `agenttest schema`), the examples, the docs — cites the README or docs/ instead."""
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    cited = subprocess.run(["git", "grep", "-n", "SPEC §", "--", "runner", "examples", "docs", "README.md", "schema",
                            "bench"], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert (cited.returncode, cited.stdout) == (1, "")      # git grep: 1 when nothing is found
