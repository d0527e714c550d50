"""The engine: schedules cases, calls agents, checks replies, tells reporters."""

from .run import RunOutcome, run_suite

__all__ = ["RunOutcome", "run_suite"]
