"""What a run will do, before it does it: the checks cases are read against, the generators found (they are called
by `engine.generate`), the `--run` selection, the shards and the helper agents the cases need."""

from __future__ import annotations

import re
import shlex
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..agents.builtin import is_builtin
from ..cases.loader import Checks
from ..cases.model import Case, InvalidCase, Suite
from ..cases.sources import GeneratorSource
from ..errors import HookError, UsageError
from ..hints import did_you_mean, plural
from ..project import ProjectConfig
from ..refs import resolve_callable

if TYPE_CHECKING:
    from ..agents.pool import AgentPool

Entry = Case | InvalidCase
DEFAULT_COUNT = 5


def checks_for(project: ProjectConfig, default_simulator: str | None, default_judge: str | None = None) -> Checks:
    """What cases are checked against: the config's agents (with their builtin roles), and the default simulator
    and judge (`--simulator`, `--judge`, else `defaults:`; `agents:ID` or ID). UsageError when one of those is no
    agent of the config."""
    default_simulator, default_judge = (
        (agent_id or project.defaults.get(flag) or "").removeprefix("agents:") or None
        for flag, agent_id in (("simulator", default_simulator), ("judge", default_judge)))
    for flag, agent_id in (("simulator", default_simulator), ("judge", default_judge)):
        if agent_id and project.path is not None and agent_id not in project.agents:
            raise UsageError(f"--{flag} (or defaults.{flag}): agent {agent_id!r} is not defined in "
                             f"{project.display_path}{did_you_mean(agent_id, project.agents)}")
    if project.path is None:
        return Checks(default_simulator=default_simulator, default_judge=default_judge)
    return Checks(agents={agent_id: project.role(agent_id) for agent_id in project.agents},
                  default_simulator=default_simulator, default_judge=default_judge,
                  connectors=tuple(project.connectors), pinned_at_zero=PinnedAtZero(project))


class PinnedAtZero(Collection[str]):
    """The agents whose requests fix temperature 0 (`_pinned_at_zero`), each looked at when first asked about:
    only a case that asks a judge for several samples does, so checking a suite builds no settings for it."""

    def __init__(self, project: ProjectConfig) -> None:
        self._project = project
        self._known: dict[str, bool] = {}

    def __contains__(self, agent_id: object) -> bool:
        if not isinstance(agent_id, str) or agent_id not in self._project.agents:
            return False
        if agent_id not in self._known:
            self._known[agent_id] = _pinned_at_zero(self._project, agent_id)
        return self._known[agent_id]

    def __iter__(self) -> Iterator[str]:
        return (agent_id for agent_id in self._project.agents if agent_id in self)

    def __len__(self) -> int:
        return sum(1 for _ in self)


def _pinned_at_zero(project: ProjectConfig, agent_id: str) -> bool:
    """Whether the agent's requests fix temperature 0: a built-in helper's own `params` (its connector's are
    overridden by the built-in default, which samples above 0), or an openai agent's params over its connector's."""
    settings = project.agents[agent_id]
    params = getattr(settings, "params", None)
    if params is None:
        return False
    if not is_builtin(settings):
        connector = project.connectors.get(getattr(settings, "connector", None) or "")
        params = {**(connector.params if connector is not None else {}), **params}
    temperature = params.get("temperature")
    return not isinstance(temperature, bool) and temperature == 0


def prepare_generators(suite: Suite, pool: AgentPool, cwd: Path, *, build: bool = True) -> None:
    """Build each generator agent and find each generator script, before any is called. ConfigError/UsageError
    naming the input when one is missing or is a helper of another role. With `build=False` (validate), an agent
    whose `${VAR}`s are not set is only looked up."""
    for _, source in suite.generators:
        if source.kind == "script":
            resolve_script(source, cwd, pool.project)
            continue
        settings = pool.project.agents.get(source.ref)
        if is_builtin(settings) and settings.builtin != "generator":
            raise UsageError(f"-i {source.spelled}: agent {source.ref!r} is a builtin {settings.builtin}, not a "
                             "generator")
        if build or settings is None or pool.has_variables(source.ref):
            pool.helper(source.ref)


def resolve_script(source: GeneratorSource, cwd: Path, project: ProjectConfig) -> Any:
    """The function of `-i scripts:module.func`, found like hooks: in the working directory, its `src/`, the
    config's directory and its `src/`. UsageError when there is none (like a suite file that does not exist)."""
    dirs = [cwd, cwd / "src"]
    if project.path is not None:
        dirs += [project.directory, project.directory / "src"]
    try:
        return resolve_callable(source.ref, dirs, what="generator")
    except HookError as exc:
        raise UsageError(f"-i {source.spelled}: {exc.message}") from exc


def select(entries: list[Entry], run_filter: str | None) -> list[Entry]:
    """`--run REGEX` keeps the cases whose id matches (unanchored); `--run tag:NAME` those tagged NAME. A line that
    could not be read as a case (no id to match) is kept whatever the filter, as pytest reports a collection error
    whatever `-k` says: a broken suite is never hidden by the selection."""
    if not run_filter:
        return list(entries)
    from ..options import run_filter_pattern, run_filter_tag

    tag = run_filter_tag(run_filter)
    pattern = re.compile(run_filter_pattern(run_filter))

    def chosen(entry: Entry) -> bool:
        if entry.id is None:
            return True
        if tag is not None:
            return isinstance(entry, Case) and tag in entry.tags
        return pattern.search(entry.id) is not None

    return [entry for entry in entries if chosen(entry)]


