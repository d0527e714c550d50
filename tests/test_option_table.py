"""One table of run options (option_table, validated as RunOptions): `run`'s flags, the Action's inputs in
action.yml and composite/action.yml, and the README's tables of flags and inputs all agree with it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, get_args

import click
import pytest
import yaml

from agenttest.cli import main
from agenttest.command_line import RUN_FLAGS
from agenttest.errors import FailOn
from agenttest.github.action import ACTION_INPUTS, OPTION_INPUTS, STEP_INPUTS
from agenttest.option_table import Option, options, shown_default
from agenttest.options import RunOptions

REPO = Path(__file__).resolve().parents[1]
TABLE = options()
FIELDS = RunOptions.model_fields
BRACKETED = re.compile(r"\[([^\[\]]+)\]\.?$")      # the default a help text or a description ends with
FLAG_TABLE = "| flag | default | meaning |"
INPUT_TABLE = "| input | flag | meaning |"


def _run_command() -> click.Command:
    command = main.get_command(click.Context(main), "run")
    assert command is not None
    return command


def _value_type(name: str) -> Any:
    """The type of a RunOptions field, `| None` taken off, from pydantic's own reading of the model."""
    annotation = FIELDS[name].annotation
    args = [arg for arg in get_args(annotation) if arg is not type(None)]
    return args[0] if type(None) in get_args(annotation) and len(args) == 1 else annotation


def test_every_run_option_is_a_flag_of_run_unless_the_table_says_otherwise() -> None:
    params = {param.name: param for param in _run_command().params}
    assert list(params) == ["suites", *RUN_FLAGS]
    assert len(set(RUN_FLAGS)) == len(RUN_FLAGS)
    flagged = {name for name, option in TABLE.items() if option.flag.command}
    assert set(RUN_FLAGS) == flagged
    # options of agenttest.yaml and the Action only
    assert set(FIELDS) - flagged == {"job_summary", "baseline_artifact"}
    assert set(RUN_FLAGS) - set(FIELDS) == {"input", "config"}


@pytest.mark.parametrize("name", sorted(set(RUN_FLAGS) & set(RunOptions.model_fields)))
def test_each_flag_takes_what_its_option_validates(name: str) -> None:
    param = next(p for p in _run_command().params if p.name == name)
    assert isinstance(param, click.Option)
    value_type = _value_type(name)
    if value_type is bool:
        assert param.is_flag and param.default is None      # unset unless given: `defaults:` apply
    elif value_type == int | str:        # `--runs N|auto[:MAX]`: text, which the option reads (run_count)
        assert param.type.name == "text" and param.metavar == "N|auto[:MAX]"
    elif get_args(value_type):
        assert isinstance(param.type, click.Choice) and tuple(param.type.choices) == get_args(value_type)
    elif value_type in (int, float):
        assert param.type.name == {int: "integer", float: "float"}[value_type]
    else:
        assert value_type is str and param.type.name in ("text", "file", "directory")
    shown = BRACKETED.search(param.help or "")
    default = FIELDS[name].default
    if default is not None and not isinstance(default, bool):
        assert shown and shown.group(1) == shown_default(default), param.help
    assert ("--" + name.replace("_", "-")) in param.opts


def test_fail_on_takes_the_choices_of_its_literal_everywhere() -> None:
    assert get_args(FIELDS["fail_on"].annotation) == get_args(FailOn)
    merge = main.get_command(click.Context(main), "merge")
    assert merge is not None
    fail_on = next(p for p in merge.params if p.name == "fail_on")
    output_dir = next(p for p in merge.params if p.name == "output_dir")
    assert isinstance(fail_on.type, click.Choice) and tuple(fail_on.type.choices) == get_args(FailOn)
    assert (fail_on.default, output_dir.default) == (FIELDS["fail_on"].default, FIELDS["output_dir"].default)
    assert OPTION_INPUTS["fail-on"].choices == get_args(FailOn)


def _inputs(path: str) -> dict[str, dict[str, Any]]:
    return yaml.safe_load((REPO / path).read_text())["inputs"]


