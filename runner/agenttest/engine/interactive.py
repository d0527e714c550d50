"""Conversations with people in them: a person at the terminal who plays the user (`--interactive`), conversations
saved as `turns` cases that replay them (`--save-conversation`), and what the run does with cases written for a
person (`--skip-interactive`) or a conversation whose fixed turns ran out (`--on-missing-input`)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import click

from ..cases.model import Case
from ..config import RunConfig
from ..errors import UsageError
from ..github.log import write_lines
from ..secrets import mask
from ..workspace import repository_root, write_refusal

_NOT_SAVED = ("id", "name", "description", "mode", "input", "assert", "assertions", "expected", "simulator", "turns",
              "max_turns", "interactive", "skip")
_WIDTH = 100


@dataclass
class ConversationSettings:
    """What the run's options ask of conversations."""

    person: Person | None = None            # --interactive: who types the simulated user's turns
    saver: ConversationSaver | None = None  # --save-conversation FILE
    on_missing_input: str = "ignore"        # skip | fail | ignore: the fixed turns ran out, the agent awaits input
    skip_interactive: bool = False
    terminal: bool = False                  # a person could type: stdin is a terminal

    def skipped(self, case: Case) -> str | None:
        """Why the case is skipped before it starts (`--skip-interactive` without a terminal), or None."""
        if self.skip_interactive and not self.terminal and case.interactive is not None and case.interactive.enabled:
            return "interactive: written for a person at a terminal, and there is none (--skip-interactive)"
        return None


def conversation_settings(config: RunConfig, stdin: TextIO | None = None,
                          out: TextIO | None = None) -> ConversationSettings:
    """The settings of a run. UsageError (exit 2, before any case ran) for `--interactive` without a terminal to
    type on, and for a `--save-conversation` path agenttest must not write."""
    options = config.options
    stdin = stdin if stdin is not None else sys.stdin
    terminal = _is_terminal(stdin)
    if options.interactive and not terminal:
        raise UsageError("--interactive: a person types the user's turns, and stdin is not a terminal; in CI give "
                         "the conversation a simulator, scripted replies or fixed turns instead")
    saver = None
    if options.save_conversation:
        path = config.cwd / options.save_conversation
        why = write_refusal(path, repository_root(config.cwd))
        if why is None and path.is_dir():
            why = "it is a directory"
        if why:
            raise UsageError(f"--save-conversation {options.save_conversation}: {why}; agenttest will not write "
                             "there")
        saver = ConversationSaver(path, options.save_conversation)
    out = out if out is not None else sys.stdout
    person = Person(stdin, out, _colour(options.color, out)) if options.interactive else None
    return ConversationSettings(person=person, saver=saver, on_missing_input=options.on_missing_input,
                                skip_interactive=options.skip_interactive, terminal=terminal)


def _is_terminal(stream: TextIO | None) -> bool:
    try:
        return stream is not None and stream.isatty()
    except ValueError:      # closed
        return False


class Person:
    """A person at the terminal who plays the user: sees each turn (the reply, the tool calls, the checkpoints
    reached) and types the user's turns. An empty line lets the simulator write the turn; `/done` or Ctrl-D ends
    the conversation, as a simulated user says its goal is achieved."""

    def __init__(self, stdin: TextIO, out: TextIO, colour: bool = False) -> None:
        self._stdin = stdin
        self._out = out
        self._colour = colour
        self._typed_ahead = b""

    def begin(self, case: Case, handing_over: bool) -> None:
        conversation = case.conversation
        title = f"[{_one_line(case.id, 80)}]" + (f" {_one_line(case.name, 80)}" if case.name else "")
        lines = ["", self._style(f"── conversation {title} " + "─" * 20, "cyan", bold=True)]
        if conversation is not None and conversation.persona:
            lines.append(f"   persona: {_one_line(conversation.persona, _WIDTH)}")
        if conversation is not None and conversation.goal:
            lines.append(f"   goal: {_one_line(conversation.goal, _WIDTH)}")
        lines.append(self._style("   You play the user. " + ("An empty line lets the simulator speak; " if handing_over
                                                            else "") + "/done or Ctrl-D ends the conversation.",
                                 "blue"))
        self._write(lines, clear=True)

    def said(self, turn: dict[str, Any]) -> None:
        """A user turn the person did not type: the case's, or the simulator's."""
        who = "case" if turn.get("source") == "case" else str(turn.get("source"))
        self._write([f"{self._style(f'user ({who}) ›', 'blue')} {_text(turn.get('input'))}"])

    def replied(self, turn: dict[str, Any], reached_ids: list[str]) -> None:
        """The agent's reply to a turn, its tool calls, the checkpoints it reached and what failed at it."""
        lines = []
        if turn.get("output") is not None:
            lines.append(f"{self._style('agent ›', 'green')} {_text(turn.get('output'))}")
        for call in (turn.get("trace") or {}).get("tool_calls") or []:
            lines.append(f"   ⚙ {_one_line(call.get('name'), 80)}({_one_line(call.get('arguments'), _WIDTH)})")
        lines.extend(self._style(f"   ✓ checkpoint {_one_line(cid, 80)} reached", "green") for cid in reached_ids)
        for problem in (turn.get("failed"), turn.get("error")):
            if problem:
                lines.append(self._style(f"   ✗ {_one_line(problem, 300)}", "red"))
        self._write(lines)

    def end(self, why: str, saved: str | None) -> None:
        lines = [self._style(f"── ended: {why}", "cyan")]
        if saved:
            lines.append(self._style(f"   saved as {saved}", "cyan"))
        self._write(lines)

    async def ask(self, turn: int) -> str | None:
        """The turn the person types (stripped; "" for an empty line), or None when they end the conversation."""
        self._out.write(self._style(f"you (turn {turn}) › ", "yellow", bold=True))
        self._out.flush()
        line = await self._line()
        if line is None or line.strip() == "/done":
            return None
        return line.strip()

    async def _line(self) -> str | None:
        """One line from stdin, read without blocking the event loop (a cancelled case stops reading); None at the
        end of input."""
        while b"\n" not in self._typed_ahead:
            chunk = await self._read()
            if not chunk:
                if not self._typed_ahead:
                    return None
                self._typed_ahead += b"\n"       # the last line, without its newline
            self._typed_ahead += chunk
        line, _, self._typed_ahead = self._typed_ahead.partition(b"\n")
        return line.decode("utf-8", "replace").rstrip("\r")

    async def _read(self) -> bytes:
        """What the terminal has for us (a line, as a terminal hands them over), b"" at the end of input."""
        loop = asyncio.get_running_loop()
        waiting: asyncio.Future[bytes] = loop.create_future()
        try:
            descriptor = self._stdin.fileno()
            loop.add_reader(descriptor, self._readable, descriptor, waiting)
        except (NotImplementedError, OSError, ValueError):     # no readers (Windows): a thread reads a line
            line = await loop.run_in_executor(None, self._stdin.readline)
            return line.encode("utf-8")
        try:
            return await waiting
        finally:
            loop.remove_reader(descriptor)

    @staticmethod
    def _readable(descriptor: int, waiting: asyncio.Future[bytes]) -> None:
        if waiting.done():
            return
        try:
            waiting.set_result(os.read(descriptor, 4096))
        except OSError:           # the terminal went away
            waiting.set_result(b"")

    def _write(self, lines: list[str], clear: bool = False) -> None:
        if clear and _is_terminal(self._out):
            self._out.write("\r\033[K")      # the live progress line of the console
        write_lines(self._out, [mask(line) for line in lines])

    def _style(self, text: str, colour: str, bold: bool = False) -> str:
        return click.style(text, fg=colour, bold=bold) if self._colour else text


