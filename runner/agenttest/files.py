"""Writing artifacts: atomically, with secrets masked, readable like any file the user writes."""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from .bounds import json_safe
from .secrets import redact

# A lone surrogate (an agent replying "\ud800") cannot be encoded as UTF-8; in JSON it stays an escape sequence.
_SURROGATE = re.compile("[\ud800-\udfff]")


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_FILE_MODE = 0o666 & ~_current_umask()


def write_text(path: Path, text: str) -> None:
    """Write via a temporary file and rename, so a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="replace", newline="\n") as handle:
            handle.write(text)
        os.chmod(tmp, _FILE_MODE)   # mkstemp makes 0600; artifacts are ordinary files
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def json_text(data: Any) -> str:
    """Pretty JSON (2-space indent, trailing newline) with secrets masked; strict RFC 8259 (see `_dumps`)."""
    return _dumps(data, indent=2) + "\n"


def json_line(data: Any) -> str:
    """One line of JSON with secrets masked; strict RFC 8259 (see `_dumps`)."""
    return _dumps(data, separators=(",", ":")) + "\n"


def _dumps(data: Any, **layout: Any) -> str:
    """JSON every reader accepts (Node's JSON.parse, jq): NaN and ±Infinity, which Python would write bare, become
    strings, and a value nested too deeply for any walk is cut with a marker (`bounds.json_safe`). The common value
    has neither and is written at once; only a value that fails pays for the copy."""
    try:
        text = json.dumps(redact(data), ensure_ascii=False, allow_nan=False, default=str, **layout)
    except (ValueError, RecursionError):
        text = json.dumps(redact(json_safe(data)), ensure_ascii=False, allow_nan=False, default=str, **layout)
    return _escape_surrogates(text)


def _escape_surrogates(text: str) -> str:
    """Raw surrogates only occur inside JSON strings, where `\\udXXX` means the same character."""
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
