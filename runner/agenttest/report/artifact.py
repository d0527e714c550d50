"""The base of the reporters whose artifacts are files written when the run finishes (report.json, junit.xml, …)."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TextIO

from ..files import write_text
from .base import Reporter, ReportLike

Content = str | bytes | Iterable[bytes]    # a file's text, its UTF-8, or its UTF-8 in pieces (`json_chunks`)


class FileReporter(Reporter):
    """Writes the files `files` renders from the finished report. A file that cannot be written is reported on
    stderr and does not end the run: the other artifacts, the annotations and the exit code still matter."""

    def __init__(self, errors: TextIO | None = None) -> None:
        self._errors = errors or sys.stderr

    def files(self, report: ReportLike) -> Iterable[tuple[Path, Content]]:
        """Each file to write, as (path, content): rendered as it is written, one file after another."""
        return ()

    def run_finished(self, report: ReportLike) -> None:
        for path, text in self.files(report):
            self.write(path, text)

    def write(self, path: Path, text: Content) -> bool:
        """Write `text` to `path` atomically; False (and one line on stderr) when it could not be written."""
        try:
            write_text(path, text)
        except OSError as exc:
            self.warn(f"cannot write {path}: {exc.strerror or exc}")
            return False
        return True

    def warn(self, message: str) -> None:
        self.problem(message, self._errors)
