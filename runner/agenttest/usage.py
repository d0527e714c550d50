"""Token usage by role — the target, and the helpers: judge, simulator, generator — counted per case and per run."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

ROLES = ("target", "judge", "simulator", "generator")


def format_usd(value: float) -> str:
    """`$0.0123`; an amount below a hundredth of a cent keeps two significant digits (`$0.0000042`), so a small
    budget and what was spent of it never both read `$0.0000`."""
    if value == 0 or abs(value) >= 0.0001:
        return f"${value:,.4f}"
    exponent = int(f"{abs(value):.1e}".split("e")[1])        # 4.2e-06 → -6
    return f"{'-' if value < 0 else ''}${abs(value):.{1 - exponent}f}"


@dataclass(slots=True)
class Usage:
    """Calls and tokens per role. A call served from the cache counts as a call and as `cached`, but its tokens
    were not spent by this run and are not added. `estimated` counts the calls whose tokens are an estimate (their
    agent reported none: `agents.meter.estimated_usage`)."""

    roles: dict[str, dict[str, int]] = field(default_factory=dict)

    def add(self, role: str, tokens: Mapping[str, int], *, cached: bool = False) -> None:
        counts = self.roles.setdefault(role, {"calls": 0})
        counts["calls"] += 1
        if cached:
            counts["cached"] = counts.get("cached", 0) + 1
            return
        for key, value in tokens.items():
            counts[key] = counts.get(key, 0) + value

    def merge(self, other: Usage | Mapping[str, Mapping[str, int]] | None) -> None:
        roles = other.roles if isinstance(other, Usage) else other or {}
        for role, counts in roles.items():
            mine = self.roles.setdefault(role, {"calls": 0})
            for key, value in counts.items():
                if isinstance(value, int) and not isinstance(value, bool):
                    mine[key] = mine.get(key, 0) + value

    def tokens(self, role: str) -> dict[str, int]:
        """The token counters of one role (without `calls`/`cached`)."""
        return {key: value for key, value in self.roles.get(role, {}).items() if key not in ("calls", "cached")}

    def helpers(self) -> dict[str, dict[str, int]]:
        """Every role but the target, in the order of ROLES."""
        return {role: dict(self.roles[role]) for role in _ordered(self.roles) if role != "target"}

    def to_dict(self) -> dict[str, dict[str, int]]:
        return {role: dict(self.roles[role]) for role in _ordered(self.roles)}

    @classmethod
    def total(cls, parts: Iterable[Usage | Mapping[str, Mapping[str, int]] | None]) -> Usage:
        usage = cls()
        for part in parts:
            usage.merge(part)
        return usage


def total_tokens(counts: Mapping[str, int]) -> int:
    """The tokens of one role: `total_tokens` when the agent reported it, else prompt + completion."""
    if "total_tokens" in counts:
        return counts["total_tokens"]
    return counts.get("prompt_tokens", 0) + counts.get("completion_tokens", 0)


def usage_line(usage: Mapping[str, Mapping[str, int]]) -> str:
    """`target: 6 calls, 1,234 tokens · judge: 5 calls (3 cached), ~567 tokens (2 estimated)`, for every role that
    was called."""
    parts = []
    for role, counts in usage.items():
        calls = counts.get("calls", 0)
        text = f"{role}: {calls} call{'' if calls == 1 else 's'}"
        if counts.get("cached"):
            text += f" ({counts['cached']} cached)"
        tokens = total_tokens(counts)
        if tokens:
            estimated = counts.get("estimated")
            text += f", ~{tokens:,} tokens ({estimated} estimated)" if estimated else f", {tokens:,} tokens"
        parts.append(text)
    return " · ".join(parts)


def estimated_roles(usage: Mapping[str, Mapping[str, int]] | None) -> set[str]:
    """The roles some of whose tokens are an estimate."""
    return {role for role, counts in (usage or {}).items() if isinstance(counts, Mapping) and counts.get("estimated")}


def _ordered(roles: Mapping[str, object]) -> list[str]:
    return [role for role in ROLES if role in roles] + sorted(role for role in roles if role not in ROLES)
