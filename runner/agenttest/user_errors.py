"""Where the user's own code (an agent, a hook, a script) failed: the file and line, and a traceback of its frames.

A user's frame is one whose file is neither agenttest's nor the standard library's nor an installed package's: the
place a user can go and fix. The tracebacks a case's user code raised are collected while the case runs (see
`collecting`), so its result can keep them in `trace.traceback` however far the exception was wrapped.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import sysconfig
import traceback
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path

from .secrets import mask

_PACKAGE = Path(__file__).resolve().parent
_LIBRARY_PARTS = {"site-packages", "dist-packages"}
_COLLECTED: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar("agenttest_user_tracebacks",
                                                                               default=None)


def describe(exc: BaseException) -> str:
    """`ValueError at hooks/env_test.py:12: bad input` — the exception, where the user's code raised it (when a
    user's frame is in its traceback, or a SyntaxError's own place), and its message."""
    where = raised_at(exc)
    text = str(exc)
    return f"{type(exc).__name__}{f' at {where}' if where else ''}{f': {text}' if text else ''}"


def raised_at(exc: BaseException) -> str | None:
    """`path:line` of the innermost user frame of `exc` (or of what it wraps: `sys.exit` becomes a RuntimeError
    raised from the SystemExit), relative to the working directory when inside it; None when there is none."""
    if isinstance(exc, SyntaxError) and exc.filename and _is_user_file(exc.filename):
        return f"{_shown(exc.filename)}:{exc.lineno}"
    frames = _user_frames(_origin(exc))
    if not frames:
        return None
    return f"{_shown(frames[-1].filename)}:{frames[-1].lineno}"


def user_traceback(exc: BaseException) -> str:
    """The traceback of `exc` through the user's frames only (ours and libraries' left out), secrets masked."""
    origin = _origin(exc)
    frames = _user_frames(origin)
    lines = ["Traceback (most recent call last, user code only):\n"]
    for frame in frames:
        lines.append(f'  File "{_shown(frame.filename)}", line {frame.lineno}, in {frame.name}\n')
        if frame.line:
            lines.append(f"    {frame.line.strip()}\n")
    lines += traceback.format_exception_only(type(origin), origin)
    return mask("".join(lines).rstrip("\n"))


def record(exc: BaseException) -> None:
    """Keep the user traceback of `exc` for the case being run, if one is collecting."""
    collected = _COLLECTED.get()
    if collected is not None and _user_frames(_origin(exc)):
        collected.append(user_traceback(exc))


@contextlib.contextmanager
def collecting() -> Iterator[list[str]]:
    """Collect the user tracebacks raised (through `call_user`) inside the block and the tasks it starts."""
    collected: list[str] = []
    token = _COLLECTED.set(collected)
    try:
        yield collected
    finally:
        _COLLECTED.reset(token)


def _origin(exc: BaseException) -> BaseException:
    """The first exception of the chain (`exc`, then what it was raised from) that has a user frame."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if _user_frames(current):
            return current
        current = current.__cause__ or current.__context__
    return exc


def _user_frames(exc: BaseException) -> list[traceback.FrameSummary]:
    return [frame for frame in traceback.extract_tb(exc.__traceback__) if _is_user_file(frame.filename)]


@lru_cache(maxsize=1024)
def _is_user_file(filename: str) -> bool:
    if not filename or filename.startswith("<"):
        return False
    path = Path(filename).resolve()
    if path.is_relative_to(_PACKAGE) or _LIBRARY_PARTS & set(path.parts):
        return False
    return not any(path.is_relative_to(directory) for directory in _library_dirs())


@lru_cache(maxsize=1)
def _library_dirs() -> tuple[Path, ...]:
    paths = sysconfig.get_paths()
    return tuple(dict.fromkeys(Path(paths[key]).resolve() for key in ("stdlib", "platstdlib", "purelib", "platlib")
                               if key in paths))


def _shown(filename: str) -> str:
    path = Path(filename)
    try:
        return Path(os.path.relpath(path)).as_posix() if path.resolve().is_relative_to(Path.cwd()) else filename
    except (OSError, ValueError):
        return filename
