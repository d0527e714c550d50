"""What a run checks before it spends anything or writes anything it cannot finish: the cassettes it records into
or replays from, a price for every agent it calls under a budget, and the paths its artifacts go to. Each check
raises UsageError (exit 2) naming the option at fault."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from ..agents.pool import AgentPool
from ..cases.model import Case, InvalidCase, Suite
from ..config import RunConfig
from ..errors import UsageError
from ..workspace import repository_root, write_refusal

if TYPE_CHECKING:       # the cassettes' module is loaded by a run that records or replays
    from ..agents.replay import Cassettes


def suite_sources(suite: Suite) -> list[str]:
    """Every file and generator a suite's cases come from: what a recording names its cassettes after."""
    return list(dict.fromkeys([*(e.file or e.source or "" for e in suite.entries),
                               *(generator.spelled for _, generator in suite.generators)]))


def open_cassettes(config: RunConfig, sources: list[str]) -> Cassettes | None:
    """The cassettes to record into (`--record`) or replay from (`--replay`) for calls made for `sources`; None
    for neither. UsageError when there is nothing to replay, or a recording could not be written — found now, not
    after every case has run."""
    options = config.options
    if not (options.replay or options.record):
        return None
    from ..agents.replay import Cassettes

    if options.replay:
        directory = config.cwd / options.replay
        if not directory.is_dir():
            raise UsageError(f"--replay {options.replay}: no such directory (record it first with --record)")
        return Cassettes(directory, options.replay, cwd=config.cwd, root=repository_root(config.cwd))
    directory = config.cwd / options.record
    refuse_leaving(directory, f"--record {options.record}", config.cwd)
    blocking = next((p for p in (directory, *directory.parents) if p.exists()), None)
    if blocking is not None and not blocking.is_dir():
        raise UsageError(f"--record {options.record}: {blocking} is a file, not a directory")
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:     # a dangling symlink, no permission, a read-only file system
        why = "a symlink to nothing" if directory.is_symlink() else exc.strerror or str(exc)
        raise UsageError(f"--record {options.record}: cannot create the directory: {why}") from None
    cassettes = Cassettes(directory, options.record, cwd=config.cwd, root=repository_root(config.cwd))
    for source in sources:
        refused = cassettes.write_refusal(source)
        if refused:
            raise UsageError(f"--record {options.record}: {refused}; agenttest will not write there")
    return cassettes


def budgeted(config: RunConfig) -> bool:
    """Whether the run's calls must all have a price: `--max-cost`, unless a replay answers every call for free."""
    return config.options.max_cost is not None and not config.options.replay


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


def priced_calls(entries: list[Case | InvalidCase], target: str,
                 override: str | None) -> list[tuple[str, str | None]]:
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


def check_writable(config: RunConfig, files: list[tuple[Path, str]]) -> None:
    """The output directory and every file the reporters will write (each with the option that named it) may be
    written, and their directories exist and are writable, before any case runs: a green run must never end
    without its report."""
    root = repository_root(config.cwd)      # once for every file (it walks up to the `.git`)
    refuse_leaving(config.output_dir, f"--output-dir {config.options.output_dir}", config.cwd, root=root)
    for path, shown in files:
        refuse_leaving(path, shown, config.cwd, within=config.output_dir if path.parent == config.output_dir else None,
                       root=root)
    for directory in dict.fromkeys(path.parent for path, _ in files):
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"cannot create the output directory {directory}: {exc.strerror or exc}") from exc
        if not os.access(directory, os.W_OK):
            raise UsageError(f"cannot write to the output directory {directory}")


def refuse_leaving(path: Path, shown: str, cwd: Path, within: Path | None = None, *, root: Path | None = None) -> None:
    """UsageError (exit 2, before any case runs) when `path` must not be written: in the repository as named, out
    of it through a symlink (`workspace.write_refusal`). `root`: the repository's, when the caller has it."""
    why = write_refusal(path, root or repository_root(cwd), within)
    if why:
        raise UsageError(f"{shown}: {why}; agenttest will not write there")
