"""run_suite(config): load → generate → select → (dry-run | BeforeAll → schedule cases → AfterAll) → report."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import time
from collections.abc import Awaitable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import __version__
from ..actions_log import write_line, write_lines
from ..agents.cache import HelperCache
from ..agents.cassette_origin import cassette_origin
from ..agents.meter import Meter
from ..agents.pool import AgentPool
from ..agents.replay import Cassettes
from ..agents.urls import register_proxy_credentials
from ..analysis import exit_code, failures_under_regression
from ..cases import load_suite
from ..cases.loader import Checks, no_cases_found
from ..cases.model import Case, InvalidCase, Suite
from ..collection import reading
from ..config import RunConfig, undefined_suite_agents
from ..durations import format_duration
from ..errors import EXIT_INTERRUPTED, EXIT_USAGE, HookError, UsageError
from ..files import json_line, write_text
from ..options import shard_of
from ..report.base import Report, Reporter, RunInfo, now
from ..report.ci import artifact_paths
from ..report.merge import read_report
from ..report.reporters import build_reporters
from ..results import CaseResult, Summary
from ..timeouts import within
from ..usage import Usage
from ..user_errors import collecting
from ..workspace import checkout_root, repository_root, write_refusal
from .case_runner import AFTER_HOOK_GRACE, RunServices, base_result, case_dict, result_dict
from .context import RunContext
from .dynamic import DynamicRunner
from .generate import generate
from .hooks import Hooks
from .interactive import conversation_settings
from .plan import build_helpers, checks_for, prepare_generators, select, shard, suite_digest
from .repeats import Repeats, Unit
from .schedule import Scheduler
from .standard import StandardRunner

Entry = Case | InvalidCase


@dataclass
class RunOutcome:
    """How a run ended: its report (None for --dry-run) and the process exit code."""

    report: Report | None
    exit_code: int


def run_suite(config: RunConfig, reporters: list[Reporter] | None = None) -> RunOutcome:
    """Run the configured suites. Raises AgentTestError for mistakes found before any case ran (exit 2)."""
    return asyncio.run(_run(config, reporters))


async def _run(config: RunConfig, reporters: list[Reporter] | None) -> RunOutcome:
    register_proxy_credentials(os.environ)
    options = config.options
    project = config.project
    checks = checks_for(project, options.simulator, options.judge)
    with reading():
        suite = load_suite(config.inputs, cwd=config.cwd, project_dir=project.directory if project.path else None,
                           exclude=[config.output_dir], checks=checks)
    cassettes = _cassettes(config)
    if cassettes is not None and options.record:        # found now, not after every case has run
        for source in dict.fromkeys([*(e.file or e.source or "" for e in suite.entries),
                                     *(generator.spelled for _, generator in suite.generators)]):
            refused = cassettes.write_refusal(source)
            if refused:
                raise UsageError(f"--record {options.record}: {refused}; agenttest will not write there")
    meter = Meter(max_cost=options.max_cost, max_tokens=options.max_tokens)
    pool = AgentPool(project, parallel=options.parallel, retries=options.retries,
                     connector_override=options.connector, meter=meter, cassettes=cassettes,
                     replay=bool(options.replay))
    try:
        return await _run_suite(config, suite, pool, checks, meter, reporters)
    finally:
        await pool.aclose()
        if cassettes is not None and options.record:
            cassettes.save()


def _cassettes(config: RunConfig) -> Cassettes | None:
    """The cassettes to record into or replay from. UsageError when there is nothing to replay."""
    options = config.options
    if options.replay:
        directory = config.cwd / options.replay
        if not directory.is_dir():
            raise UsageError(f"--replay {options.replay}: no such directory (record it first with --record)")
        return Cassettes(directory, options.replay, cwd=config.cwd, root=repository_root(config.cwd))
    if not options.record:
        return None
    directory = config.cwd / options.record
    refuse_leaving(directory, f"--record {options.record}", config.cwd)
    blocking = next((p for p in (directory, *directory.parents) if p.exists()), None)
    if blocking is not None and not blocking.is_dir():    # found now, not after every case has run
        raise UsageError(f"--record {options.record}: {blocking} is a file, not a directory")
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:     # a dangling symlink, no permission, a read-only file system
        why = "a symlink to nothing" if directory.is_symlink() else exc.strerror or str(exc)
        raise UsageError(f"--record {options.record}: cannot create the directory: {why}") from None
    return Cassettes(directory, options.record, cwd=config.cwd, root=repository_root(config.cwd))


async def _run_suite(config: RunConfig, suite: Suite, pool: AgentPool, checks: Checks, meter: Meter,
                     reporters: list[Reporter] | None) -> RunOutcome:
    started, started_at = time.monotonic(), now()      # the run's duration counts the generators' time too
    options = config.options
    context = RunContext.load(config.ctx_file, options.user, options.team)
    # Recording must see every call, and a replay answers every call already: no helper cache for either.
    cached = not (options.no_cache or options.record or options.replay)
    if cached:
        refuse_leaving(config.cache_dir, f"--cache {options.cache or config.cache_dir}", config.cwd)
    cache = HelperCache(config.cache_dir, checkout=checkout_root(config.cwd), shown=options.cache) if cached else None
    if options.max_cost is not None and not options.replay:
        check_prices(pool, [(config.agent_id or "", options.connector),
                            *((s.ref, None) for _, s in suite.generators if s.kind == "agent")])
    baseline = load_baseline(config.cwd / options.baseline, options.baseline) if options.baseline else None
    plan = await _plan(config, suite, pool, checks, context, cache)
    if options.dry_run:
        return RunOutcome(None, dry_run(plan.entries, config, suite.warnings))
    entries = plan.entries
    targets = [pool.target(agent_id) for agent_id in plan.targets or [config.agent_id]]
    target = targets[0]
    build_helpers(pool, entries)
    if options.max_cost is not None and not options.replay:
        check_prices(pool, priced_calls(entries, target.id, options.connector))
    check_writable(config)
    if options.fail_on == "regression" and baseline is None:
        write_line(sys.stderr, "⚠ --fail-on regression needs --baseline: failing on any failure instead")
    reporters = reporters if reporters is not None else build_reporters(config)
    hooks = Hooks(agent_dir(config))
    services = RunServices(pool=pool, target_id=target.id, context=context, hooks=hooks, timeout=config.timeout,
                           connector=options.connector, cache=cache)
    runners = (StandardRunner(services), DynamicRunner(services, conversation_settings(config)))
    connectors = dict.fromkeys(getattr(config.project.agents[t.id], "connector", None) or "" for t in targets)
    info = RunInfo(agent_id=", ".join(t.id for t in targets),
                   connector=options.connector or ", ".join(c for c in connectors if c),
                   inputs=config.inputs, total=len(entries), started_at=started_at, agent_path=config.agent_path,
                   options={**config.reported_options(), "timeout": format_duration(config.timeout)},
                   environment=context.environment(), warnings=list(suite.warnings),
                   replay=cassette_origin(config.cwd / options.replay, options.replay) if options.replay else None)
    cases = [e for e in entries if isinstance(e, Case)]
    global_dir = cases[0].base_dir if cases else config.cwd
    global_agent_dir = cases[0].agent_dir if cases else None
    repeats = Repeats(entries, options.runs, options.min_pass_rate)

    def unit_started(unit: Unit) -> None:
        if repeats.first_start(unit):
            _emit(reporters, "case_started", unit.entry)

    def unit_finished(result: CaseResult, unit: Unit) -> None:
        result.bound()          # the assertions are done with the whole reply
        verdict = repeats.finished(unit, result)
        if verdict is None:
            return
        _emit(reporters, "case_finished", verdict)
        if options.fail_fast and verdict.status not in ("passed", "skipped"):
            scheduler.stop(f"not run: --fail-fast stopped the run after {verdict.id} {verdict.status}")

    scheduler: Scheduler[Unit] = Scheduler(
        repeats.units, run_one=lambda unit: run_unit(unit, runners),
        skipped=lambda unit, reason: skipped_result(unit.entry, reason),
        parallel=1 if options.interactive else options.parallel,      # one person, one conversation at a time
        on_start=unit_started, on_finish=unit_finished)
    # Cases not yet started are skipped, saying so; those in flight finish.
    meter.on_spent = lambda reason: scheduler.stop(f"not run: {reason}")
    if meter.spent:                      # the generators spent it all
        scheduler.stop(f"not run: {meter.spent}")
    _emit(reporters, "run_started", info)

    errors: list[str] = []
    before_all_failed = False
    before_all_data = None
    with _interrupts(scheduler) as interrupt, collecting() as tracebacks:   # of BeforeAll and AfterAll
        if options.before:
            try:
                before_all_data = await interrupt.guard(hooks.call(
                    options.before, global_dir, context.hook_context(), [case_dict(c) for c in cases],
                    agent_dir=global_agent_dir))
            except HookError as exc:
                errors.append(f"BeforeAll: {exc.message}")
                before_all_failed = True
                scheduler.stop("not run: BeforeAll failed")
            except asyncio.CancelledError:
                scheduler.stop("interrupted")
        await scheduler.run()
        results = repeats.results(lambda entry: skipped_result(entry, "not run"))
        for result, position in zip(results, plan.positions or [], strict=False):
            result.position = position      # merge puts the shards' results back in the suite's order
        if options.after:
            after_all = hooks.call(options.after, global_dir, context.hook_context(),
                                   [result_dict(r) for r in results], before_all_data, agent_dir=global_agent_dir)
            try:
                if scheduler.interrupted:   # the user is waiting: AfterAll gets the After hooks' grace
                    await within(after_all, AFTER_HOOK_GRACE)
                else:
                    await interrupt.guard(after_all)
            except HookError as exc:
                errors.append(f"AfterAll: {exc.message}")
            except (asyncio.TimeoutError, asyncio.CancelledError):
                errors.append("AfterAll: interrupted")

    summary = Summary.count(results, round((time.monotonic() - started) * 1000))
    usage = Usage.total([plan.generation, *(result.usage for result in results)])
    report = Report(info=info, results=results, summary=summary, completed_at=now(), usage=usage,
                    interrupted=scheduler.interrupted, error="; ".join(errors) or None, version=__version__,
                    runs=options.runs, shard=options.shard, suite=plan.suite_facts(),
                    baseline=baseline, baseline_path=options.baseline, spending=meter.report(),
                    traceback="\n\n".join(dict.fromkeys(tracebacks)) or None)
    _emit(reporters, "run_finished", report)
    if scheduler.interrupted:
        return RunOutcome(report, EXIT_INTERRUPTED)
    if before_all_failed or _artifacts_failed(reporters):    # CI must not go green without its artifacts
        return RunOutcome(report, EXIT_USAGE)
    regressions = failures_under_regression(report.data.get("comparison"))
    return RunOutcome(report, exit_code(summary.ok and not errors, options.fail_on, regressions,
                                        spent=meter.spent is not None))


def check_prices(pool: AgentPool, agents: list[tuple[str, str | None]]) -> None:
    """With --max-cost, every agent the run calls (on the connector it will use) needs a price: a model without
    one must not count as $0."""
    unpriced = list(dict.fromkeys(f"{agent_id!r}" + (f" on connector {connector!r}" if connector else "")
                                  for agent_id, connector in agents
                                  if agent_id and pool.price(agent_id, connector) is None))
    if unpriced:
        raise UsageError(f"--max-cost: no price for {', '.join(unpriced)}: set price: {{input, output}} (USD per "
                         "million tokens) on the connector it uses, or on the agent ({input: 0, output: 0} for one "
                         "that costs nothing)")


@dataclass
class _Plan:
    """What the run will do: its entries (generated, selected, sharded), how many were selected before
    sharding and their digest (shards of one run share it), and what the generators cost."""

    entries: list[Entry]
    selected: int
    digest: str
    generation: Usage
    positions: list[int] | None = None    # with --shard: each entry's place in the unsharded plan
    targets: list[str] = field(default_factory=list)    # the agents under test, of every shard (merge checks)

    def suite_facts(self) -> dict[str, Any]:
        return {"cases": self.selected, "digest": self.digest}


async def _plan(config: RunConfig, suite: Suite, pool: AgentPool, checks: Checks, context: RunContext,
                cache: HelperCache | None) -> _Plan:
    options = config.options
    generation = Usage()
    entries: list[Entry] = suite.entries
    if suite.generators:    # generators write cases for the target: it must exist before they are asked
        pool.target(config.agent_id)
        prepare_generators(suite, pool, config.cwd)
        with _cancelled_by_signals():
            entries = await generate(suite, pool, config.agent_id or "", cwd=config.cwd, checks=checks,
                                     timeout=config.timeout, usage=generation, cache=cache,
                                     context=context.request_context(None))
    entries = select(entries, options.run)
    if not entries:
        if options.run:
            raise UsageError(f"no test cases match --run {options.run!r}")
        raise UsageError(no_cases_found(config.inputs, suite, config.cwd))
    selected, digest = len(entries), suite_digest(entries)
    undefined = undefined_suite_agents((e.file for e in entries), config.cwd, config.project, config.options.name)
    if undefined:
        raise UsageError("; ".join(undefined))
    targets = config.assign_targets(entries)
    positions = None
    if options.shard:       # an empty shard (fewer cases than shards) is a run of nothing, not a mistake
        positions = shard(entries, *shard_of(options.shard))
        entries = [entries[position] for position in positions]
    return _Plan(entries=entries, selected=selected, digest=digest, generation=generation, positions=positions,
                 targets=targets)


async def run_unit(unit: Unit, runners: tuple[StandardRunner, DynamicRunner]) -> CaseResult:
    entry = unit.entry
    if isinstance(entry, InvalidCase):
        return invalid_result(entry)
    standard, dynamic = runners
    return await (dynamic if entry.conversation is not None else standard).run(entry, unit.run)


def load_baseline(path: Path, shown: str) -> dict[str, Any]:
    """An earlier report.json to compare with: the whole run's (a shard's would make every other case look
    removed). UsageError naming the file when it cannot be one."""
    data = read_report(path, f"--baseline {shown}")
    shard = (data.get("metadata") or {}).get("shard")
    if shard:
        raise UsageError(f"--baseline {shown}: the report of shard {shard} only; compare with the merged report "
                         "(agenttest merge)")
    return data


def priced_calls(entries: list[Entry], target: str, override: str | None) -> list[tuple[str, str | None]]:
    """Every (agent, connector) the cases will call: the target on each connector a case names (the CLI's
    override first), each judge on its assertion's connector, each simulator on its case's."""
    calls: list[tuple[str, str | None]] = [(target, override)]
    for case in (e for e in entries if isinstance(e, Case)):
        calls.append((case.target or target, override or case.options.get("connector")))
        conversation = case.conversation
        if conversation is not None and conversation.simulator is not None and not conversation.scripted:
            calls.append((conversation.simulator, conversation.connector))
        calls += [(spec.helper_agent, getattr(spec.prepared, "connector", None)) for spec in case.assertion_specs()
                  if spec.helper_agent]
    return list(dict.fromkeys(calls))


def dry_run(entries: list[Entry], config: RunConfig, warnings: list[str]) -> int:
    """Print the cases as JSONL (and write them to -o, unless there is none); the warnings a run would print and
    the invalid entries go to stderr, and an invalid entry makes it exit 2."""
    lines = [json_line(e.raw) for e in entries if isinstance(e, Case)]
    # `##[` anywhere in a line is a command to the Actions runner, and stdout may reach the log before the guard
    # (on stderr) does: spelled `\u0023#[` it is the same JSON and no command. A line starts with `{`, never `::`.
    write_lines(sys.stdout, [line.rstrip("\n").replace("##[", "\\u0023#[") for line in lines])
    for warning in warnings:
        write_line(sys.stderr, f"⚠ {warning}")
    invalid = [e for e in entries if isinstance(e, InvalidCase)]
    for entry in invalid:
        write_line(sys.stderr, f"✗ {_place(entry)}: {entry.message}")
    if config.output is not None and lines:
        refuse_leaving(config.output, f"-o {config.options.output}", config.cwd)
        write_text(config.output, "".join(lines))
    elif config.output is not None:      # an empty suite would only fail later, saying less
        write_line(sys.stderr, f"✗ nothing written to {config.options.output}: no valid case")
    return 2 if invalid else 0


def check_writable(config: RunConfig) -> None:
    """Every directory an artifact goes to exists and is writable, before any case runs: a green run must never
    end without its report. UsageError (exit 2) otherwise."""
    refuse_leaving(config.output_dir, f"--output-dir {config.options.output_dir}", config.cwd)
    paths = {**artifact_paths(config), **({"output": config.output} if config.output else {})}
    for name, path in paths.items():
        flag = {"junit": "--junit", "summary": "--summary", "output": "-o"}.get(name, "--output-dir")
        named = config.options.output_dir if flag == "--output-dir" else getattr(config.options, name)
        refuse_leaving(path, f"{flag} {named}", config.cwd,
                       within=config.output_dir if path.parent == config.output_dir else None)
    for directory in dict.fromkeys(path.parent for path in paths.values()):
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"cannot create the output directory {directory}: {exc.strerror or exc}") from exc
        if not os.access(directory, os.W_OK):
            raise UsageError(f"cannot write to the output directory {directory}")


def refuse_leaving(path: Path, shown: str, cwd: Path, within: Path | None = None) -> None:
    """UsageError (exit 2, before any case runs) when `path` must not be written: in the repository as named, out
    of it through a symlink (`workspace.write_refusal`)."""
    why = write_refusal(path, repository_root(cwd), within)
    if why:
        raise UsageError(f"{shown}: {why}; agenttest will not write there")


def agent_dir(config: RunConfig) -> Path | None:
    """Where hooks are looked up after the suite's directory for a case without an agent directory of its own
    (global hooks): the run's `assistants/…` agent directory, else the config's directory."""
    if config.agent_path:
        return config.cwd / config.agent_path
    return config.project.directory if config.project.path else None


def invalid_result(entry: InvalidCase) -> CaseResult:
    """An entry that could not become a case, as an `error` result at its line."""
    return CaseResult(id=entry.id or _place(entry), status="error", input=entry.input, error=entry.message,
                      error_kind=entry.kind, file=entry.file, line=entry.line, source=entry.source,
                      agent_id=entry.target, trace={"traceback": entry.traceback} if entry.traceback else None)


def skipped_result(entry: Entry, reason: str) -> CaseResult:
    """The result of an entry that never ran (fail-fast, interrupt, BeforeAll failure)."""
    result = invalid_result(entry) if isinstance(entry, InvalidCase) else base_result(entry)
    result.status, result.error, result.error_kind, result.ran = "skipped", reason, None, False
    return result


class _Interrupts:
    """SIGINT/SIGTERM: stop scheduling, cancel the cases and the global hook in flight; a second signal exits."""

    def __init__(self, scheduler: Scheduler[Entry]) -> None:
        self.scheduler = scheduler
        self._guarded: asyncio.Task[Any] | None = None

    def on_signal(self, signum: int) -> None:
        if self.scheduler.interrupted:
            os._exit(EXIT_INTERRUPTED)
        print(f"\n⚠ {signal.Signals(signum).name}: stopping, writing partial results…", file=sys.stderr)
        self.scheduler.interrupt()
        if self._guarded is not None:
            self._guarded.cancel()

    async def guard(self, awaitable: Awaitable[Any]) -> Any:
        """Await a global hook so that a signal cancels it (CancelledError reaches the caller)."""
        self._guarded = asyncio.ensure_future(awaitable)
        try:
            return await self._guarded
        finally:
            self._guarded = None


@contextlib.contextmanager
def _interrupts(scheduler: Scheduler[Entry]) -> Iterator[_Interrupts]:
    loop = asyncio.get_running_loop()
    interrupts = _Interrupts(scheduler)
    installed = []
    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):   # Windows, non-main thread
            loop.add_signal_handler(signum, interrupts.on_signal, signum)
            installed.append(signum)
    try:
        yield interrupts
    finally:
        for signum in installed:
            loop.remove_signal_handler(signum)


@contextlib.contextmanager
def _cancelled_by_signals() -> Iterator[None]:
    """While no case has run (generators at work): SIGINT/SIGTERM cancel the work and end the run as interrupted
    (exit 130) — there is nothing to report yet."""
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    signalled: list[int] = []

    def on_signal(signum: int) -> None:
        signalled.append(signum)
        if task is not None:
            task.cancel()

    installed = []
    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):   # Windows, non-main thread
            loop.add_signal_handler(signum, on_signal, signum)
            installed.append(signum)
    try:
        yield
    except asyncio.CancelledError:
        if signalled:
            raise KeyboardInterrupt from None
        raise
    finally:
        for signum in installed:
            loop.remove_signal_handler(signum)


def _emit(reporters: list[Reporter], event: str, payload: object) -> None:
    """Tell every reporter; one that breaks (our bug, or a full disk) is said on stderr and the others still
    write their artifacts."""
    for reporter in reporters:
        try:
            getattr(reporter, event)(payload)
        except Exception as exc:
            if not reporter.problems():       # once per reporter: the same failure would repeat for every case
                reporter.problem(f"{type(reporter).__name__} failed on {event}: {type(exc).__name__}: {exc}")
            else:
                reporter.problems().append(f"{event}: {type(exc).__name__}: {exc}")


def _artifacts_failed(reporters: list[Reporter]) -> bool:
    return any(reporter.problems() for reporter in reporters)


def _place(entry: InvalidCase) -> str:
    if entry.file:
        return f"{entry.file}:{entry.line}"
    return entry.source or f"line {entry.line}"


__all__ = ["RunOutcome", "run_suite"]
