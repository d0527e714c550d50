"""A run's results as it keeps them once each is final: a passed one as the JSON of its report.json shape, in a
temporary file, every other whole (`ResultLog`); and the sequence the reporters read them through (`ResultDicts`)."""

from __future__ import annotations

import os
import tempfile
import weakref
from array import array
from collections.abc import Iterator, Mapping, Sequence
from typing import IO, Any, overload

import orjson

from .results import CaseResult
from .usage import Usage


class ResultLog:
    """A run's results in plan order, each put in once final (its reporters told). A result that passed is kept as
    the UTF-8 JSON of its report.json shape, after that of its usage, in a temporary file (`_Spool`), when nothing
    after the cases needs its objects (`lean`): ~22 bytes of memory a case rather than ~3 KB of objects, so that a
    suite's memory does not grow with its results. Every other result stays whole — the failures are what the
    summaries, annotations and comparisons read closely — as every result does when the run needs them all after
    the cases (AfterAll, rechecks).

    Reporters read the results through `dicts()`, a sequence that builds each report.json dict as it is read."""

    def __init__(self, size: int, *, lean: bool) -> None:
        self.lean = lean
        self.positions: list[int] | None = None         # --shard: each result's place in the whole suite
        # A result whole, its JSON (where the spool could not take it), _SPOOLED, or None (not put in yet).
        self._items: list[CaseResult | bytes | object | None] = [None] * size
        self._usage_sizes = array("H", bytes(2 * size)) if lean else None   # a spooled result's usage JSON, bytes
        self._usages: dict[int, bytes] = {}              # the usage of a packed result kept in memory, as JSON
        self._stability: dict[int, dict[str, Any]] = {}  # a packed result's stability row (--runs)
        self._files: list[str | None] = [None] * size if lean else []   # a packed result's file (one str a suite)
        self._spool = _Spool(size) if lean else None

    def __len__(self) -> int:
        return len(self._items)

    def put(self, index: int, result: CaseResult) -> None:
        packed = result.packed() if self._spool is not None and result.status == "passed" else None
        usage = orjson.dumps(result.usage.roles) if packed is not None else b""
        if packed is None or len(usage) > 0xFFFF:
            self._items[index] = result
            result.let_go_of_packed()
            return
        if self._spool.put(index, usage + packed):  # type: ignore[union-attr]
            self._items[index] = _SPOOLED
            self._usage_sizes[index] = len(usage)  # type: ignore[index]
        else:   # the spool cannot take it: kept in memory, in bytes of their size (orjson's keep 4 KB)
            self._items[index], self._usages[index] = bytes(memoryview(packed)), bytes(memoryview(usage))
        self._files[index] = result.file
        if result.stability is not None:
            self._stability[index] = result.stability

    def missing(self) -> list[int]:
        """The places no result was put in (entries that never ran)."""
        return [index for index, item in enumerate(self._items) if item is None]

    def whole(self) -> list[CaseResult]:
        """Every result as its object: only a log that kept them all (not `lean`) has them."""
        assert not self.lean, "a lean log keeps its passed results as JSON"
        return [item for item in self._items if isinstance(item, CaseResult)]

    def statuses(self) -> list[str]:
        return [item.status if isinstance(item, CaseResult) else "passed" for item in self._items]

    def usage(self, *before: Usage) -> Usage:
        """The usage of `before` and of every result, added up in plan order (as each count's keys first appear)."""
        total = Usage.total(before)
        for index, item in enumerate(self._items):
            if isinstance(item, CaseResult):
                total.merge(item.usage)
            elif item is _SPOOLED:
                total.merge(orjson.loads(self._spool.get(index)[:self._usage_sizes[index]]))  # type: ignore[union-attr,index]
            elif item is not None:
                total.merge(orjson.loads(self._usages[index]))
        return total

    def stability_rows(self) -> list[dict[str, Any]]:
        rows = []
        for index, item in enumerate(self._items):
            row = item.stability if isinstance(item, CaseResult) else self._stability.get(index)
            if row is not None:
                rows.append(row)
        return rows

    def place(self, positions: list[int] | None) -> None:
        """With --shard: each result's place in the whole suite (merge puts the shards' results back in order)."""
        self.positions = positions
        for item, position in zip(self._items, positions or [], strict=False):
            if isinstance(item, CaseResult):
                item.position = position

    def dicts(self) -> ResultDicts:
        return ResultDicts(self)

    def statuses_and_files(self) -> Iterator[tuple[str, str | None]]:
        """Each result's status and file, in plan order, without reading a packed one back (it passed)."""
        files = self._files
        for index, item in enumerate(self._items):
            if isinstance(item, CaseResult):
                yield item.status, item.file
            else:
                yield "passed", files[index]

    def dict_at(self, index: int) -> dict[str, Any]:
        item = self._items[index]
        if isinstance(item, CaseResult):
            return item.to_dict()
        if item is _SPOOLED:
            shape = orjson.loads(self._spool.get(index)[self._usage_sizes[index]:])  # type: ignore[union-attr,index]
        else:
            shape = orjson.loads(item)  # type: ignore[arg-type]
        if self.positions is not None and index < len(self.positions):
            shape["position"] = self.positions[index]
        return shape


