"""GitHub Actions annotations: per failing case, one `::error file=…,line=…,title=…::…` at its JSONL line.

The path is repository-relative, everything is escaped as `@actions/core` escapes, there are at most
`max_annotations` lines in all (GitHub keeps 10 errors per step), the last case's saying how many more failed,
and one closing line for a failing run: `::error::` when the run fails the step, `::notice::` when
`fail-on` lets it pass (`never`, or `regression` without regressions). The reporter prints nothing itself: it
hands its lines to the run's log (`log.print_commands`), which prints them once the stop-commands block
that guards the run is resumed, since the runner ignores every command inside it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TextIO

from ..analysis import case_key, exit_code, failures_under_regression, run_ok
from ..hints import plural
from ..report.base import Report, Reporter
from ..report.verdicts import Drop, case_title, drops, first_reason, is_failing, verdict_lines
from ..secrets import shorten
from .commands import workflow_command
from .links import SourceLinks
from .log import print_commands

MESSAGE_CHARS = 3000     # the runner cuts annotation messages at 4096 characters


class AnnotationsReporter(Reporter):
    """Hands the annotations of the finished run to the log, to be printed after the guard is resumed."""

    def __init__(self, stream: TextIO, links: SourceLinks, *, max_annotations: int = 10,
                 fail_on: str = "failure") -> None:
        self._out = stream
        self.links = links
        self.max_annotations = max_annotations
        self.fail_on = fail_on

    def run_finished(self, report: Report) -> None:
        print_commands(self._out, annotation_lines(report.data, self.links, self.max_annotations, self.fail_on))


def annotation_lines(report: Mapping[str, Any], links: SourceLinks, max_annotations: int = 10,
                     fail_on: str = "failure") -> list[str]:
    """The annotation lines of a report.json dict: at most `max_annotations`, the closing line included."""
    results = report.get("results") or []       # a run's are built as they are read: only the failing are held
    judged = drops(report)
    regressions = {key for key, drop in judged.items() if drop.regression}
    # Regressions against the baseline first: with a baseline, they are what the change broke.
    failing = sorted((r for r in results if is_failing(r)), key=lambda r: case_key(r) not in regressions)
    if not failing and not report.get("interrupted") and not report.get("error") and not _spent(report):
        return []
    slots = max(max_annotations - 1, 0)          # one is kept for the closing line
    annotated = failing[:slots]
    hidden = len(failing) - len(annotated)
    lines = []
    for index, result in enumerate(annotated):
        more = hidden if index == len(annotated) - 1 else 0
        lines.append(case_annotation(result, links, more, drop=judged.get(case_key(result))))
    lines.append(workflow_command(closing_level(report, fail_on), closing_message(report, len(results), hidden)))
    return lines


def closing_level(report: Mapping[str, Any], fail_on: str) -> str:
    """`error` when the run fails its step, `notice` when `fail_on` lets it pass (the failures stay annotated)."""
    if report.get("interrupted"):
        return "error"
    regressions = failures_under_regression(report.get("comparison"))
    return "error" if exit_code(run_ok(report), fail_on, regressions, spent=bool(_spent(report))) else "notice"


def _spent(report: Mapping[str, Any]) -> str | None:
    """Why the budget stopped the run (the cases not yet started were skipped), or None."""
    budget = (report.get("summary") or {}).get("budget")
    spent = budget.get("spent") if isinstance(budget, Mapping) else None
    return spent if isinstance(spent, str) and spent else None


def case_annotation(result: Mapping[str, Any], links: SourceLinks, more: int = 0, drop: Drop | None = None) -> str:
    """`::error file=…,line=…,title=…::reason` with the failed verdicts on the following (escaped) lines; a case
    that passed in the baseline says first whether it regressed or is noise, and why (`drop`)."""
    details = [line for line in verdict_lines(dict(result), limit=300) if line.startswith("✗")]
    verdict = [drop.verdict[:1].upper() + drop.verdict[1:]] if drop is not None else []
    message = shorten("\n".join([*verdict, first_reason(dict(result)), *details]), MESSAGE_CHARS)
    if more:
        message += f"\n(and {plural(more, 'more failing case')} not annotated: see the job summary or junit.xml)"
    path = links.relative(result.get("file"))
    status = result.get("status")
    if drop is not None:
        status = f"{status}, {'a regression' if drop.regression else 'noise'}"
    return workflow_command("error", message, file=path, line=result.get("line") if path else None,
                            title=f"agenttest: {case_title(dict(result))} ({status})")


def closing_message(report: Mapping[str, Any], total: int, hidden: int) -> str:
    """One line for the whole run: what failed, of how many cases."""
    summary = report.get("summary") or {}
    parts = [f"{summary[key]} {word}" for key, word in
             (("failed", "failed"), ("errors", "errored"), ("timeouts", "timed out")) if summary.get(key)]
    text = f"agenttest: {', '.join(parts) or 'no case failed'} of {plural(summary.get('total', total), 'case')}"
    if report.get("interrupted"):
        text += " (interrupted: partial results)"
    spent = _spent(report)
    if spent:
        text += f"; {spent}: the cases not yet started were skipped"
    if report.get("error"):
        text += f"; run error: {report['error']}"
    if hidden:
        text += f"; {plural(hidden, 'failing case')} not annotated"
    return text + " (see the job summary and junit.xml)"
