"""The cases generators write (`-i agents:ID?count=N` and `-i scripts:module.func`), called before the run's
cases, each in the place of its input."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from ..agents.cache import HelperCache
from ..agents.helper_replies import read_generated
from ..agents.helpers import HelperCaller
from ..agents.pool import AgentPool
from ..bounds import from_python
from ..cases.loader import Checks, build_generated
from ..cases.model import InvalidCase, Suite
from ..cases.sources import GeneratorSource
from ..durations import format_duration
from ..errors import HelperError
from ..hints import plural
from ..project import ProjectConfig
from ..threads import call_user
from ..timeouts import within
from ..usage import Usage
from ..user_errors import collecting, describe
from ..workspace import attachment_root
from .plan import DEFAULT_COUNT, Entry, resolve_script


async def generate(suite: Suite, pool: AgentPool, target_id: str, *, cwd: Path, checks: Checks, timeout: float,
                   usage: Usage, cache: HelperCache | None, context: dict[str, Any]) -> list[Entry]:
    """The suite's entries with each generator's cases in its place (in input order). A generator that fails is one
    `error` entry (`error_kind: generator`) naming it; an invalid generated case is an `invalid` entry naming the
    generator and its index; the other cases still run."""
    entries = list(suite.entries)
    target = pool.info(target_id)
    for position, source in reversed(suite.generators):
        started = time.monotonic()
        helpers = HelperCaller(agents=pool, usage=usage, context={**context, "test_id": "generator"},
                               deadline=started + timeout, cache=cache, case=(source.spelled, "(generator)"))
        with collecting() as tracebacks:       # of the user's code: a script generator, a Python generator agent
            try:
                values = await within(_generated_values(source, target, helpers, cwd, pool.project), timeout)
            except (HelperError, asyncio.TimeoutError) as exc:   # the message names the generator agent or script
                message = exc.message if isinstance(exc, HelperError) else \
                    f"generator {source.spelled}: no cases within the timeout ({format_duration(timeout)})"
                entries[position:position] = [InvalidCase(message, id=source.spelled, kind="generator",
                                                          source=source.spelled,
                                                          traceback="\n\n".join(dict.fromkeys(tracebacks)) or None)]
                continue
        values = _counted(values, source, suite.warnings)
        root = attachment_root(cwd, pool.project.directory if pool.project.path else None)
        entries[position:position] = build_generated(values, source, base_dir=cwd, repo_root=root, checks=checks,
                                                     warnings=suite.warnings)
    return entries


async def _generated_values(source: GeneratorSource, target: dict[str, Any], helpers: HelperCaller, cwd: Path,
                            project: ProjectConfig) -> list[Any]:
    params = dict(source.params)
    count = params.pop("count", DEFAULT_COUNT)
    focus = params.pop("focus", None)
    if source.kind == "agent":
        payload: dict[str, Any] = {"target_agent": target, "count": count}
        if focus is not None:
            payload["focus"] = focus
        if params:
            payload["extra"] = params
        return await helpers.ask("generator", source.ref, payload, read_generated)
    func = resolve_script(source, cwd, project)
    try:
        returned = await call_user(func, target, dict(source.params))
    except Exception as exc:
        raise HelperError(f"generator {source.spelled}: {source.ref} raised {describe(exc)}",
                          "generator") from exc
    try:
        returned = from_python(returned)
    except ValueError as exc:
        raise HelperError(f"generator {source.spelled}: what {source.ref} returned {exc}", "generator") from None
    try:
        return read_generated(returned)
    except HelperError as exc:
        message = exc.message.replace("its reply", "what it returned", 1)
        raise HelperError(f"generator {source.spelled}: {message}", "generator") from exc


def _counted(values: list[Any], source: GeneratorSource, warnings: list[str]) -> list[Any]:
    """An agent generator's cases, cut to the `count` it was asked for (a model may write more); fewer are used as
    they are, with a warning too."""
    count = source.params.get("count", DEFAULT_COUNT) if source.kind == "agent" else None
    if count is None or len(values) == count:
        return values
    wrote = (f"{source.spelled}: the generator wrote {plural(len(values), 'case')} where {count} "
             f"{'was' if count == 1 else 'were'} asked for")
    if len(values) < count:
        warnings.append(f"{wrote}; all are used")
        return values
    warnings.append(f"{wrote}; the first {count} are used")
    return values[:count]
