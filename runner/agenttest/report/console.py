"""The console: Yao's layout (header, one block per case, summary, banner); colour on a TTY and in GitHub Actions
logs, a live progress line on a TTY only."""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO

import click

from ..analysis import pass_rate_text, recheck_decision
from ..analysis.outcome import interval_text
from ..artifacts import artifact_paths
from ..cases.model import Case, InvalidCase
from ..config import RunConfig
from ..durations import format_duration, format_elapsed
from ..github.environment import in_github_actions
from ..github.log import write_line, write_text
from ..hints import plural
from ..results import CaseResult
from ..run_count import repeated
from ..secrets import mask
from ..usage import usage_line
from . import escape
from .base import Report, Reporter, RunInfo
from .escape import display_text
from .verdicts import (
    CONVERSATION_MODES,
    comparison_line,
    cost_line,
    record_line,
    replay_line,
    run_verdict,
    stability_class_text,
    stability_line,
)

WIDTH = 63
PROGRESS_EVERY = 10.0   # seconds between `[Progress: …]` lines when not on a TTY
_STATUS = {"passed": ("PASSED", "green"), "failed": ("FAILED", "red"), "error": ("ERROR", "red"),
           "timeout": ("TIMEOUT", "yellow"), "skipped": ("SKIPPED", "cyan")}


