"""What the artifacts say about one case of a report.json dict: its first reason, its verdicts, its transcript.

JUnit, Markdown, HTML, CTRF and annotations all describe failures the same way; the wording lives here once.
Everything returned is raw (unescaped) text: each writer escapes it for its own format through `escape`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from ..analysis import case_key, exit_code, failures_under_regression, no_case_ran, pass_rate_text, run_ok
from ..analysis.outcome import interval_text
from ..analysis.stability import STOP_REASONS
from ..durations import format_ms
from ..hints import plural
from ..run_count import FIRST_RUNS, auto_limit
from ..usage import estimated_roles, format_usd
from .escape import display_text, one_line, preview

FAILING = ("failed", "error", "timeout")
STATUS_ICONS = {"passed": "✅", "failed": "❌", "error": "🔥", "timeout": "⏱️", "skipped": "⏭️"}
PREVIEW_CHARS = 2000


@dataclass(frozen=True)
class RunVerdict:
    """A finished run as every report states it — the console's banner, the summary's status line — so that they
    agree with its exit code. `state`: `passed`, `no_case_ran`, `failed` (the run fails), `tolerated` (cases did
    not pass, but `--fail-on` lets the run pass: `why` says how) or `interrupted`."""

    state: str
    failing: int = 0         # cases that failed, errored or timed out
    why: str = ""


def run_verdict(report: Mapping[str, Any]) -> RunVerdict:
    """The verdict of a report.json dict, by the `fail_on` it was run (or merged) with."""
    summary = report.get("summary") if isinstance(report.get("summary"), Mapping) else {}
    failing = sum(int(summary.get(key) or 0) for key in ("failed", "errors", "timeouts"))
    if report.get("interrupted"):
        return RunVerdict("interrupted", failing)
    if run_ok(report):
        return RunVerdict("no_case_ran" if no_case_ran(report) else "passed")
    options = (report.get("metadata") or {}).get("options") or {}
    fail_on = options.get("fail_on", "failure") if isinstance(options, Mapping) else "failure"
    comparison = report.get("comparison") if isinstance(report.get("comparison"), Mapping) else None
    regressions = failures_under_regression(comparison)
    budget = summary.get("budget") if isinstance(summary.get("budget"), Mapping) else {}
    if exit_code(False, fail_on, regressions, spent=bool(budget.get("spent"))):
        return RunVerdict("failed", failing)
    if fail_on == "never":
        return RunVerdict("tolerated", failing, "--fail-on never")
    return RunVerdict("tolerated", failing, _not_regressions(report, comparison or {}, failing))


def _not_regressions(report: Mapping[str, Any], comparison: Mapping[str, Any], failing: int) -> str:
    """Why the failing cases of a run without regressions are none: `3 failing cases were already failing`, or
    `3 failing cases: 2 already failing, 1 new`."""
    def keys(entries: Any) -> set[tuple[str, str]]:
        return {(str(e.get("file") or ""), str(e.get("id"))) for e in entries or [] if isinstance(e, Mapping)}

    kinds = {"already failing": keys(comparison.get("still_failing")), "noise": keys(comparison.get("noise")),
             "new": keys(comparison.get("new"))}
    counts = dict.fromkeys([*kinds, "not compared"], 0)
    for result in report.get("results") or []:
        if isinstance(result, Mapping) and result.get("status") in FAILING:
            key = (str(result.get("file") or ""), str(result.get("id")))
            counts[next((kind for kind, found in kinds.items() if key in found), "not compared")] += 1
    parts = [(count, kind) for kind, count in counts.items() if count]
    if not failing:          # the run failed otherwise (an AfterAll hook): nothing to explain case by case
        return "no case failed"
    if len(parts) == 1:
        count, kind = parts[0]
        verb = ("was" if count == 1 else "were") if kind == "already failing" else ("is" if count == 1 else "are")
        return f"{plural(failing, 'failing case')} {verb} {kind}"
    return f"{plural(failing, 'failing case')}: " + ", ".join(f"{count} {kind}" for count, kind in parts)


def human_time(stamp: str) -> str:
    """An RFC 3339 time as a reader wants it: `2026-01-05 14:03:07 UTC`; the text as given when it is no time."""
    try:
        moment = datetime.fromisoformat(stamp)
    except (TypeError, ValueError):
        return str(stamp)
    if moment.tzinfo is None:
        return moment.strftime("%Y-%m-%d %H:%M:%S")
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def is_failing(result: dict[str, Any]) -> bool:
    return result.get("status") in FAILING


def never_ran(result: dict[str, Any]) -> bool:
    """Skipped because the run stopped before the case (an interrupt, --fail-fast, a failed BeforeAll), not by
    the case's own `skip`: the engine marks these `"ran": false`."""
    return result.get("ran") is False


