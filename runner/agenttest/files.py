"""Writing artifacts: atomically, with secrets masked, readable like any file the user writes."""

from __future__ import annotations

import filecmp
import json
import os
import re
import stat
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import orjson

from .bounds import json_safe
from .secrets import appears_in_json, redact

# A lone surrogate (an agent replying "\ud800") cannot be encoded as UTF-8; in JSON it stays an escape sequence.
_SURROGATE = re.compile("[\ud800-\udfff]")


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_FILE_MODE = 0o666 & ~_current_umask()


def write_text(path: Path, text: str | bytes | Iterable[bytes]) -> None:
    """Write via a temporary file and rename, so a reader never sees half a file. Bytes are UTF-8 already; an
    iterable of them (`json_chunks`) is written piece by piece, never whole in memory."""
    _moved(_written_beside(path, text), path)


def encoded(pieces: Iterable[str], size: int = 1 << 16) -> Iterator[bytes]:
    """Text in pieces (`JSONEncoder.iterencode`'s, often a few characters each) as UTF-8 in blocks of about `size`
    characters, as `write_text` encodes a whole text (a lone surrogate becomes `?`)."""
    block: list[str] = []
    length = 0
    for piece in pieces:
        block.append(piece)
        length += len(piece)
        if length >= size:
            yield "".join(block).encode("utf-8", "replace")
            block, length = [], 0
    if block:
        yield "".join(block).encode("utf-8", "replace")


def write_if_changed(path: Path, chunks: Iterable[bytes]) -> bool:
    """`write_text`, unless the file already holds exactly these bytes: then it is left as it was (its time too).
    Whether it was written."""
    tmp = _written_beside(path, chunks)
    try:
        same = path.is_file() and filecmp.cmp(tmp, path, shallow=False)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    if same:
        Path(tmp).unlink()
        return False
    _moved(tmp, path)
    return True


