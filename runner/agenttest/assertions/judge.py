"""The LLM-judged assertion (`type: agent`): a validator agent decides whether the response meets criteria."""

from __future__ import annotations

from collections.abc import Awaitable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from ..errors import HelperError, SuiteError, Where
from ..hints import helper_name
from .base import AssertionSpec, EvalContext, Verdict, assertion

if TYPE_CHECKING:
    from ..agents.helper_replies import JudgeReply
    from .option_models import JudgeOptions

AGENT_PREFIX = "agents:"
RESERVED = ("input", "output", "conversation")     # what the judge is sent of the case, never overridden
MAX_SAMPLES = 15
T = TypeVar("T")


@dataclass(frozen=True)
class _Judge:
    agent_id: str
    criteria: Any
    options: JudgeOptions


def _prepare_judge(spec: AssertionSpec) -> None:
    """Check `use` and the criteria (the options are checked by `JudgeOptions`)."""
    agent_id = _judge_id(spec)
    if spec.path is not None:
        raise SuiteError("an agent assertion judges the whole reply; 'path' is not used (say in the criteria which "
                         "part matters)", Where(field="path"))
    options: JudgeOptions = spec.typed_options
    metadata = options.metadata or {}
    for key in RESERVED:
        if key in metadata:
            raise SuiteError(f"reserved: the judge is sent the case's {key} as {key!r}; name this key otherwise",
                             Where(field=f"options.metadata.{key}"))
    if spec.value is None and metadata.get("criteria") in (None, ""):
        raise SuiteError("agent assertion needs criteria: 'value', or 'options.metadata.criteria'",
                         Where(field="value"))
    if spec.value is not None and "criteria" in metadata:
        raise SuiteError("the criteria are given twice ('value' and 'options.metadata.criteria'); keep one",
                         Where(field="options.metadata.criteria"))
    spec.helper_agent = agent_id
    spec.prepared = _Judge(agent_id=agent_id, criteria=spec.value, options=options)


def _judge_id(spec: AssertionSpec) -> str:
    """The judge's agent id from `use` (`agents:ID`; a bare id is read as one, with a warning)."""
    if not isinstance(spec.use, str) or not spec.use.strip():
        raise SuiteError("agent assertion requires 'use': \"agents:ID\" naming the judge, or a default judge: "
                         "defaults.judge in agenttest.yaml, or --judge ID", Where(field="use"))
    use = spec.use.strip()
    if use.startswith(AGENT_PREFIX):
        agent_id = use[len(AGENT_PREFIX):].strip()
    elif ":" in use:
        raise SuiteError(f"agent assertion 'use' must start with '{AGENT_PREFIX}' (e.g. agents:workers.test.validator)"
                         f", got {use!r}", Where(field="use"))
    else:
        agent_id = use
        spec.warnings += (f"use: {use!r} has no '{AGENT_PREFIX}' prefix; read as '{AGENT_PREFIX}{use}'",)
    if not agent_id:
        raise SuiteError("agent assertion 'use' names no agent after 'agents:'", Where(field="use"))
    return agent_id


@assertion("agent", prepare=_prepare_judge, options=".option_models:JudgeOptions")
async def judge(spec: AssertionSpec, ctx: EvalContext) -> Verdict:
    """A validator agent judges the response against criteria (docs/configuration.md).

    `use`: `"agents:ID"`, the validator (any agent of agenttest.yaml; `builtin: validator` gives a good one).
    `value`: the criteria (or `options.metadata.criteria`). The validator gets one user message holding
    `{"criteria", "input", "output", "conversation" (in dynamic mode), …options.metadata}` and replies
    `{"passed", "score", "reason", "suggestions"}`; `passed` decides, or the score (`JudgeOptions`). A judge that
    cannot be reached, or whose reply holds no verdict, makes the case an `error` (`error_kind: judge`), never a
    pass or a fail.
    """
    config: _Judge = spec.prepared
    if ctx.helpers is None:
        raise HelperError("judge: no helper agents are available here", "judge")
    payload: dict[str, Any] = {}
    if config.criteria is not None:
        payload["criteria"] = config.criteria
    payload["input"] = ctx.input
    payload["output"] = ctx.output
    if ctx.conversation is not None:
        payload["conversation"] = ctx.conversation
    options = config.options
    payload.update(options.metadata or {})
    helpers = ctx.helpers
    from ..agents.helper_replies import read_judge  # here: loading a suite needs none of it

    replies = await _all_or_none([
        helpers.ask("judge", config.agent_id, payload, read_judge, connector=options.connector, sample=index,
                    samples=options.samples)
        for index in range(options.samples)])
    return _decide(config, replies)


def _decide(config: _Judge, replies: list[JudgeReply]) -> Verdict:
    threshold = config.options.threshold
    votes = [_sample_passed(config, reply) for reply in replies]
    passed_count = sum(votes)
    passed = passed_count * 2 > len(votes)
    agreeing = [reply for reply, vote in zip(replies, votes, strict=True) if vote == passed]
    shown = agreeing[0] if agreeing else replies[0]
    scores = [reply.score for reply in replies if reply.score is not None]
    score = round(sum(scores) / len(scores), 4) if scores else None
    details: dict[str, Any] = {"judge": config.agent_id, "reason": shown.reason}
    if score is not None:
        details["score"] = score
    if threshold is not None:
        details["threshold"] = threshold
    suggestions = list(dict.fromkeys(s for reply in replies for s in reply.suggestions))
    if suggestions:
        details["suggestions"] = suggestions
    if len(replies) > 1:
        details["votes"] = {"passed": passed_count, "failed": len(votes) - passed_count}
        details["samples"] = [{"passed": vote, "score": reply.score, "reason": reply.reason}
                              for reply, vote in zip(replies, votes, strict=True)]
    message = shown.reason or ("the judge found the criteria met" if passed else "the judge found the criteria "
                                                                                 "not met")
    tie = " — a tie does not pass" if passed_count * 2 == len(votes) else ""
    if len(replies) == 1 and threshold is not None and score is not None:
        message = f"{message} (score {score:g} {'≥' if passed else '<'} threshold {threshold:g})"
    elif len(replies) > 1 and threshold is not None:
        message = (f"{message} ({passed_count} of {len(votes)} samples scored ≥ threshold {threshold:g}"
                   f"{tie}; mean score {score:g})")
    elif len(replies) > 1:
        message = f"{message} ({passed_count} of {len(votes)} samples passed{tie})"
    if not passed:
        message = f"{helper_name('judge', config.agent_id)}: {message}"
    return Verdict(passed, message, expected=config.criteria, score=score, details=details)


def _sample_passed(config: _Judge, reply: JudgeReply) -> bool:
    threshold = config.options.threshold
    if threshold is not None:
        if reply.score is None:
            raise HelperError(f"{helper_name('judge', config.agent_id)}: its reply has no 'score', and the assertion "
                              f"decides by threshold {threshold:g}", "judge")
        return reply.score >= threshold
    if reply.passed is None:     # a score alone has no agreed cut-off: guessing one passed copied examples
        raise HelperError(f"{helper_name('judge', config.agent_id)}: its verdict has no 'passed' (a score decides "
                          "only with options.threshold)", "judge")
    return reply.passed


async def _all_or_none(calls: list[Awaitable[T]]) -> list[T]:
    """Every result, in order; at the first failure the other calls are cancelled and the failure raised."""
    import asyncio  # here, not at the top: registering the assertion types must not load the event loop's stack

    tasks = [asyncio.ensure_future(call) for call in calls]
    try:
        return list(await asyncio.gather(*tasks))
    finally:
        for task in tasks:
            task.cancel()
