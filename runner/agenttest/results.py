"""Results of cases and of the whole run, and their JSON shape (Yao's report plus our additions)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, overload

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
    # Once bound the result is final: its JSON shape is built once, for events.jsonl and again for report.json.
    _shape: dict[str, Any] | None = field(default=None, init=False, repr=False, compare=False)
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
        self._bound, self._shape = True, None

    def rechecked(self, record: dict[str, Any], usage: Usage) -> None:
        """Keep what the case's rechecks found (`record`) and count what they used: its JSON shape is built anew."""
        self.recheck = record
        self.usage = Usage.total([self.usage, usage])
        self._shape = None

    def __copy__(self) -> CaseResult:
        """A copy to change (a verdict over runs): its JSON shape is built anew."""
        copied = CaseResult.__new__(CaseResult)
        for name in CaseResult.__slots__:
            setattr(copied, name, getattr(self, name))
        copied._shape = None
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
    def count(cls, results: list[CaseResult], duration_ms: int) -> Summary:
        return cls.from_statuses([result.status for result in results], duration_ms)

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


class ResultLog:
    """A run's results in plan order, each put in once final (its reporters told). A result that passed is kept as
    the UTF-8 JSON of its report.json shape when nothing after the cases needs its objects (`lean`): ~0.6 KB a case
    rather than ~3 KB of objects, so that a suite's memory grows by little more than its report. Every other result
    stays whole — the failures are what the summaries, annotations and comparisons read closely — as every result
    does when the run needs them all after the cases (AfterAll, rechecks).

    Reporters read the results through `dicts()`, a sequence that builds each report.json dict as it is read."""

    def __init__(self, size: int, *, lean: bool) -> None:
        self.lean = lean
        self.positions: list[int] | None = None         # --shard: each result's place in the whole suite
        self._items: list[CaseResult | bytes | None] = [None] * size
        self._usages: list[bytes | None] = [None] * size     # a packed result's usage, as JSON
        self._forms: dict[bytes, bytes] = {}             # one bytes object for each usage seen: most are alike
        self._stability: dict[int, dict[str, Any]] = {}  # a packed result's stability row (--runs)

    def __len__(self) -> int:
        return len(self._items)

    def put(self, index: int, result: CaseResult) -> None:
        packed = _packed(result) if self.lean and result.status == "passed" and result.position is None else None
        if packed is None:
            self._items[index] = result
            return
        usage = orjson.dumps(result.usage.roles)
        self._items[index], self._usages[index] = packed, self._forms.setdefault(usage, usage)
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
        return [item.status if isinstance(item, CaseResult) else "passed" for item in self._items]  # type: ignore[union-attr]

    def usage(self, *before: Usage) -> Usage:
        """The usage of `before` and of every result, added up in plan order (as each count's keys first appear)."""
        total, decoded = Usage.total(before), {}
        for item, usage in zip(self._items, self._usages, strict=True):
            if usage is not None:
                roles = decoded.get(id(usage))
                if roles is None:
                    roles = decoded[id(usage)] = orjson.loads(usage)
                total.merge(roles)
            elif isinstance(item, CaseResult):
                total.merge(item.usage)
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

    def dict_at(self, index: int) -> dict[str, Any]:
        item = self._items[index]
        if isinstance(item, CaseResult):
            return item.to_dict()
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

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (ResultDicts, list, tuple)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ResultDicts({len(self)} results)"


_PACKABLE = orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME


def _packed(result: CaseResult) -> bytes | None:
    """The result's report.json shape as JSON that reads back to an equal dict, or None when it would not (a key
    that is not a string, a value JSON has no type for: report.json writes those its own way)."""
    try:
        raw = orjson.dumps(result.to_dict(), option=_PACKABLE)
    except (orjson.JSONEncodeError, RecursionError):
        return None
    return bytes(memoryview(raw))   # orjson's bytes keep the room of its buffer (4 KB for a 0.6 KB result)
