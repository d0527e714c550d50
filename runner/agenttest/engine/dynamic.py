"""Dynamic mode: a simulated user talks with the target, turn by turn, until every required checkpoint is reached.

Per turn (README: Conversations): the simulator speaks (not on turn 1 when the case has an `input`), the target
answers with the whole conversation, the conversation grows (the assistant message with its tool calls, then one tool
message per call, paired by id), and each checkpoint not yet reached whose `after` are all reached is checked against
this turn's response. One chat id for the whole conversation; the case's `timeout` bounds all of it, calls included.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import Any

from ..agents.base import AgentResponse
from ..agents.helper_replies import SimulatorReply, read_simulator
from ..agents.helpers import HelperCaller
from ..assertions.base import EvalContext, evaluate_all, failure_message, may_wait, undecided
from ..cases.model import Case, Checkpoint, Conversation
from ..errors import HelperError
from ..results import CaseResult
from ..timeouts import within
from .case_runner import CaseFailure, CaseRunner, CaseWork, response_trace


class DynamicRunner(CaseRunner):
    """Runs one dynamic case: the conversation, its checkpoints, and a record of every turn."""

    async def execute(self, case: Case, result: CaseResult, work: CaseWork) -> None:
        conversation = case.conversation
        assert conversation is not None
        talk = _Talk(conversation, messages=list(case.messages))
        try:
            await self._converse(case, talk, result, work)
        finally:
            result.metadata = talk.report()
            if talk.turns:
                result.output = talk.turns[-1].get("output")
            if case.input is None and talk.turns:
                result.input = talk.turns[0].get("input")

    async def _converse(self, case: Case, talk: _Talk, result: CaseResult, work: CaseWork) -> None:
        conversation = talk.conversation
        simulator = _simulator_for(conversation, work.helpers)
        context = self.services.context.request_context(case, work.run)     # one chat id for every turn
        for turn in range(1, conversation.max_turns + 1):
            record: dict[str, Any] = {"turn": turn}
            talk.turns.append(record)
            started = time.monotonic()
            if turn > 1 or not talk.messages:
                reply = await self._simulate(simulator, talk, turn, work)
                if reply is None:
                    talk.turns.pop()
                    raise CaseFailure("failed", f"scripted simulator ran out of replies after {turn - 1} "
                                                f"turn{'' if turn == 2 else 's'} without reaching: "
                                                f"{talk.missing()}")
                if reply.goal_achieved:
                    talk.turns.pop()
                    talk.ended = {"turn": turn, "goal_achieved": True, "message": reply.message or None,
                                  "reasoning": reply.reasoning or None}
                    raise CaseFailure("failed", "simulator signaled goal achieved but not all required checkpoints "
                                                f"reached: {talk.missing()}")
                talk.messages.append({"role": "user", "content": reply.message})
                record.update(input=reply.message, source=simulator.source)
                if reply.reasoning:
                    record["reasoning"] = reply.reasoning
            else:
                record.update(input=talk.messages[-1].get("content"), source="case")
            request = self.request(case, list(talk.messages), context, work)
            try:
                response, latency_ms = await self.call_target(request, work, where=f"at turn {turn}")
            except CaseFailure as failure:
                record["error"] = failure.message
                record["duration_ms"] = _ms(started)
                raise
            record["output"] = response.subject()
            trace = response_trace(response)
            if trace:
                record["trace"] = trace
            talk.messages.extend(reply_messages(response))
            try:
                reached = await self._check(case, talk, turn, response, latency_ms, work)
            finally:
                record["duration_ms"] = _ms(started)
            if reached:
                record["checkpoints_reached"] = reached
            if talk.all_required_reached():
                result.status, result.error = "passed", None
                return
        raise CaseFailure("failed", f"max turns ({conversation.max_turns}) exceeded without reaching: "
                                    f"{talk.missing()}")

    async def _simulate(self, simulator: _Simulator, talk: _Talk, turn: int, work: CaseWork) -> SimulatorReply | None:
        try:
            if not simulator.waits:         # no task and timer for what cannot wait (see StandardRunner)
                return await simulator.next(talk, turn)
            return await within(simulator.next(talk, turn), work.remaining())
        except asyncio.TimeoutError:
            raise work.timed_out(f"turn {turn}") from None
        except HelperError as exc:
            talk.turns[-1]["error"] = exc.message
            raise CaseFailure("error", f"simulator error at turn {turn}: {exc.message}", exc.kind) from exc

    async def _check(self, case: Case, talk: _Talk, turn: int, response: AgentResponse, latency_ms: float,
                     work: CaseWork) -> list[str]:
        """Check each checkpoint that is due against this turn's response; the ids reached at this turn. A
        checkpoint listed after its dependency can be reached in the same turn as it."""
        reached: list[str] = []
        for checkpoint in talk.conversation.checkpoints:
            state = talk.checkpoints[checkpoint.id]
            if state["reached"] or any(not talk.checkpoints[dep]["reached"] for dep in checkpoint.after):
                continue
            ctx = EvalContext(response=response, input=talk.turns[-1].get("input"), latency_ms=latency_ms,
                              helpers=work.helpers, conversation=list(talk.messages))
            if may_wait(checkpoint.assertions):
                try:
                    verdicts = await within(evaluate_all(checkpoint.assertions, ctx), work.remaining())
                except asyncio.TimeoutError:
                    raise work.timed_out(f"turn {turn}, checking checkpoint {checkpoint.id}") from None
            else:
                verdicts = await evaluate_all(checkpoint.assertions, ctx)
            state["checked"] += 1
            stuck = undecided(verdicts)
            if stuck is not None:
                state["assertions"] = [v.to_dict() for v in verdicts]
                raise CaseFailure("error", f"checkpoint {checkpoint.id} at turn {turn}: {stuck.message}",
                                  stuck.error_kind)
            failed = failure_message(verdicts)
            if failed:
                if not state.get("reached_at_turn"):
                    state["message"] = failed       # the latest miss says why it is not reached yet
                    state["assertions"] = [v.to_dict() for v in verdicts]
                continue
            state.update(reached=True, passed=True, reached_at_turn=turn,
                         message="; ".join(v.message for v in verdicts), assertions=[v.to_dict() for v in verdicts])
            reached.append(checkpoint.id)
        return reached


@dataclass
class _Talk:
    """The conversation so far: its messages, the record of each turn, and where each checkpoint stands."""

    conversation: Conversation
    messages: list[dict[str, Any]]
    turns: list[dict[str, Any]] = field(default_factory=list)
    checkpoints: dict[str, dict[str, Any]] = field(default_factory=dict)
    ended: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        for checkpoint in self.conversation.checkpoints:
            self.checkpoints[checkpoint.id] = _checkpoint_state(checkpoint)

    def all_required_reached(self) -> bool:
        return all(state["reached"] for state in self.checkpoints.values() if state["required"])

    def missing(self) -> str:
        """The required checkpoints not reached, in the case's order."""
        return ", ".join(cid for cid, state in self.checkpoints.items() if state["required"] and not state["reached"])

    def visible(self) -> list[dict[str, Any]]:
        """The conversation as the user sees it: what each side said, without tool calls and tool results."""
        return [{"role": m.get("role"), "content": m.get("content")} for m in self.messages
                if m.get("role") in ("user", "assistant") and m.get("content") not in (None, "")]

    def report(self) -> dict[str, Any]:
        reached = sum(1 for state in self.checkpoints.values() if state["reached"])
        out: dict[str, Any] = {"mode": "dynamic", "simulator": self.conversation.simulator,
                               "total_turns": len(self.turns), "checkpoints_reached": reached,
                               "checkpoints_total": len(self.checkpoints), "turns": self.turns,
                               "checkpoints": {cid: _shown_state(state) for cid, state in self.checkpoints.items()}}
        if self.ended:
            out["ended"] = {key: value for key, value in self.ended.items() if value is not None}
        return out


