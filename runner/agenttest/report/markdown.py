"""The Markdown report: `summary.md`, the GitHub job summary, and `agenttest -o report.md`.

GitHub-flavoured Markdown with `<details>` blocks. Agent text never becomes live Markdown or HTML: table cells
go through `md_text`/`md_code`, `<summary>` lines through `html_text`, and inputs/outputs sit in fenced blocks
longer than any backtick run inside them (see escape.py).

With `max_bytes`, the document degrades in steps until it fits (GitHub drops a step summary over 1 MiB whole):
every failure in full with the passed cases listed, then shorter previews without the passed list, then the
failure table alone, then the table cut with a note. The status line and the counts are always kept.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..analysis import pass_rate_text
from ..analysis.outcome import interval_range
from ..durations import format_elapsed
from ..github.links import SourceLinks
from ..hints import plural
from ..result_log import statuses_and_files
from ..run_count import FIRST_RUNS, auto_limit
from ..usage import usage_line
from .escape import display_text, md_block, md_code, md_html, md_text, preview
from .verdicts import (
    COMPARISON_GROUPS,
    EVIDENCE_GROUPS,
    FAILING,
    STATUS_ICONS,
    case_title,
    checkpoint_cells,
    checkpoint_rows,
    comparison_line,
    cost_line,
    ended,
    first_reason,
    guard_summary,
    human_time,
    is_conversation,
    is_failing,
    missing_checkpoints,
    never_ran,
    replay_line,
    run_verdict,
    stability_class_text,
    stability_line,
    stability_rows,
    tool_call_lines,
    transcript,
    verdict_value,
)

ARTIFACTS = ("report.json", "junit.xml", "ctrf.json", "events.jsonl")


@dataclass(frozen=True)
class Detail:
    """How much one rendering shows; the levels below go from everything to the least that is still useful."""

    failure_details: bool
    preview_chars: int
    passed_list: bool
    note: str = ""


LEVELS = (
    Detail(failure_details=True, preview_chars=4000, passed_list=True),
    Detail(failure_details=True, preview_chars=500, passed_list=False,
           note="Previews are shortened and the passed cases not listed, to fit GitHub's 1 MiB job-summary limit."),
    Detail(failure_details=False, preview_chars=0, passed_list=False,
           note="Failure details and the list of passed cases are left out to fit GitHub's 1 MiB job-summary "
                "limit."),
)


def render_markdown(report: Mapping[str, Any], *, links: SourceLinks | None = None,
                    max_bytes: int | None = None) -> str:
    """The Markdown report of a report.json dict; with `max_bytes`, never longer than that in UTF-8 bytes."""
    links = links or SourceLinks.from_environment()
    results: Sequence[dict[str, Any]] = report.get("results") or []     # read as needed, never held all at once
    failing, suites = [], {}
    for index, (status, file) in enumerate(statuses_and_files(results)):
        if status in FAILING:
            failing.append(results[index])
        if file:
            suites[links.display(file)] = file
    head = _lines(_header(report, links, suites), _comparison(report), _evidence(report, links),
                  _counts(report.get("summary") or {}), _stability(report))
    rows = [_failure_row(result, links) for result in failing]
    footer = _footer(report)
    for level in LEVELS:
        text = _compose(level, head, rows, failing, results, links, footer, max_bytes)
        if text is not None:
            return text
    return _cut(head, rows, footer, max_bytes or 0)


def _lines(*sections: Iterable[str]) -> list[str]:
    return [line for section in sections for line in section]


def _compose(level: Detail, head: list[str], rows: list[str], failing: list[dict[str, Any]],
             results: Sequence[dict[str, Any]], links: SourceLinks, footer: list[str],
             max_bytes: int | None) -> str | None:
    """The document at one level of detail, or None as soon as it grows past `max_bytes`."""
    budget = _Budget(max_bytes)
    sections: list[Iterable[str]] = [head]
    if failing:
        sections.append(_failure_table(rows))
    if level.failure_details:
        sections.extend(_failure_details(result, links, level.preview_chars) for result in failing)
    if level.note:
        sections.append([f"> {level.note} The full results are in `report.json`.", ""])
    if level.passed_list:
        sections.append(_passed_list(results, len(failing), links))
    sections.append(footer)
    for section in sections:
        for line in section:
            if not budget.add(line):
                return None
    return budget.text()


def _cut(head: list[str], rows: list[str], footer: list[str], max_bytes: int) -> str:
    """The counts and as many failure rows as fit, with a note of how many more failed."""
    note_room = 400
    budget = _Budget(max_bytes - note_room)
    for line in head:
        if not budget.add(line):
            break
    table = _failure_table([])
    shown = 0
    if all(budget.add(line) for line in table[:-1]):
        for row in rows:
            if not budget.add(row):
                break
            shown += 1
    tail = [""]
    if shown < len(rows):
        hidden = len(rows) - shown
        verb = "is" if hidden == 1 else "are"
        tail += [f"**{plural(hidden, 'more failing case')} {verb} not shown** to fit GitHub's 1 MiB job-summary "
                 "limit; see `report.json` or `junit.xml`.", ""]
    tail += ["> Failure details and the list of passed cases are left out to fit GitHub's 1 MiB job-summary limit.",
             "", *footer]
    budget.limit = max_bytes
    for line in tail:
        budget.add(line)
    return budget.text()


class _Budget:
    """Lines collected while their UTF-8 size stays within a limit."""

    def __init__(self, limit: int | None) -> None:
        self.limit = limit
        self.size = 0
        self.lines: list[str] = []

    def add(self, line: str) -> bool:
        size = len(line.encode("utf-8")) + 1
        if self.limit is not None and self.size + size > self.limit:
            return False
        self.lines.append(line)
        self.size += size
        return True

    def text(self) -> str:
        return "\n".join(self.lines).rstrip("\n") + "\n"


def _failure_table(rows: list[str]) -> list[str]:
    return ["### Failures", "", "| Case | Status | Reason |", "|---|---|---|", *rows, ""]


def _failure_row(result: Mapping[str, Any], links: SourceLinks) -> str:
    return (f"| {_case_link(result, links)} | {STATUS_ICONS.get(result.get('status'), '')} "
            f"{md_text(result.get('status'))} | {md_text(first_reason(result))} |")


def _footer(report: Mapping[str, Any]) -> list[str]:
    version = md_text((report.get("metadata") or {}).get("version", ""))
    return [f"<sub>agenttest {version} · artifacts: {', '.join(md_code(name) for name in ARTIFACTS)}</sub>"]


def _header(report: Mapping[str, Any], links: SourceLinks, suites: dict[str, str] | None = None) -> Iterator[str]:
    """The heading, the run's facts and its notices; `suites`: the suite files by display path, when known."""
    yield f"## {_title(report)}"
    yield ""
    yield _facts(report, links, suites)
    yield ""
    yield from _notices(report)


