"""Reading reply bodies: one rule for "JSON or plain text" (exec stdout, http bodies and stream events) and secret-free
quotes for error messages."""

from __future__ import annotations

from typing import Any

import pytest

from agenttest.agents.replies import json_or_text, snippet
from agenttest.secrets import mask, register_secret


@pytest.mark.parametrize(("text", "value"), [
    ('{"content": "hi"}', {"content": "hi"}),
    (' [1, 2]\n', [1, 2]),
    ('"a JSON string"\n', "a JSON string"),
    ("plain words", "plain words"),
    ("{not json", "{not json"),
    ("42", "42"),                    # numbers, booleans and null are what the agent said, as text
    ("true", "true"),
    ("  spaced  \n", "  spaced  \n"),
    ("", ""),
])
def test_json_or_text(text: str, value: Any) -> None:
    assert json_or_text(text) == value


def test_mask_is_applied_by_snippet() -> None:
    register_secret("tok-snippet-secret-42")
    assert snippet("a   b\n tok-snippet-secret-42") == "a b ***"
    assert mask("tok-snippet-secret-42") == "***"


def test_snippet_is_short() -> None:
    quoted = snippet("x" * 1000)
    assert quoted.endswith("…") and len(quoted) < 400