def helper_agents(entries: list[Entry]) -> list[str]:
    """Every helper agent the cases ask (judges, simulators), each once, in order of first use."""
    return list(dict.fromkeys(agent for e in entries if isinstance(e, Case) for agent in e.helper_agents()))


def without_config(entries: list[Entry]) -> list[Entry]:
    """The entries as `validate` reads them when there is no agenttest.yaml: a case that asks a helper agent (a
    judge, a simulated user) is invalid at its line, naming each helper by its role, since only the config can
    define one."""
    read: list[Entry] = []
    for entry in entries:
        helpers = _helpers_by_role(entry) if isinstance(entry, Case) else []
        if not helpers:
            read.append(entry)
            continue
        named = ", ".join(helpers[:-1]) + " and " + helpers[-1] if len(helpers) > 1 else helpers[0]
        read.append(InvalidCase(f"no agenttest.yaml to define its {named}", id=entry.id, file=entry.file,
                                line=entry.line, input=entry.input, source=entry.source))
    return read


def _helpers_by_role(case: Case) -> list[str]:
    """`simulator 'workers.test.user'`, `judge 'workers.test.validator'`: each helper the case asks, once."""
    conversation = case.conversation
    named = [f"simulator {conversation.simulator!r}"] if conversation is not None and conversation.simulator \
        and not conversation.scripted else []
    named += [f"judge {spec.helper_agent!r}" for spec in case.assertion_specs() if spec.helper_agent]
    return list(dict.fromkeys(named))


def build_helpers(pool: AgentPool, entries: list[Entry]) -> None:
    """Build every helper the cases ask, before any case runs. A helper whose `${VAR}`s are not set is a
    ConfigError that also names the cases asking it, and the `--run` that runs those needing no such helper."""
    cases = [e for e in entries if isinstance(e, Case)]
    for agent_id in helper_agents(entries):
        asked_by = otherwise = ""
        if not pool.has_variables(agent_id):
            asking = [case.id for case in cases if agent_id in case.helper_agents()]
            asked_by = f" (asked by {'case' if len(asking) == 1 else 'cases'} {_listed(asking)})"
            keyless = [case.id for case in cases if all(pool.has_variables(h) for h in case.helper_agents())]
            if keyless:
                otherwise = (f", or run only the {plural(len(keyless), 'case')} needing no such helper: "
                             f"--run {shlex.quote(run_filter_for(keyless, [case.id for case in cases]))}")
        pool.helper(agent_id, asked_by=asked_by, otherwise=otherwise)


def run_filter_for(chosen: list[str], ids: list[str]) -> str:
    """A `--run` value that selects exactly `chosen` of the case ids `ids`: their names as they are when that is
    exact, else anchored."""
    plain = "|".join(re.escape(case_id) for case_id in chosen)
    if [case_id for case_id in ids if re.search(plain, case_id)] == chosen:
        return plain
    return f"^({plain})$" if len(chosen) > 1 else f"^{plain}$"


def _listed(ids: list[str], shown: int = 5) -> str:
    return ", ".join(ids[:shown]) + (f" and {len(ids) - shown} more" if len(ids) > shown else "")


def entry_key(entry: Entry) -> tuple[str, str]:
    """A case's (file or generator, id); an entry without an id is known by its line."""
    if isinstance(entry, Case):
        return entry.key
    return (entry.file or entry.source or "", entry.id or f"line {entry.line}")


def shard(entries: list[Entry], index: int, total: int) -> list[int]:
    """The positions (in plan order) of shard `index` of `total` (1-based). Each case goes to the shard its key's
    hash prefers, or the next one with room, so shards differ by at most one case, and adding a case elsewhere in
    the suite moves few others (consistent hashing with bounded loads)."""
    base, extra = divmod(len(entries), total)     # `extra` shards get one case more than the others
    load = [0] * total
    placed: dict[int, int] = {}
    ordered = sorted(range(len(entries)), key=lambda i: (_digest(entry_key(entries[i])), i))
    for position in ordered:
        preferred = _digest(entry_key(entries[position])) % total
        for step in range(total):
            candidate = (preferred + step) % total
            if load[candidate] < base or (load[candidate] == base and extra):
                extra -= load[candidate] == base
                load[candidate] += 1
                placed[position] = candidate
                break
    return [position for position in range(len(entries)) if placed[position] == index - 1]


def suite_digest(entries: list[Entry]) -> str:
    """A digest of which cases a run selected (before sharding): shards of one run share it."""
    import hashlib  # here: `validate` checks cases with checks_for and needs none of it (issue #27)

    keys = sorted("\x1f".join(entry_key(entry)) for entry in entries)
    return hashlib.sha256("\x1e".join(keys).encode("utf-8")).hexdigest()[:16]


def _digest(key: tuple[str, str]) -> int:
    import hashlib

    return int.from_bytes(hashlib.sha256("\x1f".join(key).encode("utf-8")).digest()[:8], "big")