def _title(report: Mapping[str, Any]) -> str:
    """The run's verdict as the summary's heading: `✅ agenttest: all 3 cases passed`."""
    summary = report.get("summary") or {}
    results = report.get("results") or []
    total = summary.get("total", len(results))
    passed, failed = summary.get("passed", 0), summary.get("failed", 0)
    errors, timeouts, skipped = summary.get("errors", 0), summary.get("timeouts", 0), summary.get("skipped", 0)
    bad = [f"{n} {word}" for n, word in ((failed, "failed"), (errors, "errors" if errors != 1 else "error"),
                                         (timeouts, "timed out")) if n]
    state = run_verdict(report)
    if state.state == "interrupted":
        ran = sum(1 for result in results if not never_ran(result))
        icon, verdict = "⚠️", f"interrupted after {ran} of {plural(total, 'case')}"
    elif state.state == "tolerated" and state.why != "--fail-on never":
        icon, verdict = "✅", f"no regressions ({state.why}) — {passed} of {total} passed"
    elif state.state in ("failed", "tolerated"):
        budget = summary.get("budget") if isinstance(summary.get("budget"), Mapping) else {}
        icon, verdict = "❌", ", ".join(bad) or ("budget spent" if budget.get("spent") else "run error")
        verdict += f" — {passed} of {total} passed"
        if state.state == "tolerated":
            icon, verdict = "⚠️", f"{verdict} ({state.why}: the run does not fail)"
    elif state.state == "no_case_ran":
        icon, verdict = "⏭️", "no case ran"
    else:
        icon, verdict = "✅", (f"all {passed} cases passed" if passed > 1 else "the one case passed") \
            if passed == total else f"{passed} of {total} passed"
    if skipped:
        verdict += f", {skipped} skipped"
    return f"{icon} agenttest: {md_text(verdict)}"


def _facts(report: Mapping[str, Any], links: SourceLinks, suites: dict[str, str] | None = None) -> str:
    """The agent, its connector, the suites (linked) and when the run started, on one line."""
    summary = report.get("summary") or {}
    facts = [f"**Agent** {md_code(summary.get('agent_id') or '?')}"]
    if summary.get("connector"):
        facts.append(f"**Connector** {md_code(summary['connector'])}")
    if suites is None:
        suites = {links.display(r["file"]): r["file"] for r in report.get("results") or [] if r.get("file")}
    if suites:
        names = sorted(suites)
        facts.append("**Suites** " + ", ".join(_file_link(suites[name], links) for name in names[:10])
                     + (f" and {len(names) - 10} more" if len(names) > 10 else ""))
    started = (report.get("metadata") or {}).get("started_at")
    if started:
        facts.append(f"**Started** {md_text(human_time(started))}")
    return " · ".join(facts)


def _notices(report: Mapping[str, Any]) -> Iterator[str]:
    """Tokens and cost, a spent budget, a replay, the run's error, an interrupt: each a paragraph."""
    summary = report.get("summary") or {}
    usage = summary.get("usage")
    if isinstance(usage, Mapping) and usage:
        cost = f" · **Cost** {md_text(cost_line(dict(summary['cost']), usage))}" \
            if isinstance(summary.get("cost"), Mapping) else ""
        yield f"**Tokens** {md_text(usage_line(usage))}{cost}"
        yield ""
    spent = (summary.get("budget") or {}).get("spent") if isinstance(summary.get("budget"), Mapping) else None
    if spent:
        yield f"> ⚠️ **{md_text(spent)}**: the cases not yet started were skipped."
        yield ""
    replay = report.get("replay")
    if isinstance(replay, Mapping):
        warned = bool(replay.get("changed") or replay.get("could_not_tell"))
        yield f"> {'⚠️ ' if warned else ''}**Replay:** {md_text(replay_line(replay))}"
        yield ""
    if report.get("error"):
        yield f"> ❗ **Run error:** {md_text(report['error'])}"
        yield ""
    if report.get("interrupted"):
        yield "> ⚠️ **Interrupted:** the results below are partial."
        yield ""


def _counts(summary: Mapping[str, Any]) -> Iterator[str]:
    rate = pass_rate_text(summary.get("pass_rate"))
    yield "| Total | ✅ Passed | ❌ Failed | 🔥 Errors | ⏱️ Timeouts | ⏭️ Skipped | Pass rate | Duration |"
    yield "|---:|---:|---:|---:|---:|---:|---:|---:|"
    yield (f"| {summary.get('total', 0)} | {summary.get('passed', 0)} | {summary.get('failed', 0)} "
           f"| {summary.get('errors', 0)} | {summary.get('timeouts', 0)} | {summary.get('skipped', 0)} "
           f"| {f'{rate}%' if rate else 'n/a'} "
           f"| {format_elapsed((summary.get('duration_ms') or 0) / 1000)} |")
    yield ""


def _stability(report: Mapping[str, Any]) -> Iterator[str]:
    rows = stability_rows(report)
    if not rows:
        return
    summary = report.get("summary") or {}
    yield "### Stability"
    yield ""
    yield md_text(stability_line(dict(summary)))
    yield ""
    for key, label in (("pass_at_k", "pass@k"), ("pass_hat_k", "pass^k")):
        if isinstance(summary.get(key), Mapping) and summary[key]:
            yield f"{label}: " + " · ".join(f"k={md_text(k)} {md_text(v)}" for k, v in summary[key].items())
            yield ""
    if auto_limit(summary.get("runs_per_case")) is not None:
        yield (f"With `--runs auto`, a case counts for k up to the runs it made: above k={FIRST_RUNS}, only the cases "
               "whose runs disagreed and ran on.")
        yield ""
    auto = any(row.get("stopped") for row in rows)
    yield f"| Case | Runs | Passed | Pass rate | 95% CI |{' Stopped |' if auto else ''} Class | Flaky | Counted as " \
          "| Avg time |"
    yield f"|---|---:|---:|---:|---:|{'---|' if auto else ''}---|---|---|---:|"
    for row in rows:
        stopped = f" {md_text(row.get('stopped') or '')} |" if auto else ""
        yield (f"| {md_text(row.get('id'))} | {md_text(row.get('runs'))} | {md_text(row.get('passed'))} "
               f"| {md_text(row.get('pass_rate'))}% | {md_text(interval_range(row.get('pass_rate_interval')))} "
               f"|{stopped} {md_text(stability_class_text(row))} "
               f"| {'yes' if row.get('flaky') else ''} | {md_text(row.get('counted_as'))} "
               f"| {format_elapsed(float(row.get('avg_duration_ms') or 0) / 1000)} |")
    yield ""


