"""run_suite(config): a run as named stages, each handing its result to the next (nox's `workflow.execute`):
load → prepare → plan → (dry run) → preflight → baseline → start → hooks and cases → finish."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import Coroutine
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import __version__, held_loop
from ..agent_paths import undefined_suite_agents
from ..agents.base import Agent
from ..agents.cache import HelperCache
from ..agents.cassette_origin import cassette_origin
from ..agents.meter import Meter
from ..agents.pool import AgentPool
from ..agents.urls import register_proxy_credentials
from ..allocation import with_frame_room
from ..analysis import exit_code, failures_under_regression, without_a_baseline
from ..cases import load_suite
from ..cases.loader import Checks, no_cases_found
from ..cases.model import Case, InvalidCase, Suite
from ..config import RunConfig
from ..durations import format_duration
from ..errors import EXIT_INTERRUPTED, EXIT_USAGE, HookError, UsageError
from ..files import json_line, write_text
from ..gc_policy import reading
from ..github.log import write_line, write_lines
from ..options import shard_of
from ..report.base import Report, Reporters, Reporting, RunInfo, now
from ..result_log import ResultLog
from ..results import CaseResult, Summary
from ..timeouts import within
from ..usage import Usage
from ..user_errors import collecting
from ..workspace import checkout_root
from .case_runner import AFTER_HOOK_GRACE, RunServices, base_result, case_dict, result_dict
from .context import RequestIdentity
from .hooks import Hooks
from .interactive import ConversationSettings, conversation_settings
from .plan import build_helpers, checks_for, prepare_generators, select, shard, suite_digest
from .preflight import (
    budgeted,
    check_prices,
    check_writable,
    open_cassettes,
    priced_calls,
    refuse_leaving,
    suite_sources,
)
from .repeats import Repeats, Unit
from .schedule import Scheduler
from .signals import Interrupts, cancelled_by_signals
from .standard import StandardRunner

if TYPE_CHECKING:
    from ..agents.replay import Cassettes
    from .dynamic import DynamicRunner

Entry = Case | InvalidCase
Runners = tuple[StandardRunner, "DynamicRunner | None"]     # the conversations' runner: only when there are some


@dataclass
class RunOutcome:
    """How a run ended: its report (None for --dry-run) and the process exit code."""

    report: Report | None
    exit_code: int


def run_suite(config: RunConfig, reporting: Reporting | None = None) -> RunOutcome:
    """Run the configured suites, telling `reporting`'s reporters (none without it) and comparing with its
    baseline. Raises AgentTestError for mistakes found before any case ran (exit 2). The event loop runs with room
    on CPython's frame stack (`allocation.with_frame_room`)."""
    return with_frame_room(asyncio.run, _run(config, reporting or Reporting()))


async def _run(config: RunConfig, reporting: Reporting) -> RunOutcome:
    """The stages in order; however the run ends, the agents' connections are closed and a recording is saved."""
    register_proxy_credentials(os.environ)
    options = config.options
    suite, checks = _load(config)
    cassettes = open_cassettes(config, suite_sources(suite))
    meter = Meter(max_cost=options.max_cost, max_tokens=options.max_tokens)
    pool = AgentPool(config.project, parallel=options.parallel, retries=options.retries,
                     connector_override=options.connector, meter=meter, cassettes=cassettes,
                     replay=bool(options.replay))
    try:
        prepared = _prepare(config, suite, pool)
        plan = await _plan(config, suite, pool, checks, prepared)
        if options.dry_run:
            return RunOutcome(None, dry_run(plan.entries, config, suite.warnings))
        targets = _preflight(config, pool, plan, reporting)
        await _baseline(config, reporting)
        run = _start(config, suite, pool, meter, plan, prepared, targets, reporting)
        del suite       # the plan holds the cases from here: a lean run lets each go once it is done (ResultLog)
        run.cassettes = cassettes
        await _hooks_and_cases(run)
        return _finish(run)
    finally:
        await pool.aclose()
        if cassettes is not None and options.record and not cassettes.saved:   # a run that did not finish
            cassettes.save()


