"""The run options validated by pydantic: `RunOptions`, one typed model for the CLI flags, the Action's inputs and
`defaults:` in agenttest.yaml — the rows of `option_table.OptionTable`.

Building this model takes ~2× the bare interpreter's start (issue #27), so a run whose options are all of the plain
shapes reads them without it (`options.merge_options`, `plain_settings.plain_options`); anything else is read here.
"""

from __future__ import annotations

import math
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator

from .durations import parse_timeout
from .option_table import OptionTable, agent_option, run_filter_pattern, shard_of
from .run_count import parse_runs

LOGIN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\[bot\])?")    # `octocat`, `my-app[bot]`


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
        return agent_option(value)

    @field_validator("shard")
    @classmethod
    def _shard(cls, value: str | None) -> str | None:
        if value is not None:
            shard_of(value)
        return value

    @field_validator("comment_author")
    @classmethod
    def _comment_author(cls, value: str | None) -> str | None:
        if value is not None and not LOGIN.fullmatch(value):
            raise ValueError(f"{value!r}: a GitHub login (letters, digits and '-', up to 39), or an app's "
                             "`NAME[bot]`")
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
