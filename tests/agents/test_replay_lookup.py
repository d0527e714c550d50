"""A replay finds a call's recording by a cheaper key first (`_plain_key`, issue #27) and by its key (`call_key`)
when that cannot tell: it must find exactly the recording agenttest at bfa850b found (`keys_bfa850b`), in the same
rank, for every pair of a recorded and a live request — the pairs the cheaper key could confuse above all (null and
NaN, 1 and 1.0 and true, 0.0 and -0.0, a tuple and a list, keys that are numbers, secrets, JSON text inside a string,
an Enum a script generator wrote) — and miss where it missed."""

from __future__ import annotations

import enum
import json
import math
from pathlib import Path
from typing import Any

import pytest

from agents import keys_bfa850b as bfa850b
from agenttest import secrets
from agenttest.agents.base import AgentRequest
from agenttest.agents.replay import Cassettes
from agenttest.errors import AgentCallError
from isolation import fresh_registries

SECRET = "sk-lookup-secret-5150"
SUITE = "tests/s.jsonl"
SCRIPT = "scripts:gen.cases"


class Colour(enum.Enum):
    RED = "red"


def _request(case: str, content: Any = "hello", source: str = SUITE, **options: Any) -> AgentRequest:
    return AgentRequest(agent="llm", messages=[{"role": "user", "content": content}], options=options,
                        context={"chat_id": f"test-{case}-0a1b2c3d", "test_id": case, "run": 1}, case=(source, case))


def _recorded(request: AgentRequest, answers: list[str], masked: bool = True) -> dict[str, Any]:
    """A recording as a cassette file holds it, its secrets masked as a recording masks them (unless recorded
    before the secret was one); its key is never read: a replay works it out again."""
    context = {key: value for key, value in request.context.items() if key != "chat_id"}
    shown = {"agent": request.agent, "role": request.role, "messages": request.messages,
             "options": request.options, "context": context}
    return {"key": "not read", "agent": request.agent, "role": request.role,
            "request": json.loads(json.dumps(secrets.redact(shown) if masked else shown, default=str)),
            "responses": [{"content": answer} for answer in answers]}


# case → (what its cassette holds, the calls a replay makes, in order)
CASES: dict[str, tuple[list[AgentRequest | tuple[Any, ...]], list[AgentRequest]]] = {
    "same": ([_request("same", metadata={"a": 1})], [_request("same", metadata={"a": 1})]),
    "ranks": ([(_request("ranks"), ["first", "second"])], [_request("ranks")] * 3),
    "twice recorded": ([(_request("twice recorded"), ["one"]), (_request("twice recorded"), ["two"])],
                       [_request("twice recorded")] * 2),
    "another call": ([_request("another call", "a"), _request("another call", "b")],
                     [_request("another call", "b"), _request("another call", "c")]),
    "null": ([_request("null", x=None)], [_request("null", x=None), _request("null", x=math.nan)]),
    "NaN": ([_request("NaN", x=math.nan)], [_request("NaN", x=None), _request("NaN", x=math.nan)]),
    "infinity": ([_request("infinity", x=math.inf)], [_request("infinity", x=None), _request("infinity", x=-math.inf),
                                                      _request("infinity", x=math.inf)]),
    "numbers": ([_request("numbers", x=1)], [_request("numbers", x=1.0), _request("numbers", x=True),
                                             _request("numbers", x=1)]),
    "zeros": ([_request("zeros", x=0.0)], [_request("zeros", x=-0.0), _request("zeros", x=0),
                                           _request("zeros", x=0.0)]),
    "big": ([_request("big", x=2**70)], [_request("big", x=float(2**70)), _request("big", x=2**70)]),
    "a tuple": ([_request("a tuple", x=[1, "two"])], [_request("a tuple", x=(1, "two"))]),
    "number keys": ([_request("number keys", x={1: "a"})], [_request("number keys", x={"1": "a"}),
                                                            _request("number keys", x={1: "a"})]),
    "JSON text": ([_request("JSON text", '{"b": 1, "a": [2, {"d": 3, "c": 4}]}')],
                  [_request("JSON text", '{"a": [2, {"c": 4, "d": 3}], "b": 1}')]),
    "JSON text twice": ([(_request("JSON text twice", '{"b": 1, "a": 2}'), ["first"]),
                         (_request("JSON text twice", '{"a": 2, "b": 1}'), ["second"])],
                        [_request("JSON text twice", '{"a": 2, "b": 1}')]),
    "the secret": ([_request("the secret", f"my key {SECRET}")], [_request("the secret", f"my key {SECRET}"),
                                                                  _request("the secret", "my key ***")]),
    "masked": ([_request("masked", "my key ***")], [_request("masked", f"my key {SECRET}")]),
    "recorded unmasked": ([(_request("recorded unmasked", f"my key {SECRET}"), ["unmasked"], False)],
                          [_request("recorded unmasked", f"my key {SECRET}")]),
    "text": ([_request("text", "naïve \"café\" ✓\t\x00 🎉")], [_request("text", "naïve \"café\" ✓\t\x00 🎉")]),
    "an Enum": ([_request("an Enum", source=SCRIPT, colour="red")],
                [_request("an Enum", source=SCRIPT, colour=Colour.RED), _request("an Enum", source=SCRIPT,
                                                                                 colour="red")]),
    "an Enum recorded": ([_request("an Enum recorded", source=SCRIPT, colour=Colour.RED)],
                         [_request("an Enum recorded", source=SCRIPT, colour=Colour.RED)]),
}


