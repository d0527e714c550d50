"""The pull-request comment's Markdown, from a report.json dict: what a reviewer needs, within GitHub's limit.

The verdict, the counts, tokens and cost per role (the job summary's head); how the run came out against the base
branch — the regressions first, each with its evidence, then the fixes and the differences within noise (`noise`,
with their evidence when the comparison gives it), then every group of the comparison counted —, or why there was no
comparison; the failing cases linked to their JSONL lines at the head commit; the flaky cases; the first failures in
full, collapsed; and the links to the run and its artifacts. The job summary's pieces (report/markdown.py) and its
escaping (report/escape.py) write it, so agent text is as inert here as there.

GitHub refuses a comment over 65,536 characters or 262,144 UTF-8 bytes. The rendering degrades in steps until it
fits: fewer and shorter failure details, then none, then fewer table rows; the verdict, the counts and the
comparison's counts always stay.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..analysis import case_key
from ..analysis.outcome import interval_text
from ..hints import plural
from ..report.escape import md_code, md_text, one_line
from ..report.markdown import (
    _case_link,
    _comparison,
    _counts,
    _failure_details,
    _failure_row,
    _failure_table,
    _header,
)
from ..report.verdicts import STATUS_ICONS, first_reason, is_failing, runs_line, stability_rows
from .baseline import Baseline
from .comment import BYTE_LIMIT, COMMENT_LIMIT, MARKER_ROOM
from .links import SourceLinks


@dataclass(frozen=True)
class CommentLinks:
    """Where the comment points: suite lines (a SourceLinks whose blob URL is at the pull request's head commit,
    not the merge commit the run checked out), the workflow run, and its uploaded artifact."""

    source: SourceLinks
    run: str | None = None
    artifacts: str | None = None


@dataclass(frozen=True)
class _Level:
    """How much one rendering shows, from everything down to the counts."""

    details: int        # failing cases shown in full
    chars: int          # characters of each input/output preview there
    rows: int           # rows of the failure, regression and flaky lists


LEVELS = (_Level(10, 1000, 100), _Level(3, 300, 100), _Level(0, 0, 100), _Level(0, 0, 50), _Level(0, 0, 10),
          _Level(0, 0, 0))


def render_comment(report: Mapping[str, Any], links: CommentLinks, baseline: Baseline | None = None, *,
                   limit: int = COMMENT_LIMIT - MARKER_ROOM, byte_limit: int = BYTE_LIMIT - MARKER_ROOM) -> str:
    """The comment of a report.json dict: at most `limit` characters and `byte_limit` UTF-8 bytes. `baseline`:
    where the comparison's baseline came from, or why there is none."""
    results = [r for r in report.get("results") or [] if isinstance(r, Mapping)]
    failing = [r for r in results if is_failing(dict(r))]
    for level in LEVELS:
        text = "\n".join(_lines(report, results, failing, links, baseline, level)).rstrip("\n") + "\n"
        if len(text) <= limit and len(text.encode("utf-8")) <= byte_limit:
            return text
    return _cut(text, limit, byte_limit)


def _lines(report: Mapping[str, Any], results: list[Mapping[str, Any]], failing: list[Mapping[str, Any]],
           links: CommentLinks, baseline: Baseline | None, level: _Level) -> Iterator[str]:
    yield from _header(report, links.source)
    yield from _counts(report.get("summary") or {})
    yield from _base(report, baseline)
    yield from _regressions(report, results, links.source, level.rows)
    yield from _group(report, "fixes", "### 🔺 {}", "fix", "failed in the baseline, passes now", links.source,
                      level.rows)
    yield from _group(report, "noise", "### 〰️ {} within noise", "change", "a difference within the noise of the runs",
                      links.source, level.rows)
    yield from _comparison(report)
    if failing:
        yield from _failures(failing, links.source, level.rows)
    yield from _flaky(report, links.source, level.rows)
    for result in failing[:level.details]:
        yield from _failure_details(result, links.source, level.chars)
    if len(failing) > level.details:
        shown = f"the first {level.details} in full" if level.details else "no details"
        yield f"<sub>{plural(len(failing), 'failing case')}, {shown} here: see the job summary and `report.json`.</sub>"
        yield ""
    yield _footer(report, links)


def _base(report: Mapping[str, Any], baseline: Baseline | None) -> Iterator[str]:
    """Where the baseline came from; or why there is none, unless the report says it (the comparison's section,
    as in the job summary)."""
    if baseline is None:
        return
    if baseline.report is None:
        if (report.get("metadata") or {}).get("baseline"):
            return
        yield f"> ℹ️ **No comparison with the base branch:** {md_text(baseline.reason)}"
    else:
        run = f"run {baseline.run_number}"
        shown = f"[{run}]({baseline.run_url})" if baseline.run_url else run
        yield (f"**Baseline** {shown} on {md_code(baseline.branch or '')}"
               + (f" at {md_code((baseline.sha or '')[:7])}" if baseline.sha else ""))
    yield ""