def _checkpoint_state(checkpoint: Checkpoint) -> dict[str, Any]:
    state: dict[str, Any] = {"id": checkpoint.id, "required": checkpoint.required, "reached": False,
                             "passed": False, "checked": 0}
    if checkpoint.description:
        state["description"] = checkpoint.description
    if checkpoint.after:
        state["after"] = list(checkpoint.after)
    return state


def _shown_state(state: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in state.items() if value is not None}


class _Simulator:
    """Who writes the user's next turn."""

    source = "simulator"
    waits = True            # it asks an agent: the case's timeout must be able to cut it

    async def next(self, talk: _Talk, turn: int) -> SimulatorReply | None:
        raise NotImplementedError


class _ScriptedSimulator(_Simulator):
    """`use: "scripted"`: the case's `replies`, one per turn, in order; None once they are used up."""

    source = "scripted"
    waits = False           # the next reply is at hand

    def __init__(self, replies: list[str]) -> None:
        self._replies = replies
        self._next = 0

    async def next(self, talk: _Talk, turn: int) -> SimulatorReply | None:
        if self._next >= len(self._replies):
            return None
        self._next += 1
        return SimulatorReply(message=self._replies[self._next - 1])


class _AgentSimulator(_Simulator):
    """A simulator agent (README: Helper agents), asked for each turn."""

    def __init__(self, conversation: Conversation, helpers: HelperCaller) -> None:
        self._conversation = conversation
        self._helpers = helpers

    async def next(self, talk: _Talk, turn: int) -> SimulatorReply:
        conversation = self._conversation
        payload: dict[str, Any] = {}
        if conversation.persona is not None:
            payload["persona"] = conversation.persona
        if conversation.goal is not None:
            payload["goal"] = conversation.goal
        payload.update(conversation=talk.visible(), turn_number=turn, max_turns=conversation.max_turns,
                       checkpoints_reached=[cid for cid, s in talk.checkpoints.items() if s["reached"]],
                       checkpoints_pending=[cid for cid, s in talk.checkpoints.items() if not s["reached"]])
        if conversation.extra:
            payload["extra"] = conversation.extra
        return await self._helpers.ask("simulator", conversation.simulator, payload, read_simulator,
                                       connector=conversation.connector)