class ConsoleReporter(Reporter):
    """Prints each case's lines together when it finishes (completion order), so parallel runs stay readable."""

    def __init__(self, stream: TextIO, *, color: bool = False, live: bool = False, verbose: bool = False,
                 artifacts: str = "") -> None:
        self._out = stream
        self._artifacts = artifacts
        self._color = color
        self._live = live
        self._verbose = verbose
        self._total = 0
        self._done = 0
        self._running = 0
        self._last_progress = time.monotonic()
        self._live_shown = False
        self._not_run: dict[str, int] = {}
        self._unchecked = 0
        self._pending: list[str] = []   # what the cases of this turn print, written at once by `flush`

    def run_started(self, info: RunInfo) -> None:
        self._total = info.total
        self._line()
        self._line(self._style("═" * WIDTH, "cyan", bold=True))
        self._line(self._style("  Agent Test", "cyan", bold=True))
        self._line(self._style("═" * WIDTH, "cyan", bold=True))
        self._info(f"Agent: {info.agent_id}")
        if info.connector:
            self._info(f"Connector: {info.connector}")
        self._info(f"Input: {', '.join(info.inputs)} ({info.total} test {'case' if info.total == 1 else 'cases'})")
        self._info(f"Timeout: {info.options.get('timeout', format_duration(120))}")
        if int(info.options.get("parallel", 1)) > 1:
            self._info(f"Parallel: {info.options['parallel']}")
        if info.options.get("simulator"):
            self._info(f"Simulator: {info.options['simulator']}")
        for warning in info.warnings:
            self._line(self._style(f"⚠ {one_line(warning, 300)}", "yellow"))
        self._subheader("Running Tests")

    def case_started(self, case: Case | InvalidCase) -> None:
        self._running += 1
        self._progress()

    def case_finished(self, result: CaseResult) -> None:
        self._running = max(0, self._running - 1)
        self._done += 1
        self._clear_live()
        self._unchecked += unchecked(result)
        if not result.ran:      # counted, and said once in the summary rather than a line per case
            self._not_run[result.error or "not run"] = self._not_run.get(result.error or "not run", 0) + 1
        else:
            self._pending.extend(f"{mask(line)}\n" for line in self.case_lines(result))
        self._progress()

    def flush(self) -> None:
        """The lines of the cases that finished this turn, in one write."""
        if self._pending:
            text, self._pending = "".join(self._pending), []
            write_text(self._out, text)

    def rechecks_started(self, results: list[CaseResult], limit: int) -> None:
        self._clear_live()
        self._subheader("Rechecks")
        names = ", ".join(one_line(result.id, 80) for result in results[:10])
        more = f" and {len(results) - 10} more" if len(results) > 10 else ""
        self._line(f"  {plural(len(results), 'case')} passed in the baseline and not now ({names}{more}): each runs "
                   f"again, up to {plural(limit, 'time')}, until it passes")

    def case_rechecked(self, result: CaseResult) -> None:
        self._clear_live()
        decision = recheck_decision(result.to_dict())
        verdict = self._style("a regression", "red", bold=True) if decision.regression \
            else self._style("noise", "yellow", bold=True)
        self._line(f"↻ [{one_line(result.id, 80)}] {one_line(decision.evidence, 300)}: {verdict}")

    def run_finished(self, report: Report) -> None:
        self._clear_live()
        self._subheader("Summary")
        self._counts(report)
        comparison = report.data.get("comparison")
        if comparison:
            self._baseline(comparison)
        self._spending(report)
        self._notes(report)
        self._line()
        self._line("═" * WIDTH)
        self._banner(report)
        self._line("═" * WIDTH)
        self._line()

    def _counts(self, report: Report) -> None:
        """The agent, the cases by status, the pass rate, the duration and, over several runs, the stability."""
        s = report.summary
        self._line(f"  Agent:     {report.info.agent_id}")
        if report.info.connector:
            self._line(f"  Connector: {report.info.connector}")
        self._line(f"  Total:     {s.total}")
        self._line(f"  Passed:    {s.passed}")
        self._line(f"  Failed:    {s.failed}")
        for label, count in (("Skipped", s.skipped), ("Errors", s.errors), ("Timeouts", s.timeouts)):
            if count:
                self._line(f"  {label + ':':<10} {count}")
        if s.total > s.skipped:
            rate_colour = "green" if s.pass_rate == 100 else "yellow" if s.pass_rate >= 80 else "red"
            rate = pass_rate_text(report.data["summary"].get("pass_rate"))
            self._line(f"  Pass Rate: {self._style(f'{rate}%', rate_colour, bold=True)}")
        else:
            self._line("  Pass Rate: n/a (no case ran)")
        self._line(f"  Duration:  {format_elapsed(s.duration_ms / 1000)}")
        summary = report.data["summary"]
        if repeated(summary.get("runs_per_case", 1)):
            self._line(f"  Stability: {stability_line(summary)}")

    def _baseline(self, comparison: Mapping[str, Any]) -> None:
        """The comparison with the baseline, and the first ten regressions and drops within noise, each with its
        evidence."""
        self._line(f"  Baseline:  {comparison_line(comparison)}")
        for group, mark, word, colour in (("regressions", "✗", "regressed", "red"), ("noise", "○", "noise", "yellow")):
            entries = [entry for entry in comparison.get(group) or [] if isinstance(entry, Mapping)]
            for entry in entries[:10]:
                place = f" ({one_line(entry['file'], 120)}:{entry['line']})" \
                    if entry.get("file") and entry.get("line") else ""
                self._line(self._style(f"    {mark} {word}: {one_line(entry.get('id'), 80)}{place} "
                                       f"{one_line(entry.get('was'), 20)} → {one_line(entry.get('status'), 20)}",
                                       colour))
                if entry.get("evidence"):
                    self._line(f"        evidence: {one_line(entry['evidence'], 300)}")
            if len(entries) > 10:
                self._line(self._style(f"    … and {len(entries) - 10} more {word} (report.json: comparison.{group})",
                                       colour))

    def _spending(self, report: Report) -> None:
        """Tokens, cost, a spent budget, and what a replay played back."""
        summary = report.data["summary"]
        tokens = usage_line(report.usage.to_dict())
        if tokens:
            self._line(f"  Tokens:    {tokens}")
        if isinstance(summary.get("cost"), dict):
            self._line(f"  Cost:      {cost_line(summary['cost'], summary.get('usage'))}")
        spent = (summary.get("budget") or {}).get("spent")
        if spent:
            self._line(self._style(f"  ⚠ {spent}: the cases not yet started were skipped", "yellow", bold=True))
        replay = report.data.get("replay")
        if replay:
            changed = bool(replay.get("changed") or replay.get("could_not_tell"))
            self._line(self._style(f"  {'⚠' if changed else '○'} {replay_line(replay)}", "yellow", bold=changed))

    def _notes(self, report: Report) -> None:
        """What is worth a second look: cases that checked nothing or never ran, an interrupt, the run's errors
        (with the user's traceback when verbose), and where the artifacts are."""
        if self._unchecked:
            self._line(self._style(f"  ○ {plural(self._unchecked, 'case')} passed without checking anything "
                                   "(no assertion)", "yellow"))
        for reason, count in self._not_run.items():
            self._line(self._style(f"  ○ {count} {'case' if count == 1 else 'cases'} {reason}", "yellow"))
        if report.interrupted:
            self._line(self._style("  Interrupted: partial results", "yellow", bold=True))
        for error in (report.error or "").split("; ") if report.error else []:
            self._line(self._style(f"  ✗ {error}", "red", bold=True))
        if self._verbose and report.traceback:      # where in the user's BeforeAll/AfterAll it failed
            for line in report.traceback.splitlines():
                self._line(f"    │  {line}")
        record = report.data["metadata"].get("record")
        if record:
            self._line(f"  Cassettes: {one_line(record_line(record), 500)}")
        if self._artifacts:
            self._line(f"  Artifacts: {self._artifacts}")

    def _banner(self, report: Report) -> None:
        """The run's verdict in one line, as the exit code has it."""
        verdict = run_verdict(report.data)
        if verdict.state == "interrupted":
            self._line(self._style("  ⚠ INTERRUPTED: partial results", "yellow", bold=True))
        elif verdict.state == "no_case_ran":
            self._line(self._style(f"  ○ NO TEST RAN: {plural(report.summary.total, 'case')} skipped", "yellow",
                                   bold=True))
        elif verdict.state == "passed":
            self._line(self._style("  ✨ ALL TESTS PASSED ✨", "green", bold=True))
        elif verdict.state == "tolerated" and verdict.why != "--fail-on never":
            self._line(self._style(f"  ✅ NO REGRESSIONS ({verdict.why})", "green", bold=True))
        elif verdict.state == "tolerated":
            self._line(self._style(f"  ⚠ {plural(verdict.failing, 'CASE', 'CASES')} DID NOT PASS ({verdict.why}: "
                                   "the run does not fail)", "yellow", bold=True))
        else:
            self._line(self._style("  ❌ TESTS FAILED", "red", bold=True))

    def case_lines(self, result: CaseResult) -> list[str]:
        word, colour = _STATUS[result.status]
        status = f"{self._style(word, colour, bold=True)} ({format_elapsed(result.duration_ms / 1000)})"
        dynamic = conversation(result)
        title = one_line(result.name, 60) if dynamic and result.name else one_line(summarize_input(result.input), 50)
        head = f"► [{one_line(result.id, 80)}] {title}".rstrip()
        runs_note = _runs_note(result.stability)
        if dynamic:
            lines = [head, *self._conversation_lines(result.metadata or {}), f"  {status}"
                     + _checkpoint_tally(result.metadata or {}) + runs_note]
        else:
            lines = [f"{head} {status}{runs_note}"]
        if result.error and result.status != "skipped":
            where = f" ({result.file}:{result.line})" if result.error_kind == "invalid" and result.file else ""
            lines.append(f"  └─ {one_line(result.error, 300)}{where}")
        elif result.status == "skipped" and result.error:
            lines.append(f"  └─ {one_line(result.error, 200)}")
        direct = result.file is None and result.source is None
        if self._verbose or (direct and not dynamic):
            if result.output is not None and not dynamic:
                lines.append(f"  └─ Output: {one_line(display_text(result.output), 200 if self._verbose else 500)}")
            if self._verbose:
                for verdict in result.assertions:       # a conversation's are its final assertions
                    lines.extend(self._verdict_lines(verdict.to_dict(), "  │  final: " if dynamic else "  │  "))
        traceback = (result.trace or {}).get("traceback") if self._verbose else None
        if isinstance(traceback, str) and traceback:    # the user's own code that raised: agent, hook or script
            lines.extend(f"  │  {line}" for line in traceback.splitlines())
        if unchecked(result):
            lines.append(self._style("  └─ nothing was checked: " + (
                "a direct message has no assertion (to test the reply, write the case in a suite file with "
                "an `assert`)" if direct else "the case has no assertion and no `expected`"), "yellow"))
        return lines

    def _verdict_lines(self, verdict: dict[str, Any], indent: str) -> list[str]:
        mark = self._style("✓", "green") if verdict.get("passed") else self._style("✗", "red")
        lines = [f"{indent}{mark} {verdict.get('type')}: {one_line(verdict.get('message'), 200)}"]
        details = verdict.get("details") or {}
        for suggestion in details.get("suggestions") or []:
            lines.append(f"{indent}   suggestion: {one_line(suggestion, 200)}")
        return lines

    def _conversation_lines(self, metadata: dict[str, Any]) -> list[str]:
        """The seeds' tree: one `├─ Turn N: "user" → "agent"` line per turn, the checkpoints reached under it."""
        turns = [turn for turn in metadata.get("turns") or [] if isinstance(turn, dict)]
        checkpoints = metadata.get("checkpoints") or {}
        shown = turns if self._verbose or len(turns) <= 6 else [*turns[:2], None, *turns[-3:]]
        width = 80 if self._verbose else 40
        lines: list[str] = []
        for position, turn in enumerate(shown):
            last = position == len(shown) - 1
            branch, stem = ("└─", "   ") if last else ("├─", "│  ")
            if turn is None:
                lines.append(f"  │  … {len(turns) - 5} more turns (-v shows every turn)")
                continue
            said = f'"{one_line(summarize_input(turn.get("input")), width)}"'
            answer = f' → "{one_line(display_text(turn.get("output")), width)}"' if "output" in turn else ""
            lines.append(f"  {branch} Turn {turn.get('turn')}: {said}{answer}")
            notes: list[str] = []
            tools = [call.get("name") for call in (turn.get("trace") or {}).get("tool_calls") or []]
            for checkpoint_id in turn.get("checkpoints_reached") or []:
                tool_note = f" (tool: {', '.join(str(t) for t in tools)})" if tools else ""
                notes.append(f"{self._style('✓', 'green')} checkpoint: {one_line(checkpoint_id, 80)}{tool_note}")
            for key in ("failed", "error"):
                if turn.get(key):
                    notes.append(f"{self._style('✗', 'red')} {one_line(turn[key], 200)}")
            if self._verbose:
                for verdict in turn.get("assertions") or []:
                    notes.extend(line.strip() for line in self._verdict_lines(verdict, ""))
                for checkpoint in checkpoints.values():
                    if isinstance(checkpoint, dict) and checkpoint.get("reached_at_turn") == turn.get("turn"):
                        for verdict in checkpoint.get("assertions") or []:
                            notes.extend(line.strip() for line in self._verdict_lines(verdict, ""))
            for index, note in enumerate(notes):
                lines.append(f"  {stem}{'└─' if index == len(notes) - 1 else '├─'} {note}")
        return lines

    def _progress(self) -> None:
        text = f"[Progress: {self._done}/{self._total}, running {self._running}]"
        if self._live:      # written with the case lines
            self._pending.append(f"\r\033[K{text}")
            self._live_shown = True
        elif self._running and time.monotonic() - self._last_progress >= PROGRESS_EVERY:
            self._line(text)
            self._last_progress = time.monotonic()

    def _clear_live(self) -> None:
        if self._live_shown:
            self._pending.append("\r\033[K")
            self._live_shown = False

    def _subheader(self, title: str) -> None:
        self._line()
        self._line("─" * WIDTH)
        self._line(f"  {title}")
        self._line("─" * WIDTH)

    def _info(self, text: str) -> None:
        self._line(f"{self._style('ℹ', 'blue')} {text}")

    def _line(self, text: str = "") -> None:
        if self._pending:       # after what the cases printed
            self.flush()
        write_line(self._out, mask(text))

    def _style(self, text: str, colour: str, bold: bool = False) -> str:
        return click.style(text, fg=colour, bold=bold) if self._color else text


