"""Test cases as the engine sees them, after loading and validation."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..assertions.base import AssertionSpec
from .sources import GeneratorSource


@dataclass
class Checkpoint:
    """What some reply of the agent must satisfy in a dynamic case, once the checkpoints in `after` are reached."""

    id: str
    assertions: list[AssertionSpec]
    description: str | None = None
    after: list[str] = field(default_factory=list)
    required: bool = True


@dataclass
class Conversation:
    """A dynamic case's simulated user and checkpoints. `simulator` is a helper agent's id, or `scripted` to
    replay `replies`."""

    simulator: str
    checkpoints: list[Checkpoint]
    max_turns: int = 20
    persona: str | None = None
    goal: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    connector: str | None = None
    replies: list[str] = field(default_factory=list)

    @property
    def scripted(self) -> bool:
        return self.simulator == SCRIPTED


SCRIPTED = "scripted"
_DOCUMENTATION = ("id", "name", "description", "mode", "tags")


@dataclass(slots=True)
class Case:
    """One valid test case: standard, or dynamic when it has a `conversation`."""

    id: str
    input: Any                          # as written in the file (reported verbatim); None: the simulator opens
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
    written: dict[str, Any] | str = field(default_factory=dict)   # the entry as written: its JSON text when it
                                        # came from a file (a few hundred bytes, not a tree of objects), else
                                        # the value; `raw` gives it as a value
    conversation: Conversation | None = None           # dynamic mode
    source: str | None = None           # the generator input that wrote this case (`agents:…`), if any
    target: str | None = None           # the agent under test, set by the engine (from -n or the suite's path)
    agent_dir: Path | None = None       # that agent's directory, where hooks are looked up after the suite's

    @property
    def raw(self) -> dict[str, Any]:
        """The entry as written (for --dry-run and hooks), parsed again from its text when it came from a file."""
        return json.loads(self.written) if isinstance(self.written, str) else self.written

    @property
    def key(self) -> tuple[str, str]:
        """What a case is known by across runs, shards and baselines: its suite file (or generator) and its id."""
        return (self.file or self.source or "", self.id)

    def definition(self) -> str:
        """A digest of what the case does — the entry as written, less its id and what only documents it: a
        baseline's case of the same key and another definition is another case (an id reused)."""
        raw = self.raw
        kept = {key: value for key, value in raw.items() if key not in _DOCUMENTATION} if isinstance(raw, dict) \
            else raw
        text = json.dumps(kept, sort_keys=True, ensure_ascii=False, default=str)
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]

    def helper_agents(self) -> list[str]:
        """The helper agents this case asks: its judges and its simulator (not `scripted`)."""
        specs = list(self.assertions)
        ids = []
        if self.conversation is not None:
            specs += [spec for checkpoint in self.conversation.checkpoints for spec in checkpoint.assertions]
            if not self.conversation.scripted:
                ids.append(self.conversation.simulator)
        ids += [spec.helper_agent for spec in specs if spec.helper_agent]
        return list(dict.fromkeys(ids))


@dataclass
class InvalidCase:
    """An entry that could not become a Case; it is reported as an `error` result at its line."""

    message: str
    id: str | None = None
    file: str | None = None
    line: int | None = None
    input: Any = None
    kind: str = "invalid"               # the result's error_kind: `invalid`, or `generator` (it could not write cases)
    source: str | None = None           # the generator input, for generated entries
    target: str | None = None           # the agent its file's cases test, set by the engine
    traceback: str | None = None        # a generator's: where in the user's code it raised (`trace.traceback`)


@dataclass
class Suite:
    """Everything loaded from the inputs, in input order."""

    entries: list[Case | InvalidCase] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    # Generator inputs (`-i agents:…`), each with the index in `entries` where its cases go once generated.
    generators: list[tuple[int, GeneratorSource]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)    # `file:line: field: message`; the cases are valid

    @property
    def cases(self) -> list[Case]:
        return [e for e in self.entries if isinstance(e, Case)]

    @property
    def invalid(self) -> list[InvalidCase]:
        return [e for e in self.entries if isinstance(e, InvalidCase)]
