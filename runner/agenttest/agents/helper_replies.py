"""What helper agents answer, read robustly (docs/configuration.md): a judge's verdict, a simulated user's next
message, a generator's test cases.

A reply is the response's structured `data` when it has some, else its `content`. Text is read from its end: a
judge reasons first and gives its verdict last, so its verdict is the last structured answer in it that speaks the
judge's protocol — a JSON object (fenced or bare, trailing commas repaired) or a block of YAML `key: value` lines,
whichever comes last, prose after it allowed — and output quoted before it cannot change it. A simulated user's
turn is a JSON object only when its reply ends with one; any other reply is plain text, the message itself (an
object it quoted from the agent is no turn). A reply that holds no usable answer is a HelperError, never a default
verdict.

Prose after a judge's verdict is allowed (models add "Let me know if…" often enough; requiring the verdict to end
the reply would make their every verdict an error), so a judge that quotes the output and then gives no structured
verdict of its own has an object quoted from the output read as its verdict; the built-in judge answers in JSON
mode and never does.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from ..errors import HelperError
from ..extract import embedded_json, extract_json, last_answer, last_object
from .base import AgentResponse
from .builtin import example_placeholders
from .replies import snippet

_SCANNED = 200_000     # characters at the end of a reply searched first for its answer (then extract.MAX_SCANNED)
# The keys of each helper's answer: the last object holding any of them is the answer (a later object without
# them, say a quoted example, is passed over; an earlier one is never reached).
_JUDGE_KEYS = ("passed", "score", "reason", "reasoning", "suggestions")
_SIMULATOR_KEYS = ("message", "input", "goal_achieved", "reasoning")
_PLACEHOLDER = re.compile(r"<[^<>]* [^<>]*>")     # `<words of an example>`: a template's blank, never an answer
_TRUE = {"true", "yes", "pass", "passed"}
_FALSE = {"false", "no", "fail", "failed"}


@dataclass
class JudgeReply:
    """A judge's verdict: `passed` and/or `score` (0..1), the reason and the suggestions it gave."""

    passed: bool | None
    score: float | None
    reason: str = ""
    suggestions: list[str] = field(default_factory=list)


@dataclass
class SimulatorReply:
    """The simulated user's next message, whether it says its goal is achieved, and why."""

    message: str
    goal_achieved: bool = False
    reasoning: str = ""


def reply_value(response: AgentResponse) -> Any:
    """What a helper answered: structured `data`, else the content (its text parts joined, for a list of parts)."""
    if isinstance(response.data, (dict, list)) and response.data:
        return response.data
    content = response.content
    if isinstance(content, list):
        texts = [part.get("text") for part in content if isinstance(part, dict)]
        return "\n".join(text for text in texts if isinstance(text, str))
    return content


def read_judge(response: AgentResponse) -> JudgeReply:
    """The verdict in a judge's reply. HelperError (kind `judge`) when there is none, or it is malformed."""
    value = reply_value(response)
    verdict = _answer(value, _JUDGE_KEYS, last_answer)
    if verdict is None or not ("passed" in verdict or "score" in verdict):
        raise HelperError(f"its reply holds no verdict (a JSON object with 'passed' or 'score'): "
                          f"{_shown(value)}", "judge")
    _not_the_example(verdict, ("reasoning", "reason", "suggestions"), "judge")
    passed = _boolean(verdict["passed"], "passed", "judge") if verdict.get("passed") is not None else None
    score = _score(verdict.get("score")) if verdict.get("score") is not None else None
    if passed is None and score is None:
        raise HelperError(f"its reply gives neither 'passed' nor 'score': {_shown(verdict)}", "judge")
    reason = verdict.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        reason = verdict.get("reasoning") if isinstance(verdict.get("reasoning"), str) else ""
    return JudgeReply(passed=passed, score=score, reason=reason.strip(),
                      suggestions=_strings(verdict.get("suggestions")))


