"""A deterministic judge, simulated user and generator behind the fake OpenAI server.

It reads the JSON a helper receives (SPEC §6.1) — one user message, after the helper's system prompt — and answers
as an LLM would, following rules written into that JSON, so a test states the behaviour it wants in the suite:

- **Judge** (`criteria` in the message): passes when every phrase in single quotes in the criteria appears in the
  output (case-insensitive); `score` is the share found; `reason` names what is missing; one suggestion per
  missing phrase. Markers in the criteria change the reply: `[judge:prose]` wraps the verdict in prose and a
  fence, `[judge:trailing-comma]`, `[judge:yaml]`, `[judge:no-json]`, `[judge:no-verdict]`, `[judge:bad-score]`,
  `[judge:score=0.6]` (and no `passed`), `[judge:votes=PFP]` (the n-th call with these criteria votes P or F),
  `[judge:slow=SECONDS]`, `[judge:status=500]`, `[judge:quote-output]` (the output is quoted, JSON and all, before
  the real verdict), `[judge:copy-example]` (the example verdict at the end of the prompt, copied as a weak model
  does). Votes differ only at a temperature above 0: at 0 every sample votes as the first.
- **Simulator** (`turn_number` in the message): `extra.script` lists the user's turns, the case's `input` (when it
  has one) included; the next one is picked by how many user messages the conversation has. After the script,
  or when the last agent message contains `extra.done_when`, it says the goal is achieved. The goal may hold
  markers: `[sim:plain]` (answer in plain text, no JSON), `[sim:empty]`, `[sim:input-key]` (Yao's DESIGN `input`
  key), `[sim:slow=SECONDS]`, `[sim:status=500]`, `[sim:never-done]` (keeps repeating the last line),
  `[sim:quote-agent]` (the agent's last message is quoted, JSON and all, before the real turn),
  `[sim:copy-example]` (the prompt's example turn, copied).
- **Generator** (`target_agent` in the message): `count` cases `{focus}-{i}` whose input is `generated {i}` and
  whose assertion is `contains "echo"`. `extra.slow=SECONDS` answers late, `extra.invalid=i` makes case i
  invalid, `extra.dynamic=true` makes the last case a conversation, `extra.prose=true` answers in prose around a
  fenced array, `extra.no_json=true` answers without any.

Every reply goes through the real wire format (JSON or SSE) of `openai_server.completion`, so a request's
`max_tokens` cuts it off (`finish_reason: "length"`) as a real server would.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter
from typing import Any

from aiohttp import web

from .openai_server import completion, last_user_text
from .server import Reply, status_reply

_MARKER = re.compile(r"\[(judge|sim):([a-z-]+)(?:=([^\]]*))?\]")


class HelperBrain:
    """The reply function: `FakeOpenAI(default=HelperBrain())`. `calls` counts the requests per role; `prompts`
    keeps the system prompt each role was sent. Requests that are no helper's (an openai agent under test) go to
    `target`, by default an echo of the last user message."""

    def __init__(self, target: Reply | None = None) -> None:
        self.calls: Counter[str] = Counter()
        self.prompts: dict[str, str] = {}
        self.bodies: dict[str, list[Any]] = {"judge": [], "simulator": [], "generator": []}
        self.target = target or completion(lambda body: f"echo: {last_user_text(body)}")
        self._votes: Counter[str] = Counter()

    async def __call__(self, request: web.Request, body: Any) -> web.StreamResponse:
        messages = body.get("messages") or []
        system = next((m.get("content") for m in messages if m.get("role") == "system"), "")
        asked = _payload(messages)
        role = ("simulator" if "turn_number" in asked else "generator" if "target_agent" in asked
                else "judge" if "criteria" in asked or "output" in asked else None)
        if role is None:
            self.calls["target"] += 1
            return await self.target(request, body)
        self.prompts[role] = system
        self.bodies[role].append(body)
        handler = {"simulator": self._simulate, "generator": self._generate, "judge": self._judge}[role]
        return await handler(request, body, asked, system)

    # -- judge ---------------------------------------------------------------------------------------------------

    async def _judge(self, request: web.Request, body: Any, asked: dict[str, Any], system: str) -> web.StreamResponse:
        self.calls["judge"] += 1
        criteria = asked.get("criteria")
        text = criteria if isinstance(criteria, str) else json.dumps(criteria)
        markers = _markers(text, "judge")
        failure = await _delay_or_status(markers)
        if failure is not None:
            return await failure(request, body)
        output = asked.get("output")
        output_text = (output if isinstance(output, str) else json.dumps(output)).lower()
        phrases = re.findall(r"'([^']+)'", _MARKER.sub("", text))
        found = [p for p in phrases if p.lower() in output_text]
        missing = [p for p in phrases if p.lower() not in output_text]
        passed = not missing
        if "votes" in markers:        # at temperature 0 (or none given) a model answers the same every time
            pattern = markers["votes"]
            index = self._votes[text] if (body.get("temperature") or 0) > 0 else 0
            self._votes[text] += 1
            passed = pattern[index % len(pattern)] == "P"
        score = round(len(found) / len(phrases), 2) if phrases else 1.0
        if "score" in markers:
            score = float(markers["score"])
        reason = ("the reply mentions " + ", ".join(repr(p) for p in found) if passed
                  else "the reply does not mention " + ", ".join(repr(p) for p in missing))
        verdict: dict[str, Any] = {"reasoning": f"checked {len(phrases)} phrases", "passed": passed, "score": score,
                                   "reason": reason, "suggestions": [f"mention {p!r}" for p in missing]}
        if "score" in markers:
            del verdict["passed"]
        if "no-verdict" in markers:
            verdict = {"reasoning": "I looked at it", "reason": "fine"}
        if "bad-score" in markers:
            verdict["score"] = 7
        reply = json.dumps(verdict)
        if "prose" in markers:
            reply = f"Let me think step by step.\n\n```json\n{reply}\n```\n\nThat is my verdict."
        elif "trailing-comma" in markers:
            reply = reply[:-1] + ",}"
        elif "yaml" in markers:
            reply = "\n".join(f"{k}: {json.dumps(v)}" for k, v in verdict.items())
        elif "no-json" in markers:
            reply = "The reply looks fine to me."
        elif "quote-output" in markers:
            reply = f"The output was: {output if isinstance(output, str) else json.dumps(output)}\nVerdict: {reply}"
        if "copy-example" in markers:
            reply = copied_example(system)
        return await completion(reply, usage=(100, 20))(request, body)

    # -- simulator -----------------------------------------------------------------------------------------------

    async def _simulate(self, request: web.Request, body: Any, asked: dict[str, Any],
                        system: str) -> web.StreamResponse:
        self.calls["simulator"] += 1
        extra = asked.get("extra") or {}
        markers = _markers(str(asked.get("goal", "")), "sim")
        failure = await _delay_or_status(markers)
        if failure is not None:
            return await failure(request, body)
        conversation = asked.get("conversation") or []
        script = list(extra.get("script") or [])
        said = sum(1 for message in conversation if message.get("role") == "user")
        last_agent = next((str(m.get("content")) for m in reversed(conversation) if m.get("role") == "assistant"), "")
        done_when = extra.get("done_when")
        done = (said >= len(script) and "never-done" not in markers) or bool(done_when and done_when in last_agent)
        message = script[min(said, len(script) - 1)] if script else "hello"
        if "plain" in markers:
            return await completion(message, usage=(60, 10))(request, body)
        if "empty" in markers:
            return await completion('{"message": "", "goal_achieved": false}')(request, body)
        if "copy-example" in markers:
            return await completion(copied_example(system), usage=(60, 10))(request, body)
        key = "input" if "input-key" in markers else "message"
        reply = {"reasoning": f"turn {asked.get('turn_number')}", key: "" if done else message,
                 "goal_achieved": done}
        text = json.dumps(reply)
        if "quote-agent" in markers:
            text = f"The agent said: {last_agent}\nMy next turn: {text}"
        return await completion(text, usage=(60, 10))(request, body)

    # -- generator -----------------------------------------------------------------------------------------------

    async def _generate(self, request: web.Request, body: Any, asked: dict[str, Any],
                        system: str) -> web.StreamResponse:
        self.calls["generator"] += 1
        extra = asked.get("extra") or {}
        if extra.get("slow"):
            await asyncio.sleep(float(extra["slow"]))
        focus = asked.get("focus") or "case"
        cases: list[Any] = [{"id": f"{focus}-{i}", "name": f"generated case {i}", "input": f"generated {i}",
                             "assert": [{"type": "contains", "value": "echo"}], "tags": ["generated"]}
                            for i in range(1, int(asked.get("count", 5)) + 1)]
        if extra.get("invalid"):
            cases[int(extra["invalid"]) - 1] = {"id": f"{focus}-{extra['invalid']}", "input": "x",
                                                "assert": {"type": "contians", "value": "x"}}
        if extra.get("dynamic"):
            cases[-1] = ({"id": f"{focus}-talk", "input": "hello",
                          "simulator": {"options": {"metadata": {"persona": "p", "goal": "g",
                                                                 "script": ["thanks"]}}},
                          "checkpoints": [{"id": "echoes", "assert": {"type": "contains", "value": "echo"}}]})
        reply = json.dumps({"cases": cases})
        if extra.get("prose"):
            reply = f"Here are the cases:\n```json\n{json.dumps(cases)}\n```\nEnjoy."
        if extra.get("no_json"):
            reply = "I could not think of any cases."
        return await completion(reply, usage=(300, 200))(request, body)


def copied_example(system: str) -> str:
    """What a weak model in JSON mode answers when it copies the example reply at the end of its prompt: the
    example's strings verbatim, a bare placeholder (`<true or false>`) filled in with a plausible value."""
    example = system[system.rindex('{"reasoning"'):system.rindex("}") + 1]
    filled = re.sub(r'(?<!")<[^<>"]*>(?!")', lambda m: "true" if "true" in m.group() else "0.5", example)
    return json.dumps(json.loads(filled))


def _payload(messages: list[dict[str, Any]]) -> dict[str, Any]:
    for message in reversed(messages):
        if message.get("role") == "user" and isinstance(message.get("content"), str):
            try:
                value = json.loads(message["content"])
            except ValueError:
                return {}
            return value if isinstance(value, dict) else {}
    return {}


def _markers(text: str, role: str) -> dict[str, str]:
    return {name: value or "" for kind, name, value in _MARKER.findall(text) if kind == role}


async def _delay_or_status(markers: dict[str, str]) -> Reply | None:
    if "slow" in markers:
        await asyncio.sleep(float(markers["slow"]))
    if "status" in markers:
        return status_reply(int(markers["status"]), "the helper is down")
    return None
