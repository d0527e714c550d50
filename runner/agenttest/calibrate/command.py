"""`agenttest calibrate`: a judge measured against labelled examples before anyone trusts it (docs/calibrate.md).

Each labelled line is put to the judge as a `type: agent` assertion puts a case to it — the same assertion code,
helper caller, cache, budget and cassettes — and its verdicts are compared with the labels by `statistics`:
accuracy, true-positive and true-negative rates with their intervals, Cohen's κ, the majority-label baseline, and
with `--samples K` how often the judge contradicts itself. A judge that fails to answer is counted apart, never as a
disagreement.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from ..agents.cache import HelperCache
from ..agents.helpers import HelperCaller
from ..agents.meter import Meter
from ..agents.pool import AgentPool
from ..agents.urls import register_proxy_credentials
from ..assertions import AssertionSpec, evaluate_all
from ..assertions.judge import MAX_SAMPLES
from ..checks import evaluation_context, prepared
from ..config import RunConfig, build_run_config
from ..durations import format_duration
from ..engine.context import RequestIdentity
from ..engine.plan import checks_for
from ..engine.preflight import budgeted, check_prices, open_cassettes, refuse_leaving
from ..errors import EXIT_INTERRUPTED, EXIT_USAGE, AgentTestError, UsageError
from ..files import json_text, write_text
from ..github.log import write_line, write_lines
from ..report.escape import one_line
from ..report.verdicts import record_line
from ..timeouts import within
from ..usage import Usage
from ..workspace import checkout_root
from .labels import Labelled, read_labels
from .outcome import Bars, Calibration, Judged, table

# The options `calibrate` shares with `run` (and `defaults:` in agenttest.yaml): how the judge is reached.
SHARED_OPTIONS = ("config", "judge", "cache", "no_cache", "record", "replay", "max_cost", "max_tokens", "parallel",
                  "retries", "timeout")


def calibrate_command(values: dict[str, Any], cwd: Path | None = None) -> int:
    """Run `agenttest calibrate` with its flags (`values`, by long name; None when not given) and return its exit
    code: 0, 1 (below a bar, or lines that could not be judged), 2 (a mistake before any line was asked), 130."""
    cwd = cwd or Path.cwd()
    try:
        return asyncio.run(_calibrate(values, cwd))
    except AgentTestError as exc:
        write_line(sys.stderr, f"Error: {exc}")
        return EXIT_USAGE
    except KeyboardInterrupt:
        write_line(sys.stderr, "Interrupted.")
        return EXIT_INTERRUPTED


async def _calibrate(values: dict[str, Any], cwd: Path) -> int:
    register_proxy_credentials(os.environ)
    labels_shown = values["labels"]
    samples = values.get("samples") or 1
    if not 1 <= samples <= MAX_SAMPLES:
        raise UsageError(f"--samples: expected a whole number from 1 to {MAX_SAMPLES}, got {samples}")
    bars = Bars(values.get("min_kappa"), values.get("min_accuracy"))
    shared = {key: values[key] for key in SHARED_OPTIONS if values.get(key) is not None}
    config = build_run_config({**shared, "input": [labels_shown]}, cwd)
    judge = _judge_of(config, samples)
    output = cwd / values["output"] if values.get("output") else None
    if output is not None:
        refuse_leaving(output, f"-o {values['output']}", cwd)
    lines, invalid = read_labels(cwd / labels_shown, labels_shown)
    if not lines and not invalid:
        raise UsageError(f"-i {labels_shown}: no labelled lines in it (one JSON object a line: "
                         '{"input", "output", "criteria", "label": true|false})')
    source = _source(cwd / labels_shown, cwd, labels_shown)
    options = config.options
    cassettes = open_cassettes(config, [source])
    meter = Meter(max_cost=options.max_cost, max_tokens=options.max_tokens)
    pool = AgentPool(config.project, parallel=options.parallel, retries=options.retries, meter=meter,
                     cassettes=cassettes, replay=bool(options.replay))
    try:
        pool.helper(judge)
        if budgeted(config):
            check_prices(pool, [(judge, None)])
        cache = _helper_cache(config)
        context = RequestIdentity(user=options.user, team=options.team).request_context(None)
        usage = Usage()

        def ask(line: Labelled) -> Awaitable[Judged]:
            helpers = HelperCaller(agents=pool, usage=usage, context={**context, "test_id": line.id},
                                   deadline=time.monotonic() + config.timeout, cache=cache, case=(source, line.id))
            return judge_line(line, judge, samples, helpers, config.timeout)

        for problem in invalid:
            write_line(sys.stdout, f"✗ {labels_shown}:{problem.line}: {problem.message}")
        judged = await _each(lines, ask, options.parallel, meter)
    finally:
        await pool.aclose()
        record = cassettes.save_record(options.record) if cassettes is not None and options.record else None
    calibration = Calibration(judge=judge, labels=labels_shown, samples=samples, bars=bars, judged=judged,
                              invalid=invalid, usage=usage)
    write_lines(sys.stdout, table(calibration))
    if record is not None:      # where the recording went, as `run --record` says it
        write_line(sys.stdout, f"Cassettes: {one_line(record_line(record), 500)}")
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        write_text(output, json_text(calibration.to_dict()))
        write_line(sys.stdout, f"Written: {values['output']}")
    return calibration.exit_code


def _judge_of(config: RunConfig, samples: int) -> str:
    """The judge to measure: `--judge`, else `defaults.judge`; an agent of the config (UsageError otherwise)."""
    judge = config.options.judge
    if not judge:
        raise UsageError("calibrate measures a judge: name it with --judge ID (or defaults.judge in agenttest.yaml)")
    checks = checks_for(config.project, None, judge)
    if samples > 1 and judge in checks.pinned_at_zero:
        write_line(sys.stderr, f"⚠ --samples {samples}: agent {judge!r} runs at temperature 0, so its samples will "
                               "most likely agree and no self-contradiction will show")
    return judge


def _helper_cache(config: RunConfig) -> HelperCache | None:
    """The helper cache, as a run uses it: none with --no-cache, and none while recording or replaying (a recording
    must see every call; a replay answers every call already)."""
    options = config.options
    if options.no_cache or options.record or options.replay:
        return None
    refuse_leaving(config.cache_dir, f"--cache {options.cache or config.cache_dir}", config.cwd)
    return HelperCache(config.cache_dir, checkout=checkout_root(config.cwd), shown=options.cache)


def _source(path: Path, cwd: Path, shown: str) -> str:
    """The labels file as cassettes file its calls: relative to the working directory when inside it."""
    return os.path.relpath(path, cwd) if path.resolve().is_relative_to(cwd.resolve()) else shown


# The judge assertion's fields (as a suite names them) as calibrate names them.
_FIELDS = {"value": "criteria", "use": "--judge", "options.samples": "--samples"}


async def judge_line(line: Labelled, judge: str, samples: int, helpers: HelperCaller, timeout: float) -> Judged:
    """Ask `judge` about one labelled line exactly as a `type: agent` assertion with `options.samples` asks it about
    a case's reply (the line's output), within `timeout`; its verdict, or the judge's error."""
    spec = prepared(AssertionSpec(type="agent", value=line.criteria, use=f"agents:{judge}",
                                  options={"samples": samples}), _FIELDS)
    context = evaluation_context(line.output, helpers=helpers, conversation=line.conversation)
    context.input = line.input
    try:
        [result] = await within(evaluate_all([spec], context), timeout)
    except asyncio.TimeoutError:
        waiting = f" waiting for {helpers.waiting_for}" if helpers.waiting_for else ""
        return Judged(line, error=f"timeout after {format_duration(timeout)}{waiting}")
    if result.error_kind:
        return Judged(line, error=result.message)
    details = result.details or {}
    return Judged(line, verdict=result.passed, reason=str(details.get("reason") or ""), votes=details.get("votes"))


async def _each(lines: list[Labelled], ask: Callable[[Labelled], Awaitable[Judged]], parallel: int,
                meter: Meter) -> list[Judged]:
    """Every line asked, `parallel` at a time, in order; once the budget is spent, the lines not yet asked are
    skipped, saying so."""
    gate = asyncio.Semaphore(parallel)

    async def one(line: Labelled) -> Judged:
        async with gate:
            if meter.spent is not None:
                return Judged(line, skipped=f"not asked: {meter.spent}")
            return await ask(line)

    return list(await asyncio.gather(*(one(line) for line in lines)))
