"""`agenttest run` as click reads it: its parameters, built from the option table, its help and its examples.

cli.py makes the `run` command of them; the Action parses its `args` input with the same command (`run_command`),
so that it needs neither the CLI module nor its click group. The table is imported when the parameters are built:
`agenttest --version` shows the examples without loading it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from .option_table import Option

EXAMPLES = """\b
Examples:
  agenttest -i tests/expense.jsonl           run one suite (run is implied)
  agenttest tests/expense.jsonl              the same: suites may be arguments
  agenttest -i tests/ --parallel 8 --runs 3  every suite below tests/, 3 runs each
  agenttest validate tests/*.jsonl           check suites, calling no agent

\b
Exit codes:
  0    every selected case passed (or was skipped)
  1    a case failed, errored, timed out or was unstable
  2    usage, config or suite error before any case ran, BeforeAll failed
  130  interrupted (SIGINT, SIGTERM); the partial artifacts are written"""

RUN_HELP = """Run test suites against the target agent. Suites may be given as arguments too (files, directories, globs,
    generators), as validate takes them."""

# The flags of `run`, in the order its help lists them: every row of the table that has a flag.
RUN_FLAGS = ("input", "name", "output", "output_dir", "connector", "user", "team", "ctx", "verbose", "simulator",
             "judge", "cache", "no_cache", "before", "after", "timeout", "parallel", "run", "runs", "min_pass_rate",
             "shard", "baseline", "recheck", "alpha", "comment", "comment_key", "comment_author", "fail_on",
             "fail_fast", "dry_run", "retries", "junit", "summary", "annotations", "max_annotations", "config",
             "record", "replay", "max_cost", "max_tokens", "color", "interactive", "save_conversation",
             "on_missing_input", "skip_interactive")


def run_command(callback: Callable[..., Any] | None = None, cls: type[click.Command] = click.Command) -> click.Command:
    """The `run` command: its parameters, help and examples, and `callback` to run it."""
    return cls("run", params=run_parameters(), help=RUN_HELP, epilog=EXAMPLES, callback=callback)


def run_parameters() -> list[click.Parameter]:
    """The parameters of `agenttest run`: the suite arguments, then its flags in RUN_FLAGS order."""
    from .option_table import options

    table = options()
    return [click.Argument(["suites"], nargs=-1, metavar="[SUITE]..."),
            *(_click_option(table[name]) for name in RUN_FLAGS)]


def _click_option(option: Option) -> click.Option:
    attrs: dict[str, Any] = {"help": option.help, "metavar": option.flag.metavar, "multiple": option.flag.multiple}
    if option.type is bool:
        attrs["default"] = None       # unset unless given, so that agenttest.yaml's `defaults:` apply
        if not any("/" in name for name in option.flag_names):      # `--x/--no-x` is a flag by its form
            attrs["is_flag"] = True
    elif option.choices:
        attrs["type"] = click.Choice(option.choices)
    elif option.type in (int, float):
        attrs["type"] = option.type
    elif option.flag.path:
        attrs["type"] = click.Path(dir_okay=option.flag.path != "file", file_okay=option.flag.path != "directory")
    return click.Option(list(option.flag_names), **attrs)
