"""agenttest installed the way users install it — `pip install` of a checkout into a new virtual environment — with
no network: pip asks no index, finds every dependency installed already (this environment's, on PYTHONPATH), and
builds without isolation, with this environment's setuptools."""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def checkout(dest: Path, *more: str) -> Path:
    """What a build needs — the Dockerfile's build context: pyproject.toml, README.md and runner/ (less what
    .dockerignore leaves out) — and the paths `more`, copied to `dest`: a build writes build/ and *.egg-info into
    its source, which must not be this checkout."""
    assert "COPY pyproject.toml README.md /src/\nCOPY runner /src/runner\n" in (REPO / "Dockerfile").read_text()
    dest.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, dest / name)
    for name in ("runner", *more):
        shutil.copytree(REPO / name, dest / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    return dest


def offline_env(**extra: str) -> dict[str, str]:
    """The environment of a script that makes a virtual environment with `python3` (this interpreter) and installs
    into it with pip: the machine's pip settings left out, no index, no build isolation (pip reads
    PIP_NO_BUILD_ISOLATION=0 as `--no-build-isolation`)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "GITHUB_", "AGENTTEST_"))}
    env.update(PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
               PYTHONPATH=sysconfig.get_paths()["purelib"], PIP_CONFIG_FILE=os.devnull, PIP_NO_INDEX="1",
               PIP_NO_BUILD_ISOLATION="0", PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.update(extra)
    return env
