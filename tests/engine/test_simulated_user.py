"""What a conversation's user is shown and what it may say, and when a reply awaits the user's input."""

from __future__ import annotations

from typing import Any

import pytest

from agenttest.agents.base import AgentResponse, ToolCall, ToolExecution
from agenttest.agents.helper_replies import SimulatorReply
from agenttest.engine.awaiting import Awaiting, awaiting_input
from agenttest.engine.users import role_break, seen_by_the_user

AGENT_SAID = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Hello! How can I help you today?"}]


@pytest.mark.parametrize(("response", "tools", "expected"), [
    (AgentResponse(content="Done.", awaiting_input=True), (), Awaiting(True, "agent_declared")),
    # declared first, then a tool that asks, then a question
    (AgentResponse(content="Which one?", awaiting_input=True), (), Awaiting(True, "agent_declared")),
    (AgentResponse(content="One moment.", tool_calls=[ToolCall("1", "ask_user")]), (),
     Awaiting(True, "tool_requires_confirmation", "ask_user")),
    (AgentResponse(content="", tools=[ToolExecution("1", "mcp__request_confirmation")]), (),
     Awaiting(True, "tool_requires_confirmation", "mcp__request_confirmation")),
    (AgentResponse(content="Filling.", tool_calls=[ToolCall("1", "ui.open_form")]), ("open_form",),
     Awaiting(True, "tool_requires_confirmation", "ui.open_form")),
    (AgentResponse(content="Filling.", tool_calls=[ToolCall("1", "open_formula")]), ("open_form",),
     Awaiting(False, "completed")),
    (AgentResponse(content="Anything else?  "), (), Awaiting(True, "content_is_question")),
    (AgentResponse(content="what amount was it"), (), Awaiting(True, "content_is_question")),
    (AgentResponse(content="Please send the receipt."), (), Awaiting(True, "content_is_question")),
    (AgentResponse(content="Shall I proceed? I will wait."), (), Awaiting(True, "content_is_question")),
    (AgentResponse(content="Expense EXP-1 submitted."), (), Awaiting(False, "completed")),
    (AgentResponse(content="", data={"question": "ok"}), (), Awaiting(False, "completed")),
    (AgentResponse(), (), Awaiting(False, "completed")),
])
def test_awaiting_input_and_why(response: AgentResponse, tools: tuple[str, ...], expected: Awaiting) -> None:
    assert awaiting_input(response, tools) == expected


@pytest.mark.parametrize(("reply", "seen", "why"), [
    (SimulatorReply("I'd like a refund."), AGENT_SAID, None),
    (SimulatorReply("User: I'd like a refund."), AGENT_SAID, None),      # one label of its own turn: still the user
    (SimulatorReply("I'd like a refund.\nAssistant: Sure!"), AGENT_SAID,
     "it answered as the agent (a line of its message opens with 'Assistant':)"),
    (SimulatorReply("**Agent**: how can I help?"), AGENT_SAID,
     "it answered as the agent (a line of its message opens with 'Agent':)"),
    (SimulatorReply("User: hi\nUser: also this"), AGENT_SAID, "it wrote more than one user turn in one message"),
    (SimulatorReply("hello!   how can I help you TODAY?"), AGENT_SAID, "it repeated the agent's last reply as its own"),
    (SimulatorReply("Thanks!"), [{"role": "assistant", "content": "Thanks!"}], None),     # short lines may echo
    (SimulatorReply("", goal_achieved=True), [], "it said its goal was achieved before the agent had said anything"),
    (SimulatorReply("", goal_achieved=True), AGENT_SAID, None),
])
def test_a_simulator_reply_that_is_no_users_turn_is_a_broken_role(reply: SimulatorReply, seen: list[dict[str, Any]],
                                                                   why: str | None) -> None:
    assert role_break(reply, seen) == why


def test_the_user_sees_what_each_side_said_and_nothing_of_tools_or_reasoning() -> None:
    messages = [
        {"role": "user", "content": "refund please"},
        {"role": "assistant", "content": "<think>the user is VIP-7</think>\nLet me check.",
         "tool_calls": [{"id": "1", "name": "lookup", "arguments": {}}]},
        {"role": "tool", "tool_call_id": "1", "content": '{"balance": 1234}'},
        {"role": "assistant", "content": [{"type": "reasoning", "text": "hidden"}, {"type": "text", "text": "Done."}]},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "2", "name": "refund", "arguments": {}}]},
        {"role": "system", "content": "you are an agent"},
    ]
    assert seen_by_the_user(messages) == [
        {"role": "user", "content": "refund please"},
        {"role": "assistant", "content": "Let me check."},
        {"role": "assistant", "content": [{"type": "text", "text": "Done."}]}]
    assert seen_by_the_user([{"role": "assistant", "content": "a < b, fine"}]) == [
        {"role": "assistant", "content": "a < b, fine"}]
