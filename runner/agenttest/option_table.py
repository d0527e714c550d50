"""The table of run options: each option's type, default and limits, and how `agenttest run` and the Action spell it.

`options.RunOptions` is this table validated: it inherits every row. The table itself is plain Python, so
`agenttest --help` lists the options, defaults included, without loading pydantic. A new option is one row here
(and its place in `command_line.RUN_FLAGS`): its flag of `run` and its Action input are built from the row, and
tests/test_option_table.py checks that action.yml, composite/action.yml and the tables of docs/command-line.md and
docs/github-actions.md list it too.
"""

# No `from __future__ import annotations`: pydantic reads these annotations from RunOptions, in another module,
# where the names they use (Flag, Limit, …) are unknown, so they must be objects, not strings.

import types
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union, get_args, get_origin, get_type_hints

from .artifacts import ARTIFACT_FILES
from .durations import parse_duration
from .errors import CommentMode, FailOn

Color = Literal["auto", "always", "never"]
MissingInput = Literal["skip", "fail", "ignore"]


class Limit:
    """The bounds of a numeric option (`Limit(ge=1)`, `Limit(gt=0, le=100)`). Pydantic reads them as annotated_types'
    `Gt`, `Ge`, `Lt` and `Le` (a `GroupedMetadata`), made only then: importing annotated_types takes ~0.7× the
    bare interpreter's start, and `agenttest validate` reads this table without pydantic (issue #27)."""

    __slots__ = ("ge", "gt", "le", "lt")
    __is_annotated_types_grouped_metadata__ = True

    def __init__(self, *, gt: float | None = None, ge: float | None = None, lt: float | None = None,
                 le: float | None = None) -> None:
        self.gt, self.ge, self.lt, self.le = gt, ge, lt, le

    def __iter__(self) -> Iterator[Any]:
        import annotated_types

        for name in ("gt", "ge", "lt", "le"):
            bound = getattr(self, name)
            if bound is not None:
                yield getattr(annotated_types, name.capitalize())(bound)

    def __repr__(self) -> str:
        bounds = ", ".join(f"{name}={getattr(self, name)!r}" for name in ("gt", "ge", "lt", "le")
                           if getattr(self, name) is not None)
        return f"Limit({bounds})"


@dataclass(frozen=True)
class Flag:
    """How `agenttest run` and the Action spell one option. `{default}` in `help` stands for the option's default."""

    help: str
    names: tuple[str, ...] = ()         # the flag's names; `--long-name` when none are given
    metavar: str | None = None
    path: Literal["file", "directory"] | None = None     # a path that must not be of the other kind
    input: str | None = None            # the Action's input of the option, if it has one
    command: bool = True                # False: not a flag of `run` (an option of agenttest.yaml and the Action)
    multiple: bool = False


@dataclass(frozen=True)
class Option:
    """One row of the table, as the command line and the Action read it."""

    name: str
    type: Any           # the value's type, None left out: str, int, float, bool, a Literal, list[str]
    default: Any
    flag: Flag

    @property
    def choices(self) -> tuple[str, ...]:
        """The values of a Literal option (`fail_on`), in the Literal's order; () for any other option."""
        return get_args(self.type) if get_origin(self.type) is Literal else ()

    @property
    def flag_names(self) -> tuple[str, ...]:
        return self.flag.names or ("--" + self.name.replace("_", "-"),)

    @property
    def help(self) -> str:
        return self.flag.help.replace("{default}", shown_default(self.default))


