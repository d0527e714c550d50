"""A replay looks every call up by its key. `call_key` works the key out more cheaply than `canonical` (issue #27),
and must give exactly the key a recording made at bfa850b gives the same call — whatever the request holds: JSON
inside its strings, secrets (as text, inside keys, inside JSON text, as numbers), values JSON has no word for —
or fail exactly as it failed (the key as bfa850b worked it out: `keys_bfa850b`)."""

from __future__ import annotations

import datetime
import json
import math
from typing import Any

import pytest

from agents import keys_bfa850b as bfa850b
from agenttest.agents.base import AgentRequest
from agenttest.agents.replay import call_key, canonical
from isolation import fresh_registries

SECRET = "sk-replay-key-secret-0042"
NUMBER = "98765432"
FLOAT = "1234567.0"        # a number secret whose text no equal integer shows: `1234567`


class Shown:
    """A value JSON has no word for, written by its str (`default=str`)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __str__(self) -> str:
        return self.text


CONTEXT = {"chat_id": "test-c1-0a1b2c3d", "test_id": "c1", "run": 1, "user_id": "test-user", "team_id": "test-team",
           "locale": "en-us", "referer": "agent-test"}


def _request(content: Any = "hello", options: dict[Any, Any] | None = None, role: str = "target",
             **context: Any) -> AgentRequest:
    return AgentRequest(agent="llm", messages=[{"role": "user", "content": content}],
                        options={"skip": {"history": True}, **(options or {})}, context={**CONTEXT, **context},
                        role=role, case=("tests/s.jsonl", "c1"))


REQUESTS = {
    "plain": _request(),
    "another chat id": _request(chat_id="test-c1-ffffffff"),
    "another run": _request(run=2),
    "unicode and escapes": _request('naïve café ✓ "quoted" \\ back\tslash\n\x00\x1f\u2028 🎉'),
    "JSON object text": _request('{"b": 2, "a": {"d": [3, {"f": 1, "e": 0}], "c": null}}'),
    "JSON array text": _request('[{"b": 1, "a": 2}]'),
    "JSON-looking, not JSON": _request("{not json"),
    "JSON text quoted inside": _request('say "{\\"b\\": 1, \\"a\\": 2}" now'),
    "a judge's payload": _request(json.dumps({"output": json.dumps({"z": 1, "y": [2]}), "criteria": "x"}),
                                  role="judge"),
    "content parts": _request([{"type": "text", "text": "hi"}, {"type": "image_url", "image_url": {"url": "x"}}]),
    "numbers": _request(options={"metadata": {"a": [0.25, -0.0, 1e-7, 1e16, 2**70, True, None]}}),
    "not finite": _request(options={"metadata": {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}}),
    "a tuple": _request(options={"metadata": {"pair": (1, "two")}}),
    "keys that are numbers": _request(options={"metadata": {1: "int", 2.5: "float", -3: {True: "bool"}}}),
    "a key that is null": _request(options={"metadata": {None: "null"}}),
    "a date": _request(options={"metadata": {"when": datetime.date(2026, 12, 2)}}),
    "an object": _request(options={"metadata": {"thing": Shown("a thing")}}),
    "an object that reads like JSON": _request(options={"metadata": {"thing": Shown('{"b": 1, "a": 2}')}}),
    "the secret": _request(f"my key is {SECRET}, keep it"),
    "the secret in a key": _request(options={"metadata": {SECRET: 1}}),
    "the secret in JSON text": _request(json.dumps({"key": SECRET, "b": 1})),
    "the secret escaped in JSON text": _request(json.dumps({"key": f'"{SECRET}"'})),
    "the secret in an object": _request(options={"metadata": {"thing": Shown(f"holds {SECRET}")}}),
    "the number": _request(options={"metadata": {"pin": int(NUMBER), "as text": NUMBER, "float": float(NUMBER)}}),
    "the number in a key": _request(options={"metadata": {int(NUMBER): "x"}}),
    "the number as another number": _request(options={"metadata": {"pin": 1234567, "big": 1e16}}),
    "a bool is no number": _request(options={"metadata": {"flag": True}}),
}


@pytest.mark.parametrize("registered", [(), (SECRET,), (SECRET, NUMBER, FLOAT, str(10**16))],
                         ids=["no secret", "a secret", "and numbers"])
def test_a_calls_key_is_the_key_bfa850b_recorded_it_under(registered: tuple[str, ...]) -> None:
    with fresh_registries(*registered):
        keys = {name: call_key(request) for name, request in REQUESTS.items()}
        assert keys == {name: bfa850b.call_key(request) for name, request in REQUESTS.items()}
        assert keys == {name: canonical(request)[1] for name, request in REQUESTS.items()}
    assert keys["another chat id"] == keys["plain"] != keys["another run"]
    assert len(set(keys.values())) == len(keys) - 1
    if registered:      # masked: the call with the secret is the call with *** in its place
        assert keys["the secret"] == call_key(_request("my key is ***, keep it"))


BROKEN = {
    "a lone surrogate": _request("half \ud800 a pair"),
    "a key JSON cannot write": _request(options={"metadata": {(1, 2): "x"}}),
    "keys that cannot be sorted": _request(options={"metadata": {"a": 1, 2: "b"}}),
    "a circle": _request(options={"metadata": (circle := {"a": []})}),
}
circle["a"].append(circle)


@pytest.mark.parametrize("name", sorted(BROKEN))
@pytest.mark.parametrize("registered", [(), (SECRET,)], ids=["no secret", "a secret"])
def test_a_call_with_no_key_fails_as_it_did(name: str, registered: tuple[str, ...]) -> None:
    with fresh_registries(*registered):
        with pytest.raises(Exception) as then:
            bfa850b.call_key(BROKEN[name])
        with pytest.raises(type(then.value)) as now:
            call_key(BROKEN[name])
    if not isinstance(now.value, RecursionError):      # whose words depend on how deep the stack was
        assert str(now.value) == str(then.value)
