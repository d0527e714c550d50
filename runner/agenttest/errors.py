"""One hierarchy for user mistakes: each carries where it happened; tracebacks are for our bugs only."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

# Process exit codes (docs/command-line.md): every selected case passed; some did not; a mistake before any case ran (or
# BeforeAll failed); interrupted by SIGINT/SIGTERM.
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
# When a run exits EXIT_FAILED (`--fail-on`): on any failure, only on regressions against the baseline, or never.
FailOn = Literal["failure", "regression", "never"]
# When a run posts its pull-request comment (`--comment`): `auto` on pull_request events, always, on failures, never.
CommentMode = Literal["auto", "always", "failures", "off"]


@dataclass
class Where:
    """A place in a user's file: path, 1-based line, and the field inside the entry."""

    file: str | None = None
    line: int | None = None
    field: str | None = None

    def __str__(self) -> str:
        place = self.file or ""
        if self.line is not None:
            place = f"{place}:{self.line}" if place else f"line {self.line}"
        if self.field:
            place = f"{place}: {self.field}" if place else self.field
        return place


class AgentTestError(Exception):
    """A mistake in what the user gave us (flags, config, suite). Maps to exit code 2."""

    def __init__(self, message: str, where: Where | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.where = where or Where()

    def __str__(self) -> str:
        place = str(self.where)
        return f"{place}: {self.message}" if place else self.message


class UsageError(AgentTestError):
    """Bad command-line usage."""


class ConfigError(AgentTestError):
    """A problem in agenttest.yaml (unknown key, missing variable, unknown agent)."""


class SuiteError(AgentTestError):
    """A problem in a suite file or an entry of it (bad JSON, invalid case, bad assertion)."""


class HookError(AgentTestError):
    """A hook reference that cannot be resolved, or a hook that raised."""


class UnsafeReference(HookError):
    """A reference to a file the suite may not read (outside its repository, under `.git/`, not a regular file):
    the case is invalid (docs/security.md), not a hook that failed."""


class AgentCallError(Exception):
    """An agent call failed. `kind` is the result's `error_kind`: `agent`, or `infra` for connection, DNS and TLS
    faults (the other kinds — invalid, simulator, judge, hook — are not raised by agents). `status`: the HTTP status
    of an error reply."""

    def __init__(self, message: str, kind: str = "agent", status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.status = status


class HelperError(Exception):
    """A helper agent (judge, simulator, generator) could not be reached or gave a reply that cannot be read.
    `kind` is the result's `error_kind` (`judge`, `simulator`, `generator`): a broken helper is never mistaken for
    a broken agent, and never becomes a silent pass or fail."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind
