"""The GitHub Actions log: every line agenttest prints to it, and the stop-commands block that guards a run.

The runner reads stdout and stderr line by line and executes `::command::` at a line start and `##[command]`
anywhere, so an agent reply printed by the console could forge annotations, overwrite outputs, mask words or
swallow our own commands. `guarded_log` therefore puts the run's log inside a `::stop-commands::<random token>`
block and resumes commands (`::<token>::`) when the run ends, by an exception too. Only then are the workflow
commands the run produced printed: reporters hand them over with `print_commands` during their turn, and the
guard prints them after resuming, because the runner ignores every command inside the block.

`::add-mask::` is one of the commands the runner ignores inside the block (the secret would then be printed
verbatim), so `add_mask` closes an open block, asks for the mask and reopens the block with a fresh token, in one
write that no other line of the log can split.

Every line goes through `printable`: a lone surrogate (an agent replying "\\ud800") cannot be encoded, and the
exception would lose the annotations, the closing `::error::` and the action's outputs.

This module imports nothing from agenttest, so `secrets` can use it without an import cycle.
"""

from __future__ import annotations

import os
import re
import sys
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TextIO

_SURROGATE = re.compile("[\ud800-\udfff]")
_UTF8 = ("utf-8", "UTF-8", "utf8")
_lock = threading.RLock()          # the open block's token changes under it; providers may register from threads


def visible(char: str) -> str:
    """The visible form of a character a file or a log cannot hold: `#xD800` (pytest's `bin_xml_escape` form)."""
    code = ord(char)
    return f"#x{code:02X}" if code <= 0xFF else f"#x{code:04X}"


def printable(text: str, encoding: str | None = None) -> str:
    """`text` as a stream in `encoding` can take it: lone surrogates replaced by their visible `#xD800` form; in an
    encoding that lacks some of its characters (an ASCII locale, a legacy Windows console, `PYTHONIOENCODING=ascii`
    for a font without them), the symbols agenttest prints in their text forms (`[FAIL]`, `[ok]`, `->`) and any
    other missing character as `?`. Nothing is stripped or masked: the text is already what we mean to print."""
    encoding = encoding or "utf-8"
    if encoding in _UTF8:
        try:
            text.encode(encoding)       # fails exactly when a lone surrogate is there: else the text is printable
            return text
        except UnicodeEncodeError:
            pass
    text = _SURROGATE.sub(lambda match: visible(match.group()), text)
    try:
        text.encode(encoding)
    except UnicodeEncodeError:
        return text.translate(_TEXT_SYMBOLS).encode(encoding, "replace").decode(encoding)
    return text


# The symbols of the console, the status icons and the box drawing, in characters every encoding has.
_TEXT_SYMBOLS = str.maketrans({
    "✨": "*", "❌": "[FAIL]", "✅": "[OK]", "⚠": "[!]", "○": "o", "►": ">", "ℹ": "i", "✓": "[ok]", "✗": "[x]",
    "═": "=", "─": "-", "│": "|", "├": "|", "└": "`", "→": "->", "…": "...", "·": "-", "\ufe0f": None,
})


def escape_data(text: str) -> str:
    """`@actions/core`'s escapeData: `%`, CR and LF escaped, so a command stays on one line and the runner's
    unescaping gives the text back."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def write_lines(stream: TextIO, lines: Iterable[str]) -> None:
    """Print `lines` to the log in one write (so no other thread's line lands between them), then flush."""
    write_text(stream, "".join(f"{line}\n" for line in lines))


def write_text(stream: TextIO, text: str) -> None:
    """Print `text` (lines with their newlines) to the log in one write, then flush: the console's case lines of a
    turn of the run's loop."""
    if text:
        stream.write(printable(text, getattr(stream, "encoding", None)))
        stream.flush()


def write_line(stream: TextIO, line: str) -> None:
    """Print one line to the log: every line agenttest prints outside the console goes through here."""
    write_lines(stream, [line])


class GuardedLog:
    """One run's log: the token of its open stop-commands block, if any, and the commands waiting for it to close."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.token: str | None = None
        self.pending: list[tuple[TextIO, str]] = []
        self.firsts = 0         # how many of `pending` go before the others (print_commands `first`)

    def stop_lines(self) -> list[str]:
        """Open a block with a fresh random token; the line that opens it."""
        self.token = os.urandom(16).hex()     # what secrets.token_hex does, without importing hmac and hashlib
        return [f"::stop-commands::{self.token}"]

    def guard(self) -> None:
        """Open the block now, unless it is open already (a run that learns only from its options that it wants
        the guard)."""
        with _lock:
            if self.token is None:
                write_lines(self.stream, self.stop_lines())

    def resume_lines(self) -> list[str]:
        """Close the open block, if any; the line that closes it."""
        token, self.token = self.token, None
        return [f"::{token}::"] if token is not None else []


_current: GuardedLog | None = None


@contextmanager
def guarded_log(stream: TextIO | None = None, *, guard: bool) -> Iterator[GuardedLog]:
    """The log of one run: with `guard`, inside a stop-commands block from entry to exit (an exception included);
    on exit, once commands are resumed, the workflow commands handed over by `print_commands`."""
    global _current
    log = GuardedLog(stream or sys.stdout)
    with _lock:
        previous, _current = _current, log
        if guard:
            write_lines(log.stream, log.stop_lines())
    try:
        yield log
    finally:
        with _lock:
            _current = previous
            write_lines(log.stream, log.resume_lines())
            pending, log.pending, log.firsts = log.pending, [], 0
        for target, line in pending:
            write_line(target, line)


def print_commands(stream: TextIO, lines: Iterable[str], *, first: bool = False) -> None:
    """Workflow commands a reporter produced (annotations): printed when the run's guarded log closes, after
    commands are resumed; at once when no run is in progress. `first`: before the others handed over (a notice
    about the run, which the annotations' closing line then sums up)."""
    with _lock:
        if _current is not None:
            items = [(stream, line) for line in lines]
            at = _current.firsts if first else len(_current.pending)
            _current.pending[at:at] = items
            _current.firsts += len(items) if first else 0
            return
    write_lines(stream, lines)


def add_mask(value: str) -> None:
    """`::add-mask::value`, which the runner executes only outside a stop-commands block: an open block is closed
    around it and reopened with a fresh token."""
    with _lock:
        log = _current
        stream = log.stream if log is not None else sys.stdout
        lines = [f"::add-mask::{escape_data(value)}"]
        if log is not None and log.token is not None:
            lines = [*log.resume_lines(), *lines, *log.stop_lines()]
        write_lines(stream, lines)
