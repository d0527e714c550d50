"""The files of a run's artifacts: their names in the output directory, and where a run writes each.

The names are the step outputs that point at the files (docs/github-actions.md); `run`, `merge`, the console's last line
and `--help` all take them from here.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .config import RunConfig

ARTIFACT_FILES = {
    "report": "report.json",
    "junit": "junit.xml",
    "summary": "summary.md",
    "ctrf": "ctrf.json",
    "events": "events.jsonl",
}


def artifact_files(output_dir: Path) -> dict[str, Path]:
    """Each artifact in `output_dir`, by its name."""
    return {name: output_dir / file for name, file in ARTIFACT_FILES.items()}


def artifact_paths(config: RunConfig) -> dict[str, Path]:
    """Where a run writes each artifact: the output directory, unless `--junit`/`--summary` say otherwise."""
    return {**artifact_files(config.output_dir), "junit": config.junit, "summary": config.summary}
