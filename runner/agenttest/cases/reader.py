"""Reading one suite file into raw entries: parsed JSON values, or why they cannot be cases, with their lines.

File format: one JSON object per line; blank lines and lines starting with `//` are skipped; a UTF-8 BOM and CRLF
line ends are tolerated. A file whose first non-blank, non-comment character is `[` is one JSON array of cases
(Yao cannot read those), `//` lines inside it are skipped too, and each case's line is the line where its element
starts. A file that cannot be read, or a JSON array file that is not valid UTF-8, is one entry in error at line 1
(or at the first bad line); in a JSONL file each line that is not valid UTF-8 is its own entry in error. JSON is
read strictly: NaN and Infinity are refused, and a key repeated in one object is an error.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

_BOM = b"\xef\xbb\xbf"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
_JSON_WHITESPACE = " \t\r\n"


@dataclass
class RawEntry:
    """One entry of a suite file before validation: its parsed JSON value, or why it cannot be a case."""

    line: int
    value: Any = None
    error: str | None = None
    text: str | None = None     # the entry's JSON as written (kept by a Case instead of the parsed value)


def read_entries(path: Path) -> Iterator[RawEntry]:
    """The entries of a suite file (JSONL or a JSON array), with 1-based line numbers. Never raises. A JSONL file is
    read a line at a time, each parsed as its entry is taken: a large suite's text and parsed values are never all
    in memory at once (its whole text and a list of its lines held ~0.3 KB a case while it was read)."""
    try:
        file = path.open("rb")
    except OSError as exc:
        return iter([_unreadable(1, exc)])
    try:
        head = file.read(len(_BOM))
        if head.startswith(_UTF16_BOMS):
            file.close()
            return iter([RawEntry(1, error="the file is UTF-16 encoded; save it as UTF-8")])
        start = len(_BOM) if head == _BOM else 0
        file.seek(start)
        first = next((line for line in map(_decoded, file) if not isinstance(line, str) or not _is_skipped(line)),
                     None)
        file.seek(start)
        if isinstance(first, str) and first.lstrip(_JSON_WHITESPACE).startswith("["):
            with file:
                data = file.read()
            # only \n ends a line, as in editors (str.splitlines also splits on \x1c, \u2028…)
            return iter(_array_entries([_decoded(line) for line in data.split(b"\n")]))
    except OSError as exc:
        file.close()
        return iter([_unreadable(1, exc)])
    return _jsonl_file(file)


def _jsonl_file(file: BinaryIO) -> Iterator[RawEntry]:
    """The entries of a JSONL file open at its first line, read a line at a time (a binary file's lines end at \n
    only, as in editors); closed at the end. A file that cannot be read further ends with an entry saying so."""
    with file:
        entries = _jsonl_entries(file)
        line = 0
        while True:
            try:
                entry = next(entries)
            except StopIteration:
                return
            except OSError as exc:
                yield _unreadable(line + 1, exc)
                return
            line = entry.line
            yield entry


def _unreadable(line: int, exc: OSError) -> RawEntry:
    return RawEntry(line, error=f"cannot read suite file: {exc.strerror or exc}")


def why_no_entries(path: Path) -> str:
    """Why a suite file holds no entry — `it is empty`, `it holds only comments and blank lines`, `it is an empty
    JSON array` — or "" when it holds some (or cannot be read: that is an entry of its own)."""
    try:
        text = path.read_bytes().removeprefix(_BOM).decode("utf-8", errors="replace")
    except OSError:
        return ""
    if not text.strip():
        return "it is empty"
    kept = [line for line in text.split("\n") if not _is_skipped(line)]
    if not kept:
        return "it holds only comments and blank lines"
    if "".join(kept).strip(_JSON_WHITESPACE) == "[]":
        return "it is an empty JSON array"
    return ""


def _decoded(line: bytes) -> str | UnicodeDecodeError:
    try:
        return line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc


def _is_skipped(line: str) -> bool:
    text = line.strip()
    return not text or text.startswith("//")


def _utf8_problem(exc: UnicodeDecodeError) -> str:
    return f"not valid UTF-8 (byte 0x{exc.object[exc.start]:02x} at byte {exc.start + 1} of the line)"


def _jsonl_entries(lines: Iterable[bytes]) -> Iterator[RawEntry]:
    reader = _JsonReader()
    for number, line in enumerate(map(_decoded, lines), start=1):
        if isinstance(line, UnicodeDecodeError):
            yield RawEntry(number, error=f"line is {_utf8_problem(line)}")
            continue
        if _is_skipped(line):
            continue
        text = line.strip()
        indent = len(line) - len(line.lstrip())
        try:
            value, end = reader.raw_decode(text, 0)
            end = _skip_whitespace(text, end)
            if end < len(text):
                raise json.JSONDecodeError("Extra data", text, end)
        except json.JSONDecodeError as exc:
            hint = ""
            if exc.pos >= len(text) and text[:1] in "{[":
                hint = " (each line must be one complete JSON object; write multi-line cases as a JSON array file)"
            elif exc.msg == "Extra data":
                hint = " (one JSON object per line)"
            yield RawEntry(number, error=f"invalid JSON: {exc.msg} at column {exc.colno + indent}{hint}")
        except (ValueError, RecursionError) as exc:
            yield RawEntry(number, error=_json_problem(exc))
        else:
            yield RawEntry(number, value=value, error=reader.repeated_key_problem(), text=text)


def _array_entries(lines: list[str | UnicodeDecodeError]) -> list[RawEntry]:
    """Each element of a JSON array file, at the line where it starts; a syntax error ends the file."""
    texts: list[str] = []
    for number, line in enumerate(lines, start=1):
        if isinstance(line, UnicodeDecodeError):
            return [RawEntry(number, error=f"the file is {_utf8_problem(line)}")]
        # Blanking comment lines keeps every offset's line; a JSON string cannot span lines, so none is cut.
        texts.append("" if _is_skipped(line) else line)
    text = "\n".join(texts)
    newlines = [i for i, ch in enumerate(text) if ch == "\n"]

    def line_at(pos: int) -> int:
        return bisect.bisect_left(newlines, pos) + 1

    reader = _JsonReader()
    entries: list[RawEntry] = []
    pos = _skip_whitespace(text, 0) + 1  # past the opening "["
    while True:
        pos = _skip_whitespace(text, pos)
        if pos < len(text) and text[pos] == "]":
            break
        if pos >= len(text):
            entries.append(RawEntry(line_at(pos), error="invalid JSON: the array is not closed (missing ']')"))
            return entries
        start = pos
        try:
            value, pos = reader.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            entries.append(RawEntry(exc.lineno, error=f"invalid JSON: {exc.msg} at column {exc.colno}"))
            return entries
        except (ValueError, RecursionError) as exc:
            entries.append(RawEntry(line_at(start), error=_json_problem(exc)))
            return entries
        entries.append(RawEntry(line_at(start), value=value, error=reader.repeated_key_problem(),
                                text=text[start:pos]))
        pos = _skip_whitespace(text, pos)
        if pos < len(text) and text[pos] == ",":  # a trailing comma before "]" is tolerated
            pos += 1
        elif pos >= len(text):
            entries.append(RawEntry(line_at(pos), error="invalid JSON: the array is not closed (missing ']')"))
            return entries
        elif text[pos] != "]":
            entries.append(RawEntry(line_at(pos), error="invalid JSON: expected ',' or ']' after an array element"))
            return entries
    pos = _skip_whitespace(text, pos + 1)
    if pos < len(text):
        entries.append(RawEntry(line_at(pos), error="invalid JSON: unexpected content after the array"))
    return entries


def _skip_whitespace(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in _JSON_WHITESPACE:
        pos += 1
    return pos


def _json_problem(exc: Exception) -> str:
    if isinstance(exc, RecursionError):
        return "invalid JSON: nested too deeply"
    return f"invalid JSON: {exc}"


class _JsonReader:
    """Strict JSON: NaN and Infinity are refused, and a key repeated inside one object is reported (json keeps
    the last one silently, which would hide e.g. a second `assert`)."""

    def __init__(self) -> None:
        self._repeated: list[str] = []
        self._decoder = json.JSONDecoder(object_pairs_hook=self._object, parse_constant=self._constant)

    def raw_decode(self, text: str, pos: int) -> tuple[Any, int]:
        """Decode one value starting at `pos`; then `repeated_key_problem()` tells whether it repeats a key."""
        self._repeated = []
        return self._decoder.raw_decode(text, pos)

    def repeated_key_problem(self) -> str | None:
        return f"duplicate key {self._repeated[0]!r} in one JSON object" if self._repeated else None

    def _object(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj = dict(pairs)
        if len(obj) != len(pairs):          # rare: only then find which key came twice
            seen: set[str] = set()
            self._repeated.extend(key for key, _ in pairs if key in seen or seen.add(key))
        return obj

    @staticmethod
    def _constant(name: str) -> Any:
        raise ValueError(f"{name} is not valid JSON")
