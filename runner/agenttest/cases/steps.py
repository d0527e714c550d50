"""A conversation's steps as written: `turns` (fixed user turns and simulated stretches), `guards` and `final`.

Each problem is appended to `problems` naming its field (`turns[1].simulate.until: …`), as the loader does for the
rest of a case; the assertions are prepared by the loader's `SpecsAt`, so they are checked exactly like a case's.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..assertions.base import AssertionSpec
from ..hints import did_you_mean
from .inputs import InputError, normalize_input
from .model import Guard, Simulate, Step, UserTurn

if TYPE_CHECKING:       # the entries of a conversation, read by their models (cases.schema) before they come here
    from .schema import GuardEntry, TurnEntry

# Prepares the assertions written at a field (`turns[0].assert`), appending their problems; [] when there are some.
SpecsAt = Callable[[Any, str], list[AssertionSpec]]


def turn_steps(turns: list[TurnEntry], *, base_dir: Path, repo_root: Path, specs_at: SpecsAt,
               problems: list[str]) -> list[Step]:
    """The steps of `turns`, in order."""
    if not turns:
        problems.append("turns: empty; give at least one step: {\"input\": \"…\"} (a user turn) or "
                        "{\"simulate\": {\"max_turns\": 3}} (a simulated stretch)")
    steps: list[Step] = []
    for index, turn in enumerate(turns):
        place = f"turns[{index}]"
        given = turn.model_fields_set
        if turn.simulate is not None:
            if turn.input is not None:
                problems.append(f"{place}: a step is a user turn ('input') or a simulated stretch ('simulate'), "
                                "not both")
            for key, name in (("assert", "assert_"), ("assertions", "assertions"), ("options", "options")):
                if name in given:
                    problems.append(f"{place}.{key}: a simulated stretch has no {key} of its own; check its "
                                    "replies with guards or checkpoints")
            steps.append(Simulate(max_turns=turn.simulate.max_turns, until=turn.simulate.until))
            continue
        if turn.input is None:
            problems.append(f"{place}: needs 'input' (a fixed user turn) or 'simulate' (a simulated stretch)")
            continue
        if turn.assert_ is not None and turn.assertions is not None:
            problems.append(f"{place}: use either 'assert' or 'assertions', not both")
            continue
        try:
            messages = normalize_input(turn.input, base_dir=base_dir, repo_root=repo_root)
        except InputError as exc:
            problems.append(f"{place}.{exc}")
            continue
        if messages[-1].get("role") != "user":
            problems.append(f"{place}.input: the last message is the {messages[-1].get('role')}'s; a turn ends with "
                            "what the user says")
            continue
        key, written = ("assertions", turn.assertions) if turn.assertions is not None else ("assert", turn.assert_)
        specs = specs_at(written, f"{place}.{key}") if written is not None else []
        options = turn.options.model_dump(exclude_none=True) if turn.options is not None else {}
        steps.append(UserTurn(input=turn.input, messages=messages, assertions=specs, options=options, index=index))
    return steps


def check_stretches(steps: list[Step], checkpoint_ids: Collection[str], simulator: bool,
                    problems: list[str]) -> None:
    """Each simulated stretch needs a simulator, and its `until` names a checkpoint of the case."""
    for index, step in enumerate(steps):
        if not isinstance(step, Simulate):
            continue
        if not simulator:
            problems.append(f"turns[{index}].simulate: needs a simulator to write its turns: the case's "
                            "\"simulator\" (an agent id, or \"scripted\" with \"replies\"), or --simulator ID")
            simulator = True        # said once
        if step.until is not None and step.until not in checkpoint_ids:
            known = (did_you_mean(step.until, checkpoint_ids)
                     or (f" (checkpoints: {', '.join(checkpoint_ids)})" if checkpoint_ids
                         else " (the case has no checkpoints)"))
            problems.append(f"turns[{index}].simulate.until: unknown checkpoint {step.until!r}{known}")


def guards(entries: list[GuardEntry], specs_at: SpecsAt, problems: list[str]) -> list[Guard]:
    """The case's guards; ids are unique, and each has an assertion."""
    found: list[Guard] = []
    seen: dict[str, int] = {}
    for index, entry in enumerate(entries):
        place = f"guards[{index}]"
        if entry.id in seen:
            problems.append(f"{place}.id: duplicate guard id {entry.id!r} (first at guards[{seen[entry.id]}])")
            continue
        seen[entry.id] = index
        if entry.assert_ is not None and entry.assertion is not None:
            problems.append(f"{place}: use either 'assert' or 'assertion', not both")
            continue
        key, written = ("assertion", entry.assertion) if entry.assertion is not None else ("assert", entry.assert_)
        if written is None or written == []:
            problems.append(f"{place}: needs 'assert': what every reply of the agent must satisfy (e.g. "
                            "{\"type\": \"tool_called\", \"value\": \"delete_account\", \"negate\": true})")
            continue
        before = len(problems)
        specs = specs_at(written, f"{place}.{key}")
        if len(problems) == before:
            found.append(Guard(id=entry.id, assertions=specs, description=entry.description))
    return found
