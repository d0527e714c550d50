"""Stand-ins for an LLM judge and an LLM simulated user, so the example runs with no API key.

A helper agent is any agent: it gets one user message whose content is a JSON object (docs/configuration.md) and
answers with JSON. These two follow the protocol with a few rules instead of a model; with an API key, swap them for
`builtin: validator` and `builtin: simulator` on a connector (see agenttest.yaml) and nothing else changes.
"""

from __future__ import annotations

import json
import re
from typing import Any


def judge(request: dict[str, Any]) -> dict[str, Any]:
    """A rubric judge: the reply passes when it contains every phrase the criteria put in single quotes."""
    asked = json.loads(request["messages"][-1]["content"])
    output = asked["output"] if isinstance(asked["output"], str) else json.dumps(asked["output"])
    phrases = re.findall(r"'([^']+)'", str(asked.get("criteria", "")))
    missing = [phrase for phrase in phrases if phrase.lower() not in output.lower()]
    verdict = {
        "reasoning": f"looked for {len(phrases)} phrases in the reply",
        "passed": not missing,
        "score": round(1 - len(missing) / len(phrases), 2) if phrases else 1.0,
        "reason": f"the reply does not mention {', '.join(missing)}" if missing else "every phrase is there",
        "suggestions": [f"mention {phrase}" for phrase in missing],
    }
    return {"content": json.dumps(verdict)}


def simulate(request: dict[str, Any]) -> dict[str, Any]:
    """A user who wants an expense submitted and knows the facts in `extra`: it answers what the agent asks,
    one piece at a time, confirms when asked, and says the goal is achieved once the agent submitted it."""
    asked = json.loads(request["messages"][-1]["content"])
    facts = asked.get("extra") or {}
    said = [m["content"] for m in asked["conversation"] if m["role"] == "assistant"]
    last = said[-1].lower() if said else ""
    if "submitted" in last:
        return _turn("", goal_achieved=True)
    if not said:
        return _turn("Hi, I'd like to submit an expense.")
    if "confirm" in last:
        return _turn("Yes, confirm.")
    wants = [facts[key] for key, words in (("category", ("type", "what kind")), ("amount", ("how much",)))
             if key in facts and any(word in last for word in words)]
    if wants:
        return _turn(f"It was a {' for '.join(wants)}.")
    return _turn("Sorry, I don't know.")


def _turn(message: str, goal_achieved: bool = False) -> dict[str, Any]:
    return {"content": json.dumps({"message": message, "goal_achieved": goal_achieved})}