def _moved(tmp: str, path: Path) -> None:
    """The temporary file renamed over `path` (removed if that fails)."""
    try:
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _written_beside(path: Path, text: str | bytes | Iterable[bytes]) -> str:
    """A temporary file next to `path` (so a rename replaces it atomically) holding `text`; its name."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        if not isinstance(text, str):
            with os.fdopen(fd, "wb", buffering=256 * 1024) as binary:
                if isinstance(text, bytes):
                    binary.write(text)
                else:
                    binary.writelines(text)
        else:
            with os.fdopen(fd, "w", encoding="utf-8", errors="replace", newline="\n") as handle:
                handle.write(text)
        os.chmod(tmp, _FILE_MODE)   # mkstemp makes 0600; artifacts are ordinary files
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return tmp


# A file the user names on the command line and agenttest reads whole: `--baseline` and `merge`'s reports, `--ctx`.
MAX_NAMED_FILE_BYTES = 256 * 1024 * 1024


def read_regular_file(path: Path, limit: int, *, follow_symlinks: bool = False, within: Path | None = None) -> bytes:
    """The bytes of `path` when it is a regular file of at most `limit` bytes — not a symlink (to `/dev/zero`, or
    out of the repository), a device or a FIFO: what agenttest itself wrote and reads back (cassettes, cache
    entries), which a pull request may have replaced. With `within` (a folder `path` lies under), no folder below it
    on the way to the file may be a symlink either (a pull request that replaces `tapes/` by a symlink to another
    directory). `follow_symlinks` for a file the user named (`--baseline latest/report.json`): a symlink is
    followed, and what it leads to must be such a file. FileNotFoundError when there is none; OSError or ValueError
    saying why it is not read otherwise, before anything of it is (a FIFO is opened without waiting for a writer,
    and never read)."""
    nofollow = 0 if follow_symlinks else getattr(os, "O_NOFOLLOW", 0)
    flags = os.O_RDONLY | nofollow | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    if not follow_symlinks and path.is_symlink():     # O_NOFOLLOW says ELOOP, and Windows has none
        raise ValueError("it is a symbolic link, which agenttest never writes")
    if within is not None:
        named = Path(os.path.normpath(path.absolute()))
        linked = next((folder for folder in named.parents
                       if folder != within and folder.is_relative_to(within) and folder.is_symlink()), None)
        if linked is not None:
            raise ValueError(f"{linked.relative_to(within).as_posix()} is a symbolic link, which agenttest does not "
                             "read through")
    descriptor = os.open(path, flags)
    with os.fdopen(descriptor, "rb") as handle:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError("it is not a regular file")
        if info.st_size > limit:
            raise ValueError(f"it is {info.st_size:,} bytes, more than the {limit:,} agenttest reads")
        data = handle.read(limit + 1)
    if len(data) > limit:           # it grew while being read
        raise ValueError(f"it is more than the {limit:,} bytes agenttest reads")
    return data


# orjson writes what `json.dumps(..., ensure_ascii=False, indent=2 or separators=(",", ":"))` writes, 50-100x
# faster (report.json of 10,000 cases: ~1 s -> ~10 ms on the project's machine; bench/README.md). Dataclasses and
# datetimes go to `default=str`, as they did with the json module.
_ORJSON = orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME


def json_text(data: Any) -> str:
    """Pretty JSON (2-space indent, trailing newline) with secrets masked; strict RFC 8259 (see `_dumps`)."""
    return _dumps(data, pretty=True).decode("utf-8") + "\n"


def json_chunks(data: Any) -> Iterator[bytes]:
    """`json_text(data)` as UTF-8, in pieces: a large artifact (report.json of 10,000 cases is ~8 MB, and orjson's
    growing buffer held twice that) is written a few results at a time. The first two levels of objects and the
    first three of arrays are laid out here (an array may also be any iterator: CTRF's tests come from a
    generator); each value below them goes through `_dumps`, indented to its place — an array's, `_BATCH` at a time
    (`_batch`). The bytes are `json_text`'s, secrets masked the same way: a secret lies within one string, so
    within one piece."""
    yield from _pieces(data, 0)
    yield b"\n"


def _pieces(value: Any, depth: int) -> Iterator[bytes]:
    if not _laid_out(value, depth):
        yield _indented(_dumps(value, pretty=True), depth)
        return
    if not isinstance(value, dict):
        yield from _array(value, depth)
        return
    inside = b"\n" + b"  " * (depth + 1)
    empty = True
    for key, item in value.items():
        yield (b"{" if empty else b",") + inside + _dumps(key, pretty=False) + b": "
        empty = False
        yield from _pieces(item, depth + 1)
    yield b"{}" if empty else b"\n" + b"  " * depth + b"}"


def _laid_out(value: Any, depth: int) -> bool:
    """Whether `_pieces` lays `value` out itself, rather than writing it with one `_dumps`."""
    if isinstance(value, dict):
        return depth < 2 and all(isinstance(key, str) for key in value)
    return depth < 3 and (isinstance(value, (list, tuple, Iterator)) or _sequence(value))


def _sequence(value: Any) -> bool:
    """Whether `value` is a sequence JSON writes as an array though it is no list: a run's results, each built as
    it is read (`result_log.ResultDicts`)."""
    return isinstance(value, Sequence) and not isinstance(value, (str, bytes, bytearray, list, tuple))


def _default(value: Any) -> Any:
    """What orjson writes for a value it has no type for: a sequence as an array, anything else as its `str`."""
    return list(value) if _sequence(value) else str(value)


def _lists(value: Any, depth: int = 0) -> Any:
    """`value` with each sequence that is no list made one, for the json module: in the objects of the first two
    levels, where a report holds its results (below them, and in a cycle, nothing is looked at)."""
    if isinstance(value, dict) and depth < 2:
        return {key: _lists(item, depth + 1) for key, item in value.items()}
    return list(value) if _sequence(value) else value


_BATCH = 64     # values of an array written with one `_dumps`: orjson and the search for secrets cost ~4 µs a call


def _array(values: Iterable[Any], depth: int) -> Iterator[bytes]:
    """An array's pieces: its values laid out, or written together, `_BATCH` at a time."""
    inside = b"\n" + b"  " * (depth + 1)
    empty = True
    batch: list[Any] = []
    for item in values:
        if not _laid_out(item, depth + 1):
            batch.append(item)
            if len(batch) < _BATCH:
                continue
        if batch:
            yield _batch(batch, depth, b"[" if empty else b",")
            empty, batch = False, []
        if _laid_out(item, depth + 1):
            yield (b"[" if empty else b",") + inside
            empty = False
            yield from _pieces(item, depth + 1)
    if batch:
        yield _batch(batch, depth, b"[" if empty else b",")
        empty = False
    yield b"[]" if empty else b"\n" + b"  " * depth + b"]"


