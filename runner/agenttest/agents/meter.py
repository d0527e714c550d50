"""What a run spends, as it spends it: every agent call's tokens and cost (from the `price` of the agent or its
connector), by role, checked against the run's budget (`--max-tokens`, `--max-cost`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..usage import format_usd, total_tokens
from .base import AgentRequest, AgentResponse
from .registry import Price


@dataclass
class Meter:
    """Tokens and USD by role across the run. `on_spent` is told, once, when a budget is used up."""

    max_cost: float | None = None
    max_tokens: int | None = None
    tokens: dict[str, int] = field(default_factory=dict)
    cost: dict[str, float] = field(default_factory=dict)
    priced: bool = False                         # whether any call had a price (a cost is worth showing)
    spent: str | None = None                     # why the budget is used up, once it is
    on_spent: Callable[[str], None] = lambda reason: None

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
            if self.spent is not None:       # with what the calls in flight added after it was crossed
                budget["spent"] = self._message()
            out["budget"] = budget
        return out or None

    def _message(self) -> str:
        if self.max_tokens is not None and self.total_tokens() >= self.max_tokens:
            return f"budget spent: {self.total_tokens():,} tokens of --max-tokens {self.max_tokens:,}"
        return f"budget spent: {format_usd(self.total_cost())} of --max-cost {format_usd(self.max_cost or 0)}"

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


class MeteredAgent:
    """An agent whose every answered call is charged to the run's meter."""

    def __init__(self, inner: Any, meter: Meter, price_of: Callable[[AgentRequest], Price | None]) -> None:
        self.id = inner.id
        self._inner = inner
        self._meter = meter
        self._price_of = price_of

    async def call(self, request: AgentRequest) -> AgentResponse:
        response = await self._inner.call(request)
        self._meter.charge(request.role, response.usage, self._price_of(request))
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)
