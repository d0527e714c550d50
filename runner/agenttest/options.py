"""The run options: one typed model for the CLI flags, the Action's inputs and `defaults:` in agenttest.yaml."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .durations import parse_duration, parse_timeout
from .errors import UsageError
from .validation import field_errors


class RunOptions(BaseModel):
    """Every run option by its long name (`--output-dir` is `output_dir`), with its default. Strict: `verbose: "no"`
    in YAML is an error, not True."""

    model_config = ConfigDict(extra="forbid", strict=True)

    name: str | None = None
    output: str | None = None
    output_dir: str = "agenttest-results"
    junit: str | None = None
    summary: str | None = None
    job_summary: bool = True
    connector: str | None = None
    user: str | None = None
    team: str | None = None
    ctx: str | None = None
    verbose: bool = False
    simulator: str | None = None
    judge: str | None = None
    before: str | None = None
    after: str | None = None
    timeout: str = "2m"
    parallel: int = Field(4, ge=1)
    runs: int = Field(1, ge=1)
    min_pass_rate: float = Field(100.0, gt=0, le=100, allow_inf_nan=False)
    run: str | None = None
    shard: str | None = None
    fail_fast: bool = False
    dry_run: bool = False
    baseline: str | None = None
    retries: int = Field(2, ge=0)
    cache: str | None = None            # None: the user's cache directory (agents.cache.default_cache_directory)
    no_cache: bool = False
    record: str | None = None
    replay: str | None = None
    max_cost: float | None = Field(None, ge=0, allow_inf_nan=False)
    max_tokens: int | None = Field(None, ge=0)
    annotations: bool | None = None
    max_annotations: int = Field(10, ge=0)
    fail_on: Literal["failure", "regression", "never"] = "failure"
    color: Literal["auto", "always", "never"] = "auto"
    interactive: bool = False
    save_conversation: str | None = None
    on_missing_input: Literal["skip", "fail", "ignore"] = "ignore"
    skip_interactive: bool = False

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


OPTION_NAMES = tuple(RunOptions.model_fields)


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
