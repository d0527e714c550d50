"""An agent under test whose every call passes or fails by a script (tests of decisions under noise): a `provider:
http` agent on 127.0.0.1 that answers `PASS-TOKEN` or `nope` to each call of a case, by the case's id and the
number of the call (counted per case from 1), and counts the calls — so a test knows exactly how many runs and
rechecks reached it."""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from aiohttp import web

from .server import ScriptedServer

PASS = "PASS-TOKEN"
CONFIG = """
    version: 1
    defaults:
      name: bot
    agents:
      bot:
        provider: http
        url: ${BOT_URL}
    """
USAGE = {"prompt_tokens": 10, "completion_tokens": 5}       # 15 tokens a call: budgets count them

# Whether call `n` (from 1) of case `case_id` passes.
Script = Callable[[str, int], bool]


def case(case_id: str) -> dict[str, Any]:
    """A case that passes when the agent's reply is PASS."""
    return {"id": case_id, "input": f"question {case_id}", "assert": {"type": "contains", "value": PASS}}


def patterns(scripts: Mapping[str, str]) -> Script:
    """A script from a pattern per case: `P` passes and `F` fails its call, in order (`PPPPPFFFFF`); past its end
    a pattern repeats its last letter. A case without one always passes."""
    def script(case_id: str, call: int) -> bool:
        pattern = scripts.get(case_id, "P")
        return pattern[min(call, len(pattern)) - 1] == "P"
    return script


def flaky(seed: int, rate: float) -> Script:
    """Every call fails with chance `rate`, drawn from `seed`, the case and the call's number: the same agent on
    both sides of an A/A comparison, and the same draws whenever the test runs."""
    def script(case_id: str, call: int) -> bool:
        return random.Random(f"{seed}:{case_id}:{call}").random() >= rate
    return script


class FlakyAgent:
    """The reply of the agent's server: PASS or not by `script`; `calls` counts each case's calls and `runs` keeps
    the run number of each (its request's `context.run`); the calls in `hold` never answer. `start` sets a new
    script and counts afresh."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.calls: Counter[str] = Counter()
        self.runs: dict[str, list[int]] = {}
        self.hold: set[tuple[str, int]] = set()     # calls (case, n) that never answer: to interrupt a run there

    def start(self, script: Script) -> None:
        self.script = script
        self.calls.clear()
        self.runs.clear()
        self.hold.clear()

    async def __call__(self, request: web.Request, body: Any) -> web.StreamResponse:
        context = body["context"]
        case_id = str(context["test_id"])
        self.calls[case_id] += 1
        self.runs.setdefault(case_id, []).append(int(context["run"]))
        if (case_id, self.calls[case_id]) in self.hold:
            await asyncio.sleep(3600)
        passed = self.script(case_id, self.calls[case_id])
        return web.json_response({"content": PASS if passed else "nope", "usage": USAGE})


@contextmanager
def flaky_agent(script: Script) -> Iterator[tuple[FlakyAgent, str]]:
    """The agent and its URL (`BOT_URL`), served while inside."""
    agent = FlakyAgent(script)
    with ScriptedServer("/agent", default=agent) as server:
        yield agent, server.endpoint
