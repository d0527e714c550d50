"""The tool loop of `provider: openai`: the model's tool calls answered from `mock_tools` (a fixed result per tool)
or `tool_callables` (a Python function per tool), the results sent back, until the model answers in text — at most
`max_tool_steps` model calls in one turn. What the steps did adds up to one canonical response."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..bounds import from_python
from ..errors import AgentCallError
from ..threads import call_user
from ..user_errors import describe
from .base import AgentRequest, AgentResponse, ToolCall, ToolExecution
from .replies import snippet


@dataclass(frozen=True)
class ToolKit:
    """How an agent answers its tools' calls. A tool with neither a mock nor a callable is not answered: its call is
    recorded, and the turn ends there."""

    mocks: dict[str, Any] = field(default_factory=dict)
    functions: dict[str, Callable[..., Any]] = field(default_factory=dict)

    def answers(self, name: str) -> bool:
        return name in self.mocks or name in self.functions

    def goes_on(self, step: AgentResponse) -> bool:
        """Whether the model is to be asked again after this step: it called tools, and every call was answered."""
        return bool(step.tool_calls) and all(self.answers(call.name) for call in step.tool_calls)

    async def execute(self, calls: list[ToolCall], request: AgentRequest) -> list[ToolExecution]:
        """An execution, in order, of every call this kit answers."""
        return [await self._execute(call, request) for call in calls if self.answers(call.name)]

    async def _execute(self, call: ToolCall, request: AgentRequest) -> ToolExecution:
        if call.name in self.mocks:
            return ToolExecution(call.id, call.name, call.arguments, result=self.mocks[call.name])
        # A tool that raises is a tool that failed, as in every agent SDK: the model is told, and may go on.
        try:
            raw = await call_user(self.functions[call.name], call.arguments, request.to_dict(),
                                  deadline=request.deadline)
            result = json.loads(json.dumps(from_python(raw), ensure_ascii=False, default=str))
        except Exception as exc:
            return ToolExecution(call.id, call.name, call.arguments, error=f"tool raised {describe(exc)}")
        return ToolExecution(call.id, call.name, call.arguments, result=result)


def combined(steps: Sequence[AgentResponse]) -> AgentResponse:
    """The turn as one response: the last step's answer, every step's tool calls and executions in order, and the
    usage of all the steps added up."""
    last = steps[-1]
    usage: dict[str, int] = {}
    for step in steps:
        for key, value in step.usage.items():
            usage[key] = usage.get(key, 0) + value
    return AgentResponse(content=last.content, tool_calls=[call for step in steps for call in step.tool_calls],
                         tools=[tool for step in steps for tool in step.tools], data=last.data,
                         finish_reason=last.finish_reason, model=last.model, usage=usage)


def steps_exceeded(steps: Sequence[AgentResponse], limit: int) -> AgentCallError:
    """The `agent` error of a model still calling tools after `limit` model calls, naming each call."""
    calls = ", ".join(f"{call.name}({json.dumps(call.arguments, ensure_ascii=False, default=str)})"
                      for step in steps for call in step.tool_calls)
    return AgentCallError(f"the model was still calling tools after {limit} model call{'' if limit == 1 else 's'} "
                          f"(max_tool_steps: {limit}): {snippet(calls)}")