def failed_assertions(result: dict[str, Any]) -> list[dict[str, Any]]:
    return [a for a in result.get("assertions") or [] if not a.get("passed")]


def first_reason(result: dict[str, Any]) -> str:
    """One line saying why the case did not pass: its first failed assertion's message, else its error."""
    failed = failed_assertions(result)
    if result.get("status") == "failed" and failed and not result.get("stability"):
        return one_line(failed[0].get("message") or f"{failed[0].get('type')} assertion failed", 500)
    if result.get("error"):
        return one_line(result["error"], 500)
    return str(result.get("status", ""))


def failure_type(result: dict[str, Any]) -> str:
    """The first failed assertion's type (a failure), or the error kind (an error; `timeout` for a timeout). A
    conversation that failed otherwise says how: `guard`, `turn`, `deadline`, else `checkpoint`."""
    if result.get("status") == "failed":
        failed = failed_assertions(result)
        if failed:
            return str(failed[0].get("type"))
        if not is_conversation(result):
            return "assertion"
        return _FAILURE_TYPES.get(str((result.get("metadata") or {}).get("termination")), "checkpoint")
    if result.get("status") == "timeout":
        return "timeout"
    return str(result.get("error_kind") or "error")


def case_title(result: Mapping[str, Any]) -> str:
    """`ID: name`, or the id alone."""
    name = result.get("name")
    return one_line(f"{result.get('id')}: {name}" if name else result.get("id"), 300)


def verdict_lines(result: dict[str, Any], limit: int = 500) -> list[str]:
    """One line per assertion: `✗ contains: message (expected …, actual …)`; a judge's suggestions below it."""
    return [line for verdict in result.get("assertions") or [] for line in assertion_lines(verdict, limit)]


def assertion_lines(verdict: dict[str, Any], limit: int = 500) -> list[str]:
    mark = "✓" if verdict.get("passed") else "✗"
    kind = f"not {verdict.get('type')}" if verdict.get("negate") else verdict.get("type")
    line = f"{mark} {kind}: {one_line(verdict.get('message', ''), limit)}"
    if not verdict.get("passed"):
        details = [f"{key} {one_line(verdict_value(verdict, key), limit)}" for key in ("expected", "actual")
                   if verdict.get(key) is not None]
        if verdict.get("score") is not None:
            details.append(f"score {verdict['score']}")
        if details:
            line += f" ({'; '.join(details)})"
    suggestions = (verdict.get("details") or {}).get("suggestions") or []
    return [line, *(f"    suggestion: {one_line(text, limit)}" for text in suggestions)]


def verdict_value(verdict: Mapping[str, Any], key: str) -> Any:
    """An assertion's `expected` or `actual` as every report shows it: a latency in milliseconds as its message
    says it (`3.6ms`, not `3.559314999961316`), anything else as it is."""
    value = verdict.get(key)
    if verdict.get("type") == "latency" and isinstance(value, int | float) and not isinstance(value, bool):
        return format_ms(value)
    return value


def runs_line(result: dict[str, Any]) -> str | None:
    """`Runs: 2 of 3 passed (67%, 95% CI 20–94%, unstable, flaky): ✓ ✗ ✓` for a case run several times; under
    `--runs auto`, why its runs stopped too (`…, flaky; stopped: curtailed): …`)."""
    stability = result.get("stability")
    if not isinstance(stability, dict):
        return None
    marks = " ".join("✓" if run.get("status") == "passed" else "○" if run.get("ran") is False else "✗"
                     for run in result.get("runs") or [] if isinstance(run, dict))
    return f"Runs: {stability.get('passed')} of {stability.get('runs')} passed ({rate_note(stability)}): {marks}"


def rate_note(row: Mapping[str, Any]) -> str:
    """What a stability row says of its pass rate, for the parentheses after its counts: `67%, 95% CI 20–94%,
    unstable, flaky; stopped: curtailed`."""
    rate = row.get("pass_rate")
    parts = [f"{rate:.0f}%" if isinstance(rate, (int, float)) and not isinstance(rate, bool) else "?",
             interval_text(row.get("pass_rate_interval")), stability_class_text(row),
             "flaky" if row.get("flaky") else ""]
    note = ", ".join(part for part in parts if part)
    return note + (f"; stopped: {row['stopped']}" if row.get("stopped") in STOP_REASONS else "")


