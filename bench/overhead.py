"""How close the runner gets to the ideal: wall time and CPU per case, against an agent of known latency.

    python bench/overhead.py                 # 2,000 cases, 50 ms agent, parallel 64
    python bench/overhead.py --cases 500 --latency 0.02 --parallel 16

Two agents with the same fixed latency: `python` (in-process, async) and `http` (a local aiohttp server on
127.0.0.1, reached through the real provider and its connection pool). The ideal wall time is
ceil(cases / parallel) × latency; the ratio ideal / measured is the efficiency (1.0 = no overhead). CPU per case
is the runner process's user+system time divided by the cases. Ratios in one run are comparable; absolute numbers
depend on the machine.
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from agenttest.config import build_run_config
from agenttest.engine import run_suite

AGENT_MODULE = """
import asyncio
LATENCY = {latency}

async def respond(request):
    await asyncio.sleep(LATENCY)
    return {{"content": "ok " + request["context"]["test_id"]}}
"""


SERVER = """
import asyncio, sys
from aiohttp import web

async def handle(request):
    body = await request.json()
    await asyncio.sleep(float(sys.argv[1]))
    return web.json_response({"content": "ok " + body["context"]["test_id"]})

app = web.Application()
app.router.add_post("/chat", handle)
web.run_app(app, host="127.0.0.1", port=int(sys.argv[2]), access_log=None, print=None, backlog=1024)
"""


def _serve(latency: float) -> tuple[int, subprocess.Popen[bytes]]:
    """An HTTP agent on 127.0.0.1 with a fixed latency, in its own process (so it does not share our CPU)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-c", SERVER, str(latency), str(port)])
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with socket.socket() as client:
            if client.connect_ex(("127.0.0.1", port)) == 0:
                return port, server
        time.sleep(0.05)
    server.kill()
    raise RuntimeError("the benchmark server did not start")


def measure(provider: str, cases: int, latency: float, parallel: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        server = None
        if provider == "http":
            port, server = _serve(latency)
            agent = f"provider: http\n    url: http://127.0.0.1:{port}/chat"
        else:
            (root / "bench_agent.py").write_text(AGENT_MODULE.format(latency=latency))
            agent = "provider: python\n    callable: bench_agent:respond"
        (root / "agenttest.yaml").write_text(f"agents:\n  bench:\n    {agent}\n")
        lines = [json.dumps({"id": f"c{i}", "input": f"case {i}", "assert": {"type": "contains", "value": "ok"}})
                 for i in range(cases)]
        (root / "suite.jsonl").write_text("\n".join(lines) + "\n")
        config = build_run_config({"input": ["suite.jsonl"], "name": "bench", "parallel": parallel,
                                   "output_dir": "out"}, root)
        before = resource.getrusage(resource.RUSAGE_SELF)
        started = time.perf_counter()
        outcome = run_suite(config)      # no reporter: the engine alone
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_SELF)
        if server is not None:
            server.terminate()
            server.wait(10)
    assert outcome.report is not None and outcome.report.summary.passed == cases, "benchmark cases must pass"
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    ideal = math.ceil(cases / parallel) * latency
    return {"wall_s": wall, "ideal_s": ideal, "efficiency": ideal / wall, "cpu_ms_per_case": cpu * 1000 / cases}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--parallel", type=int, default=64)
    args = parser.parse_args(argv)
    print(f"{args.cases} cases, agent latency {args.latency * 1000:.0f} ms, parallel {args.parallel}")
    print(f"{'provider':<10}{'wall s':>9}{'ideal s':>9}{'efficiency':>12}{'CPU ms/case':>13}")
    for provider in ("python", "http"):
        row = measure(provider, args.cases, args.latency, args.parallel)
        print(f"{provider:<10}{row['wall_s']:>9.2f}{row['ideal_s']:>9.2f}{row['efficiency']:>12.2f}"
              f"{row['cpu_ms_per_case']:>13.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
