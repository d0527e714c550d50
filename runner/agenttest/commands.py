"""The `agenttest` command's click group and subcommands: a thin shell that turns flags into one RunConfig and calls
run_suite. `cli.main` (the console script) hands every use but `--version` to this group."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args

import click

from . import __version__
from .command_line import EXAMPLES
from .errors import EXIT_USAGE, AgentTestError, CommentMode, FailOn, UsageError
from .gc_policy import command
from .github.log import guarded_log, write_line

if TYPE_CHECKING:
    from .cases.model import Suite
    from .engine.plan import Entry
    from .project import ProjectConfig

# Only click and these small modules are imported at start-up (`--version` is answered by `cli`, without them):
# `agenttest --help` must not load aiohttp, pydantic or jsonschema. Each command imports what it needs when it runs.

_IMPLICIT_RUN = "agenttest.implicit_run"


class RunContext(click.Context):
    """The context of `run`: when the user typed `agenttest -i …` (run implied), usage lines and error hints name
    the command as typed (`agenttest`), not `agenttest run`."""

    @property
    def command_path(self) -> str:
        if self.meta.get(_IMPLICIT_RUN) and self.parent is not None:
            return self.parent.command_path
        return super().command_path


class RunCommand(click.Command):
    context_class = RunContext


class DefaultRunGroup(click.Group):
    """`run` is the default command: `agenttest -i x.jsonl` means `agenttest run -i x.jsonl`."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        # The collector's policy of a command (gc_policy.command) starts before click parses anything: what the
        # imports left in the young generation must not be walked by a collection during the parsing.
        with command():
            return super().main(*args, **kwargs)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, "run"})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        # `run` is built from the option table when first wanted (a run, `--help`): `agenttest --version` and the
        # other commands do not load the table.
        if cmd_name == "run" and cmd_name not in self.commands:
            from .command_line import run_command

            self.add_command(run_command(run, cls=RunCommand))
        return super().get_command(ctx, cmd_name)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        # Options and suite paths fall through to `run` (`agenttest tests/x.jsonl`); `run` refuses a word that names
        # no suite, as the unknown command it was meant to be.
        if not args or (args[0] not in self.list_commands(ctx) and args[0] not in ("--help", "-h", "--version", "-V")):
            ctx.meta[_IMPLICIT_RUN] = True
            args = ["run", *args]
        return super().parse_args(ctx, args)

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The group's options and commands, then those of `run`: `agenttest -i …` takes them directly."""
        super().format_options(ctx, formatter)
        run_command = self.get_command(ctx, "run")
        if run_command is None:
            return
        own_help = run_command.get_help_option(ctx)
        rows = [row for param in run_command.get_params(ctx)
                if param is not own_help and (row := param.get_help_record(ctx)) is not None]
        with formatter.section("Options of run (the default command)"):
            formatter.write_dl(rows)


@click.group(cls=DefaultRunGroup, context_settings={"help_option_names": ["-h", "--help"]}, epilog=EXAMPLES)
@click.version_option(__version__, "-V", "--version", prog_name="agenttest")
def main() -> None:
    """Test AI agents in CI: run JSONL suites, check replies, report natively to CI.

    `run` is the default command, so `agenttest -i tests.jsonl` works.
    """


def run(suites: tuple[str, ...], **options: Any) -> None:
    """The `run` command's callback: its suites, as arguments or `-i`, run with the other flags' values."""
    cli_values = {key: value for key, value in options.items() if value is not None and value != ()}
    inputs = [*options["input"], *_suite_arguments(suites)]
    if not inputs:
        raise click.UsageError("give the suites to run: SUITE arguments, or -i SOURCE (a suite, a directory, a "
                               "glob or a message)")
    sys.exit(execute({**cli_values, "input": inputs}))


def _suite_arguments(suites: tuple[str, ...]) -> list[str]:
    """The suite arguments of `run`, each a path or a generator — never a message (that is `-i "…"`). The first
    word of `agenttest WORD …` that names no suite is refused as the unknown command it would have been."""
    from .cases.sources import GENERATOR_PREFIXES, existing_path, looks_like_path
    from .hints import did_you_mean

    ctx = click.get_current_context()
    for position, value in enumerate(suites):
        if value.startswith(GENERATOR_PREFIXES) or looks_like_path(value) or existing_path(Path.cwd() / value):
            continue
        if position == 0 and ctx.meta.get(_IMPLICIT_RUN) and ctx.parent is not None:
            commands = ctx.parent.command.commands if isinstance(ctx.parent.command, click.Group) else {}
            raise click.UsageError(f"No such command {value!r}{did_you_mean(value, commands)}, and no suite file or "
                                   "directory of that name", ctx.parent)
        raise click.UsageError(f"{value}: no such suite file or directory (a message to send is -i \"{value}\")")
    return list(suites)


