"""Test cases as the engine sees them, after loading and validation."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..assertions.base import AssertionSpec


@dataclass
class Case:
    """One valid standard-mode test case."""

    id: str
    input: Any                          # as written in the file (reported verbatim)
    messages: list[dict[str, Any]]      # normalised chat messages, attachments resolved
    assertions: list[AssertionSpec] = field(default_factory=list)
    expected: Any = None                # for the report; without `assert`, also `assertions` (one `equals`)
    has_expected: bool = False          # `expected: null` is a real expectation
    name: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    user: str | None = None
    team: str | None = None
    metadata: dict[str, Any] | None = None
    skip: str | None = None             # None: run it; otherwise the reason ("" when `skip: true`)
    timeout: float | None = None        # seconds; None: the run's --timeout
    before: str | None = None
    after: str | None = None
    tags: list[str] = field(default_factory=list)
    file: str | None = None             # the suite file as the user named it (None for direct input)
    line: int | None = None             # 1-based line of the entry in `file`
    base_dir: Path = field(default_factory=Path.cwd)   # where relative references (hooks, files) resolve
    raw: dict[str, Any] = field(default_factory=dict)  # the entry as written, for --dry-run


@dataclass
class InvalidCase:
    """An entry that could not become a Case; it is reported as an `error` result at its line."""

    message: str
    id: str | None = None
    file: str | None = None
    line: int | None = None
    input: Any = None


@dataclass
class Suite:
    """Everything loaded from the inputs, in input order."""

    entries: list[Case | InvalidCase] = field(default_factory=list)
    files: list[str] = field(default_factory=list)

    @property
    def cases(self) -> list[Case]:
        return [e for e in self.entries if isinstance(e, Case)]

    @property
    def invalid(self) -> list[InvalidCase]:
        return [e for e in self.entries if isinstance(e, InvalidCase)]
