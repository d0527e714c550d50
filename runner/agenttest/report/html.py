"""The HTML report (`agenttest -o report.html`): one self-contained page, no script, no external resource.

Every string from the report goes through `escape.html_text` (secrets masked, ANSI stripped, characters XML
forbids made visible, `& < > " '` escaped), so agent text can never become markup.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ..analysis import pass_rate_text
from ..analysis.outcome import interval_range
from ..durations import format_elapsed
from .escape import html_text, preview
from .verdicts import (
    COMPARISON_GROUPS,
    EVIDENCE_GROUPS,
    STATUS_ICONS,
    case_title,
    checkpoint_cells,
    checkpoint_rows,
    comparison_line,
    ended,
    first_reason,
    guard_summary,
    human_time,
    is_conversation,
    is_failing,
    run_verdict,
    stability_class_text,
    stability_line,
    stability_rows,
    tool_call_lines,
    transcript,
    verdict_value,
)

PREVIEW_CHARS = 20_000

_STYLE = """
body { font: 14px/1.45 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 2rem auto; max-width: 72rem;
       padding: 0 1rem; color: #1f2328; }
h1 { font-size: 1.6rem; } h2 { font-size: 1.2rem; margin-top: 2rem; }
table { border-collapse: collapse; margin: .5rem 0 1rem; }
th, td { border: 1px solid #d0d7de; padding: .3rem .6rem; text-align: left; vertical-align: top; }
td.n, th.n { text-align: right; } td.n, td.s { white-space: nowrap; }
pre { background: #f6f8fa; padding: .6rem; overflow: auto; max-height: 30rem; white-space: pre-wrap;
      word-break: break-word; }
details { border: 1px solid #d0d7de; border-radius: 6px; padding: .4rem .8rem; margin: .4rem 0; }
details[open] summary { margin-bottom: .5rem; }
summary { cursor: pointer; }
.passed { color: #1a7f37; } .failed, .error { color: #cf222e; } .timeout { color: #9a6700; }
.skipped { color: #57606a; } .meta { color: #57606a; } code { font-size: 90%; }
.chat .user, .chat .agent { border-radius: 8px; padding: .4rem .7rem; margin: .2rem 0; white-space: pre-wrap;
                             max-width: 80%; word-break: break-word; }
.chat .user { background: #ddf4ff; } .chat .agent { background: #f6f8fa; margin-left: 2rem; }
.chat .failed-turn { border-left: 4px solid #cf222e; padding-left: .6rem; }
"""


def render_html(report: Mapping[str, Any]) -> str:
    """The HTML page of a report.json dict."""
    return "\n".join(_page(report)) + "\n"


def _page(report: Mapping[str, Any]) -> Iterator[str]:
    summary = report.get("summary") or {}
    metadata = report.get("metadata") or {}
    results = list(report.get("results") or [])
    failing = [r for r in results if is_failing(r)]
    verdict = run_verdict(report)
    icon, word = {"passed": ("✅", "passed"), "no_case_ran": ("⏭️", "no case ran"), "failed": ("❌", "failed"),
                  "interrupted": ("⚠️", "interrupted")}.get(verdict.state, ("", ""))
    if verdict.state == "tolerated":
        icon, word = ("⚠️", f"failed ({verdict.why})") if verdict.why == "--fail-on never" else \
            ("✅", f"no regressions ({verdict.why})")
    title = f"agenttest: {word} ({summary.get('passed', 0)}/{summary.get('total', 0)})"
    yield "<!DOCTYPE html>"
    yield '<html lang="en">'
    yield "<head>"
    yield '<meta charset="utf-8">'
    yield '<meta name="viewport" content="width=device-width, initial-scale=1">'
    yield f"<title>{html_text(title)}</title>"
    yield f"<style>{_STYLE}</style>"
    yield "</head>"
    yield "<body>"
    yield f"<h1>{icon} {html_text(title)}</h1>"
    facts = [f"Agent <code>{html_text(summary.get('agent_id') or '?')}</code>"]
    if summary.get("connector"):
        facts.append(f"connector <code>{html_text(summary['connector'])}</code>")
    if metadata.get("input_file"):
        facts.append(f"input <code>{html_text(metadata['input_file'])}</code>")
    if metadata.get("started_at"):
        facts.append(f"started {html_text(human_time(str(metadata['started_at'])))}")
    if metadata.get("version"):
        facts.append(f"agenttest {html_text(metadata['version'])}")
    yield f'<p class="meta">{" · ".join(facts)}</p>'
    if report.get("error"):
        yield f'<p class="error"><strong>Run error:</strong> {html_text(report["error"])}</p>'
    if report.get("interrupted"):
        yield '<p class="timeout"><strong>Interrupted:</strong> the results are partial.</p>'
    yield from _comparison(report)
    yield from _counts(summary)
    yield from _stability(report)
    yield from _table(results)
    numbered = list(enumerate(results))
    if failing:
        yield "<h2>Failures</h2>"
        for index, result in numbered:
            if is_failing(result):
                yield from _case(index, result, open_=True)
    if len(failing) < len(results):
        yield "<h2>Passed and skipped</h2>"
        for index, result in numbered:
            if not is_failing(result):
                yield from _case(index, result, open_=False)
    yield "</body>"
    yield "</html>"


def _counts(summary: Mapping[str, Any]) -> Iterator[str]:
    columns = [("Total", "total"), ("Passed", "passed"), ("Failed", "failed"), ("Errors", "errors"),
               ("Timeouts", "timeouts"), ("Skipped", "skipped")]
    yield "<table>"
    yield "<tr>" + "".join(f'<th class="n">{label}</th>' for label, _ in columns) + \
        '<th class="n">Pass rate</th><th class="n">Duration</th></tr>'
    rate = pass_rate_text(summary.get("pass_rate"))
    cells = "".join(f'<td class="n">{html_text(summary.get(key, 0))}</td>' for _, key in columns)
    yield (f"<tr>{cells}<td class=\"n\">{f'{rate}%' if rate else 'n/a'}</td>"
           f"<td class=\"n\">{format_elapsed((summary.get('duration_ms') or 0) / 1000)}</td></tr>")
    yield "</table>"


def _stability(report: Mapping[str, Any]) -> Iterator[str]:
    rows = stability_rows(report)
    if not rows:
        return
    yield "<h2>Stability</h2>"
    yield f'<p class="meta">{html_text(stability_line(dict(report.get("summary") or {})))}</p>'
    auto = any(row.get("stopped") for row in rows)
    yield ('<table><tr><th>Case</th><th class="n">Runs</th><th class="n">Passed</th><th class="n">Pass rate</th>'
           f'<th class="n">95% CI</th>{"<th>Stopped</th>" if auto else ""}'
           "<th>Class</th><th>Flaky</th><th>Counted as</th></tr>")
    for row in rows:
        stopped = f"<td>{html_text(row.get('stopped') or '')}</td>" if auto else ""
        yield (f"<tr><td>{html_text(row.get('id'))}</td><td class=\"n\">{html_text(row.get('runs'))}</td>"
               f"<td class=\"n\">{html_text(row.get('passed'))}</td>"
               f"<td class=\"n\">{html_text(row.get('pass_rate'))}%</td>"
               f"<td class=\"n\">{html_text(interval_range(row.get('pass_rate_interval')))}</td>{stopped}"
               f"<td>{html_text(stability_class_text(row))}"
               f"</td><td>{'yes' if row.get('flaky') else ''}</td><td>{html_text(row.get('counted_as'))}</td></tr>")
    yield "</table>"


def _comparison(report: Mapping[str, Any]) -> Iterator[str]:
    comparison = report.get("comparison")
    if not isinstance(comparison, Mapping):
        return
    yield "<h2>Compared with the baseline</h2>"
    yield f'<p class="meta">{html_text(comparison_line(dict(comparison)))}</p>'
    yield "<table><tr><th>Change</th><th class=\"n\">Count</th><th>Cases</th></tr>"
    for key, label in COMPARISON_GROUPS:
        items = [item for item in comparison.get(key) or [] if isinstance(item, Mapping)]
        cases = ", ".join(f"<code>{html_text(item.get('id'))}</code>" for item in items[:50])
        yield f"<tr><td>{label}</td><td class=\"n\">{len(items)}</td><td>{cases}</td></tr>"
    yield "</table>"
    for key, label in EVIDENCE_GROUPS:        # each regression and drop within noise, with its evidence
        items = [item for item in comparison.get(key) or [] if isinstance(item, Mapping)]
        if items:
            yield f"<h3>{label}</h3><ul>"
            yield from (f"<li><code>{html_text(item.get('id'))}</code> — {html_text(item.get('evidence') or '')}"
                        "</li>" for item in items[:50])
            yield "</ul>"


def _table(results: list[dict[str, Any]]) -> Iterator[str]:
    yield "<h2>Cases</h2>"
    yield "<table>"
    yield '<tr><th>Case</th><th>Status</th><th class="n">Time</th><th>Where</th><th>Reason</th></tr>'
    for index, result in enumerate(results):
        status = str(result.get("status"))
        reason = first_reason(result) if status != "passed" else ""
        where = f"{result['file']}:{result.get('line')}" if result.get("file") else ""
        yield (f'<tr><td><a href="#case-{index}">{html_text(case_title(result))}</a></td>'
               f'<td class="s {html_text(status)}">{STATUS_ICONS.get(status, "")} {html_text(status)}</td>'
               f'<td class="n">{format_elapsed((result.get("duration_ms") or 0) / 1000)}</td>'
               f"<td><code>{html_text(where)}</code></td><td>{html_text(reason)}</td></tr>")
    yield "</table>"


def _case(index: int, result: Mapping[str, Any], open_: bool) -> Iterator[str]:
    status = str(result.get("status"))
    yield f'<details id="case-{index}"{" open" if open_ else ""}>'
    yield (f'<summary><span class="{html_text(status)}">{STATUS_ICONS.get(status, "")} {html_text(status)}</span> '
           f"<code>{html_text(case_title(result))}</code>"
           + (f" — {html_text(first_reason(result))}" if status != "passed" else "") + "</summary>")
    if result.get("file"):
        yield f'<p class="meta"><code>{html_text(result["file"])}:{html_text(result.get("line"))}</code></p>'
    verdicts = result.get("assertions") or []
    if verdicts:
        yield "<table><tr><th></th><th>Assertion</th><th>Message</th><th>Expected</th><th>Actual</th></tr>"
        for verdict in verdicts:
            kind = ("not " if verdict.get("negate") else "") + str(verdict.get("type"))
            yield (f"<tr><td>{'✅' if verdict.get('passed') else '❌'}</td><td><code>{html_text(kind)}</code></td>"
                   f"<td>{html_text(preview(verdict.get('message'), 2000))}</td>"
                   f"<td>{_value(verdict_value(verdict, 'expected'))}</td>"
                   f"<td>{_value(verdict_value(verdict, 'actual'))}</td></tr>")
        yield "</table>"
    elif result.get("error"):
        yield f"<p><strong>{'Reason' if status == 'skipped' else 'Error'}:</strong> {html_text(result['error'])}</p>"
    conversation = transcript(dict(result), PREVIEW_CHARS)
    if is_conversation(dict(result)):
        yield from _chat(index, result)
    elif conversation:
        yield f"<p><strong>Transcript</strong></p><pre>{html_text(conversation)}</pre>"
    else:
        yield f"<p><strong>Input</strong></p><pre>{html_text(preview(result.get('input'), PREVIEW_CHARS))}</pre>"
        if result.get("output") is not None:
            yield f"<p><strong>Output</strong></p><pre>{html_text(preview(result['output'], PREVIEW_CHARS))}</pre>"
    tools = tool_call_lines(dict(result))
    if tools:
        yield f"<p><strong>Tool calls</strong></p><pre>{html_text(chr(10).join(tools))}</pre>"
    yield "</details>"


def _chat(index: int, result: Mapping[str, Any]) -> Iterator[str]:
    """A conversation as a chat: why it ended and how its guards fared, each turn's messages with the checkpoints it
    reached and the turn where it failed marked, then every checkpoint."""
    turns = [turn for turn in (result.get("metadata") or {}).get("turns") or [] if isinstance(turn, Mapping)]
    why = ended(dict(result))
    if why:
        yield f'<p><strong>Ended:</strong> {html_text(why)}</p>'
    guards = guard_summary(dict(result))
    if guards:
        yield f"<p><strong>Guards:</strong> {html_text(guards)}</p>"
    yield '<div class="chat">'
    for turn in turns:
        failed = [turn[key] for key in ("failed", "error") if turn.get(key)]
        source = f" · {html_text(turn['source'])}" if turn.get("source") else ""
        yield (f'<div class="turn{" failed-turn" if failed else ""}" '
               f'id="case-{index}-turn-{html_text(turn.get("turn"))}">')
        yield f'<p class="meta">Turn {html_text(turn.get("turn"))}{source}{" ❌" if failed else ""}</p>'
        if turn.get("input") is not None:
            yield f'<div class="user">👤 {html_text(preview(turn["input"], 4000))}</div>'
        if "output" in turn:
            yield f'<div class="agent">🤖 {html_text(preview(turn.get("output"), 4000))}</div>'
        trace = turn.get("trace") if isinstance(turn.get("trace"), Mapping) else {}
        for call in trace.get("tool_calls") or []:
            if isinstance(call, Mapping):
                yield (f'<p class="meta">⚙️ <code>{html_text(call.get("name"))}</code> '
                       f'<code>{html_text(preview(call.get("arguments"), 500))}</code></p>')
        for reached in turn.get("checkpoints_reached") or []:
            yield f'<p class="passed">✅ checkpoint <code>{html_text(reached)}</code> reached</p>'
        for problem in failed:
            yield f'<p class="error">❌ {html_text(problem)}</p>'
        yield "</div>"
    yield "</div>"
    rows = checkpoint_rows(dict(result))
    if rows:
        yield "<table><tr><th></th><th>Checkpoint</th><th>Required</th><th>Reached at</th><th>Why not</th></tr>"
        for row in rows:
            cells = checkpoint_cells(row, 1000, rows)
            yield (f"<tr><td>{cells.mark}</td><td><code>{html_text(cells.id)}</code></td><td>{cells.required}</td>"
                   f"<td>{html_text(cells.reached)}</td><td>{html_text(cells.why)}</td></tr>")
        yield "</table>"


def _value(value: Any) -> str:
    return "" if value is None else f"<code>{html_text(preview(value, 500))}</code>"
