"""Conversations: a case's steps — fixed user turns and simulated stretches — run turn by turn against the target.

Per turn (docs/conversations.md): the user speaks (the case's fixed turn, the simulator, or with --interactive the
person at the terminal), the target answers with the whole conversation, and the conversation grows (the assistant
message with its tool calls, then one tool message per call, paired by id). Then, in order: each guard is checked
against the reply (the first one broken ends the case), a fixed turn's own assertions, each checkpoint not yet
reached whose `after` are all reached, and the checkpoints' deadlines (`by_turn`). A failure at a turn ends the case
there: nothing more is sent. One chat id for the whole conversation; the case's `timeout` bounds all of it, calls
included.

A case written as `turns` runs every step, must have reached every required checkpoint by the end, then passes its
`final` assertions; a case written the Yao way (simulator + checkpoints) passes, once its `final` pass, as soon as
every required checkpoint is reached. Either way `metadata.termination` says why it ended.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import Any

from ..agents.base import AgentResponse
from ..agents.helper_replies import SimulatorReply
from ..assertions.base import (
    AssertionResult,
    AssertionSpec,
    EvalContext,
    evaluate_all,
    failure_message,
    may_wait,
    undecided,
)
from ..cases.model import Case, Checkpoint, Conversation, Simulate, UserTurn
from ..durations import format_duration
from ..errors import HelperError
from ..results import CaseResult
from ..secrets import shorten
from ..timeouts import within
from .awaiting import awaiting_input
from .case_runner import CaseFailure, CaseRunner, CaseWork, RunServices, base_result, response_trace
from .interactive import ConversationSettings, Person
from .users import Cue, SimulatedUser, seen_by_the_user, simulated_user


class DynamicRunner(CaseRunner):
    """Runs one conversation case: its steps, guards, checkpoints and final assertions, and a record of every
    turn."""

    def __init__(self, services: RunServices, settings: ConversationSettings | None = None) -> None:
        super().__init__(services)
        self.settings = settings or ConversationSettings()

    async def run(self, case: Case, run: int = 1) -> CaseResult:
        skipped = self.settings.skipped(case)
        if skipped is not None:        # before its hooks, as a case's own `skip`
            result = base_result(case)
            result.status, result.error = "skipped", skipped
            return result
        return await super().run(case, run)

    async def execute(self, case: Case, result: CaseResult, work: CaseWork) -> None:
        conversation = case.conversation
        assert conversation is not None
        talk = _Talk(conversation)
        person = self.settings.person
        if person is not None:
            person.begin(case, handing_over=conversation.simulator is not None)
        ended = False
        try:
            await self._converse(case, talk, result, work)
            ended = True
        except CaseFailure as failure:
            talk.stopped_by(failure)
            ended = True
            raise
        finally:
            if ended:
                self._wrap_up(case, talk, work)
            result.metadata = talk.report()
            if talk.turns:
                result.output = talk.turns[-1].get("output")
            if case.input is None and talk.turns:
                result.input = talk.turns[0].get("input")

    async def _converse(self, case: Case, talk: _Talk, result: CaseResult, work: CaseWork) -> None:
        conversation = talk.conversation
        users = simulated_user(conversation, work.helpers)
        context = self.services.context.request_context(case, work.run)     # one chat id for every turn
        for step in conversation.steps:
            if isinstance(step, UserTurn):
                self._room_for_a_turn(talk)
                await self._turn(case, talk, talk.begin_turn(), step.messages, "case", context, work, step=step)
            else:
                await self._stretch(case, talk, step, users, context, work)
            if talk.termination == "checkpoints_reached":
                break
        else:
            await self._when_the_turns_run_out(case, talk, context, work)
            missing = talk.missing()
            if missing:
                raise talk.fail("turns_completed", f"turns completed without reaching: {missing}")
            talk.termination = "turns_completed"
        await self._final(talk, result, work)
        result.status, result.error = "passed", None

    async def _stretch(self, case: Case, talk: _Talk, step: Simulate, users: SimulatedUser | None,
                       context: dict[str, Any], work: CaseWork) -> None:
        """A simulated stretch: the user's turns come from the simulator (or the person), until its checkpoint is
        reached, its turns are used, or the user is done. The Yao way, the stretch is the whole conversation."""
        script = talk.conversation.script
        taken = 0
        while talk.termination is None:
            if step.until is not None and talk.checkpoints[step.until]["reached"]:
                return
            if step.max_turns is not None and taken >= step.max_turns:
                return
            self._room_for_a_turn(talk)
            record = talk.begin_turn()
            turn = record["turn"]
            said = await self._user_says(case, users, talk, turn, work)
            if said is None:
                talk.drop_turn()
                if script:          # the stretch is over; the script goes on
                    return
                raise talk.fail("replies_exhausted", f"scripted simulator ran out of replies after {turn - 1} "
                                                     f"turn{'' if turn == 2 else 's'} without reaching: "
                                                     f"{talk.missing()}")
            reply, source = said
            if reply.goal_achieved:
                talk.drop_turn()
                talk.ended = {"turn": turn, "goal_achieved": True, "by": source if source == "person" else None,
                              "message": reply.message or None, "reasoning": reply.reasoning or None}
                talk.user_done = True
                if script:
                    return
                who = "the person ended the conversation" if source == "person" else \
                    "simulator signaled goal achieved"
                raise talk.fail("goal_achieved", f"{who} but not all required checkpoints reached: {talk.missing()}")
            await self._turn(case, talk, record, [{"role": "user", "content": reply.message}], source, context, work,
                             reasoning=reply.reasoning)
            taken += 1

    async def _user_says(self, case: Case, users: SimulatedUser | None, talk: _Talk, turn: int,
                         work: CaseWork) -> tuple[SimulatorReply, str] | None:
        """The user's next turn and who wrote it: the person at the terminal (an empty line hands the turn to the
        simulator), else the simulator. None when scripted replies are used up."""
        person = self.settings.person
        if person is not None:
            typed = await self._ask(person, case, talk, turn, work)
            if typed is None:
                return SimulatorReply(message="", goal_achieved=True), "person"
            if typed:
                return SimulatorReply(message=typed), "person"
        assert users is not None, "a simulated stretch has a simulator (the loader checks it)"
        try:
            cue = Cue(seen=talk.seen(), turn=turn, reached=talk.reached(), pending=talk.pending())
            # no task and timer for what cannot wait (see StandardRunner)
            reply = await (within(users.next(cue), work.remaining()) if users.waits else users.next(cue))
        except asyncio.TimeoutError:
            raise work.timed_out(f"turn {turn}") from None
        except HelperError as exc:
            talk.turns[-1]["error"] = exc.message
            raise CaseFailure("error", f"simulator error at turn {turn}: {exc.message}", exc.kind) from exc
        return (reply, users.source) if reply is not None else None

    async def _ask(self, person: Person, case: Case, talk: _Talk, turn: int, work: CaseWork) -> str | None:
        """What the person types for this turn. The time they take is not the case's: its deadline moves by it."""
        limit = case.interactive.timeout if case.interactive is not None else _PERSON_TIMEOUT
        started = time.monotonic()
        try:
            return await within(person.ask(turn), limit)
        except asyncio.TimeoutError:
            talk.turns[-1]["error"] = f"no turn typed within {format_duration(limit)}"
            raise CaseFailure("timeout", f"timeout after {format_duration(limit)} waiting for the person's turn "
                                         f"{turn}") from None
        finally:
            waited = time.monotonic() - started
            work.deadline += waited
            if work.helpers.deadline is not None:
                work.helpers.deadline += waited

    async def _turn(self, case: Case, talk: _Talk, record: dict[str, Any], messages: list[dict[str, Any]],
                    source: str, context: dict[str, Any], work: CaseWork, *, step: UserTurn | None = None,
                    reasoning: str = "") -> None:
        """One exchange: the user's `messages` sent with the whole conversation, the reply recorded and checked."""
        turn = record["turn"]
        started = time.monotonic()
        talk.messages.extend(messages)
        record.update(input=messages[-1].get("content"), source=source)
        if step is not None and step.index is not None:
            record["step"] = step.index
        if reasoning:
            record["reasoning"] = reasoning
        person = self.settings.person
        if person is not None and source != "person":
            person.said(record)
        reached: list[str] = []
        try:
            request = self.request(case, list(talk.messages), context, work)
            if step is not None and step.options:
                request.options = _with_turn_options(request.options, step.options, self.services.connector)
            try:
                response, latency_ms = await self.call_target(request, work, where=f"at turn {turn}")
            except CaseFailure as failure:
                record["error"] = failure.message
                raise
            record["output"] = response.subject()
            trace = response_trace(response)
            if trace:
                record["trace"] = trace
            awaiting = awaiting_input(response, self._input_tools(case))
            record["awaiting_input"] = awaiting.awaiting
            if awaiting.awaiting:
                record["awaiting_reason"] = awaiting.reason
            talk.messages.extend(reply_messages(response))
            talk.last = (response, latency_ms)
            talk.user_done = False
            ctx = EvalContext(response=response, input=record.get("input"), latency_ms=latency_ms,
                              helpers=work.helpers, conversation=list(talk.messages), deadline=work.deadline)
            await self._guards(talk, record, ctx, work)
            if step is not None and step.assertions:
                await self._turn_assertions(talk, record, step.assertions, ctx, work)
            reached = await self._check(talk, turn, ctx, work)
            if reached:
                record["checkpoints_reached"] = reached
            self._deadlines(talk, record)
            if not talk.conversation.script and talk.all_required_reached():
                talk.termination = "checkpoints_reached"
        finally:
            record["duration_ms"] = _ms(started)
            if person is not None:
                person.replied(record, reached)
        talk.in_progress = None

    async def _guards(self, talk: _Talk, record: dict[str, Any], ctx: EvalContext, work: CaseWork) -> None:
        """Every guard must hold on the reply: the first broken one fails the case at this turn."""
        turn = record["turn"]
        for guard in talk.conversation.guards:
            verdicts = await _evaluated(guard.assertions, ctx, work, f"turn {turn}, checking guard {guard.id}")
            state = talk.guards[guard.id]
            state["checked"] += 1
            stuck = undecided(verdicts)
            if stuck is not None:
                state["assertions"] = [v.to_dict() for v in verdicts]
                raise CaseFailure("error", f"guard {guard.id} at turn {turn}: {stuck.message}", stuck.error_kind)
            failed = failure_message(verdicts)
            if failed:
                state.update(broken_at_turn=turn, message=failed, assertions=[v.to_dict() for v in verdicts])
                record["failed"] = f"guard {guard.id} broken: {failed}"
                raise talk.fail("guard_broken", f"guard {guard.id} broken at turn {turn}: {failed}", turn)

    async def _turn_assertions(self, talk: _Talk, record: dict[str, Any], specs: list[AssertionSpec],
                               ctx: EvalContext, work: CaseWork) -> None:
        """A fixed turn's own assertions, on the reply to it: a failing one fails the case at this turn."""
        turn = record["turn"]
        verdicts = await _evaluated(specs, ctx, work, f"turn {turn}, in its assertions")
        record["assertions"] = [v.to_dict() for v in verdicts]
        stuck = undecided(verdicts)
        if stuck is not None:
            raise CaseFailure("error", f"turn {turn}: {stuck.message}", stuck.error_kind)
        failed = failure_message(verdicts)
        if failed:
            record["failed"] = failed
            raise talk.fail("turn_failed", f"turn {turn} failed: {failed}", turn)

    async def _check(self, talk: _Talk, turn: int, ctx: EvalContext, work: CaseWork) -> list[str]:
        """Check each checkpoint that is due against this turn's response; the ids reached at this turn. A
        checkpoint listed after its dependency can be reached in the same turn as it."""
        reached: list[str] = []
        for checkpoint in talk.conversation.checkpoints:
            state = talk.checkpoints[checkpoint.id]
            if state["reached"] or any(not talk.checkpoints[dep]["reached"] for dep in checkpoint.after):
                continue
            verdicts = await _evaluated(checkpoint.assertions, ctx, work,
                                        f"turn {turn}, checking checkpoint {checkpoint.id}")
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

    def _deadlines(self, talk: _Talk, record: dict[str, Any]) -> None:
        """A required checkpoint not reached by its `by_turn` fails the case now; an optional one is marked."""
        turn = record["turn"]
        for checkpoint in talk.conversation.checkpoints:
            state = talk.checkpoints[checkpoint.id]
            if checkpoint.by_turn is None or state["reached"] or turn < checkpoint.by_turn or \
                    state.get("deadline_missed"):
                continue
            state["deadline_missed"] = True
            if checkpoint.required:
                message = f"checkpoint {checkpoint.id} not reached by turn {checkpoint.by_turn}"
                record["failed"] = message
                raise talk.fail("deadline_missed", message, turn)

    async def _when_the_turns_run_out(self, case: Case, talk: _Talk, context: dict[str, Any],
                                      work: CaseWork) -> None:
        """The script is done while the agent awaits the user's input (seed 000): with --interactive the person goes
        on for as long as it does; else `--on-missing-input` skips or fails the case, or (`ignore`) lets it end."""
        if not talk.turns or not talk.turns[-1].get("awaiting_input") or talk.user_done:
            return
        person = self.settings.person
        if person is not None:
            while talk.turns[-1].get("awaiting_input"):
                self._room_for_a_turn(talk)
                record = talk.begin_turn()
                typed = await self._ask(person, case, talk, record["turn"], work)
                if not typed:           # an empty line, /done or Ctrl-D: the person is done
                    talk.drop_turn()
                    return
                await self._turn(case, talk, record, [{"role": "user", "content": typed}], "person", context, work)
            return
        mode = self.settings.on_missing_input
        if mode == "ignore":
            return
        last = talk.turns[-1]
        asked = " ".join(_text(last.get("output")).split())
        talk.termination = "turns_completed"
        raise CaseFailure("skipped" if mode == "skip" else "failed",
                          f"agent awaiting input after turn {last['turn']}, no next turn defined: it asked "
                          f"\"{shorten(asked, 200)}\" ({last.get('awaiting_reason')}); add a turn or a simulated "
                          "stretch, or run with --interactive")

    async def _final(self, talk: _Talk, result: CaseResult, work: CaseWork) -> None:
        """The final assertions, once, against the last reply with the whole conversation."""
        final = talk.conversation.final
        if not final:
            return
        if talk.last is None:
            raise talk.fail("final_failed", "final: the conversation ended before the agent said anything")
        response, latency_ms = talk.last
        ctx = EvalContext(response=response, input=talk.turns[-1].get("input"), latency_ms=latency_ms,
                          helpers=work.helpers, conversation=list(talk.messages), deadline=work.deadline)
        verdicts = await _evaluated(final, ctx, work, "in the final assertions")
        result.assertions = verdicts
        stuck = undecided(verdicts)
        if stuck is not None:
            talk.termination = "error"      # the turns completed (or reached their checkpoints); the judge failed
            raise CaseFailure("error", f"final: {stuck.message}", stuck.error_kind)
        failed = failure_message(verdicts)
        if failed:
            raise talk.fail("final_failed", f"final check failed: {failed}")

    def _room_for_a_turn(self, talk: _Talk) -> None:
        """Fails the case when the conversation has had its `max_turns` and another turn is wanted."""
        conversation = talk.conversation
        if len(talk.turns) < conversation.max_turns:
            return
        missing = talk.missing()
        if not conversation.script:
            raise talk.fail("max_turns", f"max turns ({conversation.max_turns}) exceeded without reaching: {missing}")
        raise talk.fail("max_turns", f"max turns ({conversation.max_turns}) exceeded before the turns were done"
                                     + (f"; not reached: {missing}" if missing else ""))

    def _input_tools(self, case: Case) -> list[str]:
        """The tools the target's config says ask the user (`input_tools`)."""
        settings = self.services.pool.project.agents.get(case.target or self.services.target_id)
        return list(getattr(settings, "input_tools", None) or [])

    def _wrap_up(self, case: Case, talk: _Talk, work: CaseWork) -> None:
        """Once the conversation has ended: saved with --save-conversation (its first run), shown to the person."""
        saver, saved = self.settings.saver, None
        if saver is not None and work.run == 1 and talk.turns:
            try:
                new_id = saver.save(case, talk.turns)
            except OSError as exc:
                talk.saved = {"file": saver.shown, "error": exc.strerror or str(exc)}
            else:
                talk.saved = {"file": saver.shown, "id": new_id}
                saved = f"{new_id} in {saver.shown}"
        if self.settings.person is not None:
            self.settings.person.end((talk.termination or "").replace("_", " "), saved)


