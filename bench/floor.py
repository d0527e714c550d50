"""The physical limit on this machine: a bare aiohttp client sending the benchmark's N requests, P at a time, to
the same agent server — no suite, no assertions, no artifacts, no start-up beyond `import aiohttp`.

    python bench/floor.py --base-url http://127.0.0.1:PORT/v1 --cases 2000 --parallel 64

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


async def _run(base_url: str, cases: int, parallel: int) -> dict[str, float]:
    url = f"{base_url}/chat/completions"
    pending = iter(range(cases))
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=parallel)) as session:
        async def slot() -> None:
            for i in pending:
                body = {"model": "bench-model", "messages": [{"role": "user", "content": f"case {i}"}]}
                async with session.post(url, json=body, headers={"Authorization": "Bearer bench"}) as response:
                    reply = await response.json()
                if reply["choices"][0]["message"]["content"] != f"ok case {i}":
                    raise SystemExit(f"unexpected reply to case {i}: {reply}")

        first = time.monotonic()
        await asyncio.gather(*(slot() for _ in range(parallel)))
        return {"startup_s": first - STARTED, "loop_s": time.monotonic() - first}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--cases", type=int, required=True)
    parser.add_argument("--parallel", type=int, required=True)
    args = parser.parse_args()
    print(json.dumps(asyncio.run(_run(args.base_url, args.cases, args.parallel))))


if __name__ == "__main__":
    main()