def _text(value: Any) -> str:
    """A turn's text as the terminal shows it: safe (no escape sequence, no control character), multi-line
    indented under its speaker."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    shown = [_one_line(line, 2000) for line in text.splitlines()[:40]] or [""]
    return "\n        ".join(shown)


class ConversationSaver:
    """Appends each conversation, as said, to a suite file as a `turns` case that replays it: every user turn a
    fixed one (a fixed turn keeps its assertions), the checkpoints, guards and final assertions kept."""

    def __init__(self, path: Path, shown: str) -> None:
        self.path = path
        self.shown = shown

    def save(self, case: Case, turns: list[dict[str, Any]]) -> str:
        """Append the case's conversation (its turn records) and return the new case's id. OSError when the file
        cannot be written."""
        raw = case.raw if isinstance(case.raw, dict) else {}
        written = raw.get("turns") if isinstance(raw.get("turns"), list) else []
        steps = []
        for turn in turns:
            if "input" not in turn:
                continue
            index = turn.get("step")
            if isinstance(index, int) and index < len(written):
                steps.append(written[index])
            elif turn.get("source") == "case" and "input" in raw:
                steps.append(_opening_turn(raw))
            else:
                steps.append({"input": turn["input"]})
        existing = self.path.read_text(encoding="utf-8", errors="replace") if self.path.is_file() else ""
        origin = f"{case.file}:{case.line}" if case.file else case.source or "a direct message"
        saved: dict[str, Any] = {"id": _free_id(f"{case.id}-saved", existing)}
        if case.name:
            saved["name"] = case.name
        saved["description"] = f"saved by --save-conversation from case {case.id} ({origin})"
        saved["turns"] = steps
        saved.update((key, value) for key, value in raw.items() if key not in _NOT_SAVED)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lead = "\n" if existing and not existing.endswith("\n") else ""
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(lead + json.dumps(saved, ensure_ascii=False) + "\n")
        return saved["id"]


def _free_id(wanted: str, existing: str) -> str:
    """`wanted`, or `wanted-2`, `wanted-3`…: an id no case of the suite text `existing` has yet."""
    taken = set()
    for line in existing.splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict) and isinstance(value.get("id"), str):
            taken.add(value["id"])
    number, candidate = 1, wanted
    while candidate in taken:
        number += 1
        candidate = f"{wanted}-{number}"
    return candidate


def _opening_turn(raw: dict[str, Any]) -> dict[str, Any]:
    """The case's top-level `input` as a turn; a single-turn case written for a person keeps its assertions (or
    its `expected`) on it, a dynamic case has none there."""
    turn: dict[str, Any] = {"input": raw["input"]}
    if "simulator" in raw or "checkpoints" in raw:
        return turn
    for key in ("assert", "assertions"):
        if key in raw:
            turn[key] = raw[key]
    if "expected" in raw and len(turn) == 1:
        turn["assert"] = {"type": "equals", "value": raw["expected"]}
    return turn


def _one_line(value: Any, limit: int) -> str:
    # Imported when a person is at the terminal only: a run without --interactive loads no module of report/
    # beyond report.base (tests/test_code_shape.py).
    from ..report.escape import one_line

    return one_line(value, limit)


def _colour(choice: str, out: TextIO) -> bool:
    from ..report.console import use_colour

    return use_colour(choice, _is_terminal(out))