class OptionTable:
    """Every run option by its long name (`--output-dir` is `output_dir`), in the order of report.json's
    `metadata.options` (`run --help` follows `command_line.RUN_FLAGS`)."""

    name: Annotated[str | None, Flag("Target agent id (default: from the config or the suite's path).",
                                     ("-n", "--name"), input="agent")] = None
    output: Annotated[str | None, Flag("Also write the report here: .md → Markdown, .html → HTML, else JSON.",
                                       ("-o", "--output"), path="file")] = None
    output_dir: Annotated[str, Flag("Artifacts directory [{default}].", path="directory",
                                    input="output-dir")] = "agenttest-results"
    junit: Annotated[str | None, Flag(f"JUnit XML path [OUTPUT_DIR/{ARTIFACT_FILES['junit']}].", path="file")] = None
    summary: Annotated[str | None, Flag(f"Markdown summary path [OUTPUT_DIR/{ARTIFACT_FILES['summary']}].",
                                        path="file")] = None
    job_summary: Annotated[bool, Flag("Append summary.md to the job summary.", command=False,
                                      input="job-summary")] = True
    connector: Annotated[str | None, Flag("Connector override for the target agent.", ("-c", "--connector"),
                                          input="connector")] = None
    user: Annotated[str | None, Flag("User id sent in the request context [test-user].", ("-u", "--user"))] = None
    team: Annotated[str | None, Flag("Team id sent in the request context [test-team].", ("-t", "--team"))] = None
    ctx: Annotated[str | None, Flag("JSON context file (chat_id, authorized, metadata…).", path="file")] = None
    verbose: Annotated[bool, Flag("Show outputs and every assertion verdict.", ("-v", "--verbose"))] = False
    simulator: Annotated[str | None, Flag("Simulator agent for dynamic cases that name none.", metavar="ID",
                                          input="simulator")] = None
    judge: Annotated[str | None, Flag("Judge of agent assertions that name none (default: defaults.judge).",
                                      metavar="ID")] = None
    before: Annotated[str | None, Flag("Global BeforeAll hook, module.Function.", input="before")] = None
    after: Annotated[str | None, Flag("Global AfterAll hook, module.Function.", input="after")] = None
    timeout: Annotated[str, Flag("Per-case timeout, Go-style (300ms, 30s, 1m30s) [{default}].",
                                 input="timeout")] = "2m"
    parallel: Annotated[int, Limit(ge=1), Flag("Concurrent cases [{default}].", input="parallel")] = 4
    runs: Annotated[int | str, Flag("Run each case N times: stability, pass@k and pass^k; auto[:MAX]: 3 "
                                    "runs, more while they disagree, up to MAX (10) [{default}].",
                                    metavar="N|auto[:MAX]", input="runs")] = 1
    min_pass_rate: Annotated[float, Limit(gt=0, le=100),
                             Flag("With --runs: a case passes at P percent [{default}].", metavar="P",
                                  input="min-pass-rate")] = 100.0
    run: Annotated[str | None, Flag("Only cases whose id matches (unanchored), or tag:NAME.", metavar="REGEX",
                                    input="filter")] = None
    shard: Annotated[str | None, Flag("Run only shard K of N (deterministic, balanced); see merge.", metavar="K/N",
                                      input="shard")] = None
    fail_fast: Annotated[bool, Flag("Stop scheduling after the first non-passing case.", input="fail-fast")] = False
    dry_run: Annotated[bool, Flag("Print the cases as JSONL; call no agent.")] = False
    baseline: Annotated[str | None, Flag("Compare with an earlier report.json: regressions, fixes, new; auto: the "
                                         "base branch's last report, fetched from GitHub.", metavar="REPORT|auto",
                                         input="baseline")] = None
    recheck: Annotated[int, Limit(ge=0),
                       Flag("With --baseline: a case that passed then and not now runs up to N more times and is a "
                            "regression only if it fails them all; 0: never [{default}].", metavar="N",
                            input="recheck")] = 2
    alpha: Annotated[float, Limit(gt=0, lt=1),
                     Flag("With --baseline and several runs a side: the significance level of the regression test "
                          "[{default}].", metavar="P")] = 0.05
    baseline_artifact: Annotated[str, Flag("The artifact --baseline auto takes report.json from [{default}].",
                                           command=False, input="baseline-artifact")] = "agenttest-results"
    # None: off on the command line, auto in the Action (launch.Launch.comment_default)
    comment: Annotated[CommentMode | None, Flag("The pull-request comment: auto (on pull_request events), always, "
                                                "failures, off [off; the Action: auto].", metavar="MODE",
                                                input="comment")] = None
    comment_key: Annotated[str, Flag("Several suites, several comments: each key keeps its own [{default}].",
                                     metavar="KEY", input="comment-key")] = "default"
    # None: github-actions[bot] with a workflow's token (`ghs_…`); any other token needs it (github.pull_request)
    comment_author: Annotated[str | None, Flag("The login the token comments as; only its comments are this run's "
                                               "[github-actions[bot] with the workflow's GITHUB_TOKEN].",
                                               metavar="LOGIN", input="comment-author")] = None
    retries: Annotated[int, Limit(ge=0),
                       Flag("Retries of one agent call on connection errors, 429 and 5xx [{default}].")] = 2
    # None: the user's cache directory (agents.cache.default_cache_directory)
    cache: Annotated[str | None, Flag("Cache of judge, simulator and generator replies "
                                      "[~/.cache/agenttest/helpers].", metavar="DIR")] = None
    no_cache: Annotated[bool, Flag("Ask every helper agent afresh (and store nothing).")] = False
    record: Annotated[str | None, Flag("Record every agent call (target and helpers) as cassettes in DIR.",
                                       metavar="DIR", path="directory", input="record")] = None
    replay: Annotated[str | None, Flag("Answer every agent call from the cassettes in DIR; no network.",
                                       metavar="DIR", input="replay")] = None
    max_cost: Annotated[float | None, Limit(ge=0), Flag("Run budget in USD (prices per connector or agent).",
                                                        metavar="USD", input="max-cost")] = None
    max_tokens: Annotated[int | None, Limit(ge=0), Flag("Run budget in tokens, over every role.", metavar="N",
                                                        input="max-tokens")] = None
    annotations: Annotated[bool | None, Flag("Emit ::error annotations at the failing JSONL lines "
                                             "[on in GitHub Actions].", ("--annotations/--no-annotations",),
                                             input="annotations")] = None
    max_annotations: Annotated[int, Limit(ge=0), Flag("At most this many annotations; the last says how many more "
                                                      "[{default}].", input="max-annotations")] = 10
    fail_on: Annotated[FailOn, Flag("Exit 1 on any failure, only on regressions against --baseline, or never "
                                    "[{default}].", input="fail-on")] = "failure"
    color: Annotated[Color, Flag("Colour the console: auto = on a terminal and in GitHub Actions, unless NO_COLOR "
                                 "is set (FORCE_COLOR forces it) [{default}].")] = "auto"
    interactive: Annotated[bool, Flag("On a terminal, you type the simulated user's turns of conversations (an "
                                      "empty line lets the simulator speak).")] = False
    save_conversation: Annotated[str | None, Flag("Append each conversation, as said, to FILE as a `turns` case "
                                                  "that replays it.", metavar="FILE", path="file")] = None
    on_missing_input: Annotated[MissingInput, Flag("When a conversation's fixed turns run out while the agent "
                                                   "awaits input [{default}].")] = "ignore"
    skip_interactive: Annotated[bool, Flag("Skip cases marked interactive.enabled when there is no "
                                           "terminal.")] = False

    @property
    def timeout_seconds(self) -> float:
        return parse_duration(self.timeout)