def _entries(report: Mapping[str, Any], group: str) -> list[Mapping[str, Any]]:
    """The entries of one group of the comparison (`regressions`, `fixes`, `noise`, …); [] without one."""
    comparison = report.get("comparison")
    items = comparison.get(group) if isinstance(comparison, Mapping) else None
    return [entry for entry in items or [] if isinstance(entry, Mapping)]


def _evidence(entry: Mapping[str, Any]) -> str:
    """What the comparison says backs an entry up (`5/5 → 0/5, p = 0.004`), escaped; "" when it says nothing."""
    evidence = entry.get("evidence")
    return md_text(one_line(evidence, 300)) if isinstance(evidence, str) and evidence.strip() else ""


def _group(report: Mapping[str, Any], group: str, title: str, noun: str, default: str, links: SourceLinks,
           rows: int) -> Iterator[str]:
    """One group of the comparison after the regressions (fixes, noise) as a list: each case linked, with its
    evidence when the comparison gives one."""
    entries = _entries(report, group)
    if not entries:
        return
    yield title.format(plural(len(entries), noun))
    yield ""
    for entry in entries[:rows]:
        yield f"- {_case_link(entry, links)} — {_evidence(entry) or default}"
    yield ""
    yield from _more(len(entries) - rows, noun)


def _regressions(report: Mapping[str, Any], results: list[Mapping[str, Any]], links: SourceLinks,
                 rows: int) -> Iterator[str]:
    """Each case that passed in the baseline and does not now, with its evidence: how it came out, why, over how
    many runs, and what the comparison gives as evidence (`5/5 → 0/5, p = 0.004`)."""
    entries = _entries(report, "regressions")
    if not entries:
        return
    by_key = {case_key(result): result for result in results}
    yield f"### 🔻 {plural(len(entries), 'regression')}"
    yield ""
    for entry in entries[:rows]:
        result = by_key.get(case_key(entry), entry)
        status = str(result.get("status") or "")
        evidence = f"passed in the baseline, now {STATUS_ICONS.get(status, '')} {md_text(status)}"
        reason = first_reason(dict(result))
        if reason and reason != status:
            evidence += f": {md_text(one_line(reason, 300))}"
        given = _evidence(entry)
        runs = runs_line(dict(result))
        if runs and " runs passed" not in (reason or ""):     # a reason of runs says their counts already
            evidence += f" ({md_text(runs)})"
        if given:
            evidence += f" · **evidence:** {given}"
        yield f"- {_case_link(result, links)} — {evidence}"
    yield ""
    yield from _more(len(entries) - rows, "regression")


def _failures(failing: list[Mapping[str, Any]], links: SourceLinks, rows: int) -> Iterator[str]:
    if rows == 0:
        yield f"**{plural(len(failing), 'failing case')}**: see the job summary and `report.json`."
        yield ""
        return
    table = _failure_table([_failure_row(result, links) for result in failing[:rows]])
    yield from table
    yield from _more(len(failing) - rows, "failing case")


def _flaky(report: Mapping[str, Any], links: SourceLinks, rows: int) -> Iterator[str]:
    """The cases whose runs disagreed: some passed, some did not."""
    flaky = [row for row in stability_rows(report) if row.get("flaky")]
    if not flaky:
        return
    yield f"### 🎲 {plural(len(flaky), 'flaky case')}"
    yield ""
    for row in flaky[:rows]:
        interval = interval_text(row.get("pass_rate_interval"))
        yield (f"- {_case_link(row, links)} — {md_text(row.get('passed'))} of {md_text(row.get('runs'))} runs "
               f"passed ({md_text(_percent(row.get('pass_rate')))}{', ' + interval if interval else ''})")
    yield ""
    yield from _more(len(flaky) - rows, "flaky case")


def _percent(rate: Any) -> str:
    """A stability row's pass rate as the other artifacts print it: `80%`, `66.67%`."""
    return f"{rate:g}%" if isinstance(rate, int | float) and not isinstance(rate, bool) else str(rate)


def _more(hidden: int, noun: str) -> Iterable[str]:
    """After a list or table cut to its first rows: how many more there are."""
    if hidden > 0:
        return [f"…and {plural(hidden, f'more {noun}')}: see the job summary and `report.json`.", ""]
    return []


def _footer(report: Mapping[str, Any], links: CommentLinks) -> str:
    parts = []
    if links.run:
        parts.append(f"[Workflow run]({links.run})")
    if links.artifacts:
        parts.append(f"[Artifacts]({links.artifacts})")
    parts.append(f"agenttest {md_text((report.get('metadata') or {}).get('version', ''))}")
    return "<sub>" + " · ".join(parts) + "</sub>"


def _cut(text: str, limit: int, byte_limit: int) -> str:
    """The text cut at a line break to fit (what remains when even the shortest rendering does not: cases with
    very long ids), saying so. The verdict and the counts come first, so they stay."""
    note = "\n\n…cut to fit GitHub's comment limit: see the job summary and `report.json`.\n"
    room = limit - len(note)
    head = text[:room]
    while len(head.encode("utf-8")) > byte_limit - len(note):
        head = head[: len(head) * 9 // 10]
    return head[: head.rfind("\n") + 1 or len(head)].rstrip("\n") + note
