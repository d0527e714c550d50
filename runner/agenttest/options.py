"""The run options validated: one typed model for the CLI flags, the Action's inputs and `defaults:` in agenttest.yaml.

The options themselves (types, defaults, limits, flags) are the rows of `option_table.OptionTable`; the model that
validates them is `run_options.RunOptions` (also offered here, `options.RunOptions`). Building it takes ~2× the bare
interpreter's start (issue #27), so `merge_options(…, plain=True)` (a run of the CLI or the Action) reads options that
are all of the plain shapes without it, into a `PlainOptions` holding the values the model would hold; anything else
the model reads, and says what is wrong.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .errors import UsageError
from .option_table import OPTION_NAMES as OPTION_NAMES  # the names, read without pydantic
from .option_table import OptionTable
from .option_table import run_filter_pattern as run_filter_pattern
from .option_table import run_filter_tag as run_filter_tag
from .option_table import shard_of as shard_of
from .plain_settings import plain_options

if TYPE_CHECKING:
    from .run_options import RunOptions

_KNOWN = frozenset(OPTION_NAMES)


class PlainOptions(OptionTable):
    """The run options read without their model (`plain_settings.plain_options`): every option of the table, the
    value the model would hold (its default where none was given), and the model's `model_dump`."""

    def __init__(self, values: dict[str, Any]) -> None:
        self.__dict__.update(values)

    def model_dump(self, *, exclude_none: bool = False) -> dict[str, Any]:
        values = {name: self.__dict__[name] for name in OPTION_NAMES}
        return {name: value for name, value in values.items() if value is not None} if exclude_none else values

    def __eq__(self, other: object) -> bool:
        if isinstance(other, OptionTable) and hasattr(other, "model_dump"):
            return self.model_dump() == other.model_dump()
        return NotImplemented

    __hash__ = None     # type: ignore[assignment]      # as a pydantic model's

    def __repr__(self) -> str:
        return f"PlainOptions({', '.join(f'{name}={value!r}' for name, value in self.model_dump().items())})"


def __getattr__(name: str) -> Any:
    # The model, built when first asked for (`from agenttest.options import RunOptions`).
    if name == "RunOptions":
        from .run_options import RunOptions

        return RunOptions
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def check_options(values: dict[str, Any]) -> list[tuple[str, str]]:
    """Problems with some option values as (option, message) pairs; empty when they are fine."""
    from pydantic import ValidationError

    from .run_options import RunOptions
    from .validation import field_errors

    try:
        RunOptions.model_validate(values)
    except ValidationError as exc:
        return [(error.path or "options", error.message) for error in field_errors(exc, RunOptions)]
    return []


def merge_options(*layers: dict[str, Any], plain: bool = False) -> RunOptions | PlainOptions:
    """Later layers win (built-in < `defaults:` < flags). Raises UsageError naming the flag. With `plain`, options
    that are all of the plain shapes are read without the model (`PlainOptions`)."""
    merged: dict[str, Any] = {}
    for layer in layers:
        merged.update({k: v for k, v in layer.items() if k in _KNOWN})
    values = plain_options(merged) if plain else None
    options: RunOptions | PlainOptions
    if values is not None:
        options = PlainOptions(values)
    else:
        from .run_options import RunOptions

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
