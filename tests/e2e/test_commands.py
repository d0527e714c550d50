"""`agenttest validate` and `agenttest schema`, and how unknown commands are told apart from `run`'s options."""

from __future__ import annotations

import json

import jsonschema

from .conftest import Project


def test_validate_reports_every_invalid_entry_and_calls_no_agent(project: Project) -> None:
    project.suite("good.jsonl", {"id": "a", "input": "hi", "assert": {"type": "contains", "value": "hi"}})
    good = project.run("validate", "-i", "good.jsonl")
    assert good.code == 0 and good.stdout.strip() == "1 valid, 0 invalid in 1 file(s)"
    project.suite("bad.jsonl", {"id": "a", "input": "hi"}, "{broken",
                  {"id": "b", "input": "hi", "assert": {"type": "regex", "value": "("}})
    calls = project.root / "calls.txt"
    bad = project.run("validate", "-i", "bad.jsonl", env={"AGENT_CALLS_FILE": str(calls)})
    assert bad.code == 2
    lines = bad.stdout.splitlines()
    assert lines[0].startswith("bad.jsonl:2: invalid test case: invalid JSON")
    assert lines[1].startswith("bad.jsonl:3: invalid test case: assert")
    assert lines[-1] == "1 valid, 2 invalid in 1 file(s)"
    assert not calls.exists()
    assert not (project.root / "agenttest-results").exists()


def test_validate_checks_the_config_too(project: Project) -> None:
    project.suite("good.jsonl", {"id": "a", "input": "hi"})
    project.write("agenttest.yaml", "agents:\n  x:\n    provider: nope\n")
    run = project.run("validate", "-i", "good.jsonl")
    assert run.code == 2 and "agents.x.provider: unknown provider 'nope'" in run.stderr


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
