"""`agenttest action`: the GitHub Action's entrypoint, a thin reader of `INPUT_*` around `launch.Launch`.

What the runner gives a docker action (and what a test sets to reproduce it): one `INPUT_<NAME>` per input, the
name upper-cased with hyphens kept (`INPUT_OUTPUT-DIR`), empty when unset; `GITHUB_WORKSPACE` (the checkout, also
the working directory), `GITHUB_OUTPUT` and `GITHUB_STEP_SUMMARY` (files to append to), `GITHUB_ACTIONS=true`.
The container runs as root, so the files written into the workspace are handed to the workspace's owner.
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from ..agents.cache import user_cache_home
from ..artifacts import artifact_paths
from ..cases.sources import sources
from ..command_line import run_command
from ..config import RunConfig
from ..errors import EXIT_USAGE, AgentTestError, UsageError
from ..launch import Launch
from ..option_table import Option, options
from ..secrets import register_secret
from . import environment
from .commands import workflow_command
from .environment import read_inputs
from .log import write_line

# The inputs that are run options, by input name: the table's rows that name one (the suites, `input`, aside).
OPTION_INPUTS = {option.flag.input: option for option in options().values()
                 if option.flag.input and option.name != "input"}
STEP_INPUTS = ("working-directory", "args", "github-token")     # inputs of the step itself, not of the run
INPUT_GITHUB_TOKEN = "INPUT_GITHUB-TOKEN"
ACTION_INPUTS = ("input", *OPTION_INPUTS, *STEP_INPUTS)


@dataclass
class ActionSettings:
    """The action's inputs, read and checked: what to run, and where."""

    values: dict[str, Any]          # the CLI values dict, as `agenttest run` builds it from its flags
    cwd: Path
    workspace: Path


def run_action(environ: Mapping[str, str] | None = None) -> int:
    """Run the suite the inputs describe (the run writes the step outputs, as `agenttest run` does in Actions);
    return the exit code `fail-on` asks for. A step that cannot run says why in one error annotation."""
    environ = os.environ if environ is None else environ
    launched = Launch(comment_default="auto", github_token=github_token(environ))
    try:
        settings = read_settings(environ)
    except AgentTestError as exc:
        launched.stop(EXIT_USAGE, str(exc))
    else:
        # User code (python agents, hooks) sees the directory the step runs in, as after `cd` in a `run:` step.
        os.chdir(settings.cwd)
        try:
            launched.run(settings.values, settings.cwd)
        finally:
            if launched.config is not None:
                hand_over(_written_paths(launched.config), settings.workspace)
                # The helper cache and its key, in $HOME: the runner's user must read them (actions/cache).
                hand_over([user_cache_home()], Path.home())
    config, outcome = launched.config, launched.outcome
    if config is None or outcome is None:       # the log guard, if any, is already resumed
        write_line(sys.stdout, workflow_command("error", f"agenttest: {launched.error}"))
        return launched.exit_code
    report = outcome.report.data if outcome.report is not None else {}
    if config.options.fail_on == "regression" and _regressions(report) is None:
        write_line(sys.stdout, workflow_command("warning", "agenttest: fail-on: regression needs a baseline; "
                                                           "failing on any failure instead"))
    return outcome.exit_code      # `fail-on` is a run option: the run decided


def github_token(environ: Mapping[str, str]) -> str | None:
    """The `github-token` input (the workflow's token by default), registered as a secret, and taken out of this
    process's environment: the agents under test, which inherit it, never see it."""
    token = read_inputs(environ, ["github-token"])["github-token"]
    if token:
        register_secret(token)
        os.environ.pop(INPUT_GITHUB_TOKEN, None)
    return token