def _load(config: RunConfig) -> tuple[Suite, Checks]:
    """Stage load: the suites, read against the config's agents and default helpers. Entries of the plain shapes are
    read without their models, as `validate` reads them (cases/plain.py: the same values)."""
    options = config.options
    # Each case's definition digest is worked out as it is read when every case read runs (a run that selects
    # with --run or --shard would work it out for cases it leaves out: ~4 µs each; they get it when they run).
    checks = replace(checks_for(config.project, options.simulator, options.judge), plain=True,
                     digests=not (options.run or options.shard))
    with reading():
        suite = load_suite(config.inputs, cwd=config.cwd,
                           project_dir=config.project.directory if config.project.path else None,
                           exclude=[config.output_dir], checks=checks)
    return suite, checks


@dataclass
class _Prepared:
    """What the stages after `prepare` share: who is talking, the helper cache, and when the run started (its
    duration counts the generators' time too)."""

    identity: RequestIdentity
    cache: HelperCache | None
    started: float = field(default_factory=time.monotonic)
    started_at: str = field(default_factory=now)


def _prepare(config: RunConfig, suite: Suite, pool: AgentPool) -> _Prepared:
    """Stage prepare: the identity (`--ctx`), the helper cache, and — generators spend before there is a plan to
    price — the prices of the agent generators and of the target they write for."""
    options = config.options
    prepared = _Prepared(identity=RequestIdentity.load(config.ctx_file, options.user, options.team), cache=None)
    # Recording must see every call, and a replay answers every call already: no helper cache for either.
    if not (options.no_cache or options.record or options.replay):
        refuse_leaving(config.cache_dir, f"--cache {options.cache or config.cache_dir}", config.cwd)
        prepared.cache = HelperCache(config.cache_dir, checkout=checkout_root(config.cwd), shown=options.cache)
    generators = [(source.ref, None) for _, source in suite.generators if source.kind == "agent"]
    if generators and budgeted(config):
        check_prices(pool, [(config.agent_id or "", options.connector), *generators])
    return prepared


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


async def _plan(config: RunConfig, suite: Suite, pool: AgentPool, checks: Checks, prepared: _Prepared) -> _Plan:
    """Stage plan: the generators' cases in their places, the `--run` selection, each case's target, the shard."""
    options = config.options
    generation = Usage()
    entries: list[Entry] = suite.entries
    if suite.generators:    # generators write cases for the target: it must exist before they are asked
        pool.target(config.agent_id)
        prepare_generators(suite, pool, config.cwd)
        from .generate import generate  # here: a suite without generators needs none of their code

        with cancelled_by_signals():
            entries = await generate(suite, pool, config.agent_id or "", cwd=config.cwd, checks=checks,
                                     timeout=config.timeout, usage=generation, cache=prepared.cache,
                                     context=prepared.identity.request_context(None))
    entries = select(entries, options.run)
    if options.run and all(entry.id is None for entry in entries):     # the lines that are no case match nothing
        raise UsageError(f"no test cases match --run {options.run!r}")
    if not entries:
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


def _preflight(config: RunConfig, pool: AgentPool, plan: _Plan, reporting: Reporting) -> list[Agent]:
    """Stage preflight, before anything is spent on a case or written: the agents under test and the helpers built,
    a price for every call under `--max-cost`, the artifacts' paths writable. Returns the agents under test."""
    options = config.options
    targets = [pool.target(agent_id) for agent_id in plan.targets or [config.agent_id]]
    build_helpers(pool, plan.entries)
    if budgeted(config):
        check_prices(pool, priced_calls(plan.entries, targets[0].id, options.connector))
    check_writable(config, reporting.files)
    return targets


