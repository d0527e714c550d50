"""summary.md in the output directory, also appended to `$GITHUB_STEP_SUMMARY` (the job summary) when set."""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from ..report.artifact import FileReporter
from ..report.base import ReportLike
from ..report.markdown import render_markdown
from .links import SourceLinks

# GitHub drops a step summary over 1 MiB (1,048,576 bytes) entirely; stay clear of the edge.
SUMMARY_LIMIT = 1_000_000
MIN_STEP_SUMMARY = 4_000    # below this, what others already wrote leaves no room for a useful summary


class SummaryWriter(FileReporter):
    """Writes summary.md and appends the same Markdown to the step summary, each within GitHub's size limit."""

    def __init__(self, path: Path, links: SourceLinks, step_summary: Path | None = None,
                 errors: TextIO | None = None) -> None:
        super().__init__(errors)
        self.path = path
        self.links = links
        self.step_summary = step_summary

    def run_finished(self, report: ReportLike) -> None:
        data = report.data
        text = render_markdown(data, links=self.links, max_bytes=SUMMARY_LIMIT)
        self.write(self.path, text)
        if self.step_summary is None:
            return
        try:
            used = self.step_summary.stat().st_size if self.step_summary.exists() else 0
            room = SUMMARY_LIMIT - used - 1
            if room < MIN_STEP_SUMMARY:
                self.warn(f"not adding to the job summary: {self.step_summary} already holds {used} bytes")
                return
            if len(text.encode("utf-8")) > room:
                text = render_markdown(data, links=self.links, max_bytes=room)
            with self.step_summary.open("a", encoding="utf-8", newline="\n") as handle:
                handle.write(("\n" if used else "") + text)
        except OSError as exc:
            self.warn(f"cannot write the job summary {self.step_summary}: {exc.strerror or exc}")
