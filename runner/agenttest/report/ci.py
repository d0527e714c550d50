"""The CI artifacts of a run: junit.xml, summary.md (and the job summary), ctrf.json, the annotations and the step
outputs."""

from __future__ import annotations

from typing import TextIO

from ..artifacts import artifact_paths
from ..config import RunConfig
from ..github import environment
from ..github.links import SourceLinks
from ..github.outputs import StepOutputsWriter, output_workspace
from ..github.summary import SummaryWriter
from .base import Reporter
from .ctrf import CtrfWriter
from .junit import JUnitWriter

__all__ = ["artifact_paths", "ci_reporters"]


def ci_reporters(config: RunConfig, stream: TextIO) -> list[Reporter]:
    """The CI reporters: junit.xml, summary.md and the job summary, ctrf.json, and the annotations (on in GitHub
    Actions unless `--no-annotations`; printed after the run's log guard is resumed, whatever the order here), and
    the step outputs when `$GITHUB_OUTPUT` is set."""
    paths = artifact_paths(config)
    links = SourceLinks.from_environment(config.cwd)
    options = config.options
    annotate = environment.in_github_actions() if options.annotations is None else options.annotations
    step_summary = environment.step_summary_file() if options.job_summary else None
    reporters: list[Reporter] = [
        JUnitWriter(paths["junit"], links),
        SummaryWriter(paths["summary"], links, step_summary),
        CtrfWriter(paths["ctrf"], links),
    ]
    github_output = environment.output_file()
    if github_output:
        reporters.append(StepOutputsWriter(github_output, paths, output_workspace(config.cwd)))
    if annotate:        # the annotations' module is loaded only by a run that makes them (GitHub Actions)
        from ..github.annotations import AnnotationsReporter

        reporters.append(AnnotationsReporter(stream, links, max_annotations=options.max_annotations,
                                             fail_on=options.fail_on))
    return reporters
