"""A/A test of the regression gate (docs/decisions.md): the same flaky agent on both sides of `--baseline`, so every
regression reported is a false one. How many does the old rule (any case that passed then and not now) report, and
how many the new one (Fisher's test with Benjamini–Hochberg over several runs a side, `--recheck` over one)?

    .venv/bin/python bench/noise_aa.py                          # 20 repetitions of 100 cases at 10 %, runs 1, 3, 5
    .venv/bin/python bench/noise_aa.py --repeat 5 --runs 3 --cases 50 --flake 0.2 --json aa.json

The agent is a `provider: http` agent on 127.0.0.1 (aiohttp, in a thread of this process): each call of each case
fails with chance `--flake`, drawn from the repetition's seed, the case and the number of the call, so every
figure can be made again. Each repetition runs the real CLI twice — the baseline, then the same suite against it
with `--fail-on regression` — and reads both report.json files.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

from aiohttp import web

CONFIG = """version: 1
defaults:
  name: bot
agents:
  bot:
    provider: http
    url: {url}
"""


class FlakyAgent:
    """Fails call n of case c when random.Random(f"{seed}:{c}:{n}") draws below `flake`."""

    def __init__(self) -> None:
        self.seed = 0
        self.flake = 0.1
        self.calls: Counter[str] = Counter()

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.json()
        case = str(body["context"]["test_id"])
        self.calls[case] += 1
        failed = random.Random(f"{self.seed}:{case}:{self.calls[case]}").random() < self.flake
        return web.json_response({"content": "nope" if failed else "PASS-TOKEN"})


def serve(agent: FlakyAgent) -> str:
    """Serve the agent from a daemon thread; its URL."""
    ready = threading.Event()
    port: list[int] = []

    def run() -> None:
        loop = asyncio.new_event_loop()
        app = web.Application()
        app.router.add_post("/agent", agent.handle)
        runner = web.AppRunner(app, access_log=None)
        loop.run_until_complete(runner.setup())
        site = web.TCPSite(runner, "127.0.0.1", 0)
        loop.run_until_complete(site.start())
        port.append(runner.addresses[0][1])
        ready.set()
        loop.run_forever()

    threading.Thread(target=run, daemon=True).start()
    ready.wait(10)
    return f"http://127.0.0.1:{port[0]}/agent"


@dataclass
class Repetition:
    runs: int
    seed: int
    flips: int              # cases that passed in the baseline and not now: the old rule's regressions
    regressions: int        # the new rule's
    noise: int
    calls: int              # the agent's calls, rechecks included


def repetition(agent: FlakyAgent, project: Path, runs: int, seed: int, python: str) -> Repetition:
    agent.seed, agent.calls = seed, Counter()
    base = ["-i", "s.jsonl", "--runs", str(runs), "--parallel", "8", "--no-cache"]
    for args in ([*base, "--output-dir", "main"],
                 [*base, "--baseline", "main/report.json", "--fail-on", "regression", "--output-dir", "now"]):
        done = subprocess.run([python, "-m", "agenttest", *args], cwd=project, capture_output=True, text=True,
                              env={**os.environ, "NO_COLOR": "1"}, timeout=600)
        if done.returncode not in (0, 1):
            raise SystemExit(f"agenttest {' '.join(args)} exited {done.returncode}:\n{done.stdout}{done.stderr}")
    before = json.loads((project / "main" / "report.json").read_text())
    now = json.loads((project / "now" / "report.json").read_text())
    was = {result["id"]: result["status"] for result in before["results"]}
    flips = sum(1 for result in now["results"] if was[result["id"]] == "passed" and result["status"] != "passed")
    counts = now["comparison"]["counts"]
    return Repetition(runs, seed, flips, counts["regressions"], counts["noise"], sum(agent.calls.values()))


def table(results: list[Repetition], cases: int, flake: float) -> str:
    lines = [f"A/A: {cases} cases, each call failing with chance {flake:.0%}, the same agent on both sides "
             f"({len({r.seed for r in results})} seeded repetitions per row).", "",
             "| runs a side | old rule: false regressions (mean, max, total) | new rule: false regressions (mean, "
             "max, total) | repetitions with any (old / new) | noise (mean) | agent calls (mean) |",
             "|---|---|---|---|---|---|"]
    for runs in sorted({r.runs for r in results}):
        rows = [r for r in results if r.runs == runs]
        old, new = [r.flips for r in rows], [r.regressions for r in rows]
        lines.append(f"| {runs} | {statistics.fmean(old):.1f}, {max(old)}, {sum(old)} "
                     f"| {statistics.fmean(new):.2f}, {max(new)}, {sum(new)} "
                     f"| {sum(1 for n in old if n)} / {sum(1 for n in new if n)} of {len(rows)} "
                     f"| {statistics.fmean(r.noise for r in rows):.1f} "
                     f"| {statistics.fmean(r.calls for r in rows):.0f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20, help="seeded repetitions per runs setting [20]")
    parser.add_argument("--runs", type=int, action="append", help="runs a side (repeatable) [1, 3, 5]")
    parser.add_argument("--cases", type=int, default=100, help="cases in the suite [100]")
    parser.add_argument("--flake", type=float, default=0.1, help="chance that a call fails [0.1]")
    parser.add_argument("--python", default=sys.executable, help="the interpreter that has agenttest")
    parser.add_argument("--json", type=Path, help="also write every repetition here")
    args = parser.parse_args(argv)
    agent = FlakyAgent()
    agent.flake = args.flake
    url = serve(agent)
    results: list[Repetition] = []
    with tempfile.TemporaryDirectory() as directory:
        project = Path(directory)
        (project / "agenttest.yaml").write_text(CONFIG.format(url=url))
        (project / "s.jsonl").write_text("".join(json.dumps({
            "id": f"case-{n:03d}", "input": f"question {n}",
            "assert": {"type": "contains", "value": "PASS-TOKEN"}}) + "\n" for n in range(args.cases)))
        for runs in args.runs or [1, 3, 5]:
            for seed in range(args.repeat):
                results.append(repetition(agent, project, runs, seed, args.python))
                print(f"runs {runs} seed {seed}: {asdict(results[-1])}", file=sys.stderr)
    print(table(results, args.cases, args.flake))
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in results], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