def _batch(values: list[Any], depth: int, lead: bytes) -> bytes:
    """Values of an array at `depth`, each as `_pieces` writes it (after `lead`, `,` between them): written as
    one array, whose values orjson lays out as it lays out each alone, only two spaces further in. One that holds a
    secret, or that orjson cannot write, sends the batch through `_dumps` value by value."""
    try:
        raw = orjson.dumps(values, default=_default, option=_ORJSON | orjson.OPT_INDENT_2)
    except (orjson.JSONEncodeError, RecursionError):
        raw = None
    if raw is not None and not appears_in_json(raw):
        return lead + _indented(raw[1:-2], depth)          # `[` … `\n]` off: `\n  value,\n  value`
    inside = b"\n" + b"  " * (depth + 1)
    return lead + b",".join(inside + _indented(_dumps(value, pretty=True), depth + 1) for value in values)


def _indented(text: bytes, depth: int) -> bytes:
    return text.replace(b"\n", b"\n" + b"  " * depth) if depth else text


def json_line(data: Any) -> str:
    """One line of JSON with secrets masked; strict RFC 8259 (see `_dumps`)."""
    return _dumps(data, pretty=False).decode("utf-8") + "\n"


def json_record(data: Any) -> bytes:
    """`json_line` as UTF-8, for a file written in binary (events.jsonl: one per case, no text layer between)."""
    return _dumps(data, pretty=False) + b"\n"


def json_record_joined(head: dict[str, Any], packed: bytes) -> bytes | None:
    """`json_record({**head, **value})` for the object `value` whose compact JSON by orjson `packed` is
    (`CaseResult.packed`), when none of its keys is one of `head`'s: the same bytes, `value` not written again. None
    when they may hold a secret, or orjson cannot write `head`: write the dict."""
    try:
        start = orjson.dumps(head, default=_default, option=_ORJSON)
    except (orjson.JSONEncodeError, RecursionError):
        return None
    if packed == b"{}":
        joined = start
    elif start == b"{}":
        joined = packed
    else:
        joined = start[:-1] + b"," + packed[1:]
    return None if appears_in_json(joined) else joined + b"\n"


def _dumps(data: Any, *, pretty: bool) -> bytes:
    """JSON every reader accepts (Node's JSON.parse, jq), with no secret in it.

    The common value is written at once by orjson, and the text searched for every JSON-escaped form of every
    secret (a string holding a secret holds its escaped form once written). Only a value that holds a secret, is
    nested deeper than orjson goes or holds a lone surrogate takes the slow path: every string masked, then the
    json module, with NaN and ±Infinity written as strings and too-deep parts cut (`bounds.json_safe`). Values from
    agents and suites reach artifacts through `bounds.stored`, which already wrote their NaN as "NaN"; orjson writes
    any other NaN as null, which is still strict JSON."""
    try:
        raw = orjson.dumps(data, default=_default, option=(_ORJSON | orjson.OPT_INDENT_2) if pretty else _ORJSON)
    except (orjson.JSONEncodeError, RecursionError):
        raw = None
    if raw is not None and not appears_in_json(raw):
        return raw
    return _strict_dumps(data, {"indent": 2} if pretty else {"separators": (",", ":")}).encode("utf-8")


def _strict_dumps(data: Any, layout: dict[str, Any]) -> str:
    data = _lists(data)
    try:
        text = json.dumps(redact(data), ensure_ascii=False, allow_nan=False, default=str, **layout)
    except (ValueError, RecursionError):
        text = json.dumps(redact(json_safe(data)), ensure_ascii=False, allow_nan=False, default=str, **layout)
    return _escape_surrogates(text)


def _escape_surrogates(text: str) -> str:
    """Raw surrogates only occur inside JSON strings, where `\\udXXX` means the same character."""
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
