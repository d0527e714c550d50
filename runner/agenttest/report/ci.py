"""The CI artifacts of a run: junit.xml, summary.md (and the job summary), ctrf.json, the annotations and the step
outputs."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TextIO

from ..config import RunConfig
from .annotations import AnnotationsReporter
from .base import Reporter
from .ctrf import CtrfWriter
from .github import SourceLinks, in_github_actions
from .junit import JUnitWriter
from .outputs import StepOutputsWriter, output_workspace
from .summary import SummaryWriter


def artifact_paths(config: RunConfig) -> dict[str, Path]:
    """Where a run writes each artifact: the output directory, unless `--junit`/`--summary` say otherwise."""
    output_dir = config.output_dir
    return {
        "report": output_dir / "report.json",
        "junit": config.junit,
        "summary": config.summary,
        "ctrf": output_dir / "ctrf.json",
        "events": output_dir / "events.jsonl",
    }


def ci_reporters(config: RunConfig, stream: TextIO) -> list[Reporter]:
    """The CI reporters: junit.xml, summary.md and the job summary, ctrf.json, and the annotations (on in GitHub
    Actions unless `--no-annotations`; printed after the run's log guard is resumed, whatever the order here), and
    the step outputs when `$GITHUB_OUTPUT` is set."""
    paths = artifact_paths(config)
    links = SourceLinks.from_environment(config.cwd)
    annotate = in_github_actions() if config.options.annotations is None else config.options.annotations
    step_summary = os.environ.get("GITHUB_STEP_SUMMARY") if config.options.job_summary else None
    reporters: list[Reporter] = [
        JUnitWriter(paths["junit"], links),
        SummaryWriter(paths["summary"], links, Path(step_summary) if step_summary else None),
        CtrfWriter(paths["ctrf"], links),
    ]
    github_output = os.environ.get("GITHUB_OUTPUT")
    if github_output:
        reporters.append(StepOutputsWriter(Path(github_output), paths, output_workspace(config.cwd)))
    if annotate:
        reporters.append(AnnotationsReporter(stream, links, max_annotations=config.options.max_annotations,
                                             fail_on=config.options.fail_on))
    return reporters