_PERSON_TIMEOUT = 300.0      # `interactive.timeout`'s default


@dataclass
class _Talk:
    """The conversation so far: its messages, the record of each turn, where each checkpoint and guard stands, and
    why it ended."""

    conversation: Conversation
    messages: list[dict[str, Any]] = field(default_factory=list)
    turns: list[dict[str, Any]] = field(default_factory=list)
    checkpoints: dict[str, dict[str, Any]] = field(default_factory=dict)
    guards: dict[str, dict[str, Any]] = field(default_factory=dict)
    ended: dict[str, Any] | None = None
    termination: str | None = None
    failed_at_turn: int | None = None
    in_progress: int | None = None      # the turn under way
    last: tuple[AgentResponse, float] | None = None     # the last reply and its latency (ms)
    user_done: bool = False             # the user said its goal is achieved, and no turn followed
    saved: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        for checkpoint in self.conversation.checkpoints:
            self.checkpoints[checkpoint.id] = _checkpoint_state(checkpoint)
        for guard in self.conversation.guards:
            self.guards[guard.id] = {"id": guard.id, **({"description": guard.description} if guard.description
                                                        else {}), "checked": 0}

    def begin_turn(self) -> dict[str, Any]:
        record: dict[str, Any] = {"turn": len(self.turns) + 1}
        self.turns.append(record)
        self.in_progress = record["turn"]
        return record

    def drop_turn(self) -> None:
        """The turn begun did not happen: no one said anything."""
        self.turns.pop()
        self.in_progress = None

    def fail(self, termination: str, message: str, turn: int | None = None) -> CaseFailure:
        """The case fails for `termination` (at `turn`, when a turn failed it)."""
        self.termination, self.failed_at_turn = termination, turn
        return CaseFailure("failed", message)

    def stopped_by(self, failure: CaseFailure) -> None:
        """Why the conversation ended, for a failure that said none: a timeout or an error, at the turn under
        way."""
        if self.termination is None:
            self.termination = "timeout" if failure.status == "timeout" else "error"
            self.failed_at_turn = self.in_progress

    def all_required_reached(self) -> bool:
        return all(state["reached"] for state in self.checkpoints.values() if state["required"])

    def missing(self) -> str:
        """The required checkpoints not reached, in the case's order."""
        return ", ".join(cid for cid, state in self.checkpoints.items() if state["required"] and not state["reached"])

    def reached(self) -> list[str]:
        return [cid for cid, state in self.checkpoints.items() if state["reached"]]

    def pending(self) -> list[str]:
        return [cid for cid, state in self.checkpoints.items() if not state["reached"]]

    def seen(self) -> list[dict[str, Any]]:
        return seen_by_the_user(self.messages)

    def report(self) -> dict[str, Any]:
        conversation = self.conversation
        out: dict[str, Any] = {"mode": "dynamic" if conversation.simulated else "static"}
        if conversation.simulator is not None:
            out["simulator"] = conversation.simulator
        out.update(total_turns=len(self.turns), checkpoints_reached=len(self.reached()),
                   checkpoints_total=len(self.checkpoints), turns=self.turns,
                   checkpoints={cid: _shown_state(state) for cid, state in self.checkpoints.items()})
        if self.guards:
            out["guards"] = self.guards
        if self.termination:
            out["termination"] = self.termination
        if self.failed_at_turn is not None:
            out["failed_at_turn"] = self.failed_at_turn
        if self.ended:
            out["ended"] = {key: value for key, value in self.ended.items() if value is not None}
        if self.saved:
            out["saved"] = self.saved
        return out