async def _baseline(config: RunConfig, reporting: Reporting) -> None:
    """Stage baseline, the last before any case runs: a baseline to fetch (`--baseline auto`) is fetched, so that
    every artifact holds the comparison."""
    if reporting.find_baseline is not None:
        with cancelled_by_signals():
            await reporting.find_baseline(reporting)
    if config.options.fail_on == "regression" and reporting.baseline is None:
        write_line(sys.stderr, without_a_baseline(fetched=reporting.find_baseline is not None))


@dataclass
class _Run:
    """A run under way: what the hooks and the cases need, and what the finish reports. `errors` are the global
    hooks' failures; `results` come in once the cases are done."""

    config: RunConfig
    plan: _Plan
    prepared: _Prepared
    info: RunInfo
    hooks: Hooks
    repeats: Repeats
    runners: Runners
    scheduler: Scheduler[Unit]
    meter: Meter
    reporting: Reporting
    errors: list[str] = field(default_factory=list)
    before_all_failed: bool = False
    results: ResultLog = field(default_factory=lambda: ResultLog(0, lean=False))
    tracebacks: list[str] = field(default_factory=list)     # of BeforeAll and AfterAll
    cassettes: Cassettes | None = None      # --record/--replay

    @property
    def cases(self) -> list[Case]:
        return [e for e in self.plan.entries if isinstance(e, Case)]

    def global_hook(self, ref: str, *args: Any) -> Coroutine[Any, Any, Any]:
        """A call of BeforeAll or AfterAll, looked up where the first case's hooks are (the working directory
        without a case)."""
        cases = self.cases
        return self.hooks.call(ref, cases[0].base_dir if cases else self.config.cwd,
                               self.prepared.identity.hook_context(), *args,
                               agent_dir=cases[0].agent_dir if cases else None)


def _start(config: RunConfig, suite: Suite, pool: AgentPool, meter: Meter, plan: _Plan, prepared: _Prepared,
           targets: list[Agent], reporting: Reporting) -> _Run:
    """Stage start: the case runners on the run's services, the scheduler of every case's runs, and the
    reporters told that the run started."""
    options = config.options
    hooks = Hooks(agent_dir(config))
    services = RunServices(pool=pool, target_id=targets[0].id, context=prepared.identity, hooks=hooks,
                           timeout=config.timeout, connector=options.connector, cache=prepared.cache)
    # Nothing after the cases reads a passed result's objects, nor a finished case, unless AfterAll is told every
    # result or rechecks run the cases again: the run keeps them as JSON, and lets the cases go (ResultLog).
    rechecking = reporting.baseline is not None and bool(options.recheck) and not options.interactive
    repeats = Repeats(plan.entries, options.runs, options.min_pass_rate, lean=not options.after and not rechecking,
                      replaying=bool(options.replay))
    runners = (StandardRunner(services), _dynamic_runner(services, conversation_settings(config), plan.entries))
    scheduler = _scheduler(repeats, runners, reporting.reporters, config)
    # Cases not yet started are skipped, saying so; those in flight finish.
    meter.on_spent = lambda reason: scheduler.stop(f"not run: {reason}")
    if meter.spent:                      # the generators spent it all
        scheduler.stop(f"not run: {meter.spent}")
    run = _Run(config=config, plan=plan, prepared=prepared, info=_run_info(config, suite, plan, prepared, targets),
               hooks=hooks, repeats=repeats, runners=runners, scheduler=scheduler, meter=meter, reporting=reporting)
    reporting.reporters.run_started(run.info)
    return run


def _run_info(config: RunConfig, suite: Suite, plan: _Plan, prepared: _Prepared, targets: list[Agent]) -> RunInfo:
    options = config.options
    connectors = dict.fromkeys(getattr(config.project.agents[t.id], "connector", None) or "" for t in targets)
    return RunInfo(agent_id=", ".join(t.id for t in targets),
                   connector=options.connector or ", ".join(c for c in connectors if c),
                   inputs=config.inputs, total=len(plan.entries), started_at=prepared.started_at,
                   agent_path=config.agent_path,
                   options={**config.reported_options(), "timeout": format_duration(config.timeout),
                            "parallel": _parallel(config)},
                   environment=prepared.identity.environment(), warnings=list(suite.warnings),
                   replay=cassette_origin(config.cwd / options.replay, options.replay) if options.replay else None)


