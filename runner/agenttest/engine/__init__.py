"""The engine: schedules cases, calls agents, checks replies, tells reporters.

`run_suite` is imported on first use, so that `engine.plan` (which `validate` needs) does not load the run
(`engine.run` and all it imports)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .run import RunOutcome, run_suite

__all__ = ["RunOutcome", "run_suite"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import run

        return getattr(run, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