def _checkpoint_state(checkpoint: Checkpoint) -> dict[str, Any]:
    state: dict[str, Any] = {"id": checkpoint.id, "required": checkpoint.required, "reached": False,
                             "passed": False, "checked": 0}
    if checkpoint.description:
        state["description"] = checkpoint.description
    if checkpoint.after:
        state["after"] = list(checkpoint.after)
    if checkpoint.by_turn is not None:
        state["by_turn"] = checkpoint.by_turn
    return state


def _shown_state(state: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in state.items() if value is not None}


async def _evaluated(specs: list[AssertionSpec], ctx: EvalContext, work: CaseWork, where: str) -> list[AssertionResult]:
    """Every verdict of `specs` on the reply; those that may wait (a judge) within the case's time."""
    if not may_wait(specs):     # static checks decide at once: no task and timer to guard them
        return await evaluate_all(specs, ctx)
    try:
        return await within(evaluate_all(specs, ctx), work.remaining())
    except asyncio.TimeoutError:
        raise work.timed_out(where) from None


def _with_turn_options(options: dict[str, Any], turn: dict[str, Any], cli_connector: str | None) -> dict[str, Any]:
    """The request's options with a fixed turn's over the case's (objects merged one level deep); history is still
    skipped, and a CLI connector still wins."""
    merged = dict(options)
    for key, value in turn.items():
        merged[key] = {**merged[key], **value} if isinstance(value, dict) and isinstance(merged.get(key), dict) \
            else value
    merged["skip"] = {**merged.get("skip", {}), "history": True}
    if cli_connector:
        merged["connector"] = cli_connector
    return merged


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


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def _ms(started: float) -> int:
    return round((time.monotonic() - started) * 1000)