CONVERSATION_MODES = ("dynamic", "static")     # a conversation's `metadata.mode`: simulated turns, or fixed ones only


def is_conversation(result: dict[str, Any]) -> bool:
    return (result.get("metadata") or {}).get("mode") in CONVERSATION_MODES


_FAILURE_TYPES = {"guard_broken": "guard", "turn_failed": "turn", "deadline_missed": "deadline"}
_ENDINGS = {"checkpoints_reached": "every required checkpoint reached", "turns_completed": "turns completed",
            "max_turns": "max turns reached", "goal_achieved": "the user said its goal was achieved",
            "replies_exhausted": "the scripted replies ran out", "final_failed": "a final check failed"}


def ended(result: dict[str, Any]) -> str | None:
    """Why a conversation ended, in a few words (`guard no_delete broken at turn 2`, `turns completed`); None for
    a case that is no conversation, or one that ended before saying (an interrupt)."""
    metadata = result.get("metadata") or {}
    termination = metadata.get("termination")
    if not isinstance(termination, str):
        return None
    turn = metadata.get("failed_at_turn")
    at = f" at turn {display_text(turn)}" if turn is not None else ""
    if termination == "guard_broken":
        guards = metadata.get("guards") if isinstance(metadata.get("guards"), dict) else {}
        broken = next((display_text(gid) for gid, guard in guards.items()
                       if isinstance(guard, dict) and guard.get("broken_at_turn") is not None), None)
        return f"guard {broken} broken{at}" if broken else f"a guard was broken{at}"
    if termination == "deadline_missed":
        missed = next((row for row in checkpoint_rows(result) if row.get("deadline_missed")
                       and row.get("required", True) is not False), None)
        if missed is not None:
            return (f"checkpoint {display_text(missed.get('id'))} not reached by turn "
                    f"{display_text(missed.get('by_turn'))}")
    if termination == "turn_failed":
        return f"turn {display_text(turn)} failed"
    return _ENDINGS.get(termination, termination.replace("_", " ")) + at


def checkpoint_rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The checkpoints of a dynamic case, in the case's order."""
    checkpoints = (result.get("metadata") or {}).get("checkpoints") or {}
    return [row for row in checkpoints.values() if isinstance(row, dict)] if isinstance(checkpoints, dict) else []


@dataclass(frozen=True)
class CheckpointCells:
    """One checkpoint as the tables show it, raw (each writer escapes): mark, required, where reached, why not."""

    mark: str
    id: str
    required: str
    reached: str
    why: str


def checkpoint_cells(row: dict[str, Any], limit: int, rows: list[dict[str, Any]]) -> CheckpointCells:
    """One of the case's checkpoint `rows` as the tables show it."""
    reached = bool(row.get("reached"))
    required = row.get("required", True) is not False
    return CheckpointCells(mark="✅" if reached else ("❌" if required else "➖"), id=display_text(row.get("id")),
                           required="yes" if required else "no",
                           reached=f"turn {display_text(row.get('reached_at_turn'))}" if reached else "not reached",
                           why="" if reached else preview(why_not_reached(row, rows), limit))


def why_not_reached(row: dict[str, Any], rows: list[dict[str, Any]]) -> str:
    """Why a checkpoint was not reached: its last check's failure, or — never checked — what it waited for: the
    checkpoints of its `after` that were not reached, or a reply (the conversation ended before one)."""
    if row.get("message"):
        return str(row["message"])
    if row.get("checked"):
        return ""
    reached = {str(other.get("id")) for other in rows if other.get("reached")}
    waiting = [str(dep) for dep in row.get("after") or [] if str(dep) not in reached]
    if waiting:
        return f"never checked: it waits for {', '.join(waiting)} (after), not reached"
    return "never checked: the conversation ended before a reply it could check"


