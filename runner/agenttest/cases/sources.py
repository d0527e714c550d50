"""What an `-i` value names: a generator (`agents:…`, `scripts:…`), suite files (a file, a directory, a glob) — or,
when it does not look like a path, a direct message."""

from __future__ import annotations

import difflib
import glob
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import parse_qsl

from ..artifacts import ARTIFACT_FILES, written_by_agenttest
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


def sources(value: str, cwd: Path, exclude: Iterable[Path] = (), *,
            message: bool = True) -> list[Path | str | GeneratorSource]:
    """The suite files an `-i` value names (absolute, in load order), its generator, or the value itself for a
    direct message — unless `message` is false (the Action's `input`, always a path): then a value that names no
    file is the error a missing path gets.

    Directories in `exclude` (the run's own output directory) are never walked into."""
    if not value.strip():
        raise UsageError("-i: empty input (give a suite file, a directory, a glob or a message)")
    if value.startswith(GENERATOR_PREFIXES):
        return [GeneratorSource.parse(value)]
    if value.startswith("scripts."):     # Yao's script-test mode: never a chat message that passes
        raise UsageError(f"-i {value}: this is Yao's script-test mode (scripts.<agent>.<module>: the JavaScript "
                         "Test functions of src/<module>_test.ts), which agenttest does not run; a Python function "
                         "can check replies as a `script` assertion, or write cases as `-i scripts:module.func`")
    excluded = _real(exclude)
    path = existing_path(cwd / value)
    if path is not None and not path.is_dir():
        return [path]
    if path is not None:
        files = sorted(_jsonl_under(path, excluded))
        if not files:
            raise UsageError(f"-i {value}: no *.jsonl files in this directory")
        return list(files)
    if message and not looks_like_path(value):
        return [value]
    if _has_glob(value):
        matches = sorted(Path(os.path.normpath(cwd / match)) for match in glob.glob(value, root_dir=cwd,
                                                                                  recursive=True))
        files = [match for match in matches if match.is_file()]
        if files:
            return list(files)
    raise UsageError(f"-i {value}: no such file or directory{nearest_suites_hint(value, cwd, excluded)}")


def looks_like_path(value: str) -> bool:
    """A value ending in `.jsonl`/`.json`, or holding a `/`, a `\\` or a glob character, names files
    (docs/command-line.md) — so a mistyped path never becomes a chat message that passes. A `?` or `*` in a sentence
    (a space in it: `Hello, how are you?`, Yao's own example of a message) leaves it a message."""
    if value.lower().endswith(SUITE_SUFFIXES) or "/" in value or "\\" in value:
        return True
    return _has_glob(value) and not any(ch.isspace() for ch in value)


def _real(paths: Iterable[Path]) -> set[Path]:
    """The directories not to walk into, their symlinks followed; one that cannot be resolved (a symlink loop: the
    output directory is refused later, saying so) holds no suite either."""
    real = set()
    for path in paths:
        try:
            real.add(path.resolve())
        except (OSError, RuntimeError):     # RuntimeError: a symlink loop, before Python 3.13
            continue
    return real


def nearest_suites_hint(value: str, cwd: Path, exclude: Iterable[Path] = ()) -> str:
    """` (did you mean tests/agents/?)`: the existing suite files and suite directories under `cwd` closest to
    what was typed, or the first few suites found when none is close; "" when there are none."""
    suites = _suites_near(cwd, set(exclude))
    if not suites:
        return ""
    typed = value.replace("\\", "/").removeprefix("./").rstrip("/")
    typed_name = typed.rsplit("/", 1)[-1]

    def score(candidate: str) -> float:
        bare = candidate.rstrip("/")
        name = bare.rsplit("/", 1)[-1]
        stem = name.rsplit(".", 1)[0] if name.endswith(SUITE_SUFFIXES) else name
        return max(difflib.SequenceMatcher(None, typed, bare).ratio(),
                   difflib.SequenceMatcher(None, typed_name, name).ratio(),
                   difflib.SequenceMatcher(None, typed_name, stem).ratio())

    ranked = sorted(suites, key=lambda candidate: (-score(candidate), candidate))
    close: list[str] = []
    for candidate in ranked:
        if score(candidate) < 0.6 or len(close) == 3:
            break
        if not any(candidate.startswith(chosen) for chosen in close if chosen.endswith("/")):
            close.append(candidate)       # a suite inside a directory already named adds nothing
    if close:
        return f" (did you mean {' or '.join(close)}?)"
    files = [candidate for candidate in suites if not candidate.endswith("/")]
    return f" (suites here: {', '.join(files[:3])}{', …' if len(files) > 3 else ''})"


def _suites_near(cwd: Path, exclude: set[Path], limit: int = 2000) -> list[str]:
    """The `*.jsonl` files under `cwd` and the directories holding them (with a trailing `/`), as the user would
    type them; at most `limit` files are looked at, so a huge tree costs little."""
    found: set[str] = set()
    for count, file in enumerate(_jsonl_under(cwd, exclude)):
        if count >= limit:
            break
        relative = file.relative_to(cwd)
        found.add(relative.as_posix())
        for parent in relative.parents:
            if parent != Path("."):
                found.add(parent.as_posix() + "/")
    return sorted(found)


def existing_path(path: Path) -> Path | None:
    """`path` (normalised) when it is an existing file or directory; None otherwise, also for values no file
    system accepts (too long, NUL bytes) — those are messages."""
    try:
        return Path(os.path.normpath(path)) if path.exists() else None
    except (OSError, ValueError):
        return None


# Directories a suite never lives in, as pytest's `norecursedirs` default has them (a wheel's `build/`, a
# `node_modules/`, a virtualenv): `-i .` must not run the copies a build left there.
_NOT_SUITES = {"build", "dist", "node_modules", "venv", "_darcs", "CVS", "{arch}", "__pycache__"}


def _jsonl_under(directory: Path, exclude: set[Path]) -> Iterator[Path]:
    """Every `*.jsonl` below `directory`, skipping hidden directories (`.git`, `.venv`, caches), those pytest
    skips (`build`, `dist`, `node_modules`, `*.egg`, any virtualenv) and `exclude`; symlinked directories are not
    followed (no loops, no surprises), symlinked files are read. An events.jsonl that agenttest wrote (an earlier
    run's artifacts in another output directory: a shard's, a baseline's) is no suite."""
    for root, dirs, files in os.walk(directory):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in _NOT_SUITES and not d.endswith(".egg")
                   and not (Path(root) / d / "pyvenv.cfg").is_file() and (Path(root) / d).resolve() not in exclude]
        for name in files:
            if name.endswith(".jsonl") and not (name == ARTIFACT_FILES["events"]
                                                and written_by_agenttest(Path(root) / name)):
                yield Path(root) / name


def _has_glob(value: str) -> bool:
    return any(ch in _GLOB_CHARS for ch in value)


def display_path(path: Path, cwd: Path) -> str:
    """The path as the user sees it: relative to cwd when inside it, forward slashes."""
    try:
        return path.relative_to(cwd).as_posix()
    except ValueError:
        return path.as_posix()
