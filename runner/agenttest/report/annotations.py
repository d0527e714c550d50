"""GitHub Actions annotations, and the guard that keeps agent text from becoming workflow commands.

The runner reads stdout and stderr line by line and executes `::command::` at a line start and `##[command]`
anywhere, so an agent reply printed by the console could forge annotations, overwrite outputs (`set-output`),
mask words or swallow our own commands. While a run is in progress, the whole log is therefore inside a
`::stop-commands::<random token>` block; it is resumed (`::<token>::`) when the run finishes, before any
annotation is printed. Reporters run in order, so this one comes last: every other reporter's final lines are
still inside the block.

Then, per failing case, one `::error file=…,line=…,title=…::…` at its JSONL line (repository-relative path),
escaped as `@actions/core` escapes; at most `max_annotations` lines in all (GitHub keeps 10 errors per step),
the last case's saying how many more failed, and one closing `::error::` line for a failing run.
"""

from __future__ import annotations

import atexit
import secrets
from collections.abc import Mapping
from typing import Any, TextIO

from .base import Report, Reporter, RunInfo
from .escape import workflow_command
from .github import SourceLinks
from .verdicts import case_title, first_reason, is_failing, verdict_lines

MESSAGE_CHARS = 3000     # the runner cuts annotation messages at 4096 characters
_GUARDING: list[AnnotationsReporter] = []     # reporters whose stop-commands block is open


class AnnotationsReporter(Reporter):
    """Guards the log while the run is in progress (`guard`), then prints the annotations (`annotate`)."""

    def __init__(self, stream: TextIO, links: SourceLinks, *, annotate: bool, guard: bool,
                 max_annotations: int = 10) -> None:
        self._out = stream
        self.links = links
        self.annotate = annotate
        self.guard = guard
        self.max_annotations = max_annotations
        self._token: str | None = None

    def run_started(self, info: RunInfo) -> None:
        if self.guard:
            self._token = secrets.token_hex(16)
            self._print(f"::stop-commands::{self._token}")
            _GUARDING.append(self)

    def run_finished(self, report: Report) -> None:
        self._resume()
        if self.annotate:
            for line in annotation_lines(report.to_dict(), self.links, self.max_annotations):
                self._print(line)

    def _resume(self) -> None:
        if self._token is not None:
            token, self._token = self._token, None
            self._print(f"::{token}::")
        if self in _GUARDING:
            _GUARDING.remove(self)

    def _print(self, line: str) -> None:
        self._out.write(line + "\n")
        self._out.flush()


def resume_commands() -> None:
    """End every open stop-commands block: before printing a command of our own after a run that did not finish
    (an exception between run_started and run_finished), and at exit, so a crash never leaves the rest of the
    step's log deaf to commands."""
    for reporter in list(_GUARDING):
        reporter._resume()


atexit.register(resume_commands)


def annotation_lines(report: Mapping[str, Any], links: SourceLinks, max_annotations: int = 10) -> list[str]:
    """The annotation lines of a report.json dict: at most `max_annotations`, the closing line included."""
    results = list(report.get("results") or [])
    failing = [r for r in results if is_failing(r)]
    if not failing and not report.get("interrupted") and not report.get("error"):
        return []
    slots = max(max_annotations - 1, 0)          # one is kept for the closing line
    annotated = failing[:slots]
    hidden = len(failing) - len(annotated)
    lines = []
    for index, result in enumerate(annotated):
        more = hidden if index == len(annotated) - 1 else 0
        lines.append(case_annotation(result, links, more))
    lines.append(workflow_command("error", closing_message(report, len(results), hidden)))
    return lines


def case_annotation(result: Mapping[str, Any], links: SourceLinks, more: int = 0) -> str:
    """`::error file=…,line=…,title=…::reason` with the failed verdicts on the following (escaped) lines."""
    details = [line for line in verdict_lines(dict(result), limit=300) if line.startswith("✗")]
    message = "\n".join([first_reason(dict(result)), *details])
    if len(message) > MESSAGE_CHARS:
        message = message[:MESSAGE_CHARS] + "…"
    if more:
        message += f"\n(and {more} more failing cases not annotated: see the job summary or junit.xml)"
    path = links.relative(result.get("file"))
    return workflow_command("error", message, file=path, line=result.get("line") if path else None,
                            title=f"agenttest: {case_title(dict(result))} ({result.get('status')})")


def closing_message(report: Mapping[str, Any], total: int, hidden: int) -> str:
    """One line for the whole run: what failed, of how many cases."""
    summary = report.get("summary") or {}
    parts = [f"{summary[key]} {word}" for key, word in
             (("failed", "failed"), ("errors", "errored"), ("timeouts", "timed out")) if summary.get(key)]
    text = f"agenttest: {', '.join(parts) or 'no case failed'} of {summary.get('total', total)} cases"
    if report.get("interrupted"):
        text += " (interrupted: partial results)"
    if report.get("error"):
        text += f"; run error: {report['error']}"
    if hidden:
        text += f"; {hidden} failing cases not annotated"
    return text + " (see the job summary and junit.xml)"