def guard_summary(result: dict[str, Any]) -> str | None:
    """`no_delete broken at turn 2 · no_canary held (2 replies)`: the guards of a conversation, or None."""
    guards = (result.get("metadata") or {}).get("guards")
    if not isinstance(guards, dict) or not guards:
        return None
    parts = []
    for guard_id, guard in guards.items():
        guard = guard if isinstance(guard, dict) else {}
        if guard.get("broken_at_turn") is not None:
            parts.append(f"✗ {display_text(guard_id)} broken at turn {display_text(guard['broken_at_turn'])}")
        else:
            checked = guard.get("checked") or 0
            parts.append(f"✓ {display_text(guard_id)} held ({plural(int(checked), 'reply', 'replies')})")
    return " · ".join(parts)


def checkpoint_lines(result: dict[str, Any], limit: int = 300) -> list[str]:
    """`✓ greets (turn 1)`, `✗ confirm: required, not reached — why`, `○ offer: optional, not reached`."""
    lines = []
    rows = checkpoint_rows(result)
    for row in rows:
        name = one_line(row.get("id"), 120)
        if row.get("reached"):
            lines.append(f"✓ {name} (turn {row.get('reached_at_turn')})")
            continue
        why = why_not_reached(row, rows)
        why = f" — {one_line(why, limit)}" if why else ""
        if row.get("required", True):
            lines.append(f"✗ {name}: required, not reached{why}")
        else:
            lines.append(f"○ {name}: optional, not reached{why}")
    return lines


def missing_checkpoints(result: dict[str, Any]) -> list[str]:
    return [str(row.get("id")) for row in checkpoint_rows(result)
            if row.get("required", True) and not row.get("reached")]


def tool_call_lines(result: dict[str, Any], limit: int = 300) -> list[str]:
    """The tool calls the agent asked for and the tools it executed, one line each."""
    trace = result.get("trace") or {}
    lines = [f"→ {call.get('name')}({one_line(call.get('arguments'), limit)})"
             for call in trace.get("tool_calls") or []]
    for tool in trace.get("tools") or []:
        error = tool.get("error")
        outcome = f"error {one_line(error, limit)}" if error else one_line(tool.get("result"), limit)
        lines.append(f"⚙ {tool.get('name')} → {outcome}")
    return lines


def transcript(result: dict[str, Any], limit: int = PREVIEW_CHARS) -> str | None:
    """The conversation of a multi-turn case (dynamic turns, or a message-list input and the reply), else None."""
    turns = (result.get("metadata") or {}).get("turns")
    if isinstance(turns, list) and (turns or is_conversation(result)):
        lines = _turn_lines(turns, limit)
        checkpoints = checkpoint_lines(result)
        if checkpoints:
            lines += ["── checkpoints", *(f"  {line}" for line in checkpoints)]
        why = ended(result)
        if why:
            lines.append(f"── ended: {why}")
        return "\n".join(lines)
    messages = result.get("input")
    if isinstance(messages, list) and len(messages) > 1 and all(isinstance(m, dict) for m in messages):
        lines = [f"{m.get('role', 'user')}: {preview(m.get('content'), limit)}" for m in messages]
        if result.get("output") is not None:
            lines.append(f"agent: {preview(result['output'], limit)}")
        return "\n".join(lines)
    return None


def _turn_lines(turns: Iterable[Any], limit: int) -> list[str]:
    lines: list[str] = []
    for turn in turns:
        if not isinstance(turn, dict):
            continue
        source = f" ({turn['source']})" if turn.get("source") else ""
        lines.append(f"── turn {turn.get('turn', len(lines) + 1)}{source}")
        if turn.get("input") is not None:
            lines.append(f"user: {preview(turn['input'], limit)}")
        if turn.get("output") is not None:
            lines.append(f"agent: {preview(turn['output'], limit)}")
        trace = turn.get("trace") or turn.get("response") or {}
        calls = trace.get("tool_calls") or [] if isinstance(trace, dict) else []
        lines.extend(f"  → {c.get('name')}({one_line(c.get('arguments'), 300)})" for c in calls if isinstance(c, dict))
        for reached in turn.get("checkpoints_reached") or []:
            lines.append(f"  ✓ checkpoint reached: {display_text(reached)}")
        if turn.get("failed"):
            lines.append(f"  ✗ {preview(turn['failed'], limit)}")
        if turn.get("error"):
            lines.append(f"  error: {preview(turn['error'], limit)}")
    return lines