def execute(cli_values: dict[str, Any], cwd: Path | None = None) -> int:
    """Run what the flags describe (`Launch`: the log guarded in CI); a user mistake exits 2 and an interrupt 130,
    each with one line on stderr."""
    from .launch import Launch

    return Launch().run(cli_values, cwd, echo_error=True).exit_code


@contextmanager
def _guarded() -> Iterator[None]:
    """A command's log inside the stop-commands block in GitHub Actions (docs/security.md): it prints suite
    text, file names and report contents, none of which may become a workflow command."""
    from .github.environment import in_github_actions

    with guarded_log(sys.stdout, guard=in_github_actions()):
        yield


@main.command()
@click.argument("files", nargs=-1, metavar="[FILE]...")
@click.option("-i", "--input", "input", multiple=True, metavar="SOURCE",
              help="A JSONL/JSON suite, a directory or a glob. Repeatable.")
@click.option("--config", type=click.Path(dir_okay=False), help="agenttest.yaml (default: discovered).")
@click.option("--simulator", metavar="ID", help="The simulator agent for dynamic cases that name none.")
@click.option("--judge", metavar="ID", help="The judge of agent assertions that name none.")
def validate(files: tuple[str, ...], input: tuple[str, ...], config: str | None, simulator: str | None,
             judge: str | None) -> None:
    """Parse and check suites (and the config, if any) without calling any agent: judges and simulators must be
    agents of the config. Generator inputs are not called. Exit 0 when all is valid, 2 when not. Suites may also
    be given as arguments (as pre-commit passes them)."""
    inputs = [*input, *files]
    if not inputs:
        raise click.UsageError("give the suites to check: -i FILE (or FILE arguments)")
    with _guarded():
        _validate(inputs, config, simulator, judge)


def _validate(inputs: list[str], config: str | None, simulator: str | None, judge: str | None) -> None:
    from dataclasses import replace

    from .agent_paths import undefined_suite_agents
    from .cases import load_suite
    from .cases.loader import no_cases_found
    from .cases.model import InvalidCase
    from .engine.plan import checks_for, without_config
    from .hints import plural
    from .project import NO_CONFIG, find_config, load_project

    cwd = Path.cwd()
    try:
        # `plain`: what is of the plain shapes is checked without the pydantic models (cases/plain.py,
        # plain_settings.py), which check the rest and say what is wrong, as `run` does.
        project = load_project(find_config(config, inputs, cwd), plain=True)
        suite = load_suite(inputs, cwd=cwd, project_dir=project.directory if project.path else None,
                           checks=replace(checks_for(project, simulator, judge), plain=True))
        undefined = undefined_suite_agents((e.file for e in suite.entries), cwd, project,
                                           project.defaults.get("name"))
        if undefined:
            raise UsageError("; ".join(undefined))
        # Without a config there is no helper: each case asking one is invalid at its line.
        entries = suite.entries if project.path else without_config(suite.entries)
        _build_helpers(project, suite, entries, cwd)
    except AgentTestError as exc:
        write_line(sys.stderr, f"Error: {exc}")
        sys.exit(EXIT_USAGE)
    for warning in suite.warnings:
        write_line(sys.stdout, f"warning: {warning}")
    invalid = [e for e in entries if isinstance(e, InvalidCase)]
    for entry in invalid:
        write_line(sys.stdout, f"{entry.file}:{entry.line}: {entry.message}" if entry.file else entry.message)
    generators = f" (and {plural(len(suite.generators), 'generator input')}, not called)" if suite.generators else ""
    write_line(sys.stdout, f"{len(entries) - len(invalid)} valid, {len(invalid)} invalid in "
                           f"{plural(len(suite.files), 'file')}{generators}")
    if not (entries or suite.generators):     # as `run` says it: an empty suite is no green check
        write_line(sys.stderr, f"Error: {no_cases_found(inputs, suite, cwd)}")
    elif project.path is None and any("agenttest.yaml" in entry.message for entry in invalid):
        write_line(sys.stderr, f"Error: {NO_CONFIG}: the cases above need one; `agenttest init` writes it")
    sys.exit(EXIT_USAGE if invalid or not (entries or suite.generators) else 0)


def _build_helpers(project: ProjectConfig, suite: Suite, entries: list[Entry], cwd: Path) -> None:
    """Build the generators and the helpers the cases ask, never calling them, so that their configuration mistakes
    show here too — those that need `${VAR}`s that are not set excepted: validating must work without any secret."""
    from .engine.plan import helper_agents, prepare_generators

    helpers = helper_agents(entries)
    if not (helpers or suite.generators):       # nothing to build: the agents' code and settings stay unloaded
        return
    from .agents.pool import AgentPool

    pool = AgentPool(project)
    prepare_generators(suite, pool, cwd, build=False)
    for agent_id in helpers:
        if pool.has_variables(agent_id):
            pool.helper(agent_id)