def _simulator_for(conversation: Conversation, helpers: HelperCaller) -> _Simulator:
    if conversation.scripted:
        return _ScriptedSimulator(conversation.replies)
    return _AgentSimulator(conversation, helpers)


def reply_messages(response: AgentResponse) -> list[dict[str, Any]]:
    """What a reply adds to the conversation: the assistant message (with its tool calls), then a tool message per
    call with the executed tool's result (paired by id, else by position; `{}` when the agent executed none), so an
    OpenAI-compatible target can go on after a tool call."""
    content = response.content
    if not isinstance(content, (str, list)) and content is not None:
        content = json.dumps(content, ensure_ascii=False, default=str)
    if content in (None, "") and not response.tool_calls:
        subject = response.subject()
        if subject in (None, ""):
            return []
        content = subject if isinstance(subject, str) else json.dumps(subject, ensure_ascii=False, sort_keys=True,
                                                                      default=str)
    message: dict[str, Any] = {"role": "assistant", "content": content if content != "" else None}
    if not response.tool_calls:
        return [message]
    message["tool_calls"] = [call.to_dict() for call in response.tool_calls]
    executed = {tool.id: tool for tool in response.tools}
    messages = [message]
    for index, call in enumerate(response.tool_calls):
        tool = executed.get(call.id) or (response.tools[index] if index < len(response.tools) else None)
        if tool is None:
            result: Any = {}
        elif tool.error:
            result = {"error": tool.error}
        else:
            result = tool.result
        messages.append({"role": "tool", "tool_call_id": call.id,
                         "content": result if isinstance(result, str) else json.dumps(result, ensure_ascii=False,
                                                                                      default=str)})
    return messages


def _ms(started: float) -> int:
    return round((time.monotonic() - started) * 1000)
