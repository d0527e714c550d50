"""run_suite(config): load → select → (dry-run | BeforeAll → schedule cases → AfterAll) → report."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import sys
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from .. import __version__
from ..agents import registry
from ..agents.base import Agent
from ..cases import load_suite
from ..cases.model import Case, InvalidCase
from ..config import BuiltinSettings, RunConfig
from ..durations import format_duration
from ..errors import ConfigError, HookError, UsageError
from ..hints import did_you_mean
from ..report import Reporter, RunInfo, build_reporters
from ..report.base import Report
from ..report.files import json_line, write_text
from ..results import CaseResult, Summary
from ..workspace import repository_root
from .context import RunContext
from .hooks import Hooks
from .schedule import Scheduler
from .standard import CaseRunner, base_result, case_dict, result_dict

Entry = Case | InvalidCase


@dataclass
class RunOutcome:
    report: Report | None
    exit_code: int


def run_suite(config: RunConfig, reporters: list[Reporter] | None = None) -> RunOutcome:
    """Run the configured suites. Raises AgentTestError for mistakes found before any case ran (exit 2)."""
    return asyncio.run(_run(config, reporters))


async def _run(config: RunConfig, reporters: list[Reporter] | None) -> RunOutcome:
    suite = load_suite(config.inputs, cwd=config.cwd, repo_root=repository_root(config.cwd),
                       exclude=[config.cwd / config.output_dir])
    entries = select(suite.entries, config.run_filter)
    if not entries:
        if config.run_filter:
            raise UsageError(f"no test cases match --run {config.run_filter!r}")
        raise UsageError(f"no test cases found in {', '.join(config.inputs)}")
    if config.dry_run:
        return RunOutcome(None, dry_run(entries, config))

    settings = target_settings(config)
    context = RunContext.load(_path(config, config.ctx_file), config.user, config.team)
    agent = create_agent(config, settings)
    reporters = reporters if reporters is not None else build_reporters(config)
    hooks = Hooks(agent_dir(config))
    runner = CaseRunner(agent=agent, context=context, hooks=hooks, timeout=config.timeout,
                        connector=config.connector)
    info = RunInfo(agent_id=agent.id, connector=config.connector or getattr(settings, "connector", None) or "",
                   inputs=config.inputs, total=len(entries), started_at=_now(), agent_path=config.agent_path,
                   options={**config.options, "timeout": format_duration(config.timeout),
                            "parallel": config.parallel},
                   environment=context.environment())
    started = time.monotonic()
    cases = [e for e in entries if isinstance(e, Case)]
    global_dir = cases[0].base_dir if cases else config.cwd
    for reporter in reporters:
        reporter.run_started(info)

    error: str | None = None
    exit_code: int | None = None
    before_all_data = None
    scheduler = Scheduler(entries, run_one=lambda e: run_entry(e, runner), skipped=skipped_result,
                          parallel=config.parallel, fail_fast=config.fail_fast,
                          on_start=lambda e: _emit(reporters, "case_started", e),
                          on_finish=lambda r: _emit(reporters, "case_finished", r))
    try:
        if config.before:
            try:
                before_all_data = await hooks.call(config.before, global_dir, context.hook_context(),
                                                   [case_dict(c) for c in cases])
            except HookError as exc:
                error, exit_code = f"BeforeAll: {exc.message}", 2
                print(f"✗ {error}", file=sys.stderr)
                scheduler.stop("not run: BeforeAll failed")
        with _signals_interrupt(scheduler):
            results = await scheduler.run()
        if config.after:
            try:
                await hooks.call(config.after, global_dir, context.hook_context(),
                                 [result_dict(r) for r in results], before_all_data)
            except HookError as exc:
                error = f"{error}; AfterAll: {exc.message}" if error else f"AfterAll: {exc.message}"
                print(f"✗ AfterAll: {exc.message}", file=sys.stderr)
    finally:
        await agent.aclose()

    summary = Summary.count(results, round((time.monotonic() - started) * 1000))
    report = Report(info=info, results=results, summary=summary, completed_at=_now(),
                    interrupted=scheduler.interrupted, error=error, version=__version__)
    _emit(reporters, "run_finished", report)
    if scheduler.interrupted:
        return RunOutcome(report, 130)
    if exit_code is None:
        exit_code = 0 if summary.ok and not error else 1
    return RunOutcome(report, exit_code)


async def run_entry(entry: Entry, runner: CaseRunner) -> CaseResult:
    if isinstance(entry, InvalidCase):
        return invalid_result(entry)
    return await runner.run(entry)


def select(entries: list[Entry], run_filter: str | None) -> list[Entry]:
    """`--run REGEX` keeps the cases whose id matches (unanchored); `--run tag:NAME` those tagged NAME."""
    if not run_filter:
        return list(entries)
    if run_filter.startswith("tag:"):
        tag = run_filter[4:]
        return [e for e in entries if isinstance(e, Case) and tag in e.tags]
    pattern = re.compile(run_filter)
    return [e for e in entries if e.id is not None and pattern.search(e.id)]


def dry_run(entries: list[Entry], config: RunConfig) -> int:
    """Print the cases as JSONL (and write them to -o); invalid entries go to stderr and make it exit 2."""
    lines = [json_line(e.raw) for e in entries if isinstance(e, Case)]
    sys.stdout.write("".join(lines))
    invalid = [e for e in entries if isinstance(e, InvalidCase)]
    for entry in invalid:
        print(f"✗ {_place(entry)}: {entry.message}", file=sys.stderr)
    if config.output is not None:
        write_text(config.cwd / config.output, "".join(lines))
    return 2 if invalid else 0


def target_settings(config: RunConfig) -> registry.ProviderSettings:
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
    return settings


def create_agent(config: RunConfig, settings: registry.ProviderSettings) -> Agent:
    project = config.project
    context = registry.ProviderContext(config_dir=project.directory, pool_size=config.parallel,
                                       retries=config.retries, connectors=project.connectors,
                                       connector_override=config.connector)
    return registry.PROVIDERS[settings.provider].create(config.agent_id or "", settings, context)


def agent_dir(config: RunConfig) -> Path | None:
    if config.agent_path:
        return config.cwd / config.agent_path
    return config.project.directory if config.project.path else None


def invalid_result(entry: InvalidCase) -> CaseResult:
    return CaseResult(id=entry.id or _place(entry), status="error", input=entry.input, error=entry.message,
                      error_kind="invalid", file=entry.file, line=entry.line)


def skipped_result(entry: Entry, reason: str) -> CaseResult:
    result = invalid_result(entry) if isinstance(entry, InvalidCase) else base_result(entry)
    result.status, result.error, result.error_kind = "skipped", reason, None
    return result


@contextlib.contextmanager
def _signals_interrupt(scheduler: Scheduler[Entry]):  # type: ignore[no-untyped-def]
    """SIGINT/SIGTERM stop scheduling and cancel what runs; a second signal exits at once."""
    loop = asyncio.get_running_loop()

    def on_signal(signum: int) -> None:
        if scheduler.interrupted:
            os._exit(130)
        print(f"\n⚠ {signal.Signals(signum).name}: stopping, writing partial results…", file=sys.stderr)
        scheduler.interrupt()

    installed = []
    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(signum, on_signal, signum)
            installed.append(signum)
    try:
        yield
    finally:
        for signum in installed:
            loop.remove_signal_handler(signum)


def _emit(reporters: list[Reporter], event: str, payload: object) -> None:
    for reporter in reporters:
        getattr(reporter, event)(payload)


def _place(entry: InvalidCase) -> str:
    return f"{entry.file}:{entry.line}" if entry.file else f"line {entry.line}"


def _path(config: RunConfig, path: Path | None) -> Path | None:
    return config.cwd / path if path is not None else None


def _now() -> str:
    return datetime.now().astimezone().isoformat()


__all__ = ["RunOutcome", "run_suite"]