def _comparison(report: Mapping[str, Any]) -> Iterator[str]:
    comparison = report.get("comparison")
    if not isinstance(comparison, Mapping):
        yield from _no_baseline(report)
        return
    groups = [(label, comparison.get(key)) for key, label in COMPARISON_GROUPS]
    yield "### Compared with the baseline"
    yield ""
    yield from _baseline_source(report)
    yield md_text(comparison_line(dict(comparison)))
    yield ""
    yield "| Change | Count | Cases |"
    yield "|---|---:|---|"
    for label, items in groups:
        items = items if isinstance(items, list) else []
        ids = [item.get("id") if isinstance(item, Mapping) else item for item in items]
        shown = ", ".join(md_code(display_text(i), in_table=True) for i in ids[:20])
        more = f" and {len(ids) - 20} more" if len(ids) > 20 else ""
        yield f"| {label} | {len(ids)} | {shown}{more} |"
    yield ""


def _evidence(report: Mapping[str, Any], links: SourceLinks) -> Iterator[str]:
    """Each regression and each drop within noise with its evidence (the first 20 of each)."""
    comparison = report.get("comparison")
    if not isinstance(comparison, Mapping):
        return
    for group, label in EVIDENCE_GROUPS:
        entries = [entry for entry in comparison.get(group) or [] if isinstance(entry, Mapping)]
        if not entries:
            continue
        yield f"#### {label}"
        yield ""
        for entry in entries[:20]:
            where = _location(entry, links)
            yield (f"- {md_code(display_text(entry.get('id')))}{f' ({where})' if where else ''} — "
                   f"{md_text(preview(entry.get('evidence') or '', 500))}")
        if len(entries) > 20:
            yield f"- … and {len(entries) - 20} more (`report.json`: `comparison.{group}`)"
        yield ""


def _fetched_baseline(report: Mapping[str, Any]) -> Mapping[str, Any]:
    """report.json's `metadata.baseline`: where `--baseline auto` found the baseline, or why it found none."""
    source = (report.get("metadata") or {}).get("baseline")
    return source if isinstance(source, Mapping) else {}


def _no_baseline(report: Mapping[str, Any]) -> Iterator[str]:
    """Why a run that asked for the base branch's report (`--baseline auto`) has no comparison."""
    source = _fetched_baseline(report)
    if source and not source.get("found"):
        yield f"> ℹ️ **No comparison with the base branch:** {md_text(source.get('reason'))}"
        yield ""


def _baseline_source(report: Mapping[str, Any]) -> Iterator[str]:
    """The run the fetched baseline came from, linked."""
    source = _fetched_baseline(report)
    if source.get("found"):
        text = md_text(source.get("description"))
        url = source.get("run_url")
        linked = isinstance(url, str) and url.startswith(("https://", "http://"))
        yield f"Baseline: [{text}]({url})" if linked else f"Baseline: {text}"
        yield ""


def _failure_details(result: Mapping[str, Any], links: SourceLinks, chars: int) -> Iterator[str]:
    icon = STATUS_ICONS.get(result.get("status"), "")
    title = md_html(case_title(result))
    yield "<details>"
    yield f"<summary>{icon} <code>{title}</code> ({md_html(result.get('status'))})</summary>"
    yield ""
    where = _location(result, links)
    if where:
        yield f"📄 {where}"
        yield ""
    verdicts = result.get("assertions") or []
    if verdicts:
        yield "| | Assertion | Message | Expected | Actual |"
        yield "|---|---|---|---|---|"
        for verdict in verdicts:
            mark = "✅" if verdict.get("passed") else "❌"
            kind = ("not " if verdict.get("negate") else "") + display_text(verdict.get("type"))
            yield (f"| {mark} | {md_code(kind, in_table=True)} | {md_text(preview(verdict.get('message'), 500))} "
                   f"| {_cell_value(verdict_value(verdict, 'expected'))} "
                   f"| {_cell_value(verdict_value(verdict, 'actual'))} |")
        yield ""
        for verdict in verdicts:
            suggestions = (verdict.get("details") or {}).get("suggestions") or []
            if suggestions and not verdict.get("passed"):
                judge = (verdict.get("details") or {}).get("judge")
                yield f"💡 **Suggestions from the judge {md_code(judge)}:**"
                yield ""
                yield from (f"- {md_text(preview(text, 500))}" for text in suggestions[:10])
                yield ""
    elif result.get("error"):
        yield f"**Error:** {md_text(preview(result['error'], chars))}"
        yield ""
    if is_conversation(result):
        yield from _chat(result, chars)
    elif (conversation := transcript(result, chars)):
        yield "**Transcript**"
        yield ""
        yield md_block(preview(conversation, chars * 4))
        yield ""
    else:
        for label, key in (("Input", "input"), ("Output", "output")):
            if result.get(key) is not None:
                yield f"**{label}**"
                yield ""
                yield md_block(preview(result[key], chars))
                yield ""
    tools = tool_call_lines(result)
    if tools:
        yield "**Tool calls**"
        yield ""
        yield md_block(preview("\n".join(tools), chars))
        yield ""
    yield "</details>"
    yield ""