def use_colour(choice: str, terminal: bool, environ: Mapping[str, str] | None = None) -> bool:
    """Whether the console is coloured: `--color always|never` decide; `auto` follows no-color.org (`NO_COLOR` set
    and not empty: no colour) then force-color.org (`FORCE_COLOR` set and not empty: colour), then colours a
    terminal and a GitHub Actions log (which renders ANSI colour)."""
    if choice != "auto":
        return choice == "always"
    env = environ if environ is not None else os.environ
    if env.get("NO_COLOR"):
        return False
    if env.get("FORCE_COLOR"):
        return True
    return terminal or in_github_actions(env)


def artifact_places(config: RunConfig) -> str:
    """Where the run's files go, for the summary's last line: `agenttest-results/ (report.json, junit.xml, …)`, an
    artifact written elsewhere (`--junit`, `--summary`, `-o`) named by its own path."""
    inside: list[str] = []
    elsewhere: list[str] = []
    for path in artifact_paths(config).values():
        if path.parent == config.output_dir:
            inside.append(path.name)
        else:
            elsewhere.append(_shown(path, config.cwd))
    if config.options.output:
        elsewhere.append(_shown(config.cwd / config.options.output, config.cwd))
    directory = _shown(config.output_dir, config.cwd).rstrip("/") + "/"
    return ", ".join([f"{directory} ({', '.join(inside)})" if inside else directory, *elsewhere])


