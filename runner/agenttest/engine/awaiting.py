"""Whether a reply awaits the user's input, and why (seed 000's hybrid detection).

In order: the reply says so (`awaiting_input: true`); it calls a tool that asks the user (`request_confirmation`,
`ask_user`, `get_user_input`, or a name the agent's `input_tools` lists in agenttest.yaml, each matched as
`tool_called` matches names); its text reads as a question (seed 000's patterns). The first that holds is the
reason.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from ..agents.base import AgentResponse
from ..assertions.base import subject_text
from ..assertions.tools import tool_name_matches

INPUT_TOOLS = ("request_confirmation", "ask_user", "get_user_input")
# Seed 000's `looksLikeQuestion`: a question mark at the end, an opening that asks, or a request to confirm.
_QUESTION = (re.compile(r"\?\s*$"), re.compile(r"(?i)^\s*(what|how|when|where|which|who|please|could you)\b"),
             re.compile(r"(?i)(confirm|verify|proceed|continue)\?"))


@dataclass(frozen=True)
class Awaiting:
    """Whether the reply awaits input; `reason`: `agent_declared`, `tool_requires_confirmation`,
    `content_is_question`, or `completed`; `tool`: the tool that asks, for that reason."""

    awaiting: bool
    reason: str
    tool: str | None = None


def awaiting_input(response: AgentResponse, input_tools: Iterable[str] = ()) -> Awaiting:
    """Why `response` awaits the user's input, or `completed`."""
    if response.awaiting_input:
        return Awaiting(True, "agent_declared")
    asking = [*INPUT_TOOLS, *input_tools]
    for call in [*response.tool_calls, *response.tools]:
        if any(tool_name_matches(call.name, name) for name in asking):
            return Awaiting(True, "tool_requires_confirmation", call.name)
    content = response.content
    text = (content if isinstance(content, str) and content.strip() else subject_text(response.subject())).strip()
    if text and any(pattern.search(text) for pattern in _QUESTION):
        return Awaiting(True, "content_is_question")
    return Awaiting(False, "completed")
