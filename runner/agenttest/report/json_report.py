"""report.json in the output directory, and the `-o` report (Markdown, HTML or JSON by extension)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TextIO

from .base import Report, Reporter
from .files import json_text, write_text


class JsonReportWriter(Reporter):
    """Writes the finished report to `report.json` and, with `-o`, to that path in the format its extension asks."""

    def __init__(self, path: Path, output: Path | None = None, errors: TextIO | None = None) -> None:
        self.path = path
        self.output = output
        self._errors = errors or sys.stderr

    def run_finished(self, report: Report) -> None:
        data = report.data
        targets = [(self.path, json_text(data))]
        if self.output is not None:
            targets.append((self.output, render_for(self.output, data)))
        for path, text in targets:
            try:
                write_text(path, text)
            except OSError as exc:
                print(f"✗ cannot write {path}: {exc.strerror or exc}", file=self._errors)


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