def _dynamic_runner(services: RunServices, settings: ConversationSettings,
                    entries: list[Entry]) -> DynamicRunner | None:
    """The runner of the conversations, if the run has any (its module is loaded only then)."""
    if not any(isinstance(entry, Case) and entry.conversation is not None for entry in entries):
        return None
    from .dynamic import DynamicRunner

    return DynamicRunner(services, settings)


def _scheduler(repeats: Repeats, runners: Runners, reporters: Reporters,
               config: RunConfig) -> Scheduler[Unit]:
    """The scheduler of every case's runs: a case's first run to start tells the reporters it started, its
    verdict (once its last run is in) that it finished; the runs `--runs auto` asks for run next; with
    --fail-fast the first that did not pass stops the rest."""

    def unit_started(unit: Unit) -> None:
        if repeats.first_start(unit):
            scheduler.later(reporters.case_started, unit.entry)

    def unit_finished(result: CaseResult, unit: Unit) -> None:
        result.bound()          # the assertions are done with the whole reply
        verdict = repeats.finished(unit, result)
        if verdict is None:
            scheduler.add(repeats.added())
            return
        scheduler.later(reported, unit, verdict)
        if config.options.fail_fast and verdict.status not in ("passed", "skipped"):
            scheduler.stop(f"not run: --fail-fast stopped the run after {verdict.id} {verdict.status}")

    def reported(unit: Unit, verdict: CaseResult) -> None:
        reporters.case_finished(verdict)
        repeats.keep(unit, verdict)

    scheduler: Scheduler[Unit] = Scheduler(
        repeats.units(), run_one=lambda unit: run_unit(unit, runners),
        skipped=lambda unit, reason: skipped_result(unit.entry, reason),
        parallel=_parallel(config),
        on_start=unit_started, on_finish=unit_finished, keep=False, flush=reporters.flush)
    return scheduler


def _parallel(config: RunConfig) -> int:
    """How many cases run at once: `--parallel`, but one under --interactive (one person, one conversation at a
    time), which the console's header and the report's options say too."""
    return 1 if config.options.interactive else config.options.parallel


async def _hooks_and_cases(run: _Run) -> None:
    """Stage hooks and cases: BeforeAll, every case's runs, AfterAll — a signal stops the scheduling and cancels
    what is in flight."""
    with Interrupts(run.scheduler).handled() as interrupts, held_loop.watched(), collecting() as tracebacks:
        before_all_data = await _before_all(run, interrupts)
        await run.scheduler.run()
        run.results = run.repeats.results(lambda entry: skipped_result(entry, "not run"))
        run.results.place(run.plan.positions)
        await _rechecks(run, interrupts)
        await _after_all(run, interrupts, before_all_data)
    run.tracebacks = tracebacks


async def _rechecks(run: _Run, interrupts: Interrupts) -> None:
    """Stage rechecks (`--recheck N`), before AfterAll tears down what the cases need: the cases that passed in the
    baseline and do not now, when either side ran them once, run again until one passes (engine.rechecks). Not
    after an interrupt, nor when a person types the conversations (`--interactive`)."""
    options, baseline = run.config.options, run.reporting.baseline
    if baseline is None or not options.recheck or options.interactive or run.scheduler.interrupted:
        return
    from .rechecks import Rechecker, to_recheck  # here: only a run compared with a baseline rechecks

    rechecks = to_recheck(run.plan.entries, run.results.whole(), baseline)
    if not rechecks:
        return
    rechecker = Rechecker(rechecks, lambda case, number: run_unit(Unit(-1, case, number), run.runners),
                          options.recheck, parallel=options.parallel, meter=run.meter,
                          reporters=run.reporting.reporters)
    interrupts.watch(rechecker.scheduler)
    await rechecker.run()