def read_simulator(response: AgentResponse) -> SimulatorReply:
    """The next user message in a simulator's reply; a reply with no JSON is the message itself. HelperError (kind
    `simulator`) when there is no message and the goal is not said to be achieved."""
    value = reply_value(response)
    turn = _answer(value, _SIMULATOR_KEYS, partial(last_object, at_end=True))
    if turn is None:
        text = value if isinstance(value, str) else "" if value is None else json.dumps(value, ensure_ascii=False)
        if not text.strip():
            raise HelperError("its reply is empty", "simulator")
        return SimulatorReply(message=text.strip())
    _not_the_example(turn, ("reasoning", "message", "input"), "simulator")
    message = turn.get("message") if turn.get("message") is not None else turn.get("input")
    if message is not None and not isinstance(message, str):
        message = json.dumps(message, ensure_ascii=False)
    goal = _boolean(turn.get("goal_achieved", False), "goal_achieved", "simulator")
    reasoning = turn.get("reasoning") if isinstance(turn.get("reasoning"), str) else ""
    if not goal and not (message or "").strip():
        raise HelperError(f"its reply has no message: {_shown(turn)}", "simulator")
    return SimulatorReply(message=(message or "").strip(), goal_achieved=goal, reasoning=reasoning)


def read_generated(value: Any) -> list[Any]:
    """The test cases in a generator's reply (an AgentResponse, or a script's return value): an array, or an object
    with `cases` / `test_cases`, or one case object. HelperError (kind `generator`) otherwise."""
    if isinstance(value, AgentResponse):
        value = reply_value(value)
    elif isinstance(value, (tuple, Iterator)):      # a script may return a tuple or yield its cases
        value = list(value)
    candidates: Iterable[Any] = [value]
    if isinstance(value, str):
        candidates = [extract_json(value), *reversed(embedded_json(value))]
    for candidate in candidates:
        cases = _cases(candidate)
        if cases == []:
            raise HelperError("its reply holds an empty list of test cases", "generator")
        if cases is not None:
            return cases
    raise HelperError(f"its reply holds no test cases (an array, or an object with 'cases'): "
                      f"{_shown(value)}", "generator")


def _cases(value: Any) -> list[Any] | None:
    if isinstance(value, list):
        return value
    if isinstance(value, dict):
        for key in ("cases", "test_cases"):
            if isinstance(value.get(key), list):
                return value[key]
        if "id" in value:
            return [value]
    return None


def _answer(value: Any, keys: tuple[str, ...], read: Callable[..., dict[str, Any] | None]) -> dict[str, Any] | None:
    """`value` itself when it is an object with one of `keys`; in text, the whole text when it is such an object,
    else what `read` (`extract.last_answer` or `last_object`) finds at its end holding one of them."""
    if isinstance(value, dict):
        return value if any(key in value for key in keys) else None
    if not isinstance(value, str):
        return None
    whole = _whole_object(value)
    if whole is not None:
        return whole if any(key in whole for key in keys) else None
    return read(value, lambda found: any(key in found for key in keys), limit=_SCANNED)


def _whole_object(text: str) -> dict[str, Any] | None:
    """The text as one JSON object (the usual reply of a helper asked for JSON), whatever its size."""
    stripped = text.strip()
    if not (stripped.startswith("{") and stripped.endswith("}")):
        return None
    try:
        value = json.loads(stripped, parse_constant=_not_json)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _not_the_example(answer: dict[str, Any], keys: tuple[str, ...], kind: str) -> None:
    """HelperError when a text of the answer is a placeholder of the built-in prompts' example, brackets or not
    (`your check of each part of the criteria, …`), or has a placeholder's shape — words in angle brackets, as a
    model writes when it copies one loosely (`<a concrete change to the agent that would make it meet your
    requirements>`): the model copied the example instead of answering, and its copy must not pass for a verdict
    or a user's turn."""
    placeholders = example_placeholders()
    for key in keys:
        values = answer.get(key) if isinstance(answer.get(key), list) else [answer.get(key)]
        for value in values:
            if isinstance(value, str) and (_PLACEHOLDER.fullmatch(value.strip())
                                           or value.strip().strip("<>").strip().lower() in placeholders):
                raise HelperError(f"its reply repeats the example of its prompt instead of answering ({key}: "
                                  f"{_shown(value)})", kind)


def _boolean(value: Any, name: str, kind: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    raise HelperError(f"its reply's '{name}' must be true or false, got {_shown(value)}", kind)


def _score(value: Any) -> float:
    number: float | None = None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            number = None
    if number is None or not math.isfinite(number) or not 0.0 <= number <= 1.0:
        raise HelperError(f"its reply's 'score' must be a number from 0 to 1, got {_shown(value)}", "judge")
    return number


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, list):
        return [item if isinstance(item, str) else json.dumps(item, ensure_ascii=False) for item in value
                if item not in (None, "")]
    return []


def _shown(value: Any) -> str:
    return snippet(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str))
