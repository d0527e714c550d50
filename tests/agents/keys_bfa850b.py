"""How agenttest at bfa850b — before a replay looked calls up by cheaper bytes (issue #27) — keyed a call and found
its recording, written out apart from the code under test: the keys of every committed cassette were worked out
this way, and a replay must find exactly the recording this finds."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from agenttest import secrets
from agenttest.agents.base import AgentRequest


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _sorted(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_sorted(item) for item in value]
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            parsed = json.loads(value)
        except (ValueError, RecursionError):
            return value
        if isinstance(parsed, (dict, list)):
            return json.dumps(_sorted(parsed), sort_keys=True, ensure_ascii=False)
    return value


def keyed(shown: dict[str, Any]) -> str:
    """The key of a request as a cassette shows it (JSON text inside it sorted before hashing)."""
    text = json.dumps(shown, sort_keys=True, ensure_ascii=False, default=str)
    if '"{' in text or '"[' in text:
        text = json.dumps(_sorted(shown), sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


def call_key(request: AgentRequest) -> str:
    """The key of a call: the request less its chat id, secrets masked."""
    context = {key: value for key, value in request.context.items() if key != "chat_id"}
    return keyed(secrets.redact({"agent": request.agent, "role": request.role, "messages": request.messages,
                                 "options": request.options, "context": context}))


def found(cassette: dict[str, Any], request: AgentRequest) -> int | None:
    """The index in its case's recordings of the first one with the call's key (None: there is none), in a
    cassette file as read."""
    key = call_key(request)
    assert request.case is not None
    recorded = cassette["cases"].get(request.case[1], [])
    return next((index for index, item in enumerate(recorded) if keyed(item["request"]) == key), None)
