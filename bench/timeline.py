"""Where one run's time and memory go: the CLI run in this process with timestamps (ms since the interpreter
started) and RSS (MB) at each step, and the garbage collections it made.

    cd PROJECT && BENCH_API_KEY=… python /path/to/bench/timeline.py -i suite.jsonl --parallel 64

Steps: `cli imported`, `engine imported` (the run's modules and the openai provider), `run started` (suite loaded,
agents and reporters built), `first call` and `last response` of the openai agent, `artifacts written`, and `main
returned`; the interpreter's exit comes after (time the whole command to see it). It wraps a few internal
functions (the run events of `report.base.Reporters`, `OpenAIAgent.call`), so it is a profiling aid for this
checkout, not a benchmark: numbers come from `cli.py`.
"""

from __future__ import annotations

import atexit
import gc
import sys
import time
from pathlib import Path
from typing import Any

_START = time.monotonic() - time.process_time()     # ~ when the interpreter started (its CPU so far is start-up)
marks: dict[str, tuple[int, int]] = {}
collections: dict[int, list[float]] = {0: [0, 0.0], 1: [0, 0.0], 2: [0, 0.0]}
_collecting = [0.0]


def _rss_mb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS"):
            return int(line.split()[1]) // 1024
    return 0


def mark(name: str, again: bool = False) -> None:
    if again or name not in marks:
        marks[name] = (round((time.monotonic() - _START) * 1000), _rss_mb())


def _on_gc(phase: str, info: dict[str, Any]) -> None:
    if phase == "start":
        _collecting[0] = time.perf_counter()
    else:
        counted = collections[info["generation"]]
        counted[0] += 1
        counted[1] += time.perf_counter() - _collecting[0]


def _report() -> None:
    for name, (ms, rss) in marks.items():
        print(f"{name:>18} {ms:>7} ms {rss:>5} MB", file=sys.stderr)
    print("  collections: " + ", ".join(f"gen {gen}: {int(n)} in {seconds * 1000:.0f} ms"
                                        for gen, (n, seconds) in collections.items()), file=sys.stderr)


def main() -> None:
    gc.callbacks.append(_on_gc)
    from agenttest.cli import main as cli

    mark("cli imported")
    import agenttest.agents.openai as openai
    import agenttest.engine.run
    import agenttest.launch  # noqa: F401
    from agenttest.report.base import Reporters

    mark("engine imported")
    run_started, run_finished, call = Reporters.run_started, Reporters.run_finished, openai.OpenAIAgent.call

    def _run_started(self: Reporters, info: Any) -> None:
        mark("run started")
        run_started(self, info)

    def _run_finished(self: Reporters, report: Any) -> None:
        run_finished(self, report)
        mark("artifacts written")

    async def _call(self: Any, request: Any) -> Any:
        mark("first call")
        response = await call(self, request)
        mark("last response", again=True)
        return response

    Reporters.run_started, Reporters.run_finished, openai.OpenAIAgent.call = _run_started, _run_finished, _call
    atexit.register(_report)
    sys.argv = ["agenttest", *sys.argv[1:]]
    try:
        cli()
    finally:
        mark("main returned")


if __name__ == "__main__":
    main()
