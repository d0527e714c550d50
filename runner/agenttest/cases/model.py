"""Test cases as the engine sees them, after loading and validation."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..assertions.base import AssertionSpec, no_options
from .sources import GeneratorSource


@dataclass
class Checkpoint:
    """What some reply of the agent must satisfy in a conversation, once the checkpoints in `after` are reached;
    a required one not reached by turn `by_turn` fails the case then."""

    id: str
    assertions: list[AssertionSpec]
    description: str | None = None
    after: list[str] = field(default_factory=list)
    required: bool = True
    by_turn: int | None = None


@dataclass
class Guard:
    """What every reply of the agent must satisfy: the first reply that breaks it fails the case at that turn."""

    id: str
    assertions: list[AssertionSpec]
    description: str | None = None


@dataclass
class UserTurn:
    """A fixed step of a conversation: the user's message (`input` as written, `messages` normalised: usually one
    user message), what the reply to it must satisfy, and options for that request."""

    input: Any
    messages: list[dict[str, Any]]
    assertions: list[AssertionSpec] = field(default_factory=list)
    options: dict[str, Any] = field(default_factory=dict)
    index: int | None = None            # its place in the case's `turns` (None: the case's top-level `input`)


@dataclass
class Simulate:
    """A simulated stretch of a conversation: the simulator (or the person, with --interactive) writes up to
    `max_turns` user turns, stopping early once checkpoint `until` is reached or it says its goal is achieved."""

    max_turns: int | None = None
    until: str | None = None


Step = UserTurn | Simulate


@dataclass
class Conversation:
    """A conversation case: its steps, checkpoints, guards and final assertions, and who writes the simulated turns
    (`simulator`: a helper agent's id, `scripted` to replay `replies`, None when every turn is fixed).

    Written as `turns` (`script`), every step runs and the checkpoints must be reached by the end; written the Yao
    way (simulator + checkpoints), the steps are the case's `input` and one open simulated stretch, and the case
    passes as soon as every required checkpoint is reached."""

    simulator: str | None
    checkpoints: list[Checkpoint]
    steps: list[Step] = field(default_factory=list)
    script: bool = False
    guards: list[Guard] = field(default_factory=list)
    final: list[AssertionSpec] = field(default_factory=list)
    max_turns: int = 20
    persona: str | None = None
    goal: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    connector: str | None = None
    replies: list[str] = field(default_factory=list)

    @property
    def scripted(self) -> bool:
        return self.simulator == SCRIPTED

    @property
    def simulated(self) -> bool:
        """Whether some user turn is written by a simulator (`dynamic` mode), not only by the case (`static`)."""
        return any(isinstance(step, Simulate) for step in self.steps)

    def assertion_specs(self) -> list[AssertionSpec]:
        """Every assertion of the conversation: its turns', checkpoints', guards' and final ones."""
        return [*(spec for step in self.steps if isinstance(step, UserTurn) for spec in step.assertions),
                *(spec for checkpoint in self.checkpoints for spec in checkpoint.assertions),
                *(spec for guard in self.guards for spec in guard.assertions), *self.final]


@dataclass(frozen=True)
class Interactive:
    """`interactive`: the case is written for a person at a terminal (`--skip-interactive` skips it without one),
    who is given `timeout` seconds for each turn."""

    enabled: bool = False
    timeout: float = 300.0


SCRIPTED = "scripted"
_DOCUMENTATION = ("id", "name", "description", "mode", "tags")
# `json.dumps(kept, sort_keys=True, ensure_ascii=False, default=str)`, its encoder built once (json.dumps builds one
# for every call given options): every run of every case works its definition out.
_DEFINITION_TEXT = json.JSONEncoder(sort_keys=True, ensure_ascii=False, default=str)


def definition_of(raw: Any) -> str:
    """`Case.definition` of an entry written as `raw`."""
    kept = {key: value for key, value in raw.items() if key not in _DOCUMENTATION} if isinstance(raw, dict) else raw
    text = _DEFINITION_TEXT.encode(kept)
    import hashlib  # here: loading a suite needs none of it (issue #27)

    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


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
    options: Mapping[str, Any] = field(default_factory=no_options)
    user: str | None = None
    team: str | None = None
    metadata: dict[str, Any] | None = None
    skip: str | None = None             # None: run it; otherwise the reason ("" when `skip: true`)
    timeout: float | None = None        # seconds; None: the run's --timeout
    before: str | None = None
    after: str | None = None
    tags: tuple[str, ...] = ()
    file: str | None = None             # the suite file as the user named it (None for direct input)
    line: int | None = None             # 1-based line of the entry in `file`
    base_dir: Path = field(default_factory=Path.cwd)   # where relative references (hooks, files) resolve
    written: dict[str, Any] | str = field(default_factory=dict)   # the entry as written: its JSON text when it
                                        # came from a file (a few hundred bytes, not a tree of objects), else
                                        # the value; `raw` gives it as a value
    conversation: Conversation | None = None           # a conversation (`turns`, or simulator + checkpoints)
    interactive: Interactive | None = None   # `interactive.enabled`: written for a person at a terminal
    source: str | None = None           # the generator input that wrote this case (`agents:…`), if any
    target: str | None = None           # the agent under test, set by the engine (from -n or the suite's path)
    agent_dir: Path | None = None       # that agent's directory, where hooks are looked up after the suite's
    digest: str | None = None           # `definition()` when worked out as the entry was read (None: not yet)

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
        return self.digest if self.digest is not None else definition_of(self.raw)

    def assertion_specs(self) -> list[AssertionSpec]:
        """Every assertion of the case, a conversation's included."""
        return [*self.assertions, *(self.conversation.assertion_specs() if self.conversation is not None else [])]

    def helper_agents(self) -> list[str]:
        """The helper agents this case asks: its judges and its simulator (not `scripted`)."""
        ids = []
        conversation = self.conversation
        if conversation is not None and conversation.simulator and not conversation.scripted:
            ids.append(conversation.simulator)
        ids += [spec.helper_agent for spec in self.assertion_specs() if spec.helper_agent]
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
