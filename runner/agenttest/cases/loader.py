"""Suites from `-i` values (files, directories, globs, direct messages), loaded into validated cases.

A broken entry never aborts loading: it becomes an InvalidCase at its line, reported as an `error` result, and the
other cases still run (Yao aborts the whole run). Only a bad `-i` value itself is a UsageError.

File format: one JSON object per line; blank lines and lines starting with `//` are skipped; a UTF-8 BOM and CRLF
line ends are tolerated. A file whose first non-blank, non-comment character is `[` is one JSON array of cases
(Yao cannot read those), `//` lines inside it are skipped too, and each case's line is the line where its element
starts. A file that cannot be read, or a JSON array file that is not valid UTF-8, is one InvalidCase at line 1 (or
at the first bad line); in a JSONL file each line that is not valid UTF-8 is its own InvalidCase.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from .. import assertions as _register_assertion_types  # noqa: F401  (importing the package fills the registry)
from ..assertions.base import REGISTRY, AssertionSpec, json_type, known_types, prepare_assertion
from ..errors import SuiteError
from ..hints import closest
from .inputs import InputError, normalize_input
from .model import Case, InvalidCase, Suite
from .schema import AssertionEntry, CaseEntry, describe_errors
from .sources import display_path, sources

INVALID = "invalid test case: "

_BOM = b"\xef\xbb\xbf"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
_JSON_WHITESPACE = " \t\r\n"


def load_suite(inputs: list[str], *, cwd: Path, repo_root: Path, exclude: Iterable[Path] = ()) -> Suite:
    """Load every `-i` value, in order, into one Suite.

    Raises UsageError for a value that names nothing loadable (a missing `.jsonl`/`.json` file, a glob matching no
    file, a directory without `*.jsonl`, a generator input). Every problem inside a file is an InvalidCase instead.
    """
    cwd = cwd.absolute()
    found = [source for value in inputs for source in sources(value, cwd, exclude)]
    builder = _SuiteBuilder(repo_root)
    loaded: set[Path] = set()
    for source in found:
        if isinstance(source, str):
            builder.add_message(source, cwd)
            continue
        real = source.resolve()
        if real in loaded:
            continue
        loaded.add(real)
        display = display_path(source, cwd)
        builder.suite.files.append(display)
        for entry in read_entries(source):
            builder.add_entry(entry, display, source.parent)
    return builder.suite


# -- reading a file into entries ---------------------------------------------------------------------------------


@dataclass
class RawEntry:
    """One entry of a suite file before validation: its parsed JSON value, or why it cannot be a case."""

    line: int
    value: Any = None
    error: str | None = None


def read_entries(path: Path) -> list[RawEntry]:
    """The entries of a suite file (JSONL or a JSON array), with 1-based line numbers. Never raises."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        return [RawEntry(1, error=f"cannot read suite file: {exc.strerror or exc}")]
    if data.startswith(_UTF16_BOMS):
        return [RawEntry(1, error="the file is UTF-16 encoded; save it as UTF-8")]
    if data.startswith(_BOM):
        data = data[len(_BOM):]
    lines: list[str | UnicodeDecodeError] = []
    for raw in data.split(b"\n"):  # only \n ends a line, as in editors (str.splitlines also splits on \x1c, \u2028…)
        try:
            lines.append(raw.decode("utf-8"))
        except UnicodeDecodeError as exc:
            lines.append(exc)
    first = next((line for line in lines if not isinstance(line, str) or not _is_skipped(line)), None)
    if isinstance(first, str) and first.lstrip(_JSON_WHITESPACE).startswith("["):
        return _array_entries(lines)
    return list(_jsonl_entries(lines))


def _is_skipped(line: str) -> bool:
    text = line.strip()
    return not text or text.startswith("//")


def _utf8_problem(exc: UnicodeDecodeError) -> str:
    return f"not valid UTF-8 (byte 0x{exc.object[exc.start]:02x} at byte {exc.start + 1} of the line)"


def _jsonl_entries(lines: list[str | UnicodeDecodeError]) -> Iterator[RawEntry]:
    reader = _JsonReader()
    for number, line in enumerate(lines, start=1):
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
            yield RawEntry(number, value=value, error=reader.repeated_key_problem())


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
        entries.append(RawEntry(line_at(start), value=value, error=reader.repeated_key_problem()))
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
        obj: dict[str, Any] = {}
        for key, value in pairs:
            if key in obj:
                self._repeated.append(key)
            obj[key] = value
        return obj

    @staticmethod
    def _constant(name: str) -> Any:
        raise ValueError(f"{name} is not valid JSON")


# -- entries into cases -------------------------------------------------------------------------------------------


@dataclass
class _SuiteBuilder:
    """Turns entries into Cases or InvalidCases, in order, and refuses an id defined earlier in the run."""

    repo_root: Path
    suite: Suite = field(default_factory=Suite)
    first_defined: dict[str, str] = field(default_factory=dict)
    messages: int = 0

    def add_message(self, text: str, cwd: Path) -> None:
        self.messages += 1
        case_id = f"T{self.messages:03d}"
        entry: Case | InvalidCase = Case(id=case_id, input=text, messages=[{"role": "user", "content": text}],
                                         base_dir=cwd, raw={"id": case_id, "input": text})
        if case_id in self.first_defined:
            entry = InvalidCase(f"{INVALID}duplicate id {case_id!r} (first defined {self.first_defined[case_id]})",
                                id=case_id, input=text)
        else:
            self.first_defined[case_id] = "by a direct message (-i)"
        self.suite.entries.append(entry)

    def add_entry(self, raw: RawEntry, file: str, base_dir: Path) -> None:
        case_id, raw_input = _known_id_and_input(raw.value)
        problem = raw.error
        if problem is None and case_id is not None and case_id in self.first_defined:
            problem = f"duplicate id {case_id!r} (first defined {self.first_defined[case_id]})"
        elif case_id is not None:
            self.first_defined.setdefault(case_id, f"at {file}:{raw.line}")
        if problem is not None:
            self.suite.entries.append(InvalidCase(INVALID + problem, id=case_id, file=file, line=raw.line,
                                                  input=raw_input))
            return
        try:
            entry = build_case(raw.value, file=file, line=raw.line, base_dir=base_dir, repo_root=self.repo_root)
        except RecursionError:
            entry = InvalidCase(f"{INVALID}nested too deeply", id=case_id, file=file, line=raw.line)
        self.suite.entries.append(entry)


