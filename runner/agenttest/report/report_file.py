"""report.json as `agenttest merge` and `--baseline` read it — a shard's report, or an earlier run's, either of
which may have been crafted or damaged: every field they use, typed and bounded, so that a bad one is a usage
error naming the file and the field (`summary.duration_ms: expected a number, got string`), never a traceback,
an overflow, or a lost artifact. Fields they pass through unread are kept as they are."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PlainValidator

from ..assertions.base import json_type
from ..run_count import FIRST_RUNS, LARGEST_MAX, auto_limit

# Bounds far above anything a real run reaches (a million cases of a year each), low enough that no sum,
# product or int() of them overflows or takes long.
Count = Annotated[int, Field(ge=0, le=10**12)]
Milliseconds = Annotated[float, Field(ge=0, le=10**15, allow_inf_nan=False)]
Amount = Annotated[float, Field(ge=0, le=10**12, allow_inf_nan=False)]
Percent = Annotated[float, Field(ge=0, le=100, allow_inf_nan=False)]
Tokens = dict[str, Count]
MOST_RUNS_PER_CASE = 10_000


def _runs_per_case(value: Any) -> int | str:
    """`summary.runs_per_case`: a whole number of runs from 1 to 10,000, or `auto:MAX` (`run_count`)."""
    if isinstance(value, int) and not isinstance(value, bool):
        if not 1 <= value <= MOST_RUNS_PER_CASE:
            raise ValueError(f"must be {'at least 1' if value < 1 else f'at most {MOST_RUNS_PER_CASE}'}, got {value}")
        return value
    limit = auto_limit(value)
    if limit is None or not FIRST_RUNS <= limit <= LARGEST_MAX:
        raise ValueError(f"expected an integer or auto:MAX, got {json_type(value)}" if limit is None
                         else f"auto:MAX must be from {FIRST_RUNS} to {LARGEST_MAX}, got {limit}")
    return str(value)


RunsPerCase = Annotated[int | str, PlainValidator(_runs_per_case)]


class _Read(BaseModel):
    """Strict: `"2"` is no number and `true` no count. Unknown keys pass through."""

    model_config = ConfigDict(strict=True, extra="allow", defer_build=True)


class StabilityRow(_Read):
    runs: Count
    passed: Count
    pass_rate: Percent
    pass_rate_interval: Annotated[list[Percent], Field(min_length=2, max_length=2)] | None = None
    stability_class: str
    flaky: bool = False
    counted_as: str | None = None
    infra_errors: Count = 0
    stopped: Literal["agreed", "interval", "curtailed", "limit"] | None = None


class RecheckEntry(_Read):
    limit: Count | None = None
    runs: Count
    passed: bool
    stopped: str | None = None
    outcomes: list[dict[str, Any]] | None = None


class ResultEntry(_Read):
    id: str
    status: Literal["passed", "failed", "error", "timeout", "skipped"]
    name: str | None = None
    duration_ms: Milliseconds | None = None
    position: Count | None = None
    line: Count | None = None
    file: str | None = None
    source: str | None = None
    definition: str | None = None
    error: str | None = None
    error_kind: str | None = None
    ran: bool = True
    tags: list[str] | None = None
    assertions: list[dict[str, Any]] | None = None
    stability: StabilityRow | None = None
    runs: list[dict[str, Any]] | None = None
    metadata: dict[str, Any] | None = None
    trace: dict[str, Any] | None = None
    usage: Tokens | None = None
    helper_usage: dict[str, Tokens] | None = None
    recheck: RecheckEntry | None = None


class Budget(_Read):
    max_tokens: Count | None = None
    max_cost: Amount | None = None
    tokens: Count | None = None
    cost_usd: Amount | None = None
    spent: str | None = None


class SummaryEntry(_Read):
    total: Count | None = None
    passed: Count | None = None
    failed: Count | None = None
    skipped: Count | None = None
    errors: Count | None = None
    timeouts: Count | None = None
    duration_ms: Milliseconds | None = None
    runs_per_case: RunsPerCase = 1
    agent_id: str | None = None
    connector: str | None = None
    agent_path: str | None = None
    pass_rate: Percent | None = None
    usage: dict[str, Tokens] | None = None
    cost: dict[str, Amount] | None = None
    budget: Budget | None = None


class Metadata(_Read):
    version: str | None = None
    shard: str | None = None
    options: dict[str, Any] | None = None
    started_at: str | None = None
    completed_at: str | None = None


class Replay(_Read):
    directory: str | None = None
    changed: list[str] | None = None
    could_not_tell: str | None = None


class ReportFile(_Read):
    summary: SummaryEntry
    results: list[ResultEntry]
    metadata: Metadata | None = None
    environment: dict[str, Any] | None = None
    interrupted: bool = False
    error: str | None = None
    warnings: list[str] | None = None
    replay: Replay | None = None


__all__ = ["ReportFile"]