def _shown(path: Path, cwd: Path) -> str:
    """A path relative to the working directory when it lies below it, as the user would type it."""
    try:
        return path.resolve().relative_to(cwd.resolve()).as_posix() or "."
    except (ValueError, OSError, RuntimeError):     # RuntimeError: a symlink loop, before Python 3.13
        return str(path)


def unchecked(result: CaseResult) -> bool:
    """A case that passed with nothing to check: no assertion, no `expected`, no conversation."""
    return result.status == "passed" and not result.assertions and not conversation(result)


def conversation(result: CaseResult) -> bool:
    return (result.metadata or {}).get("mode") in CONVERSATION_MODES


def _runs_note(stability: dict[str, Any] | None) -> str:
    """` - 2/3 runs passed (67%, 95% CI 20–94%), unstable, flaky` for a case run several times; under `--runs
    auto`, why its runs stopped too (`…, flaky, stopped: curtailed`)."""
    if not stability:
        return ""
    interval = interval_text(stability.get("pass_rate_interval"))
    note = (f" - {stability['passed']}/{stability['runs']} runs passed ({stability['pass_rate']:.0f}%"
            f"{', ' + interval if interval else ''}), {stability_class_text(stability)}")
    note += ", flaky" if stability.get("flaky") else ""
    return note + (f", stopped: {stability['stopped']}" if stability.get("stopped") else "")


