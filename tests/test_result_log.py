"""`result_log.ResultLog`: a run's results in plan order, a passed one kept as the JSON of its report.json shape,
in a temporary file, once its reporters saw it (issue #27). What is read back — each result's dict, the counts, the
usage and its key order, the stability rows, the shard positions — is what the results themselves give; what JSON
cannot read back alike (a number wider than 64 bits, a value JSON has no type for) and every result that did not
pass stay whole; a full disk keeps the JSON in memory; and the artifacts written from it are those written from the
results."""

from __future__ import annotations

import copy
import errno
import io
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest

from agenttest.assertions.base import AssertionResult
from agenttest.files import json_chunks, json_line, json_record, json_record_joined, json_text
from agenttest.report import events
from agenttest.report.base import RunInfo
from agenttest.result_log import _SPOOLED, ResultDicts, ResultLog, statuses_and_files
from agenttest.results import CaseResult
from agenttest.usage import Usage
from isolation import fresh_registries

SECRET = "sk-log-secret-31"


@dataclass
class _Opaque:
    value: int


def _result(index: int, status: str = "passed", **fields: Any) -> CaseResult:
    usage = Usage()
    usage.add("target", {"prompt_tokens": index, "completion_tokens": 2})
    if index % 3 == 0:
        usage.add("judge", {"total_tokens": 5}, cached=index % 2 == 0)
    fields.setdefault("output", f"ok case {index}")
    result = CaseResult(id=f"c{index}", status=status, input=f"case {index}",  # type: ignore[arg-type]
                        file="s.jsonl", line=index + 1, usage=usage, tags=["t"] if index % 2 else [],
                        assertions=[AssertionResult(type="contains", passed=status == "passed", message="m",
                                                    expected="ok", actual=f"ok case {index}")], **fields)
    result.bound()
    return result


def _log(results: list[CaseResult], *, lean: bool = True) -> ResultLog:
    log = ResultLog(len(results), lean=lean)
    for index in reversed(range(len(results))):        # cases finish in any order
        log.put(index, results[index])
    return log


def _mixed() -> list[CaseResult]:
    return [_result(0), _result(1, "failed"), _result(2, "skipped"), _result(3), _result(4, output={"n": 2 ** 70}),
            _result(5, output={1: "one"}), _result(6, output=_Opaque(1)), _result(7, "error"),
            _result(8, stability={"id": "c8", "runs": 3}), _result(9, output=f"the key is {SECRET}")]


def test_passed_results_are_kept_as_json_and_read_back_alike() -> None:
    results = _mixed()
    expected = [result.to_dict() for result in results]
    log = _log(results)
    kept = ["spooled" if item is _SPOOLED else type(item).__name__ for item in log._items]
    # passed: JSON — but not 4 (a 70-bit number) nor 6 (a value JSON has no type for); 5's key was made a string
    assert kept == ["spooled", "CaseResult", "CaseResult", "spooled", "CaseResult", "spooled", "CaseResult",
                    "CaseResult", "spooled", "spooled"]
    dicts = log.dicts()
    assert isinstance(dicts, ResultDicts) and len(dicts) == 10
    assert list(dicts) == expected and dicts == expected and dicts[-1] == expected[-1] and dicts[1:3] == expected[1:3]
    assert list(dicts) == list(dicts)               # read as often as needed
    assert log.statuses() == [result.status for result in results]
    facts = [(result["status"], result["file"]) for result in expected]
    spool = log._spool
    assert spool is not None
    opened, spool._file = spool._file, None         # reading a packed result back would fail now
    assert list(statuses_and_files(dicts)) == facts == list(statuses_and_files(expected))
    spool._file = opened
    assert log.stability_rows() == [{"id": "c8", "runs": 3}]
    with pytest.raises(IndexError):
        dicts[10]


def test_usage_is_added_up_in_plan_order_as_the_results_add_it() -> None:
    results = _mixed()
    generation = Usage()
    generation.add("generator", {"total_tokens": 7})
    total = _log(results).usage(generation)
    alike = Usage.total([generation, *(result.usage for result in results)])
    assert total.to_dict() == alike.to_dict()
    assert json.dumps(total.to_dict()) == json.dumps(alike.to_dict())      # the keys in the same order


def test_positions_go_on_every_result_and_a_log_that_keeps_all_has_them_whole() -> None:
    results = _mixed()
    log = _log(results)
    log.place([10 + index for index in range(10)])
    assert [d["position"] for d in log.dicts()] == list(range(10, 20))
    assert log.dicts()[0] == {**_result(0).to_dict(), "position": 10}
    whole = _log(_mixed(), lean=False)
    assert all(isinstance(item, CaseResult) for item in whole._items)
    assert [result.id for result in whole.whole()] == [f"c{index}" for index in range(10)]
    with pytest.raises(AssertionError):
        log.whole()


