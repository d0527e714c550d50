"""run_suite(config): load → select → (dry-run | BeforeAll → schedule cases → AfterAll) → report."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import sys
import time
from collections.abc import Awaitable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import __version__
from ..agents import registry
from ..agents.base import Agent
from ..cases import load_suite
from ..cases.model import Case, InvalidCase
from ..config import RunConfig
from ..durations import format_duration
from ..errors import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, ConfigError, HookError, UsageError
from ..hints import did_you_mean
from ..options import run_filter_pattern, run_filter_tag
from ..project import BuiltinSettings
from ..report import Reporter, RunInfo, build_reporters
from ..report.base import Report, now
from ..report.ci import artifact_paths
from ..report.files import json_line, write_text
from ..results import CaseResult, Summary
from .context import RunContext
from .hooks import Hooks
from .schedule import Scheduler
from .standard import AFTER_HOOK_GRACE, CaseRunner, base_result, case_dict, result_dict

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
    options = config.options
    project_dir = config.project.directory if config.project.path else None
    suite = load_suite(config.inputs, cwd=config.cwd, project_dir=project_dir, exclude=[config.output_dir])
    entries = select(suite.entries, options.run)
    if not entries:
        if options.run:
            raise UsageError(f"no test cases match --run {options.run!r}")
        raise UsageError(f"no test cases found in {', '.join(config.inputs)}")
    if options.dry_run:
        return RunOutcome(None, dry_run(entries, config))

    settings = target_settings(config)
    check_writable(config)
    context = RunContext.load(config.ctx_file, options.user, options.team)
    agent = create_agent(config, settings)
    reporters = reporters if reporters is not None else build_reporters(config)
    hooks = Hooks(agent_dir(config))
    runner = CaseRunner(agent=agent, context=context, hooks=hooks, timeout=config.timeout,
                        connector=options.connector)
    info = RunInfo(agent_id=agent.id, connector=options.connector or getattr(settings, "connector", None) or "",
                   inputs=config.inputs, total=len(entries), started_at=now(), agent_path=config.agent_path,
                   options={**config.reported_options(), "timeout": format_duration(config.timeout)},
                   environment=context.environment())
    started = time.monotonic()
    cases = [e for e in entries if isinstance(e, Case)]
    global_dir = cases[0].base_dir if cases else config.cwd
    scheduler = Scheduler(entries, run_one=lambda e: run_entry(e, runner), skipped=skipped_result,
                          parallel=options.parallel, fail_fast=options.fail_fast,
                          on_start=lambda e: _emit(reporters, "case_started", e),
                          on_finish=lambda r: _emit(reporters, "case_finished", r))
    _emit(reporters, "run_started", info)

    errors: list[str] = []
    before_all_failed = False
    before_all_data = None
    with _interrupts(scheduler) as interrupt:
        try:
            if options.before:
                try:
                    before_all_data = await interrupt.guard(hooks.call(
                        options.before, global_dir, context.hook_context(), [case_dict(c) for c in cases]))
                except HookError as exc:
                    errors.append(f"BeforeAll: {exc.message}")
                    before_all_failed = True
                    scheduler.stop("not run: BeforeAll failed")
                except asyncio.CancelledError:
                    scheduler.stop("interrupted")
            results = await scheduler.run()
            if options.after:
                after_all = hooks.call(options.after, global_dir, context.hook_context(),
                                       [result_dict(r) for r in results], before_all_data)
                try:
                    if scheduler.interrupted:   # the user is waiting: AfterAll gets the After hooks' grace
                        await asyncio.wait_for(after_all, AFTER_HOOK_GRACE)
                    else:
                        await interrupt.guard(after_all)
                except HookError as exc:
                    errors.append(f"AfterAll: {exc.message}")
                except (asyncio.TimeoutError, asyncio.CancelledError):
                    errors.append("AfterAll: interrupted")
        finally:
            await agent.aclose()

    summary = Summary.count(results, round((time.monotonic() - started) * 1000))
    report = Report(info=info, results=results, summary=summary, completed_at=now(),
                    interrupted=scheduler.interrupted, error="; ".join(errors) or None, version=__version__)
    _emit(reporters, "run_finished", report)
    if scheduler.interrupted:
        return RunOutcome(report, EXIT_INTERRUPTED)
    if before_all_failed:
        return RunOutcome(report, EXIT_USAGE)
    return RunOutcome(report, EXIT_OK if summary.ok and not errors else EXIT_FAILED)


async def run_entry(entry: Entry, runner: CaseRunner) -> CaseResult:
    if isinstance(entry, InvalidCase):
        return invalid_result(entry)
    return await runner.run(entry)


def select(entries: list[Entry], run_filter: str | None) -> list[Entry]:
    """`--run REGEX` keeps the cases whose id matches (unanchored); `--run tag:NAME` those tagged NAME."""
    if not run_filter:
        return list(entries)
    tag = run_filter_tag(run_filter)
    if tag is not None:
        return [e for e in entries if isinstance(e, Case) and tag in e.tags]
    pattern = re.compile(run_filter_pattern(run_filter))
    return [e for e in entries if e.id is not None and pattern.search(e.id)]


def dry_run(entries: list[Entry], config: RunConfig) -> int:
    """Print the cases as JSONL (and write them to -o); invalid entries go to stderr and make it exit 2."""
    lines = [json_line(e.raw) for e in entries if isinstance(e, Case)]
    sys.stdout.write("".join(lines))
    invalid = [e for e in entries if isinstance(e, InvalidCase)]
    for entry in invalid:
        print(f"✗ {_place(entry)}: {entry.message}", file=sys.stderr)
    if config.output is not None:
        write_text(config.output, "".join(lines))
    return 2 if invalid else 0


def target_settings(config: RunConfig) -> registry.ProviderSettings:
    """The settings of the agent under test; ConfigError/UsageError when it cannot be found or is a helper."""
    project = config.project
    if project.path is None:
        raise ConfigError(f"no agenttest.yaml found (looked upward from {config.cwd} and the first input); "
                          "create one that defines the agent under test")
    if not config.agent_id:
        raise UsageError(f"no target agent: pass -n/--name or set defaults.name in {project.display_path} "
                         f"(agents: {', '.join(project.agents) or 'none'})")
    settings = project.agents.get(config.agent_id)
    if settings is None:
        hint = did_you_mean(config.agent_id, project.agents) or f" (defined: {', '.join(project.agents) or 'none'})"
        raise ConfigError(f"agent {config.agent_id!r} is not defined in {project.display_path}{hint}")
    if isinstance(settings, BuiltinSettings):
        raise ConfigError(f"agent {config.agent_id!r} is a builtin {settings.builtin} helper, not an agent to test")
    project.check_variables(config.agent_id, uses_connectors=hasattr(settings, "connector"))
    return settings


def check_writable(config: RunConfig) -> None:
    """Every directory an artifact goes to exists and is writable, before any case runs: a green run must never
    end without its report. UsageError (exit 2) otherwise."""
    paths = [*artifact_paths(config).values(), *([config.output] if config.output else [])]
    for directory in dict.fromkeys(path.parent for path in paths):
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"cannot create the output directory {directory}: {exc.strerror or exc}") from exc
        if not os.access(directory, os.W_OK):
            raise UsageError(f"cannot write to the output directory {directory}")


def create_agent(config: RunConfig, settings: registry.ProviderSettings) -> Agent:
    """Build the agent under test with its provider (connections are opened lazily, on the run's loop)."""
    project = config.project
    context = registry.ProviderContext(config_dir=project.directory, pool_size=config.options.parallel,
                                       retries=config.options.retries, connectors=project.connectors,
                                       connector_override=config.options.connector)
    return registry.PROVIDERS[settings.provider].create(config.agent_id or "", settings, context)


def agent_dir(config: RunConfig) -> Path | None:
    """Where hooks are looked up last: the agent's `assistants/…` directory, else the config's directory."""
    if config.agent_path:
        return config.cwd / config.agent_path
    return config.project.directory if config.project.path else None


def invalid_result(entry: InvalidCase) -> CaseResult:
    """An entry that could not become a case, as an `error` result at its line."""
    return CaseResult(id=entry.id or _place(entry), status="error", input=entry.input, error=entry.message,
                      error_kind="invalid", file=entry.file, line=entry.line)


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


def _emit(reporters: list[Reporter], event: str, payload: object) -> None:
    for reporter in reporters:
        getattr(reporter, event)(payload)


def _place(entry: InvalidCase) -> str:
    return f"{entry.file}:{entry.line}" if entry.file else f"line {entry.line}"


__all__ = ["RunOutcome", "run_suite"]
