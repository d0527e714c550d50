"""What a run spends, as it spends it: every agent call's tokens and cost (from the `price` of the agent or its
connector), by role, checked against the run's budget (`--max-tokens`, `--max-cost`).

A call that costs something but reports no usage — a model behind an endpoint (many servers send no usage chunk
in a stream), or any agent with a non-zero price — is never free: its tokens are estimated from its text, marked
`estimated`, and counted like any others.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..github.log import write_line
from ..usage import format_usd, total_tokens
from .base import AgentRequest, AgentResponse

if TYPE_CHECKING:       # the settings models (pydantic) are not needed to count a call's tokens
    from .registry import Price

# Tokenizers give about four characters of English a token, fewer for code, JSON and other scripts: a token per
# three bytes of UTF-8 rounds up on the side of the budget.
BYTES_PER_TOKEN = 3


@dataclass
class Meter:
    """Tokens and USD by role across the run. `on_spent` is told, once, when a budget is used up."""

    max_cost: float | None = None
    max_tokens: int | None = None
    tokens: dict[str, int] = field(default_factory=dict)
    cost: dict[str, float] = field(default_factory=dict)
    priced: bool = False                         # whether any call had a price (a cost is worth showing)
    estimated: set[str] = field(default_factory=set)    # the agents whose usage was estimated (said once each)
    spent: str | None = None                     # why the budget is used up, once it is
    on_spent: Callable[[str], None] = lambda reason: None

    def estimate(self, agent_id: str, request: AgentRequest, response: AgentResponse, prompt: str) -> None:
        """Give `response` the usage its agent did not report (`estimated_usage`), and say so once per agent."""
        response.usage = estimated_usage(request, response, prompt)
        if agent_id not in self.estimated:
            self.estimated.add(agent_id)
            write_line(sys.stderr, f"⚠ agent {agent_id!r} reported no token usage: its tokens are estimated from the "
                                   f"text of each call (a token per {BYTES_PER_TOKEN} bytes), marked ~, and count "
                                   "against the budget")

    def charge(self, role: str, usage: dict[str, int], price: Price | None) -> None:
        tokens = total_tokens(usage)
        self.tokens[role] = self.tokens.get(role, 0) + tokens
        if price is not None:
            self.priced = True
            self.cost[role] = self.cost.get(role, 0.0) + _cost(usage, price)
        self._check()

    def total_cost(self) -> float:
        return sum(self.cost.values())

    def total_tokens(self) -> int:
        return sum(self.tokens.values())

    def report(self) -> dict[str, Any] | None:
        """The summary's `cost` (USD by role, when prices are known) and `budget` (when one was set)."""
        out: dict[str, Any] = {}
        if self.priced:
            out["cost"] = {"total_usd": round(self.total_cost(), 6),
                           **{role: round(value, 6) for role, value in self.cost.items()}}
        if self.max_cost is not None or self.max_tokens is not None:
            budget: dict[str, Any] = {"tokens": self.total_tokens()}
            if self.max_tokens is not None:
                budget["max_tokens"] = self.max_tokens
            if self.max_cost is not None:
                budget.update(max_cost=self.max_cost, cost_usd=round(self.total_cost(), 6))
            if self.estimated:
                budget["estimated"] = True
            if self.spent is not None:       # with what the calls in flight added after it was crossed
                budget["spent"] = self._message()
            out["budget"] = budget
        return out or None

    def _message(self) -> str:
        about = "~" if self.estimated else ""
        if self.max_tokens is not None and self.total_tokens() >= self.max_tokens:
            return f"budget spent: {about}{self.total_tokens():,} tokens of --max-tokens {self.max_tokens:,}"
        return f"budget spent: {about}{format_usd(self.total_cost())} of --max-cost {format_usd(self.max_cost or 0)}"

    def _check(self) -> None:
        if self.spent is not None:
            return
        if (self.max_tokens is not None and self.total_tokens() >= self.max_tokens) or \
                (self.max_cost is not None and self.total_cost() >= self.max_cost):
            self.spent = self._message()
            self.on_spent(self.spent)


def _cost(usage: dict[str, int], price: Price) -> float:
    """USD of one call. Without the split into prompt and completion tokens, every token is priced as output:
    a budget must never count low."""
    if "prompt_tokens" in usage or "completion_tokens" in usage:
        return (usage.get("prompt_tokens", 0) * price.input + usage.get("completion_tokens", 0) * price.output) / 1e6
    return total_tokens(usage) * max(price.input, price.output) / 1e6


def estimated_usage(request: AgentRequest, response: AgentResponse, prompt: str = "") -> dict[str, int]:
    """The usage of a call whose agent reported none, at a token per BYTES_PER_TOKEN bytes of UTF-8: prompt tokens
    from `prompt` (what the agent adds to every request: a system prompt, tool definitions) and the request's
    messages as JSON, completion tokens from the reply's content and tool calls; `estimated: 1` marks it."""
    sent = prompt + json.dumps(request.messages, ensure_ascii=False, default=str)
    content = response.content
    reply = content if isinstance(content, str) else "" if content is None else json.dumps(
        content, ensure_ascii=False, default=str)
    if response.tool_calls:
        reply += json.dumps([call.to_dict() for call in response.tool_calls], ensure_ascii=False, default=str)
    prompt_tokens, completion_tokens = _tokens(sent), _tokens(reply)
    return {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens, "estimated": 1}


def _tokens(text: str) -> int:
    return math.ceil(len(text.encode("utf-8")) / BYTES_PER_TOKEN)


class MeteredAgent:
    """An agent whose every answered call is charged to the run's meter. `prompt` is None for an agent that is no
    model (its calls are estimated only when priced above zero), else the text it adds to every request."""

    def __init__(self, inner: Any, meter: Meter, price_of: Callable[[AgentRequest], Price | None],
                 prompt: str | None = None) -> None:
        self.id = inner.id
        self._inner = inner
        self._meter = meter
        self._price_of = price_of
        self._prompt = prompt

    async def call(self, request: AgentRequest) -> AgentResponse:
        response = await self._inner.call(request)
        price = self._price_of(request)
        costs = price is not None and (price.input > 0 or price.output > 0)
        if not response.usage and (self._prompt is not None or costs):
            self._meter.estimate(self.id, request, response, self._prompt or "")
        self._meter.charge(request.role, response.usage, price)
        return response

    @property
    def waits(self) -> bool:
        """Whether a call may wait (see `engine.target`): charging it never does."""
        return getattr(self._inner, "waits", True)

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)
