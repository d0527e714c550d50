"""Words for users: the name a misspelt key or id was most likely meant to be, and counts with their noun."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def did_you_mean(key: str, known: Iterable[str], cutoff: float = 0.6) -> str:
    """` (did you mean 'assert'?)`, or "" when nothing is close. Case differences are pointed out explicitly."""
    candidate = closest(key, known, cutoff)
    if candidate is None:
        return ""
    if candidate.lower() == key.lower():
        return f" (did you mean {candidate!r}? keys are case-sensitive)"
    return f" (did you mean {candidate!r}?)"


def closest(key: str, known: Iterable[str], cutoff: float = 0.6) -> str | None:
    """The known name `key` was most likely meant to be (same letters in another case first), or None; `cutoff` is
    how alike (difflib's ratio) a name must be."""
    known = list(known)
    for candidate in known:
        if candidate.lower() == key.lower():
            return candidate
    close = difflib.get_close_matches(key, known, n=1, cutoff=cutoff)
    return close[0] if close else None


def helper_name(role: str, agent_id: str) -> str:
    """`judge workers.test.validator`; a helper whose id is its role is named once: `judge`, not `judge judge`."""
    return role if agent_id == role else f"{role} {agent_id}"


def plural(count: int, word: str, words: str | None = None) -> str:
    """`1 case`, `3 cases` (`words` for an irregular plural)."""
    return f"{count} {word if count == 1 else words or word + 's'}"