def _checkpoint_tally(metadata: dict[str, Any]) -> str:
    turns = metadata.get("total_turns", 0)
    tally = f" - {turns} turn{'' if turns == 1 else 's'}"
    if metadata.get("checkpoints_total"):
        tally += f", {metadata.get('checkpoints_reached', 0)}/{metadata['checkpoints_total']} checkpoints"
    return tally


def summarize_input(value: Any) -> str:
    """Yao's input preview: a string; a message's text; the last user message of a list; text parts joined (a
    message's content, as a turn keeps it, or a list of parts itself)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return _content_text(value.get("content"))
    if isinstance(value, list) and value and all(isinstance(p, dict) and "type" in p and "role" not in p
                                                 for p in value):
        return _content_text(value)
    if isinstance(value, list):
        for message in reversed(value):
            if isinstance(message, dict) and message.get("role", "user") == "user":
                return _content_text(message.get("content"))
        return f"[{len(value)} message{'' if len(value) == 1 else 's'}]"
    return display_text(value)


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else [content] if isinstance(content, dict) else []
    texts = [p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)]
    if texts:
        return "\n".join(texts)
    return f"[{len(parts)} content parts]" if parts else ""


def one_line(text: Any, width: int) -> str:
    """`escape.one_line` with Yao's `...`: secrets masked, whitespace collapsed, escape sequences (colours, OSC-8
    links) and control characters removed whole, cut to `width` characters."""
    return escape.one_line(text, width, ellipsis="...")