def _cassette(tmp_path: Path) -> dict[str, Any]:
    """Every case's recordings, written where a replay reads them (the suite's cassette, the generator's); what
    they hold as read."""
    cases = {case: [_recorded(*item) if isinstance(item, tuple) else _recorded(item, [f"{case} {index}"])
                    for index, item in enumerate(recorded)]
             for case, (recorded, _) in CASES.items()}
    writer = Cassettes(tmp_path / "tapes")
    for source in (SUITE, SCRIPT):
        path = writer.path_for((source, ""))
        path.parent.mkdir(parents=True, exist_ok=True)
        held = {case: items for case, items in cases.items() if CASES[case][1][0].case == (source, case)}
        path.write_text(json.dumps({"format": "agenttest-cassettes", "version": 1, "cases": held}, indent=1))
    return json.loads(json.dumps({"cases": cases}))


def _expected(cassette: dict[str, Any], calls: list[AgentRequest]) -> list[str]:
    """What bfa850b answered to each call in turn: the recording's answer at the call's rank, or the kind of miss."""
    ranks: dict[str, int] = {}
    out = []
    for call in calls:
        index = bfa850b.found(cassette, call)
        if index is None:
            out.append("no recording")
            continue
        key = bfa850b.call_key(call)
        rank = ranks[key] = ranks.get(key, -1) + 1
        assert call.case is not None
        responses = cassette["cases"][call.case[1]][index]["responses"]
        out.append(responses[rank]["content"] if rank < len(responses) else "made again")
    return out


def _played(cassettes: Cassettes, calls: list[AgentRequest]) -> list[str]:
    out = []
    for call in calls:
        assert call.case is not None
        try:
            out.append(cassettes.play(call, call.case).content)
        except AgentCallError as exc:
            out.append("made again" if "and is made again" in exc.message else
                       "no recording" if "no recording of this" in exc.message else exc.message)
    return out


@pytest.mark.parametrize("registered", [(), (SECRET,)], ids=["no secret", "a secret"])
def test_a_replay_finds_the_recording_bfa850b_found(tmp_path: Path, registered: tuple[str, ...]) -> None:
    with fresh_registries(*registered):
        cassette = _cassette(tmp_path)
        cassettes = Cassettes(tmp_path / "tapes")
        for case, (_, calls) in CASES.items():
            assert _played(cassettes, calls) == _expected(cassette, calls), case
        # The pairs do differ where they should: a test of nothing but hits would prove nothing.
        expected = {case: _expected(cassette, calls) for case, (_, calls) in CASES.items()}
    assert expected["NaN"] == ["no recording", "NaN 0"]
    assert expected["numbers"][:2] == expected["zeros"][:2] == ["no recording"] * 2
    assert expected["a tuple"] == ["a tuple 0"] and expected["number keys"] == ["number keys 0", "made again"]
    assert expected["an Enum"] == ["no recording", "an Enum 0"]
    assert expected["ranks"] == ["first", "second", "made again"]
    assert expected["twice recorded"] == ["one", "made again"] and expected["JSON text twice"] == ["first"]
    assert expected["the secret"] == ["the secret 0", "made again" if registered else "no recording"]
    assert expected["recorded unmasked"] == ["no recording" if registered else "unmasked"]