class ResultDicts(Sequence[dict[str, Any]]):
    """A run's results as report.json dicts, each built as it is read (`ResultLog`): iterate it as often as needed,
    holding one at a time. Equal to a list of the same dicts."""

    __slots__ = ("_log",)

    def __init__(self, log: ResultLog) -> None:
        self._log = log

    def __len__(self) -> int:
        return len(self._log)

    @overload
    def __getitem__(self, index: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, index: slice) -> list[dict[str, Any]]: ...

    def __getitem__(self, index: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(index, slice):
            return [self._log.dict_at(i) for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        return self._log.dict_at(index)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        dict_at = self._log.dict_at
        for index in range(len(self._log)):
            yield dict_at(index)

    def statuses_and_files(self) -> Iterator[tuple[str, str | None]]:
        return self._log.statuses_and_files()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (ResultDicts, list, tuple)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ResultDicts({len(self)} results)"


_SPOOLED = object()     # a result whose JSON is in the log's spool


def statuses_and_files(results: Sequence[Mapping[str, Any]]) -> Iterator[tuple[Any, Any]]:
    """The status and the file of each result, in order: of a run's, without building the rest of each dict (a
    writer that counts them, or looks for the failing, reads the results once less)."""
    if isinstance(results, ResultDicts):
        return results.statuses_and_files()
    return ((result.get("status"), result.get("file")) for result in results)


class _Spool:
    """Byte strings in an unnamed temporary file (removed when it closes: when the log is let go, or the process
    ends), each read back by its place. Memory: 12 bytes a place, and the last few blocks read.

    They go in as the cases finish and are read in plan order, a few places apart at most: each is read from the
    block of the file that holds it, the last _BLOCKS of them kept — one read of the file for ~100 of them, where
    one each cost more system time than the run's requests."""

    def __init__(self, size: int) -> None:
        self._offsets = array("q", bytes(8 * size))
        self._lengths = array("I", bytes(4 * size))
        self._file: IO[bytes] | None = None
        self._end = 0
        self._unwritten = False         # bytes in the file's buffer that a read must see: flushed first
        self._failed = False
        self._blocks: dict[int, bytes] = {}     # block number → its bytes, the oldest read first

    def put(self, index: int, data: bytes) -> bool:
        """Keep `data` at `index`; False when the file cannot take it (a full disk): the caller keeps it."""
        if self._failed:
            return False
        try:
            if self._file is None:
                self._file = tempfile.TemporaryFile(prefix="agenttest-results-",  # noqa: SIM115 (closed by finalize)
                                                    buffering=_BLOCK_SIZE)
                weakref.finalize(self, self._file.close)
            self._file.write(data)
        except OSError:
            self._failed = True     # what was written stays readable; nothing more goes in
            return False
        self._offsets[index], self._lengths[index] = self._end, len(data)
        self._end += len(data)
        self._unwritten = True
        return True

    def get(self, index: int) -> bytes | memoryview:
        assert self._file is not None
        if self._unwritten:
            self._file.flush()
            self._unwritten = False
            self._blocks.clear()
        offset, length = self._offsets[index], self._lengths[index]
        number = offset // _BLOCK_SIZE
        if (offset + length - 1) // _BLOCK_SIZE != number:     # across two blocks: read alone
            return _read_at(self._file, length, offset)
        block = self._blocks.get(number)
        if block is None:
            if len(self._blocks) >= _BLOCKS:
                del self._blocks[next(iter(self._blocks))]
            block = self._blocks[number] = _read_at(self._file, _BLOCK_SIZE, number * _BLOCK_SIZE)
        start = offset - number * _BLOCK_SIZE
        return memoryview(block)[start:start + length]


_BLOCK_SIZE, _BLOCKS = 1 << 16, 8


def _read_at(file: IO[bytes], length: int, offset: int) -> bytes:
    if hasattr(os, "pread"):
        return os.pread(file.fileno(), length, offset)
    end = file.tell()       # Windows has no pread: read, then go back to the end for the next writes
    file.seek(offset)
    data = file.read(length)
    file.seek(end)
    return data