async def _before_all(run: _Run, interrupts: Interrupts) -> Any:
    """BeforeAll's data (for AfterAll); when it fails no case runs, and the run says why."""
    before = run.config.options.before
    if not before:
        return None
    try:
        return await interrupts.guard(run.global_hook(before, [case_dict(case) for case in run.cases]))
    except HookError as exc:
        run.errors.append(f"BeforeAll: {exc.message}")
        run.before_all_failed = True
        run.scheduler.stop("not run: BeforeAll failed")
    except asyncio.CancelledError:
        run.scheduler.stop("interrupted")
    return None


async def _after_all(run: _Run, interrupts: Interrupts, before_all_data: Any) -> None:
    """AfterAll, told every result; after an interrupt it gets the After hooks' grace, the user is waiting."""
    after = run.config.options.after
    if not after:
        return
    after_all = run.global_hook(after, [result_dict(result) for result in run.results.whole()], before_all_data)
    try:
        if run.scheduler.interrupted:
            await within(after_all, AFTER_HOOK_GRACE)
        else:
            await interrupts.guard(after_all)
    except HookError as exc:
        run.errors.append(f"AfterAll: {exc.message}")
    except (asyncio.TimeoutError, asyncio.CancelledError):
        run.errors.append("AfterAll: interrupted")


def _finish(run: _Run) -> RunOutcome:
    """Stage finish: the report, told to the reporters, and the exit code."""
    options, results = run.config.options, run.results
    summary = Summary.from_statuses(results.statuses(), round((time.monotonic() - run.prepared.started) * 1000))
    usage = results.usage(run.plan.generation)
    report = Report(info=run.info, results=results, summary=summary, completed_at=now(), usage=usage,
                    interrupted=run.scheduler.interrupted, error="; ".join(run.errors) or None,
                    version=__version__, runs=options.runs, shard=options.shard, suite=run.plan.suite_facts(),
                    baseline=run.reporting.baseline, baseline_path=run.reporting.baseline_path or options.baseline,
                    baseline_source=run.reporting.baseline_source, spending=run.meter.report(),
                    traceback="\n\n".join(dict.fromkeys(run.tracebacks)) or None, record=_recorded(run))
    run.reporting.reporters.run_finished(report)
    if run.scheduler.interrupted:
        return RunOutcome(report, EXIT_INTERRUPTED)
    if run.before_all_failed or run.reporting.reporters.failed():   # CI must not go green without its artifacts
        return RunOutcome(report, EXIT_USAGE)
    regressions = failures_under_regression(report.data.get("comparison"))
    return RunOutcome(report, exit_code(summary.ok and not run.errors, options.fail_on, regressions,
                                        spent=run.meter.spent is not None))


def _recorded(run: _Run) -> dict[str, Any] | None:
    """`--record DIR`: the cassettes saved now, before the reports that say where they are — the directory as
    named, and each file holding this run's recordings, relative to it."""
    cassettes, directory = run.cassettes, run.config.options.record
    if cassettes is None or not directory:
        return None
    return cassettes.save_record(directory)


async def run_unit(unit: Unit, runners: Runners) -> CaseResult:
    entry = unit.entry
    if isinstance(entry, InvalidCase):
        return invalid_result(entry)
    standard, dynamic = runners
    if entry.conversation is not None:
        assert dynamic is not None      # made for a run with conversations (`_dynamic_runner`)
        return await dynamic.run(entry, unit.run)
    return await standard.run(entry, unit.run)


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


def _place(entry: InvalidCase) -> str:
    if entry.file:
        return f"{entry.file}:{entry.line}"
    return entry.source or f"line {entry.line}"


__all__ = ["RunOutcome", "run_suite"]