@main.command()
def init() -> None:
    """Scaffold agenttest.yaml, an example suite and a GitHub Actions workflow in the current repository (never
    overwriting a file), add agenttest-results/ to .gitignore, and print the command to run next."""
    from .scaffold import next_steps, scaffold

    cwd = Path.cwd()
    try:
        done = scaffold(cwd)
    except AgentTestError as exc:
        click.echo(f"Error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    click.echo("\n".join(next_steps(done, cwd)))


@main.command()
def schema() -> None:
    """Print the JSON Schema of a test case (for editors and for validating generated suites)."""
    import json

    from .cases.schema import case_json_schema

    click.echo(json.dumps(case_json_schema(), indent=2))


@main.command()
@click.argument("reports", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--output-dir", type=click.Path(file_okay=False), default="agenttest-results", show_default=True,
              help="Where report.json, junit.xml, summary.md and ctrf.json of the whole run go.")
@click.option("--baseline", metavar="REPORT|auto", help="Compare the whole run with an earlier report.json; auto: "
                                                          "the base branch's last report, fetched from GitHub.")
@click.option("--fail-on", type=click.Choice(get_args(FailOn)), default="failure",
              show_default=True, help="When the merge exits 1: any failure, only regressions, or never.")
@click.option("--baseline-artifact", default="agenttest-results", metavar="NAME",
              help="The artifact --baseline auto takes report.json from [agenttest-results].")
@click.option("--comment", type=click.Choice(get_args(CommentMode)), metavar="MODE",
              help="The pull-request comment of the whole run: auto (on pull_request events), always, failures, off "
                   "[off].")
@click.option("--comment-key", default="default", metavar="KEY",
              help="Several suites, several comments: each key keeps its own [default].")
@click.option("--comment-author", metavar="LOGIN", help="The login the token comments as [github-actions[bot] with "
                                                        "the workflow's GITHUB_TOKEN].")
def merge(reports: tuple[str, ...], output_dir: str, baseline: str | None, fail_on: str, baseline_artifact: str,
          comment: str | None, comment_key: str, comment_author: str | None) -> None:
    """Join the report.json files of a run's shards (--shard K/N) into one set of artifacts, with the counts of one
    unsharded run; with --comment, post the whole run's pull-request comment (a shard posts none). Exit 0 when every
    case passed, 1 when not, 2 when the reports cannot be merged."""
    from .merge_command import MergeOptions, merge_command

    with _guarded():
        code = merge_command([Path(p) for p in reports], Path(output_dir),
                             MergeOptions(baseline, fail_on, comment, comment_key, comment_author,
                                          baseline_artifact))
    sys.exit(code)


@main.command("action", context_settings={"help_option_names": ["-h", "--help"]})
def action() -> None:
    """GitHub Action entrypoint: read INPUT_* and run like `agenttest run` (see action.yml)."""
    from .github.action import run_action

    sys.exit(run_action())


@main.command()
@click.option("-i", "--input", "labels", required=True, metavar="LABELS",
              help='A JSONL file of labelled examples: {"input", "output", "criteria", "label": true|false}.')
@click.option("--judge", metavar="ID", help="The judge to measure (default: defaults.judge).")
@click.option("--samples", type=click.IntRange(min=1), metavar="K",
              help="Ask the judge K times a line: the majority decides, and its self-contradictions are counted [1].")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Also write the figures here, as JSON.")
@click.option("--min-kappa", type=float, metavar="X", help="Exit 1 when Cohen's κ is below X.")
@click.option("--min-accuracy", type=float, metavar="X", help="Exit 1 when the accuracy is below X (0 to 1).")
@click.option("--config", type=click.Path(dir_okay=False), help="agenttest.yaml (default: discovered).")
@click.option("--cache", metavar="DIR", help="Cache of the judge's replies [~/.cache/agenttest/helpers].")
@click.option("--no-cache", is_flag=True, default=None, help="Ask the judge afresh (and store nothing).")
@click.option("--record", metavar="DIR", type=click.Path(file_okay=False), help="Record the judge's calls in DIR.")
@click.option("--replay", metavar="DIR", help="Answer the judge's calls from the cassettes in DIR; no network.")
@click.option("--max-cost", type=float, metavar="USD", help="Budget in USD.")
@click.option("--max-tokens", type=int, metavar="N", help="Budget in tokens.")
@click.option("--parallel", type=int, help="Lines judged at once [4].")
@click.option("--retries", type=int, help="Retries of one call on connection errors, 429 and 5xx [2].")
@click.option("--timeout", help="Per line, Go-style (30s, 2m) [2m].")
def calibrate(**options: Any) -> None:
    """Measure a judge against labelled examples before trusting it: accuracy, true-positive and true-negative
    rates with 95 % intervals, Cohen's κ and the majority-label baseline. Exit 1 below --min-kappa or
    --min-accuracy, or when a line could not be judged; 2 on a usage or config mistake."""
    from .calibrate import calibrate_command

    with _guarded():
        code = calibrate_command(options)
    sys.exit(code)
