"""events.jsonl: one JSON line per event, flushed as it happens — the cases that finish together, in one turn of the
run's loop, with one write (`Reporter.flush`) — so even a killed run keeps what finished: `start`,
`result` and `stability` per case, `recheck` per case rechecked (`--recheck`), `comparison` (with `--baseline`: the
regressions and the noise, each with its evidence) and `summary`."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import BinaryIO, TextIO

from ..analysis import recheck_decision
from ..files import json_record, json_record_joined
from ..results import CaseResult
from .base import Report, Reporter, RunInfo, now


class EventsWriter(Reporter):
    def __init__(self, path: Path, errors: TextIO | None = None) -> None:
        self.path = path
        self._handle: BinaryIO | None = None
        self._errors = errors or sys.stderr
        self._unflushed = False         # results written since the last flush

    def run_started(self, info: RunInfo) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._handle = self.path.open("wb")
        except OSError as exc:
            self.problem(f"cannot write {self.path}: {exc.strerror or exc}", self._errors)
            return
        self._emit({"type": "start", "timestamp": info.started_at, "agent_id": info.agent_id,
                    "total_cases": info.total})

    def case_finished(self, result: CaseResult) -> None:
        stamp = now()
        packed = result.packed()         # its JSON, written once for this line and the run's result log
        line = json_record_joined({"type": "result", "timestamp": stamp}, packed) if packed is not None else None
        if line is not None:
            self._write(line, flush=False)
        else:
            self._emit({"type": "result", "timestamp": stamp, **result.to_dict()}, flush=False)
        if result.stability is not None:
            self._emit({"type": "stability", "timestamp": stamp, **result.stability}, flush=False)
        self._unflushed = True

    def flush(self) -> None:
        if self._unflushed and self._handle is not None:
            self._unflushed = False
            try:
                self._handle.flush()
            except OSError as exc:
                self._failed(exc)

    def case_rechecked(self, result: CaseResult) -> None:
        """What a case's rechecks found (`--recheck`), with the evidence the comparison will give."""
        decision = recheck_decision(result.to_dict())
        self._emit({"type": "recheck", "timestamp": now(), "id": result.id, "file": result.file, "line": result.line,
                    **(result.recheck or {}), "regression": decision.regression, "evidence": decision.evidence})

    def run_finished(self, report: Report) -> None:
        comparison = report.data.get("comparison")
        if isinstance(comparison, dict):     # the verdicts against the baseline, each with its evidence
            self._emit({"type": "comparison", "timestamp": report.completed_at, "counts": comparison.get("counts"),
                        "regressions": comparison.get("regressions"), "noise": comparison.get("noise"),
                        "introduced": comparison.get("introduced")})
        summary = report.data["summary"]
        self._emit({"type": "summary", "timestamp": report.completed_at, "interrupted": report.interrupted,
                    **summary})
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    def _emit(self, event: dict, *, flush: bool = True) -> None:
        if self._handle is not None:
            self._write(json_record(event), flush=flush)

    def _write(self, line: bytes, *, flush: bool = True) -> None:
        handle = self._handle
        if handle is None:
            return
        try:
            handle.write(line)
            if flush:
                handle.flush()
        except OSError as exc:
            self._failed(exc)

    def _failed(self, exc: OSError) -> None:
        """A full disk: say it once, stop writing, let the run go on."""
        self.problem(f"cannot write {self.path}: {exc.strerror or exc}", self._errors)
        handle, self._handle = self._handle, None
        if handle is not None:
            with contextlib.suppress(OSError):
                handle.close()