def _known_id_and_input(value: Any) -> tuple[str | None, Any]:
    """The entry's id (when it is a non-empty string) and raw input, for reporting an entry that is invalid."""
    if not isinstance(value, dict):
        return None, None
    case_id = value.get("id")
    return (case_id if isinstance(case_id, str) and case_id else None), value.get("input")


def build_case(value: Any, *, file: str | None, line: int | None, base_dir: Path,
               repo_root: Path) -> Case | InvalidCase:
    """Validate one parsed entry into a Case, or an InvalidCase listing every problem found (joined by `; `)."""
    case_id, raw_input = _known_id_and_input(value)

    def invalid(problems: list[str]) -> InvalidCase:
        return InvalidCase(INVALID + "; ".join(problems), id=case_id, file=file, line=line, input=raw_input)

    if not isinstance(value, dict):
        return invalid([f"expected a JSON object, got {json_type(value)}"])
    try:
        entry = CaseEntry.model_validate(value)
    except ValidationError as exc:
        return invalid(describe_errors(exc, CaseEntry))
    if entry.is_dynamic:
        return invalid(["dynamic cases (simulator + checkpoints) are not supported yet"])
    problems: list[str] = []
    messages: list[dict[str, Any]] = []
    if entry.input is None:
        problems.append("missing required field 'input'")
    else:
        try:
            messages = normalize_input(entry.input, base_dir=base_dir, repo_root=repo_root)
        except InputError as exc:
            problems.append(str(exc))
    specs = _assertion_specs(entry, base_dir, problems)
    if problems:
        return invalid(problems)
    return Case(
        id=entry.id, input=entry.input, messages=messages, assertions=specs, expected=entry.expected,
        has_expected="expected" in entry.model_fields_set, name=entry.name,
        options={k: v for k, v in value.get("options", {}).items() if v is not None} if entry.options else {},
        user=entry.user, team=entry.team, metadata=entry.metadata, skip=entry.skip_reason,
        timeout=entry.timeout_seconds, before=entry.before, after=entry.after, tags=list(entry.tags or []),
        file=file, line=line, base_dir=base_dir, raw=value,
    )


def _assertion_specs(entry: CaseEntry, base_dir: Path, problems: list[str]) -> list[AssertionSpec]:
    """The case's assertions, prepared; problems are appended with their field (`assert[1].value: …`)."""
    if entry.assert_ is not None and entry.assertions is not None:
        problems.append("use either 'assert' or 'assertions', not both")
        return []
    key, written = ("assertions", entry.assertions) if entry.assertions is not None else ("assert", entry.assert_)
    if written is None:
        return []
    if isinstance(written, str):
        items = [(key, {"type": written}, key)]
    elif isinstance(written, dict):
        items = [(key, written, f"{key}.type")]
    elif isinstance(written, list):
        items = [(f"{key}[{i}]", item, f"{key}[{i}].type") for i, item in enumerate(written)]
    else:
        problems.append(f"{key}: expected an assertion object, an array of them or a type name, "
                        f"got {json_type(written)}")
        return []
    specs = []
    for place, item, type_place in items:
        spec = _assertion_spec(item, place, type_place, base_dir)
        if isinstance(spec, AssertionSpec):
            specs.append(spec)
        else:
            problems.extend(spec)
    return specs


def _assertion_spec(item: Any, place: str, type_place: str, base_dir: Path) -> AssertionSpec | list[str]:
    """One prepared assertion, or its problems. `place` is its field (`assert[1]`), `type_place` its type's."""
    if not isinstance(item, dict):
        return [f"{place}: expected an assertion object, got {json_type(item)}"]
    try:
        written = AssertionEntry.model_validate(item)
    except ValidationError as exc:
        return describe_errors(exc, AssertionEntry, prefix=place)
    if written.kind not in REGISTRY:
        valid = [name for name in known_types() if name]  # "" is registered as a spelling of equals
        meant = closest(written.kind, valid)
        hint = f"did you mean {meant!r}? " if meant else ""
        return [f"{type_place}: unknown assertion type {written.kind!r} ({hint}valid: {', '.join(valid)})"]
    spec = AssertionSpec(type=written.kind, value=written.resolved_value, path=written.path, message=written.message,
                         negate=written.negate, options=dict(written.options or {}), use=written.use,
                         script=written.script, base_dir=base_dir)
    try:
        prepare_assertion(spec)
    except SuiteError as exc:
        return [f"{place}.{exc.where.field}: {exc.message}" if exc.where.field else f"{place}: {exc.message}"]
    except Exception as exc:  # a prepare step that breaks on an odd value must not take down the whole load
        return [f"{place}: cannot prepare the {spec.type!r} assertion: {type(exc).__name__}: {exc}"]
    return spec