def test_the_artifacts_written_from_the_log_are_those_written_from_the_results() -> None:
    for registered in ((), (SECRET,)):
        with fresh_registries(*registered):
            expected = [result.to_dict() for result in _mixed()]
            dicts = _log(_mixed()).dicts()
            report = {"summary": {"total": 10}, "results": dicts, "metadata": {}}
            listed = {"summary": {"total": 10}, "results": expected, "metadata": {}}
            assert b"".join(json_chunks(report)) == b"".join(json_chunks(listed))
            assert json_text(report) == json_text(listed) and json_line(report) == json_line(listed)
            assert (SECRET in json_text(report)) is not registered


def test_events_jsonl_and_the_log_write_each_result_once_and_alike(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A result's events.jsonl line joins its `packed` JSON — the bytes the log spools — to the event's own keys:
    the line is byte for byte the one written from the dict, a secret masked in it, and what JSON cannot write
    plainly written the dict's way."""
    monkeypatch.setattr(events, "now", lambda: "2026-12-03T10:00:00.000001+00:00")
    for registered in ((), (SECRET,)):
        with fresh_registries(*registered):
            results = _mixed()
            path = tmp_path / "events.jsonl"
            writer = events.EventsWriter(path)
            writer.run_started(RunInfo(agent_id="a", connector="c", inputs=[], total=len(results), started_at="s"))
            for result in results:
                writer.case_finished(result)
            writer.flush()
            lines = path.read_bytes().splitlines(keepends=True)[1:]
            expected = []
            for result in results:
                event = {"type": "result", "timestamp": events.now(), **result.to_dict()}
                expected.append(json_record(event))
                if result.stability is not None:
                    expected.append(json_record({"type": "stability", "timestamp": events.now(), **result.stability}))
            assert lines == expected
            assert (SECRET.encode() in b"".join(lines)) is not registered
            joined = [result.id for result in results if result.packed() is not None
                      and json_record_joined({"type": "result"}, result.packed() or b"") is not None]
            # joined: every result JSON writes plainly (not 4, 6), but the one holding the secret once registered
            assert joined == ["c0", "c1", "c2", "c3", "c5", "c7", "c8", *(() if registered else ("c9",))]
            log = _log(results)
            spool = log._spool
            assert spool is not None
            assert all(bytes(spool.get(index)).endswith(results[index].packed() or b"?")
                       for index, item in enumerate(log._items) if item is _SPOOLED)
            kept = [item for item in _log(results, lean=False)._items if isinstance(item, CaseResult)]
            assert len(kept) == 10 and all(item._packed is None for item in kept)   # held whole, without its JSON
    placed = _result(0)
    placed.packed()
    placed.position = 7         # placed after the run (--shard): its JSON says so, as its dict does
    assert orjson.loads(placed.packed() or b"") == placed.to_dict() == {**_result(0).to_dict(), "position": 7}
    rechecked = _result(1)
    rechecked.packed()
    rechecked.rechecked({"runs": 2}, Usage())   # what its rechecks found is in its JSON from then on
    assert orjson.loads(rechecked.packed() or b"")["recheck"] == {"runs": 2}
    changed = copy.copy(rechecked)              # a verdict over runs, made from a run's result
    changed.status = "failed"
    assert orjson.loads(changed.packed() or b"")["status"] == "failed"


class _FullDisk(io.BytesIO):
    """A temporary file on a disk that fills after `room` writes."""

    def __init__(self, room: int) -> None:
        super().__init__()
        self.room = room

    def write(self, data: Any) -> int:
        if self.room == 0:
            raise OSError(errno.ENOSPC, "No space left on device")
        self.room -= 1
        return super().write(data)

    def fileno(self) -> int:
        raise io.UnsupportedOperation("fileno")


def test_a_full_disk_keeps_the_rest_in_memory_and_files_without_pread_are_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "TemporaryFile", lambda **_: _FullDisk(room=2))
    monkeypatch.delattr(os, "pread")
    results = [_result(index) for index in range(5)]
    expected = [result.to_dict() for result in results]
    log = ResultLog(5, lean=True)
    for index, result in enumerate(results):
        log.put(index, result)
    assert ["spooled" if item is _SPOOLED else type(item).__name__ for item in log._items] == [
        "spooled", "spooled", "bytes", "bytes", "bytes"]
    assert list(log.dicts()) == expected and list(reversed(log.dicts())) == expected[::-1]
    assert log.usage().to_dict() == Usage.total([result.usage for result in results]).to_dict()


def test_results_spread_over_many_blocks_of_the_file_read_back_in_any_order() -> None:
    # ~0.3 KB each, one of ~60 KB (across two blocks of 64 KB), put in as they would finish: out of order.
    results = [_result(index, output=("x" * 60_000 if index == 150 else f"ok case {index}")) for index in range(700)]
    expected = [result.to_dict() for result in results]
    log = ResultLog(len(results), lean=True)
    order = sorted(range(len(results)), key=lambda index: (index // 64, -index))
    for index in order:
        log.put(index, results[index])
    assert all(item is _SPOOLED for item in log._items) and log._spool._end > 3 * 65536  # type: ignore[union-attr]
    dicts = log.dicts()
    assert list(dicts) == expected
    assert [dicts[index] for index in reversed(range(len(results)))] == expected[::-1]
    assert [dicts[index] for index in order] == [expected[index] for index in order]