def failure_body(result: dict[str, Any], limit: int = PREVIEW_CHARS, path: str | None = None) -> str:
    """Every assertion verdict, then the input and output previews (and tool calls): the text of a JUnit failure,
    ending `At: FILE:LINE` with `path`, the suite file as the other artifacts name it (repository-relative)."""
    parts = []
    verdicts = verdict_lines(result)
    if verdicts:
        parts.append("Assertions:\n" + "\n".join(f"  {line}" for line in verdicts))
    elif result.get("error"):
        parts.append(f"Error: {preview(result['error'], limit)}")
    why = ended(result)
    if why:
        parts.append(f"Ended: {why}")
    checkpoints = checkpoint_lines(result)
    if checkpoints:
        parts.append("Checkpoints:\n" + "\n".join(f"  {line}" for line in checkpoints))
    runs = runs_line(result)
    if runs:
        parts.append(runs)
    parts.append(f"Input:\n{preview(result.get('input'), limit)}")
    if result.get("output") is not None:
        parts.append(f"Output:\n{preview(result['output'], limit)}")
    tools = tool_call_lines(result)
    if tools:
        parts.append("Tool calls:\n" + "\n".join(f"  {line}" for line in tools))
    if result.get("file"):
        parts.append(f"At: {path or result['file']}:{result.get('line')}")
    return "\n\n".join(parts)


def stability_line(summary: dict[str, Any]) -> str:
    """`3 runs per case · overall pass rate 55.6% (95% CI 18–88%) · pass^1 0.56 · pass^3 0.33 · 1 flaky, 1 stable
    of 3`. Under `--runs auto`: `runs auto:10, 18 in all (3 agreed, 1 curtailed) · …`, and pass^k up to k = 3,
    which every case reached (above it, only the cases that ran on count)."""
    runs = summary.get("runs_per_case")
    limit = auto_limit(runs)
    hat = summary.get("pass_hat_k") or {}
    ks = [k for k in sorted(hat, key=int) if limit is None or int(k) <= FIRST_RUNS]
    figures = [f"pass^{k} {hat[k]:.2f}" for k in dict.fromkeys([ks[0], ks[-1]] if ks else [])]
    cases = summary.get("stable_cases", 0) + summary.get("unstable_cases", 0)
    head = f"{runs} runs per case"
    if limit is not None:
        stopped = summary.get("stopped") if isinstance(summary.get("stopped"), dict) else {}
        reasons = ", ".join(f"{stopped[reason]} {reason}" for reason in STOP_REASONS if stopped.get(reason))
        head = f"runs {runs}, {summary.get('total_runs', 0)} in all" + (f" ({reasons})" if reasons else "")
    rate = pass_rate_text(summary.get("overall_pass_rate"))
    interval = interval_text(summary.get("overall_pass_rate_interval"))
    overall = [f"overall pass rate {rate}%" + (f" ({interval})" if interval else "")] if rate else []
    return " · ".join([head, *overall, *figures,
                       f"{summary.get('flaky_cases', 0)} flaky, {summary.get('stable_cases', 0)} stable of {cases}"])


def comparison_line(comparison: dict[str, Any]) -> str:
    """`2 regressions, 1 within noise, 1 fix, 3 new, 0 removed, 1 failing new or changed · pass rate 80.0% →
    75.0%` (`within noise` only when some drop was noise)."""
    counts = comparison.get("counts") or {}
    words = [(counts.get("regressions", 0), "regression", "regressions"), (counts.get("fixes", 0), "fix", "fixes"),
             (counts.get("new", 0), "new", "new"), (counts.get("removed", 0), "removed", "removed")]
    if counts.get("noise"):             # drops that chance explains: not regressions
        words.insert(1, (counts["noise"], "within noise", "within noise"))
    text = ", ".join(f"{n} {one if n == 1 else many}" for n, one, many in words)
    if counts.get("introduced"):        # failing, and not failing in the baseline as it is now
        text += f", {counts['introduced']} failing new or changed"
    rate = comparison.get("pass_rate") or {}
    if isinstance(rate.get("before"), (int, float)) and isinstance(rate.get("now"), (int, float)):
        text += f" · pass rate {pass_rate_text(rate['before'])}% → {pass_rate_text(rate['now'])}%"
    return text


