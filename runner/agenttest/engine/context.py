"""Who the agent is talking to: identity, locale and metadata for requests and hooks (Yao's --ctx shape)."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..cases.model import Case
from ..errors import UsageError
from ..files import MAX_NAMED_FILE_BYTES, read_regular_file

DEFAULT_USER = "test-user"
DEFAULT_TEAM = "test-team"
# The chat ids' random part, from a generator of our own (seeded by the OS, as `random` seeds itself): a user's
# agent or hook that seeds the `random` module cannot make two runs' chat ids the same. os.urandom cost a system
# call for each of them.
_CHAT_IDS = random.Random()


@dataclass
class RequestIdentity:
    """Who is talking to the agent, for the whole run: the user, team, locale and metadata every request and hook
    carries. CLI/config values win over a case's, which win over the --ctx file's."""

    user: str | None = None
    team: str | None = None
    locale: str = "en-us"
    referer: str = "agent-test"
    authorized: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    client: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def load(cls, ctx_file: Path | None, user: str | None, team: str | None) -> RequestIdentity:
        identity = cls(user=user, team=team)
        if ctx_file is None:
            return identity
        try:
            raw = json.loads(read_regular_file(ctx_file, MAX_NAMED_FILE_BYTES, follow_symlinks=True))
        except (OSError, ValueError) as exc:
            raise UsageError(f"--ctx {ctx_file}: {exc}") from exc
        if not isinstance(raw, dict):
            raise UsageError(f"--ctx {ctx_file}: must be a JSON object")
        identity.locale = str(raw.get("locale") or identity.locale)
        identity.referer = str(raw.get("referer") or identity.referer)
        identity.authorized = raw.get("authorized") if isinstance(raw.get("authorized"), dict) else {}
        identity.metadata = raw.get("metadata") if isinstance(raw.get("metadata"), dict) else {}
        identity.client = raw.get("client") if isinstance(raw.get("client"), dict) else {}
        return identity

    def user_for(self, case: Case | None) -> str:
        return self.user or (case.user if case else None) or self.authorized.get("user_id") or DEFAULT_USER

    def team_for(self, case: Case | None) -> str:
        return self.team or (case.team if case else None) or self.authorized.get("team_id") \
            or self.authorized.get("tenant_id") or DEFAULT_TEAM

    def request_context(self, case: Case | None, run: int = 1, test_id: str = "run") -> dict[str, Any]:
        """The `context` of a canonical request for a case (None: for `test_id` — the run, as generators are asked,
        or a test calling through the Python API); each call gets its own chat id (no session leaks)."""
        case_id = case.id if case is not None else test_id
        context: dict[str, Any] = {
            "chat_id": _chat_id(case_id),
            "test_id": case_id,
            "run": run,
            "user_id": self.user_for(case),
            "team_id": self.team_for(case),
            "locale": self.locale,
            "referer": self.referer,
        }
        if self.authorized:
            context["authorized"] = self.authorized
        if self.metadata:
            context["metadata"] = self.metadata
        if self.client:
            context["client"] = self.client
        return context

    @staticmethod
    def again(context: dict[str, Any]) -> dict[str, Any]:
        """`context` (a `request_context`) with a chat id of its own: the same case's next chat."""
        return {**context, "chat_id": _chat_id(context["test_id"])}

    def hook_context(self, case: Case | None = None) -> dict[str, Any]:
        user = self.user_for(case) if case else self.user or DEFAULT_USER
        team = self.team_for(case) if case else self.team or DEFAULT_TEAM
        return {"locale": self.locale, "user_id": user, "team_id": team,
                "authorized": {**self.authorized, "user_id": user, "team_id": team}, "metadata": self.metadata}

    def environment(self) -> dict[str, Any]:
        """The report's `environment` block."""
        return {"user_id": self.user or DEFAULT_USER, "team_id": self.team or DEFAULT_TEAM, "locale": self.locale,
                "referer": self.referer}


def _chat_id(case_id: str) -> str:
    """`test-<case id>-<8 random hex digits>`."""
    return f"test-{case_id}-{_CHAT_IDS.getrandbits(32):08x}"
