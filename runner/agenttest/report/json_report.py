"""report.json in the output directory, and the `-o` report (Markdown, HTML or JSON by extension)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from ..files import json_chunks, json_text
from .artifact import Content, FileReporter
from .base import ReportLike


class JsonReportWriter(FileReporter):
    """Writes the finished report to `report.json` and, with `-o`, to that path in the format its extension asks."""

    def __init__(self, path: Path, output: Path | None = None, errors: TextIO | None = None) -> None:
        super().__init__(errors)
        self.path = path
        self.output = output

    def files(self, report: ReportLike) -> Iterator[tuple[Path, Content]]:
        yield self.path, json_chunks(report.data)
        if self.output is not None:
            yield self.output, render_for(self.output, report.data)


def render_for(path: Path, data: dict) -> str:
    """The report rendered for `-o`: `.md`/`.markdown` → Markdown, `.html`/`.htm` → HTML, else JSON."""
    suffix = path.suffix.lower()
    if suffix in (".md", ".markdown"):
        from .markdown import render_markdown
        return render_markdown(data)
    if suffix in (".html", ".htm"):
        from .html import render_html
        return render_html(data)
    return json_text(data)