def replay_line(replay: Mapping[str, Any]) -> str:
    """What a replayed run's cassettes are worth, in one line (report.json's `replay`): whether the change under
    test changed them — then the recorded replies, judge verdicts included, are the change's own."""
    directory = display_text(replay.get("directory"))
    if replay.get("could_not_tell"):
        why = display_text(replay["could_not_tell"])
        return f"replayed from {directory}; could not tell whether they were changed: {why}"
    pull_request = bool(replay.get("pull_request_base"))
    base = f"its base commit {display_text(replay.get('compared_with'))[:12]}"
    changed = replay.get("changed") if isinstance(replay.get("changed"), list) else []
    if not changed:
        return (f"replayed from {directory}, which this pull request did not change (compared with {base})"
                if pull_request else f"replayed from {directory}, unchanged since the last commit")
    names = ", ".join(display_text(name) for name in changed[:5]) + (f" and {len(changed) - 5} more"
                                                                if len(changed) > 5 else "")
    if pull_request:
        return (f"replayed from cassettes this pull request changed (compared with {base}): {names} — their "
                "recorded replies, judge verdicts included, are the pull request's own")
    return (f"replayed from cassettes changed since the last commit: {names} — their recorded replies, judge "
            "verdicts included, are not the committed ones")


def record_line(record: Mapping[str, Any]) -> str:
    """Where `--record` put the cassettes (report.json's `metadata.record`), as the artifacts' line says where they
    are: `tests/cassettes/ (tests/agents/example.jsonl.json)`; the first five files, then how many more."""
    directory = display_text(record.get("directory")).rstrip("/") + "/"
    files = [display_text(name) for name in record.get("files") or []]
    if not files:
        return f"{directory} (nothing recorded)"
    more = f" and {len(files) - 5} more" if len(files) > 5 else ""
    return f"{directory} ({', '.join(files[:5])}{more})"


def cost_line(cost: dict[str, Any], usage: Mapping[str, Any] | None = None) -> str:
    """`$0.0123 (target $0.0100 · judge $0.0023)`; `~` marks an amount from estimated tokens (`usage`)."""
    estimated = estimated_roles(usage)
    roles = " · ".join(f"{role} {'~' if role in estimated else ''}{format_usd(float(value))}"
                       for role, value in cost.items() if role != "total_usd")
    about = "~" if estimated & set(cost) else ""
    return about + format_usd(float(cost.get("total_usd", 0))) + (f" ({roles})" if roles else "")


# The comparison's groups, in the order every report shows them, with their labels.
COMPARISON_GROUPS = (("regressions", "🔻 Regressions"), ("introduced", "🆕 Failing, new or changed"),
                     ("noise", "〰️ Noise, not regressions"), ("fixes", "🔺 Fixes"),
                     ("still_failing", "❌ Still failing"), ("new", "🆕 New"), ("removed", "➖ Removed"))
# The groups whose entries carry evidence (`analysis.noise`): what passed in the baseline and does not now.
EVIDENCE_GROUPS = (("regressions", "🔻 Regressions"), ("noise", "〰️ Noise, not regressions"))


@dataclass(frozen=True)
class Drop:
    """How the comparison judged a case that passed in the baseline and does not now: a regression or noise, and
    its evidence (raw text: each writer escapes it)."""

    regression: bool
    evidence: str

    @property
    def verdict(self) -> str:
        """`regression: 5/5 → 0/5, p = 0.0040`, `noise, not a regression: failed, then passed on recheck 1`."""
        return f"{'regression' if self.regression else 'noise, not a regression'}: {self.evidence}"


def drops(report: Mapping[str, Any]) -> dict[tuple[str, str], Drop]:
    """The report's regressions and noise by case key (`analysis.case_key`), each with its evidence."""
    comparison = report.get("comparison")
    if not isinstance(comparison, Mapping):
        return {}
    found = {}
    for group, _ in EVIDENCE_GROUPS:
        items = comparison.get(group)
        for item in items if isinstance(items, list) else []:
            if isinstance(item, Mapping):
                evidence = item.get("evidence")
                found[case_key(item)] = Drop(group == "regressions",
                                             one_line(evidence, 500) if evidence is not None else "")
    return found


def stability_rows(report: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The report's `stability_results` as the stability tables show them: flaky cases first, then those not
    counted as passed."""
    rows = [row for row in report.get("stability_results") or [] if isinstance(row, Mapping)]
    return sorted(rows, key=lambda row: (not row.get("flaky"), row.get("counted_as") == "passed"))


def stability_class_text(row: Mapping[str, Any]) -> str:
    """The row's `stability_label` (`mostly stable`, `stably failing`), or its class as people read it in a report
    written before labels were."""
    label = row.get("stability_label")
    return label if isinstance(label, str) else str(row.get("stability_class")).replace("_", " ")
