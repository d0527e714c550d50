"""The run options validated: one typed model for the CLI flags, the Action's inputs and `defaults:` in agenttest.yaml.

The options themselves (types, defaults, limits, flags) are the rows of `option_table.OptionTable`.
"""

from __future__ import annotations

import math
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from .durations import parse_duration, parse_timeout
from .errors import UsageError
from .option_table import OPTION_NAMES as OPTION_NAMES  # the names, read without pydantic
from .option_table import OptionTable
from .run_count import parse_runs
from .validation import field_errors


class RunOptions(OptionTable, BaseModel):
    """Every run option of the table, with its default. Strict: `verbose: "no"` in YAML is an error, not True."""

    model_config = ConfigDict(extra="forbid", strict=True)

    @field_validator("min_pass_rate", "max_cost", "alpha", mode="before")
    @classmethod
    def _finite(cls, value: Any) -> Any:
        # The table is plain Python and cannot say pydantic's `allow_inf_nan=False`: checked here, before the
        # limits and in the words of validation.field_errors, as pydantic's own check would be.
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"must be a finite number, got {value!r}")
        return value

    @field_validator("runs", mode="before")
    @classmethod
    def _runs(cls, value: Any) -> Any:
        return parse_runs(value)        # `5`, `"5"` → 5; `auto` → `auto:10`; ValueError naming what is wrong

    @field_validator("timeout")
    @classmethod
    def _duration(cls, value: str) -> str:
        parse_timeout(value)      # ValueError → a validation error naming the option
        return value

    @field_validator("cache")
    @classmethod
    def _cache_directory(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("needs a directory (or use --no-cache)")
        return value

    @field_validator("simulator", "judge")
    @classmethod
    def _agent_id(cls, value: str | None) -> str | None:
        return value[len("agents:"):] if value and value.startswith("agents:") else value

    @field_validator("shard")
    @classmethod
    def _shard(cls, value: str | None) -> str | None:
        if value is not None:
            shard_of(value)
        return value

    @field_validator("comment_key")
    @classmethod
    def _comment_key(cls, value: str) -> str:
        from .github.comment import comment_key_problem  # the pull-request comment's module, only for a key

        problem = comment_key_problem(value)
        if problem:
            raise ValueError(problem.removeprefix("--comment-key "))
        return value

    @field_validator("run")
    @classmethod
    def _pattern(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(run_filter_pattern(value))
            except re.error as exc:
                raise ValueError(f"invalid pattern {value!r}: {exc}") from exc
        return value

    @property
    def timeout_seconds(self) -> float:
        return parse_duration(self.timeout)


def shard_of(value: str) -> tuple[int, int]:
    """`--shard K/N` as (K, N), 1 ≤ K ≤ N. Raises ValueError saying what is wrong."""
    index, slash, total = value.partition("/")
    if not slash or not index.strip().isdigit() or not total.strip().isdigit():
        raise ValueError(f"expected K/N (e.g. 2/4), got {value!r}")
    k, n = int(index), int(total)
    if not 1 <= k <= n:
        raise ValueError(f"shard {k} of {n} does not exist: K goes from 1 to N")
    return k, n


def run_filter_pattern(value: str) -> str:
    """The regular expression of a `--run` value; `tag:NAME` selects by tag instead."""
    return value[4:] if value.startswith("tag:") else value


def run_filter_tag(value: str) -> str | None:
    return value[4:] if value.startswith("tag:") else None


def check_options(values: dict[str, Any]) -> list[tuple[str, str]]:
    """Problems with some option values as (option, message) pairs; empty when they are fine."""
    try:
        RunOptions.model_validate(values)
    except ValidationError as exc:
        return [(error.path or "options", error.message) for error in field_errors(exc, RunOptions)]
    return []


def merge_options(*layers: dict[str, Any]) -> RunOptions:
    """Later layers win (built-in < `defaults:` < flags). Raises UsageError naming the flag."""
    merged: dict[str, Any] = {}
    for layer in layers:
        merged.update({k: v for k, v in layer.items() if k in RunOptions.model_fields})
    problems = check_options(merged)
    if problems:
        option, message = problems[0]
        raise UsageError(f"{flag_name(option)}: {message}")
    options = RunOptions.model_validate(merged)
    if options.record and options.replay:
        raise UsageError("--record and --replay: a run either records its calls or replays them, not both")
    return options


def flag_name(option: str) -> str:
    return "--" + option.replace("_", "-")
