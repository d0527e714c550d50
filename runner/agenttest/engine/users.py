"""Who writes the simulated user's turns of a conversation: a simulator agent, or the case's scripted replies.

The simulator is given the conversation as the user saw it (τ²-bench's lesson): what each side said, never the
agent's tool calls, their results or its reasoning. A simulator that breaks role — it answers as the agent, writes
more than one user turn, or says its goal is achieved before the agent has said anything — has not played the user:
that is a `simulator` error, never a verdict on the agent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..agents.helper_replies import SimulatorReply, read_simulator
from ..agents.helpers import HelperCaller
from ..cases.model import Conversation
from ..errors import HelperError
from ..hints import helper_name

# A line of a simulated turn that a speaker's label opens: the simulator wrote a dialogue, not the user's turn.
_AGENT_LABEL = re.compile(r"(?im)^[\s*_#>]*(assistant|agent|ai|bot|system)\s*[*_]*\s*:")
_USER_LABEL = re.compile(r"(?im)^[\s*_#>]*(user|human|customer)\s*[*_]*\s*:")
_THINKING = re.compile(r"(?is)<(think|thinking|reasoning)>.*?</\1>")
_HIDDEN_PARTS = ("reasoning", "thinking", "redacted_thinking")
_ECHO_MIN_CHARS = 20       # a shorter line may well be said by both sides ("Thanks!")


@dataclass(frozen=True)
class Cue:
    """What the user knows at a turn: the conversation as seen, the turn's number, and the test's bookkeeping."""

    seen: list[dict[str, Any]]
    turn: int
    reached: list[str]
    pending: list[str]


class SimulatedUser:
    """Writes the user's next turn; None when it has nothing more to say (scripted replies used up)."""

    source = "simulator"
    waits = True            # it asks an agent: the case's timeout must be able to cut it

    async def next(self, cue: Cue) -> SimulatorReply | None:
        raise NotImplementedError


class ScriptedReplies(SimulatedUser):
    """`use: "scripted"`: the case's `replies`, one per turn, in order; None once they are used up."""

    source = "scripted"
    waits = False           # the next reply is at hand

    def __init__(self, replies: list[str]) -> None:
        self._replies = replies
        self._next = 0

    async def next(self, cue: Cue) -> SimulatorReply | None:
        if self._next >= len(self._replies):
            return None
        self._next += 1
        return SimulatorReply(message=self._replies[self._next - 1])


class SimulatorAgent(SimulatedUser):
    """A simulator agent (docs/configuration.md), asked for each turn; its reply is checked for a broken role."""

    def __init__(self, conversation: Conversation, helpers: HelperCaller) -> None:
        self._conversation = conversation
        self._helpers = helpers

    async def next(self, cue: Cue) -> SimulatorReply:
        conversation = self._conversation
        assert conversation.simulator is not None
        payload: dict[str, Any] = {}
        if conversation.persona is not None:
            payload["persona"] = conversation.persona
        if conversation.goal is not None:
            payload["goal"] = conversation.goal
        payload.update(conversation=cue.seen, turn_number=cue.turn, max_turns=conversation.max_turns,
                       checkpoints_reached=cue.reached, checkpoints_pending=cue.pending)
        if conversation.extra:
            payload["extra"] = conversation.extra
        reply = await self._helpers.ask("simulator", conversation.simulator, payload, read_simulator,
                                        connector=conversation.connector)
        broken = role_break(reply, cue.seen)
        if broken:
            raise HelperError(f"{helper_name('simulator', conversation.simulator)}: it broke role: {broken}",
                              "simulator")
        return reply


def simulated_user(conversation: Conversation, helpers: HelperCaller) -> SimulatedUser | None:
    """Who writes the case's simulated turns; None for a conversation of fixed turns without a simulator."""
    if conversation.simulator is None:
        return None
    if conversation.scripted:
        return ScriptedReplies(conversation.replies)
    return SimulatorAgent(conversation, helpers)


def role_break(reply: SimulatorReply, seen: list[dict[str, Any]]) -> str | None:
    """How a simulator's reply fails to be the user's next turn, or None."""
    agent_said = [str(m.get("content")) for m in seen if m.get("role") == "assistant"]
    if reply.goal_achieved and not agent_said:
        return "it said its goal was achieved before the agent had said anything"
    message = reply.message
    label = _AGENT_LABEL.search(message)
    if label:
        return f"it answered as the agent (a line of its message opens with {label.group(1)!r}:)"
    if len(_USER_LABEL.findall(message)) > 1:
        return "it wrote more than one user turn in one message"
    said = " ".join(message.split()).casefold()
    if agent_said and len(said) >= _ECHO_MIN_CHARS and said == " ".join(agent_said[-1].split()).casefold():
        return "it repeated the agent's last reply as its own"
    return None


def seen_by_the_user(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The conversation as the user saw it: what each side said, without tool calls, tool results or reasoning."""
    seen = []
    for message in messages:
        if message.get("role") not in ("user", "assistant"):
            continue
        content = _visible(message.get("content"))
        if content not in (None, "", []):
            seen.append({"role": message.get("role"), "content": content})
    return seen


def _visible(content: Any) -> Any:
    """A message's content less the reasoning a user never sees: `<think>` blocks, reasoning parts."""
    if isinstance(content, str):
        shown = _THINKING.sub("", content) if "<" in content else content
        return shown.strip() if shown != content else content
    if isinstance(content, list):
        return [part for part in content
                if not (isinstance(part, dict) and part.get("type") in _HIDDEN_PARTS)]
    return content