# Every run option's name, in the table's order (`options.RunOptions.model_fields`, read without pydantic).
OPTION_NAMES = tuple(OptionTable.__annotations__)

# The flags of `run` that are not run options: the suites, and the config file whose `defaults:` they override.
COMMAND_FLAGS = (
    Option("input", list[str], None, Flag("A JSONL/JSON suite, a directory, a glob, or a direct message. Repeatable.",
                                          ("-i", "--input"), metavar="SOURCE", multiple=True, input="input")),
    Option("config", str, None, Flag("agenttest.yaml (default: discovered).", path="file", input="config")),
)


def options() -> dict[str, Option]:
    """Every row: the run options in the table's order, then the other flags of `run`."""
    rows = {name: Option(name, _value_type(hint), getattr(OptionTable, name), _flag(hint))
            for name, hint in get_type_hints(OptionTable, include_extras=True).items()}
    return {**rows, **{option.name: option for option in COMMAND_FLAGS}}


def _flag(hint: Any) -> Flag:
    return next(item for item in hint.__metadata__ if isinstance(item, Flag))


def _value_type(hint: Any) -> Any:
    """The type of an option's value: the row's `Annotated` and `| None` taken off (`runs` stays `int | str`)."""
    value = get_args(hint)[0]
    if get_origin(value) in (Union, types.UnionType):
        kinds = [arg for arg in get_args(value) if arg is not type(None)]
        return kinds[0] if len(kinds) == 1 else Union[tuple(kinds)]     # noqa: UP007 (built at run time)
    return value


def shard_of(value: str) -> tuple[int, int]:
    """`--shard K/N` as (K, N), 1 ≤ K ≤ N. Raises ValueError saying what is wrong."""
    index, slash, total = value.partition("/")
    if not slash or not index.strip().isdigit() or not total.strip().isdigit():
        raise ValueError(f"expected K/N (e.g. 2/4), got {value!r}")
    k, n = int(index), int(total)
    if not 1 <= k <= n:
        raise ValueError(f"shard {k} of {n} does not exist: K goes from 1 to N")
    return k, n


def run_filter_pattern(value: str) -> str:
    """The regular expression of a `--run` value; `tag:NAME` selects by tag instead."""
    return value[4:] if value.startswith("tag:") else value


def agent_option(value: str | None) -> str | None:
    """`--simulator` and `--judge` as the run keeps them: `agents:ID` is ID."""
    return value[len("agents:"):] if value and value.startswith("agents:") else value


def run_filter_tag(value: str) -> str | None:
    return value[4:] if value.startswith("tag:") else None


def shown_default(value: Any) -> str:
    """A default as the help texts and action.yml show it: `100`, not `100.0`; `true`, not `True`."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