def read_settings(environ: Mapping[str, str]) -> ActionSettings:
    """The inputs as a CLI values dict plus the action's own settings; a bad input is a UsageError naming it."""
    inputs = read_inputs(environ, ACTION_INPUTS)
    workspace = (environment.workspace(environ) or Path.cwd()).resolve()
    cwd = (workspace / (inputs.get("working-directory") or ".")).resolve()
    if cwd != workspace and workspace not in cwd.parents:
        raise UsageError(f"working-directory: {inputs['working-directory']!r} is outside the workspace {workspace}")
    if not cwd.is_dir():
        raise UsageError(f"working-directory: {cwd} is not a directory")
    suites = _lines(inputs.get("input"))
    if not suites:
        raise UsageError("input: required (a suite file, directory or glob; one per line)")
    given = [(name, option, value) for name, option in OPTION_INPUTS.items() if (value := inputs.get(name)) is not None]
    values: dict[str, Any] = {"input": suites}
    values.update({option.name: _convert(name, value, option) for name, option, value in given if not option.choices})
    if inputs.get("args"):
        values.update(parse_args(suites, inputs["args"]))
    for suite in values["input"]:    # always a path (docs/command-line.md), an `-i` in `args` too: never a chat message
        try:
            sources(suite, cwd, message=False)
        except UsageError as exc:
            named = "input" if suite in suites else "args"
            raise UsageError(f"{named}: {str(exc).removeprefix('-i ')}") from None
    # A choice (`fail-on`) is read last and wins over its flag in `args`: it was the step's own setting before it
    # became a run option. Unset, the config's `defaults:` (or the built-in default) decides.
    values.update({option.name: _convert(name, value, option) for name, option, value in given if option.choices})
    return ActionSettings(values=values, cwd=cwd, workspace=workspace)


def parse_args(suites: list[str], args: str) -> dict[str, Any]:
    """Extra `agenttest run` arguments (the `args` input), parsed as `agenttest run` parses them."""
    run = run_command()
    try:
        argv = shlex.split(args)
    except ValueError as exc:
        raise UsageError(f"args: {exc}") from exc
    try:
        context = run.make_context("agenttest run", [*(a for s in suites for a in ("-i", s)), *argv])
    except click.ClickException as exc:
        raise UsageError(f"args: {exc.format_message()}") from exc
    except click.exceptions.Exit as exc:     # --help or --version: nothing to run
        raise UsageError(f"args: {args!r} asks for no run") from exc
    return {key: value for key, value in context.params.items() if value is not None and value != ()}


def hand_over(paths: Iterable[Path], top: Path) -> None:
    """Give what the run wrote under `top` — the workspace, or $HOME — to the owner of `top` (a docker action runs
    as root, and root-owned files break later steps, the next checkout and `actions/cache`), with the directories
    it created on the way."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0 or not top.is_dir():
        return
    top = top.resolve()
    owner = top.stat()
    for path in paths:
        path = path.resolve()
        if not path.exists() or top not in path.parents:
            continue
        for parent in path.parents:
            if parent == top:
                break
            _chown(parent, owner.st_uid, owner.st_gid)
        _chown(path, owner.st_uid, owner.st_gid)
        if path.is_dir():
            for root, dirs, files in os.walk(path):
                for name in [*dirs, *files]:
                    _chown(Path(root) / name, owner.st_uid, owner.st_gid)


def _chown(path: Path, uid: int, gid: int) -> None:
    stat = path.lstat()
    if stat.st_uid == 0 and (stat.st_uid, stat.st_gid) != (uid, gid):
        os.chown(path, uid, gid, follow_symlinks=False)


def _written_paths(config: RunConfig) -> list[Path]:
    options = config.options
    paths = [config.output_dir, *artifact_paths(config).values()]
    paths += [config.cwd / value for value in (options.output, options.record) if value]
    if not options.no_cache:
        paths.append(config.cache_dir)
    return paths


def _regressions(report: Mapping[str, Any]) -> int | None:
    comparison = report.get("comparison")
    return len(comparison.get("regressions") or []) if isinstance(comparison, Mapping) else None


def _convert(name: str, value: str, option: Option) -> Any:
    """The value of input `name` as its option takes it: a boolean, a number, one of the choices, or the text."""
    if option.choices:
        if value.lower() not in option.choices:
            raise UsageError(f"{name}: {value!r} is not one of {', '.join(option.choices)}")
        return value.lower()
    if option.type is bool:
        if value in ("true", "True", "TRUE"):
            return True
        if value in ("false", "False", "FALSE"):
            return False
        raise UsageError(f"{name}: {value!r} is not a boolean (true or false)")
    if option.type in (int, float):
        try:
            return option.type(value)
        except ValueError:
            raise UsageError(f"{name}: {value!r} is not a {'whole ' if option.type is int else ''}number") from None
    return value


def _lines(value: str | None) -> list[str]:
    return [line.strip() for line in (value or "").splitlines() if line.strip()]
