"""Writing artifacts: atomically, with secrets masked, readable like any file the user writes."""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

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
    """Pretty JSON (2-space indent, trailing newline) with secrets masked."""
    return _escape_surrogates(json.dumps(redact(data), indent=2, ensure_ascii=False, default=str)) + "\n"


def json_line(data: Any) -> str:
    return _escape_surrogates(json.dumps(redact(data), ensure_ascii=False, separators=(",", ":"), default=str)) + "\n"


def _escape_surrogates(text: str) -> str:
    """Raw surrogates only occur inside JSON strings, where `\\udXXX` means the same character."""
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