@pytest.mark.parametrize("path", ["action.yml", "composite/action.yml"])
def test_the_action_declares_an_input_for_each_option_that_has_one(path: str) -> None:
    inputs = _inputs(path)
    own = {"python-version", "setup-python"} if path.startswith("composite") else set()
    assert set(inputs) - own == set(ACTION_INPUTS)
    assert set(ACTION_INPUTS) == {"input", *OPTION_INPUTS, *STEP_INPUTS}
    assert {option.flag.input for option in TABLE.values() if option.flag.input} == {"input", *OPTION_INPUTS}
    for name, option in OPTION_INPUTS.items():
        description = inputs[name]["description"]
        shown = BRACKETED.search(description)
        if option.default is not None:       # None: the input describes what happens unset (`annotations`)
            assert shown and shown.group(1) == shown_default(option.default), (name, description)
        if option.type is bool:
            assert "(true/false)" in description, (name, description)
        for choice in option.choices:
            assert choice in description, (name, choice)


def _tables(header: str) -> list[list[list[str]]]:
    """Every Markdown table of README.md and docs/*.md whose header row is `header`, as rows of cells."""
    found = []
    for path in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        lines = path.read_text().splitlines()
        for index, line in enumerate(lines):
            if line.strip() != header:
                continue
            rows = []
            for row in lines[index + 2:]:
                if not row.startswith("|"):
                    break
                rows.append([cell.strip() for cell in re.split(r"(?<!\\)\|", row.strip())[1:-1]])
            found.append(rows)
    return found


def _spans(cell: str) -> list[str]:
    return [span.replace("\\|", "|") for span in re.findall(r"`([^`]+)`", cell)]


def _names(option: Option) -> set[str]:
    """Every name of an option's flag, `--no-annotations` of `--annotations/--no-annotations` too."""
    return {part for name in option.flag_names for part in name.split("/")}


def _option_of_flag(flag: str) -> Option:
    return next(option for option in TABLE.values() if flag in _names(option))


def test_the_readme_lists_every_flag_of_run_with_its_default() -> None:
    tables = _tables(FLAG_TABLE)
    assert len(tables) == 1, f"one table headed {FLAG_TABLE!r} in README.md or docs/*.md"
    documented: set[str] = set()
    for flags, default, _meaning in tables[0]:
        groups = _spans(flags)          # `--junit` / `--summary`: an option each
        defaults = _spans(default)      # `1` / `100`: a default each, when the row gives them
        for index, group in enumerate(groups):
            names = re.findall(r"--[a-z-]+", group)
            documented.update(names)
            option = _option_of_flag(names[0])
            if len(defaults) == len(groups) and option.default is not None and option.type is not bool:
                assert defaults[index] == shown_default(option.default), (group, defaults[index])
            if default == "off":
                assert option.default is False, group
            listed = re.search(r"\s([a-z]+(?:\|[a-z]+)+)$", group)      # `--color auto|always|never`
            if listed:
                assert tuple(listed.group(1).split("|")) == option.choices, group
    long_flags = {part for param in _run_command().params if isinstance(param, click.Option)
                  for part in [*param.opts, *param.secondary_opts] if part.startswith("--")}
    assert documented == long_flags


def test_the_readme_lists_every_input_of_the_action_with_its_flag() -> None:
    tables = _tables(INPUT_TABLE)
    assert len(tables) == 1, f"one table headed {INPUT_TABLE!r} in README.md or docs/*.md"
    documented: set[str] = set()
    for names, flag, _meaning in tables[0]:
        inputs = _spans(names)
        documented.update(inputs)
        for name in inputs:
            option = TABLE["input"] if name == "input" else OPTION_INPUTS.get(name)
            if flag == "same names":
                assert option is not None and option.flag.command and f"--{name}" in _names(option), name
            elif flag:
                assert option is not None and option.flag.command and _spans(flag)[0] in _names(option), name
            else:       # no flag: an input of the step itself, or an option that has no flag
                assert option is None or not option.flag.command, name
    assert documented == set(ACTION_INPUTS)
