"""What `--runs auto` saves (issue #22): the agent calls and the wall time of one suite under `--runs auto` and
`--runs 10`, against an HTTP agent on 127.0.0.1 that answers after a fixed latency and counts its calls.

The suite has CASES cases of which FLAKY pass half their runs — by the run number the request carries, so every
setting sees the same outcomes: `alternate` passes the odd runs, `coin` each (case, run) by a fair coin drawn from
a hash of both — and the others pass every run. Each setting runs the real CLI in a fresh directory:

    .venv/bin/python bench/adaptive_runs.py                      # 400 cases, 10 flaky, 100 ms, --parallel 8
    .venv/bin/python bench/adaptive_runs.py --cases 40 --flaky 2 --latency 0.01 --runs auto --runs 10

Numbers are printed as a Markdown table (and written as JSON with --json); nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

from aiohttp import web


class Agent:
    """`POST /chat`: the canonical request in, `{"content": "pass"|"fail"}` out after `latency` seconds."""

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.calls: Counter[str] = Counter()
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()
        self._ready.wait(10)

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        app = web.Application()
        app.router.add_post("/chat", self._handle)
        runner = web.AppRunner(app, access_log=None)
        self._loop.run_until_complete(runner.setup())
        site = web.TCPSite(runner, "127.0.0.1", 0)
        self._loop.run_until_complete(site.start())
        self.port = runner.addresses[0][1]
        self._ready.set()
        self._loop.run_forever()

    async def _handle(self, request: web.Request) -> web.Response:
        body = await request.json()
        case, run = body["context"]["test_id"], int(body["context"]["run"])
        script = body["messages"][-1]["content"].split()[-1]
        self.calls[case] += 1
        await asyncio.sleep(self.latency)
        return web.json_response({"content": "pass" if passes(script, case, run) else "fail"})


def passes(script: str, case: str, run: int) -> bool:
    if script == "coin":
        return hashlib.sha256(f"{case}/{run}".encode()).digest()[0] < 128
    if script == "alternate":
        return run % 2 == 1
    return True


def suite(cases: int, flaky: int, pattern: str) -> list[dict[str, Any]]:
    step = cases // flaky if flaky else cases + 1
    scripts = [pattern if flaky and i % step == step // 2 and i // step < flaky else "always" for i in range(cases)]
    return [{"id": f"c{i:04}", "input": f"question {i} {script}", "assert": {"type": "contains", "value": "pass"}}
            for i, script in enumerate(scripts)]


def measure(agent: Agent, cases: list[dict[str, Any]], runs: str, args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        (root / "agenttest.yaml").write_text(f"version: 1\ndefaults:\n  name: bench\nagents:\n  bench:\n"
                                             f"    provider: http\n    url: http://127.0.0.1:{agent.port}/chat\n")
        (root / "suite.jsonl").write_text("".join(json.dumps(case) + "\n" for case in cases))
        command = ["-i", "suite.jsonl", "--runs", runs, "--min-pass-rate", str(args.min_pass_rate),
                   "--parallel", str(args.parallel), "--no-cache"]
        agent.calls.clear()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "AGENTTEST_"))}
        started = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "agenttest", *command], cwd=root, env=env,
                              capture_output=True, text=True)
        wall = time.perf_counter() - started
        report = json.loads((root / "agenttest-results" / "report.json").read_text())
    summary = report["summary"]
    flaky_ids = {case["id"] for case in cases if not case["input"].endswith(" always")}
    return {"runs": runs, "command": "agenttest " + " ".join(command), "exit_code": proc.returncode,
            "calls": sum(agent.calls.values()), "calls_per_case": round(sum(agent.calls.values()) / len(cases), 3),
            "flaky_calls": sorted(agent.calls[case] for case in flaky_ids), "wall_s": round(wall, 2),
            "passed": summary["passed"], "failed": summary["failed"], "stopped": summary.get("stopped"),
            "overall_pass_rate": summary.get("overall_pass_rate"),
            "overall_pass_rate_interval": summary.get("overall_pass_rate_interval")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=400)
    parser.add_argument("--flaky", type=int, default=10)
    parser.add_argument("--pattern", choices=("alternate", "coin"), action="append")
    parser.add_argument("--latency", type=float, default=0.1, help="seconds the agent takes per call [0.1]")
    parser.add_argument("--parallel", type=int, default=8)
    parser.add_argument("--min-pass-rate", type=float, default=50)
    parser.add_argument("--runs", action="append", help="settings to compare [auto, 10]")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    agent = Agent(args.latency)
    rows = []
    for pattern in args.pattern or ["alternate", "coin"]:
        cases = suite(args.cases, args.flaky, pattern)
        for runs in args.runs or ["auto", "10"]:
            rows.append({"pattern": pattern, **measure(agent, cases, runs, args)})
    print(f"{args.cases} cases, {args.flaky} flaky (50 %), agent latency {args.latency * 1000:.0f} ms, "
          f"--parallel {args.parallel}, --min-pass-rate {args.min_pass_rate:g}\n")
    print("| flaky cases | --runs | calls | calls a case | runs of the flaky cases | wall | stopped |")
    print("|---|---|---:|---:|---|---:|---|")
    for row in rows:
        print(f"| {row['pattern']} | {row['runs']} | {row['calls']:,} | {row['calls_per_case']} "
              f"| {' '.join(map(str, row['flaky_calls']))} | {row['wall_s']} s | {row['stopped'] or ''} |")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