def _chat(result: Mapping[str, Any], chars: int) -> Iterator[str]:
    """A conversation as it reads: why it ended and how its guards fared, each turn's user and agent messages as
    quotes with the checkpoints it reached and the turn where it failed marked, then every checkpoint with what is
    missing."""
    metadata = result.get("metadata") or {}
    turns = [turn for turn in metadata.get("turns") or [] if isinstance(turn, Mapping)]
    rows = checkpoint_rows(dict(result))
    tally = f"{len(turns)} turn{'' if len(turns) == 1 else 's'}"
    if rows:
        tally += f", {sum(1 for row in rows if row.get('reached'))} of {len(rows)} checkpoints reached"
    why = ended(dict(result))
    yield f"**Conversation** — {tally}" + (f" · ended: {md_text(why)}" if why else "")
    yield ""
    guards = guard_summary(dict(result))
    if guards:
        yield f"🛡️ **Guards:** {md_text(guards)}"
        yield ""
    per_turn = max(200, chars // max(1, len(turns)))
    for turn in turns:
        source = f" · {md_text(turn['source'])}" if turn.get("source") else ""
        marked = " ❌" if turn.get("failed") or turn.get("error") else ""
        yield f"**Turn {md_text(turn.get('turn'))}**{source}{marked}"
        yield ""
        if turn.get("input") is not None:
            yield f"> 👤 {md_text(preview(turn['input'], per_turn))}"
            yield ""
        if "output" in turn:
            yield f"> 🤖 {md_text(preview(turn.get('output'), per_turn))}"
            yield ""
        calls = ((turn.get("trace") or {}).get("tool_calls") or []) if isinstance(turn.get("trace"), Mapping) else []
        for call in calls:
            if isinstance(call, Mapping):
                yield f"⚙️ {md_code(call.get('name'))} {md_code(preview(call.get('arguments'), 200))}  "
        for reached in turn.get("checkpoints_reached") or []:
            yield f"✅ checkpoint {md_code(reached)} reached  "
        for key in ("failed", "error"):
            if turn.get(key):
                yield f"❌ {md_text(preview(turn[key], 500))}  "
        yield ""
    if rows:
        yield "| | Checkpoint | Required | Reached at | Why not |"
        yield "|---|---|---|---|---|"
        for row in rows:
            cells = checkpoint_cells(row, 300, rows)
            yield (f"| {cells.mark} | {md_code(cells.id, in_table=True)} | {cells.required} | "
                   f"{md_text(cells.reached)} | {md_text(cells.why)} |")
        yield ""
    missing = missing_checkpoints(dict(result))
    if missing:
        yield "**Not reached:** " + ", ".join(md_code(name) for name in missing)
        yield ""


def _cell_value(value: Any) -> str:
    return "" if value is None else md_code(preview(value, 200), in_table=True)


def _passed_list(results: Sequence[dict[str, Any]], failing: int, links: SourceLinks) -> Iterator[str]:
    """The passed and skipped cases (all but the `failing`), read as they are listed rather than all held."""
    count = len(results) - failing
    if not count:
        return
    yield "<details>"
    yield f"<summary>Passed and skipped cases ({count})</summary>"
    yield ""
    for result in results:
        if is_failing(result):
            continue
        line = f"- {STATUS_ICONS.get(result.get('status'), '')} {_case_link(result, links)}"
        if result.get("name"):
            line += f" — {md_text(result['name'])}"
        if result.get("status") == "skipped" and result.get("error"):
            line += f" (skipped: {md_text(result['error'])})"
        yield line
    yield ""
    yield "</details>"
    yield ""


def _case_link(result: Mapping[str, Any], links: SourceLinks) -> str:
    text = md_text(result.get("id"))
    url = links.url(result.get("file"), result.get("line"))
    return f"[{text}]({url})" if url else text


def _file_link(path: str, links: SourceLinks) -> str:
    url = links.url(path)
    return f"[{md_text(links.display(path))}]({url})" if url else md_code(links.display(path))


def _location(result: Mapping[str, Any], links: SourceLinks) -> str:
    if not result.get("file"):
        return ""
    place = f"{links.display(result['file'])}:{result.get('line')}"
    url = links.url(result["file"], result.get("line"))
    return f"[{md_text(place)}]({url})" if url else md_code(place)
