"""The committed JSON Schema of a test case (schema/testcase.schema.json, for editors) is what `agenttest schema`
prints today, and it accepts the suites the project ships while rejecting what the loader rejects."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from jsonschema import Draft202012Validator

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
