"""Results of cases and of the whole run, and their JSON shape (Yao's report plus our additions)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import orjson

from .assertions.base import AssertionResult
from .bounds import MAX_STORED_CHARS, is_large, json_safe, stored
from .usage import Usage

Status = Literal["passed", "failed", "error", "timeout", "skipped"]


@dataclass(slots=True)
class CaseResult:
    """The verdict on one case: what was sent, what came back, every assertion's verdict, and where it is written."""

    id: str
    status: Status
    input: Any = None
    output: Any = None
    expected: Any = None
    has_expected: bool = False
    duration_ms: int = 0
    error: str | None = None
    error_kind: str | None = None
    name: str | None = None
    trace: dict[str, Any] | None = None
    options: dict[str, Any] | None = None
    metadata: dict[str, Any] | None = None
    file: str | None = None
    line: int | None = None
    assertions: list[AssertionResult] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)     # calls and tokens by role: the target, judges, the simulator
    tags: list[str] = field(default_factory=list)
    ran: bool = True        # False: skipped because the run stopped first (interrupt, --fail-fast, BeforeAll)
    source: str | None = None   # the generator input that wrote the case (`agents:…`), for generated cases
    runs: list[dict[str, Any]] | None = None        # with --runs: each run's status, duration and error
    stability: dict[str, Any] | None = None         # with --runs: pass rate, class, flaky, durations
    position: int | None = None                     # with --shard: the case's place in the whole suite
    agent_id: str | None = None                     # the agent under test (one run may test several)
    definition: str | None = None                   # the case's definition digest (`Case.definition`)
    recheck: dict[str, Any] | None = None           # --recheck: the runs after the cases (engine.rechecks)
    # Once bound the result is final: its JSON shape is built once, for events.jsonl and again for report.json, and
    # written once as JSON (`packed`), for events.jsonl and the run's result log.
    _shape: dict[str, Any] | None = field(default=None, init=False, repr=False, compare=False)
    _packed: bytes | None = field(default=None, init=False, repr=False, compare=False)   # b"": orjson cannot
    _bound: bool = field(default=False, init=False, repr=False, compare=False)

    def bound(self) -> None:
        """Keep only what artifacts store of each value (`bounds.stored`), once the assertions have seen the whole
        reply: a run's memory and its artifacts stay flat in the size of replies. An assertion's `actual` that is
        the (large) output is not kept twice."""
        output = self.output
        for result in self.assertions:
            if is_large(result.actual) and (result.actual is output or result.actual == output):
                result.actual, result.actual_is_output = None, True
            else:
                result.actual = stored(result.actual)
            result.expected = stored(result.expected)
            result.message = stored(result.message)      # a judge's reason or a script's message may be huge
            if result.details:
                result.details = json_safe(result.details, cap=MAX_STORED_CHARS)
        self.input, self.output, self.expected = stored(self.input), stored(output), stored(self.expected)
        self.error = stored(self.error)                  # it may quote a verdict's message or the user's exception
        for name in ("trace", "metadata"):
            value = getattr(self, name)
            if value:
                setattr(self, name, json_safe(value, cap=MAX_STORED_CHARS))
        self._bound, self._shape, self._packed = True, None, None

    def rechecked(self, record: dict[str, Any], usage: Usage) -> None:
        """Keep what the case's rechecks found (`record`) and count what they used: its JSON shape is built anew."""
        self.recheck = record
        self.usage = Usage.total([self.usage, usage])
        self._shape = self._packed = None

    def __copy__(self) -> CaseResult:
        """A copy to change (a verdict over runs): its JSON shape is built anew."""
        copied = CaseResult.__new__(CaseResult)
        for name in CaseResult.__slots__:
            setattr(copied, name, getattr(self, name))
        copied._shape = copied._packed = None
        return copied

    @property
    def key(self) -> tuple[str, str]:
        """The case's (file or generator, id), as `Case.key`."""
        return (self.file or self.source or "", self.id)

    def to_dict(self) -> dict[str, Any]:
        """The result as report.json writes it. Built once when the result is final (`bound`); `position` (set
        after the run) is added each time."""
        shape = self._shape
        if shape is None:
            shape = self._to_dict()
            if self._bound:
                self._shape = shape
        return shape if self.position is None else {**shape, "position": self.position}

    def packed(self) -> bytes | None:
        """`to_dict()` as compact JSON (orjson's) that reads back to an equal dict, or None when it would not: a value
        JSON has no type for, a number wider than 64 bits (the artifacts write those their own way). Written once
        when the result is final (`bound`) and has no `position` yet: events.jsonl and the run's result log store the
        same bytes."""
        packed = self._packed if self.position is None else None
        if packed is None:
            try:
                packed = orjson.dumps(self.to_dict(), option=_PACKABLE)
            except (orjson.JSONEncodeError, RecursionError):
                packed = b""
            if self._bound and self.position is None:
                self._packed = packed
        return packed or None

    def let_go_of_packed(self) -> None:
        """Drop the JSON `packed` keeps, once events.jsonl and the result log have it: a result kept whole (a failure,
        or every result of a run that needs them after the cases) does not hold it for the rest of the run."""
        self._packed = None

    def _to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id}
        if self.name:
            out["name"] = self.name
        out["status"] = self.status
        out["input"] = self.input
        if self.output is not None:
            out["output"] = self.output
        if self.has_expected:
            out["expected"] = self.expected
        out["duration_ms"] = self.duration_ms
        if self.error:
            out["error"] = self.error
        if self.error_kind:
            out["error_kind"] = self.error_kind
        for key in ("trace", "options", "metadata"):
            value = getattr(self, key)
            if value:
                out[key] = value
        out["file"] = self.file
        out["line"] = self.line
        if self.agent_id:
            out["agent_id"] = self.agent_id
        if self.source:
            out["source"] = self.source
        if self.definition:
            out["definition"] = self.definition
        out["assertions"] = [a.to_dict() for a in self.assertions]
        target = self.usage.tokens("target")
        if target:
            out["usage"] = target          # the agent under test's tokens, as Yao reports them
        helpers = self.usage.helpers()
        if helpers:
            out["helper_usage"] = helpers  # calls (cached ones counted apart) and tokens of each helper role
        if self.tags:
            out["tags"] = self.tags
        if self.stability is not None:
            out["stability"] = self.stability
            out["runs"] = self.runs
        if self.recheck is not None:
            out["recheck"] = self.recheck
        if not self.ran:
            out["ran"] = False
        return out


# What the JSON of a result may hold: a dataclass or a datetime has no JSON type and makes `packed` None.
_PACKABLE = orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME


@dataclass
class Summary:
    """The counts of a run, by status."""

    total: int = 0
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    errors: int = 0
    timeouts: int = 0
    duration_ms: int = 0

    @classmethod
    def from_statuses(cls, statuses: list[str], duration_ms: int) -> Summary:
        summary = cls(total=len(statuses), duration_ms=duration_ms)
        for status in statuses:
            field_name = {"error": "errors", "timeout": "timeouts"}.get(status, status)
            if field_name in ("passed", "failed", "skipped", "errors", "timeouts"):
                setattr(summary, field_name, getattr(summary, field_name) + 1)
        return summary

    @property
    def pass_rate(self) -> float:
        """passed / (total − skipped), in percent; 0 when nothing ran (differs from Yao's passed/total)."""
        ran = self.total - self.skipped
        return 100.0 * self.passed / ran if ran else 0.0

    @property
    def ok(self) -> bool:
        return self.failed == 0 and self.errors == 0 and self.timeouts == 0
