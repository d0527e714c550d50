"""The committed JSON Schema of a test case (schema/testcase.schema.json, for editors) is what `agenttest schema`
prints today, and it accepts the suites the project ships while rejecting what the loader rejects."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import yaml
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

import docs_pages
from agenttest.cases.reader import read_entries
from agenttest.cases.schema import case_json_schema

REPO = Path(__file__).resolve().parents[2]
COMMITTED = REPO / "schema" / "testcase.schema.json"


def test_the_committed_schema_is_the_generated_one() -> None:
    printed = subprocess.run([sys.executable, "-m", "agenttest", "schema"], capture_output=True, text=True,
                             check=True).stdout
    assert COMMITTED.read_text() == printed, "schema/testcase.schema.json is stale: agenttest schema > it"
    assert json.loads(printed) == case_json_schema()


def test_the_committed_schema_accepts_every_shipped_case_and_rejects_mistakes() -> None:
    validator = Draft202012Validator(json.loads(COMMITTED.read_text()))
    suites = [*sorted((REPO / "examples").rglob("*.jsonl")), REPO / "runner/agenttest/templates/example.jsonl"]
    cases = [entry.value for suite in suites for entry in read_entries(suite)]
    assert len(cases) >= 10
    for case in cases:
        assert not list(validator.iter_errors(case)), case
    assert not validator.is_valid({"id": "x", "input": "hi", "asert": {"type": "contains", "value": "x"}})
    assert not validator.is_valid({"id": "x", "input": "hi", "assert": {"type": "contains", "negate": "yes"}})
    assert not validator.is_valid({"input": "hi"})
    assert not validator.is_valid({"id": "x", "input": "hi", "assert": {"type": "containz", "value": "x"}})
    assert not validator.is_valid({"id": "x", "input": "hi", "assert": "not_a_type"})
    assert validator.is_valid({"id": "x", "input": "hi", "assert": [{"type": "regex", "value": "^h"}, {"value": 1}]})


def test_the_suite_schema_takes_json_array_suites_as_the_readme_configures_it() -> None:
    case_schema = json.loads(COMMITTED.read_text())
    suite_schema = json.loads((REPO / "schema" / "suite.schema.json").read_text())
    registry = Registry().with_resource("testcase.schema.json", Resource.from_contents(case_schema, DRAFT202012))
    validator = Draft202012Validator(suite_schema, registry=registry)
    suite = [entry.value for entry in read_entries(REPO / "examples" / "expense" / "tests" / "expense.jsonl")]
    assert validator.is_valid(suite)
    assert not validator.is_valid([*suite, {"id": "x", "inptu": "hi"}])
    section = docs_pages.section("docs/command-line.md", "Editor completion and pre-commit")
    [settings] = re.findall(r"^```json\n(.*?)^```", section, re.M | re.S)
    [mapping] = json.loads(settings)["json.schemas"]
    assert (REPO / mapping["url"]).is_file()
    [precommit] = re.findall(r"^```yaml\n(.*?)^```", section, re.M | re.S)
    hooks = [hook["id"] for repo in yaml.safe_load(precommit)["repos"] for hook in repo["hooks"]]
    assert hooks == [hook["id"] for hook in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())]
