"""The physical limit on this machine: a bare aiohttp client sending the benchmark's N requests, P at a time, to
the same agent server — no suite, no assertions, no artifacts, no start-up beyond `import aiohttp`.

    python bench/floor.py --base-url http://127.0.0.1:PORT/v1 --cases 2000 --parallel 64
    python bench/floor.py --base-url http://127.0.0.1:PORT/v1 --cases 1000 --parallel 64 --turns 5

With `--turns T` each of the N is a conversation of T turns, held as agenttest's scripted conversations hold them
(bench/suites.py `conversation_case`): user `dI turn 1`, the reply, `dI turn 2`, … each request carrying the
messages so far, and P conversations at a time.

Prints one JSON line: the wall of the request loop alone (`loop_s`) and the time from the interpreter's start to
the first request (`startup_s`, imports included); `bench/cli.py` runs it as a child like the tools it measures,
so its wall, CPU and RSS are measured the same way.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time

STARTED = time.monotonic()

import aiohttp  # noqa: E402  (what the client costs to import is part of the floor)


async def _run(base_url: str, cases: int, parallel: int, turns: int) -> dict[str, float]:
    url = f"{base_url}/chat/completions"
    pending = iter(range(cases))
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=parallel)) as session:
        async def ask(messages: list[dict[str, str]]) -> str:
            body = {"model": "bench-model", "messages": messages}
            async with session.post(url, json=body, headers={"Authorization": "Bearer bench"}) as response:
                reply = await response.json()
            content: str = reply["choices"][0]["message"]["content"]
            if content != "ok " + messages[-1]["content"]:
                raise SystemExit(f"unexpected reply to {messages[-1]}: {reply}")
            return content

        async def slot() -> None:
            for i in pending:
                if turns == 1:
                    await ask([{"role": "user", "content": f"case {i}"}])
                    continue
                messages: list[dict[str, str]] = []
                for turn in range(1, turns + 1):
                    messages.append({"role": "user", "content": f"d{i} turn {turn}"})
                    messages.append({"role": "assistant", "content": await ask(messages)})

        first = time.monotonic()
        await asyncio.gather(*(slot() for _ in range(parallel)))
        return {"startup_s": first - STARTED, "loop_s": time.monotonic() - first}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--cases", type=int, required=True)
    parser.add_argument("--parallel", type=int, required=True)
    parser.add_argument("--turns", type=int, default=1, help="turns of each conversation (1: single requests)")
    args = parser.parse_args()
    print(json.dumps(asyncio.run(_run(args.base_url, args.cases, args.parallel, args.turns))))


if __name__ == "__main__":
    main()
