"""With `-v`: the traceback of the user's own code (user frames only, secrets masked) under each case whose agent,
hook or script raised — what report.json keeps in `trace.traceback`."""

from __future__ import annotations

from typing import TextIO

from ..github.log import write_lines
from ..results import CaseResult
from .base import Reporter


class TracebackPrinter(Reporter):
    """Prints a finished case's user traceback right after the console's lines for it."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def case_finished(self, result: CaseResult) -> None:
        text = (result.trace or {}).get("traceback")
        if isinstance(text, str) and text:
            write_lines(self._stream, [f"  │  {line}" for line in text.splitlines()])
