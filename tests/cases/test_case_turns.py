"""Conversations written as steps (SPEC §5): `turns`, `guards`, `final`, `checkpoints[].by_turn` and `interactive`
become a Conversation, and every mistake in them is an invalid case naming its field."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from case_files import LoadOne

from agenttest.cases import Case, InvalidCase, load_suite
from agenttest.cases.loader import Checks
from agenttest.cases.model import Simulate, UserTurn

ErrorOf = Callable[[Any], str]
CONTAINS_HI = {"type": "contains", "value": "hi"}
SCRIPTED = {"use": "scripted", "replies": ["more"]}


def _case(load_one: LoadOne, entry: dict[str, Any]) -> Case:
    result = load_one(entry)
    assert isinstance(result, Case), result
    return result


def test_turns_are_fixed_turns_and_simulated_stretches_in_order(load_one: LoadOne) -> None:
    case = _case(load_one, {
        "id": "T1", "simulator": SCRIPTED,
        "turns": [{"input": "hello", "assert": CONTAINS_HI, "options": {"metadata": {"step": 1}}},
                  {"simulate": {"max_turns": 2, "until": "greets"}},
                  {"input": {"role": "user", "content": [{"type": "text", "text": "bye"}]},
                   "assertions": [CONTAINS_HI]}],
        "checkpoints": [{"id": "greets", "assert": CONTAINS_HI, "by_turn": 2}],
        "guards": [{"id": "no-canary", "description": "never leaks it", "assert": {"type": "not_contains",
                                                                                  "value": "CANARY"}}],
        "final": {"type": "contains", "value": "bye"}, "max_turns": 6})
    conversation = case.conversation
    assert conversation is not None and conversation.script and conversation.simulated
    first, stretch, last = conversation.steps
    assert isinstance(first, UserTurn) and isinstance(last, UserTurn)
    assert (first.input, first.messages, first.options, first.index) == (
        "hello", [{"role": "user", "content": "hello"}], {"metadata": {"step": 1}}, 0)
    assert [spec.type for spec in first.assertions] == ["contains"]
    assert last.messages == [{"role": "user", "content": [{"type": "text", "text": "bye"}]}] and last.index == 2
    assert stretch == Simulate(max_turns=2, until="greets")
    assert [(c.id, c.by_turn) for c in conversation.checkpoints] == [("greets", 2)]
    assert [(g.id, g.description, [s.type for s in g.assertions]) for g in conversation.guards] == [
        ("no-canary", "never leaks it", ["not_contains"])]
    assert [spec.type for spec in conversation.final] == ["contains"]
    assert (conversation.max_turns, conversation.simulator, case.input, case.assertions) == (6, "scripted", None, [])


def test_the_seeds_static_mode_needs_no_simulator_and_fixed_turns_raise_the_default_max_turns(
        load_one: LoadOne) -> None:
    case = _case(load_one, {"id": "T1", "mode": "static",
                            "turns": [{"input": f"turn {n}", "assertions": [CONTAINS_HI]} for n in range(25)]})
    conversation = case.conversation
    assert conversation is not None and conversation.simulator is None and not conversation.simulated
    assert conversation.max_turns == 25


def test_a_yao_dynamic_case_is_its_input_then_one_open_stretch(load_one: LoadOne) -> None:
    case = _case(load_one, {"id": "T1", "input": "hi", "simulator": SCRIPTED,
                            "checkpoints": [{"id": "c", "assert": CONTAINS_HI, "by_turn": 3}],
                            "guards": [{"id": "g", "assertion": CONTAINS_HI}], "final": [CONTAINS_HI]})
    conversation = case.conversation
    assert conversation is not None and not conversation.script
    opening, stretch = conversation.steps
    assert isinstance(opening, UserTurn) and opening.messages == [{"role": "user", "content": "hi"}]
    assert stretch == Simulate()
    assert conversation.checkpoints[0].by_turn == 3 and len(conversation.guards) == 1 and len(conversation.final) == 1


def test_a_single_turn_case_written_for_a_person_is_a_one_turn_conversation(load_one: LoadOne) -> None:
    case = _case(load_one, {"id": "T1", "input": "hello", "assert": CONTAINS_HI,
                            "interactive": {"enabled": True, "timeout": "10m"}})
    assert case.interactive is not None and (case.interactive.enabled, case.interactive.timeout) == (True, 600.0)
    conversation = case.conversation
    assert conversation is not None and conversation.script and case.assertions == []
    [turn] = conversation.steps
    assert isinstance(turn, UserTurn) and [spec.type for spec in turn.assertions] == ["contains"]
    plain = _case(load_one, {"id": "T2", "input": "hello", "interactive": {"enabled": False}})
    assert plain.conversation is None and plain.interactive is not None


def test_helper_agents_of_a_conversation_include_its_guards_and_final_judges(load_one: LoadOne) -> None:
    judged = {"type": "agent", "use": "agents:judge", "value": "polite"}
    case = _case(load_one, {"id": "T1", "turns": [{"input": "a", "assert": {**judged, "use": "agents:turns"}}],
                            "guards": [{"id": "g", "assert": {**judged, "use": "agents:guard"}}],
                            "final": judged})
    assert case.helper_agents() == ["turns", "guard", "judge"]


@pytest.mark.parametrize(("entry", "message"), [
    ({"id": "T1", "input": "hi", "turns": [{"input": "a"}]},
     'input: a case with turns takes no top-level input; make it the first turn: {"input": …}'),
    ({"id": "T1", "turns": [{"input": "a"}], "assert": CONTAINS_HI},
     "assert: not checked in a conversation with turns; put it in a turn's 'assert', or in 'final' to check the end "
     "of the conversation"),
    ({"id": "T1", "turns": [{"input": "a"}, {"simulate": {"max_turns": 2}}]},
     'turns[1].simulate: needs a simulator to write its turns: the case\'s "simulator" (an agent id, or "scripted" '
     'with "replies"), or --simulator ID'),
    ({"id": "T1", "simulator": SCRIPTED, "turns": [{"simulate": {"until": "greet"}}],
      "checkpoints": [{"id": "greets", "assert": CONTAINS_HI}]},
     "turns[0].simulate.until: unknown checkpoint 'greet' (did you mean 'greets'?)"),
    ({"id": "T1", "simulator": SCRIPTED, "turns": [{"simulate": {"until": "x"}}]},
     "turns[0].simulate.until: unknown checkpoint 'x' (the case has no checkpoints)"),
    ({"id": "T1", "turns": [{"input": "a"}], "checkpoints": [{"id": "c", "assert": CONTAINS_HI, "by_turn": 0}]},
     "checkpoints[0].by_turn: must be at least 1, got 0"),
    ({"id": "T1", "turns": []},
     'turns: empty; give at least one step: {"input": "…"} (a user turn) or {"simulate": {"max_turns": 3}} (a '
     "simulated stretch)"),
    ({"id": "T1", "simulator": SCRIPTED, "turns": [{"input": "a", "simulate": {}}, {}]},
     "turns[0]: a step is a user turn ('input') or a simulated stretch ('simulate'), not both; turns[1]: needs "
     "'input' (a fixed user turn) or 'simulate' (a simulated stretch)"),
    ({"id": "T1", "simulator": SCRIPTED, "turns": [{"simulate": {}, "assert": CONTAINS_HI}]},
     "turns[0].assert: a simulated stretch has no assert of its own; check its replies with guards or checkpoints"),
    ({"id": "T1", "turns": [{"input": "a", "assert": {"type": "contians", "value": "x"}}]},
     "turns[0].assert.type: unknown assertion type 'contians' (did you mean 'contains'? valid: agent, contains, "
     "equals, json_path, json_schema, latency, not_contains, regex, script, tool_called, tool_result, "
     "tool_sequence, type)"),
    ({"id": "T1", "turns": [{"inptu": "a"}]}, "turns[0]: unknown key 'inptu' (did you mean 'input'?)"),
    ({"id": "T1", "turns": [{"input": [{"role": "assistant", "content": "hi"}]}]},
     "turns[0].input: the last message is the assistant's; a turn ends with what the user says"),
    ({"id": "T1", "turns": [{"input": "a"}, {"input": "b"}], "max_turns": 1},
     "max_turns: 1 is fewer than the 2 fixed turns of 'turns'"),
    ({"id": "T1", "turns": [{"input": "a"}], "guards": [{"id": "g", "assert": CONTAINS_HI},
                                                       {"id": "g", "assert": CONTAINS_HI}, {"id": "h"}]},
     "guards[1].id: duplicate guard id 'g' (first at guards[0]); guards[2]: needs 'assert': what every reply of the "
     'agent must satisfy (e.g. {"type": "tool_called", "value": "delete_account", "negate": true})'),
    ({"id": "T1", "input": "hi", "guards": [{"id": "g", "assert": CONTAINS_HI}]},
     "guards: only for conversations (turns, or simulator + checkpoints); a single-turn case checks its reply with "
     "'assert'"),
    ({"id": "T1", "input": "hi", "final": CONTAINS_HI},
     "final: only for conversations (turns, or simulator + checkpoints); a single-turn case checks its reply with "
     "'assert'"),
    ({"id": "T1", "turns": [{"input": "a"}], "final": {"type": "regex", "value": "("}},
     "final: invalid regex pattern '(': missing ), unterminated subpattern at position 0"),
    ({"id": "T1", "input": "hi", "interactive": {"enabled": "yes"}}, "interactive.enabled: expected true or false, "
                                                                     "got string"),
    ({"id": "T1", "input": "hi", "interactive": {"enabled": True, "timeout": "soon"}},
     "interactive.timeout: invalid duration 'soon' (use e.g. 300ms, 30s, 1m30s, 2h)"),
])
def test_invalid_steps_name_their_field(error_of: ErrorOf, entry: Any, message: str) -> None:
    assert error_of(entry) == f"invalid test case: {message}"


def test_a_default_simulator_serves_the_simulated_stretches(repo: Path) -> None:
    (repo / "s.jsonl").write_text('{"id": "T1", "turns": [{"input": "a"}, {"simulate": {"max_turns": 1}}]}\n')
    [entry] = load_suite(["s.jsonl"], cwd=repo, repo_root=repo,
                         checks=Checks(default_simulator="sim")).entries
    assert not isinstance(entry, InvalidCase) and entry.conversation is not None
    assert entry.conversation.simulator == "sim" and entry.helper_agents() == ["sim"]
