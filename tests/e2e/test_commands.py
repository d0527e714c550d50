"""`agenttest validate` and `agenttest schema`, and how unknown commands are told apart from `run`'s options."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema

from agenttest import __version__

from .conftest import Project


def test_validate_reports_every_invalid_entry_and_calls_no_agent(project: Project) -> None:
    project.suite("good.jsonl", {"id": "a", "input": "hi", "assert": {"type": "contains", "value": "hi"}})
    good = project.run("validate", "-i", "good.jsonl")
    assert good.code == 0 and good.stdout.strip() == "1 valid, 0 invalid in 1 file"
    project.suite("bad.jsonl", {"id": "a", "input": "hi"}, "{broken",
                  {"id": "b", "input": "hi", "assert": {"type": "regex", "value": "("}})
    calls = project.root / "calls.txt"
    bad = project.run("validate", "-i", "bad.jsonl", env={"AGENT_CALLS_FILE": str(calls)})
    assert bad.code == 2
    lines = bad.stdout.splitlines()
    assert lines[0].startswith("bad.jsonl:2: invalid test case: invalid JSON")
    assert lines[1].startswith("bad.jsonl:3: invalid test case: assert")
    assert lines[-1] == "1 valid, 2 invalid in 1 file"
    assert not calls.exists()
    assert not (project.root / "agenttest-results").exists()


def test_validate_of_an_empty_suite_says_why_it_fails(project: Project) -> None:
    project.write("empty.jsonl", "// nothing yet\n\n")
    run = project.run("validate", "-i", "empty.jsonl")
    assert run.code == 2
    assert run.stdout.strip() == "0 valid, 0 invalid in 1 file"
    assert run.stderr.strip() == ("Error: no test cases found in empty.jsonl (empty.jsonl: it holds only comments and "
                                  "blank lines)")


def test_validate_checks_the_config_too(project: Project) -> None:
    project.suite("good.jsonl", {"id": "a", "input": "hi"})
    project.write("agenttest.yaml", "agents:\n  x:\n    provider: nope\n")
    run = project.run("validate", "-i", "good.jsonl")
    assert run.code == 2 and "agents.x.provider: unknown provider 'nope'" in run.stderr


def test_validate_without_a_config_names_each_case_asking_a_helper_and_suggests_init(tmp_path: Path) -> None:
    """No agenttest.yaml: every case that asks a judge or a simulated user is invalid at its line, naming the
    helpers by role; the others are counted valid, and the last line says to run `agenttest init` — as `run` does."""
    project = Project(tmp_path)
    (tmp_path / ".git").mkdir()
    judged = {"type": "agent", "use": "agents:workers.test.validator", "value": "polite"}
    project.suite("tests/agents/example.jsonl",
                  {"id": "static", "input": "hi", "assert": {"type": "contains", "value": "hi"}},
                  {"id": "judged", "input": "hi", "assert": [{"type": "contains", "value": "hi"}, judged]},
                  {"id": "talks", "input": "hi", "simulator": {"use": "workers.test.user"},
                   "checkpoints": [{"id": "helps", "assert": judged}]},
                  {"id": "scripted", "simulator": {"use": "scripted", "replies": ["hi"]},
                   "checkpoints": [{"id": "greets", "assert": {"type": "contains", "value": "hi"}}]})
    run = project.run("validate", "-i", "tests/agents/example.jsonl")
    assert run.code == 2 and "Traceback" not in run.stderr
    assert run.stdout.splitlines() == [
        "tests/agents/example.jsonl:2: no agenttest.yaml to define its judge 'workers.test.validator'",
        "tests/agents/example.jsonl:3: no agenttest.yaml to define its simulator 'workers.test.user' and judge "
        "'workers.test.validator'",
        "2 valid, 2 invalid in 1 file"]
    assert run.stderr.splitlines() == [
        "Error: no agenttest.yaml found (looked upward from the working directory and the first input): the cases "
        "above need one; `agenttest init` writes it"]
    ran = project.run("-i", "tests/agents/example.jsonl")
    assert ran.code == 2
    assert ran.stderr.strip() == (
        "Error: no agenttest.yaml found (looked upward from the working directory and the first input); create one "
        "that defines the agent under test: `agenttest init` writes one")
    assert project.run("init").code == 2         # the suite is there: init writes nothing
    (tmp_path / "tests" / "agents" / "example.jsonl").rename(tmp_path / "mine.jsonl")
    assert project.run("init").code == 0
    fixed = project.run("validate", "-i", "mine.jsonl")
    assert (fixed.code, fixed.stdout.strip()) == (0, "4 valid, 0 invalid in 1 file"), fixed.stdout + fixed.stderr


def test_schema_describes_the_cases_the_loader_accepts(project: Project) -> None:
    run = project.run("schema")
    assert run.code == 0
    schema = json.loads(run.stdout)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    assert validator.is_valid({"id": "a", "input": "hi", "assert": [{"type": "contains", "value": "x"}]})
    assert not validator.is_valid({"id": "a", "input": "hi", "asert": {}})


def test_unknown_commands_are_not_run_arguments(project: Project) -> None:
    run = project.run("merj", "a.json")
    assert run.code == 2 and "No such command 'merj'" in run.stderr
    assert run.stderr.splitlines()[-1] == ("Error: No such command 'merj' (did you mean 'merge'?), and no suite file "
                                           "or directory of that name")


def test_suites_may_be_arguments_of_run_as_of_validate(project: Project) -> None:
    project.suite("tests/a.jsonl", {"id": "a", "input": "hi", "assert": {"type": "contains", "value": "echo"}})
    project.suite("tests/b.jsonl", {"id": "b", "input": "hi", "assert": {"type": "contains", "value": "echo"}})
    for args in (("tests/a.jsonl",), ("run", "tests/a.jsonl"), ("run", "tests/a.jsonl", "-i", "tests/b.jsonl"),
                 ("tests/",), ("run", "--parallel", "1", "tests/b.jsonl", "tests/a.jsonl")):
        run = project.run(*args)
        assert run.code == 0, (args, run.stdout + run.stderr)
        expected = ["a", "b"] if len(args) > 2 or args == ("tests/",) else ["a"]
        assert sorted(r["id"] for r in run.report["results"]) == expected, args
    word = project.run("run", "hello")         # an argument is a suite, never a message
    assert word.code == 2
    assert word.stderr.splitlines()[-1] == ('Error: hello: no such suite file or directory (a message to send is '
                                            '-i "hello")')
    nothing = project.run("run")
    assert nothing.code == 2 and "give the suites to run: SUITE arguments, or -i SOURCE" in nothing.stderr


def test_help_shows_examples_exit_codes_and_the_options_of_run(project: Project) -> None:
    for args in (("--help",), ("-h",), ("run", "--help")):
        text = project.run(*args).stdout
        assert "Examples:\n    agenttest -i tests/expense.jsonl " in text, args
        assert "Exit codes:\n    0    every selected case passed" in text and "  130  interrupted" in text, args
        assert "-i, --input SOURCE" in text and "--color [auto|always|never]" in text, args
    assert "Commands:" in project.run("--help").stdout


def test_dash_capital_v_is_version(project: Project) -> None:
    short, long = project.run("-V"), project.run("--version")
    assert short.code == long.code == 0
    assert short.stdout == long.stdout == f"agenttest, version {__version__}\n"


def _typed(project: Project, *args: str) -> subprocess.CompletedProcess[str]:
    """The installed `agenttest` script, as a user types it (`python -m agenttest` names itself so)."""
    command = Path(sys.executable).parent / "agenttest"
    return subprocess.run([str(command), *args], cwd=project.root, capture_output=True, text=True, timeout=60)


def test_an_unknown_option_names_the_command_as_typed(project: Project) -> None:
    implied = _typed(project, "-x")
    assert implied.returncode == 2
    assert implied.stderr.splitlines() == ["Usage: agenttest [OPTIONS] [SUITE]...", "Try 'agenttest --help' for help.",
                                           "", "Error: No such option '-x'."]
    explicit = _typed(project, "run", "-i", "a.jsonl", "--colour", "never")
    assert explicit.returncode == 2
    assert explicit.stderr.splitlines()[:2] == ["Usage: agenttest run [OPTIONS] [SUITE]...",
                                                "Try 'agenttest run --help' for help."]
    assert "Error: No such option '--colour'. (Did you mean one of: '--color'" in explicit.stderr
    assert _typed(project, "validate", "-x").stderr.startswith("Usage: agenttest validate [OPTIONS] [FILE]...\n")
