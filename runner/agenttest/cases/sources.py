"""What an `-i` value names: a generator (`agents:…`, `scripts:…`), suite files (a file, a directory, a glob) — or,
failing those, a direct message."""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import parse_qsl

from ..errors import UsageError

GENERATOR_PREFIXES = ("agents:", "scripts:")
SUITE_SUFFIXES = (".jsonl", ".json")
_GLOB_CHARS = frozenset("*?[")
MAX_COUNT = 1000          # cases one generator agent may be asked for


@dataclass(frozen=True)
class GeneratorSource:
    """`-i "agents:ID?count=10&focus=edge-cases"` (a generator agent) or `-i "scripts:module.func?k=v"` (a Python
    function): what writes the cases, and its parameters, typed (int, float, true/false, else text)."""

    kind: Literal["agent", "script"]
    ref: str
    params: dict[str, Any] = field(default_factory=dict)
    spelled: str = ""

    @classmethod
    def parse(cls, value: str) -> GeneratorSource:
        """Raises UsageError for a generator input that names nothing or has malformed parameters."""
        prefix, _, rest = value.partition(":")
        ref, _, query = rest.partition("?")
        ref = ref.strip()
        kind: Literal["agent", "script"] = "agent" if prefix == "agents" else "script"
        if not ref:
            raise UsageError(f"-i {value}: names no {'agent' if kind == 'agent' else 'function'} after '{prefix}:'")
        if kind == "script" and ("." not in ref.strip(".") or ref.startswith(".") or ref.endswith(".")):
            raise UsageError(f"-i {value}: a script generator is module.function (e.g. scripts:gen.cases)")
        try:
            pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query))
        except ValueError as exc:
            raise UsageError(f"-i {value}: malformed parameters {query!r} ({exc}); write key=value&key=value") \
                from None
        params: dict[str, Any] = {}
        for key, text in pairs:
            if key in params:
                raise UsageError(f"-i {value}: parameter {key!r} is given twice")
            params[key] = _typed(text)
        count = params.get("count")
        if kind == "agent" and "count" in params and (isinstance(count, bool) or not isinstance(count, int)
                                                      or not 1 <= count <= MAX_COUNT):
            raise UsageError(f"-i {value}: count must be a whole number from 1 to {MAX_COUNT}, got {count!r}")
        return cls(kind=kind, ref=ref, params=params, spelled=value)


def _typed(text: str) -> Any:
    """A query value as Yao types it: an int, else a float, else true/false, else the text."""
    for convert in (int, float):
        try:
            number = convert(text)
        except ValueError:
            continue
        if number == number and abs(number) != float("inf"):     # `nan` and `inf` stay text
            return number
    if text in ("true", "false"):
        return text == "true"
    return text


# -- which files an -i value names -------------------------------------------------------------------------------


def sources(value: str, cwd: Path, exclude: Iterable[Path] = ()) -> list[Path | str | GeneratorSource]:
    """The suite files an `-i` value names (absolute, in load order), its generator, or the value itself for a
    direct message.

    Directories in `exclude` (the run's own output directory) are never walked into."""
    if not value.strip():
        raise UsageError("-i: empty input (give a suite file, a directory, a glob or a message)")
    if value.startswith(GENERATOR_PREFIXES):
        return [GeneratorSource.parse(value)]
    path = existing_path(cwd / value)
    if path is not None and not path.is_dir():
        return [path]
    if path is not None:
        files = sorted(_jsonl_under(path, {p.resolve() for p in exclude}))
        if not files:
            raise UsageError(f"-i {value}: no *.jsonl files in this directory")
        return list(files)
    if _looks_like_glob(value):
        matches = sorted(Path(os.path.normpath(cwd / match)) for match in glob.glob(value, root_dir=cwd,
                                                                                  recursive=True))
        files = [match for match in matches if match.is_file()]
        if not files:
            raise UsageError(f"-i {value}: the pattern matches no file")
        return list(files)
    if value.lower().endswith(SUITE_SUFFIXES):
        raise UsageError(f"-i {value}: file not found")
    return [value]


def existing_path(path: Path) -> Path | None:
    """`path` (normalised) when it is an existing file or directory; None otherwise, also for values no file
    system accepts (too long, NUL bytes) — those are messages."""
    try:
        return Path(os.path.normpath(path)) if path.exists() else None
    except (OSError, ValueError):
        return None


def _jsonl_under(directory: Path, exclude: set[Path]) -> Iterator[Path]:
    """Every `*.jsonl` below `directory`, skipping hidden directories (`.git`, `.venv`, caches) and `exclude`;
    symlinked directories are not followed (no loops, no surprises), symlinked files are read."""
    for root, dirs, files in os.walk(directory):
        dirs[:] = [d for d in dirs if not d.startswith(".") and (Path(root) / d).resolve() not in exclude]
        for name in files:
            if name.endswith(".jsonl"):
                yield Path(root) / name


def _looks_like_glob(value: str) -> bool:
    """A glob is path-like: a wildcard, no whitespace, and a `/` or `.json` in it (`What?` stays a message)."""
    return (any(ch in _GLOB_CHARS for ch in value) and not any(ch.isspace() for ch in value)
            and ("/" in value or os.sep in value or ".json" in value.lower()))


def display_path(path: Path, cwd: Path) -> str:
    """The path as the user sees it: relative to cwd when inside it, forward slashes."""
    try:
        return path.relative_to(cwd).as_posix()
    except ValueError:
        return path.as_posix()
