"""Writing artifacts: atomically, with secrets masked, and never losing the others when one path fails."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from ..secrets import redact


def write_text(path: Path, text: str) -> None:
    """Write via a temporary file and rename, so a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def json_text(data: Any) -> str:
    """Pretty JSON (2-space indent, trailing newline) with secrets masked."""
    return json.dumps(redact(data), indent=2, ensure_ascii=False, default=str) + "\n"


def json_line(data: Any) -> str:
    return json.dumps(redact(data), ensure_ascii=False, separators=(",", ":"), default=str) + "\n"
