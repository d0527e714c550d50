"""ctrf.json (the CTRF shape its reporters read) and the self-contained HTML page."""

from __future__ import annotations

import dataclasses
import json
from html.parser import HTMLParser
from pathlib import Path

import jsonschema

from agenttest.analysis.comparison import compare
from agenttest.github.links import SourceLinks
from agenttest.report.ctrf import CtrfWriter, render_ctrf
from agenttest.report.html import render_html
from agenttest.results import CaseResult

from .conftest import HOSTILE, hostile_result, make_report, mixed_results

# The parts of ctrf-io's schema (schema/ctrf.schema.json) that readers rely on.
_STATUS = {"enum": ["passed", "failed", "skipped", "pending", "other"]}
CTRF_SCHEMA = {
    "type": "object",
    "required": ["reportFormat", "specVersion", "results"],
    "properties": {
        "reportFormat": {"const": "CTRF"},
        "specVersion": {"type": "string", "pattern": r"^\d+\.\d+\.\d+$"},
        "results": {
            "type": "object",
            "required": ["tool", "summary", "tests"],
            "properties": {
                "tool": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}},
                "summary": {
                    "type": "object",
                    "required": ["tests", "passed", "failed", "skipped", "pending", "other", "start", "stop"],
                    "additionalProperties": False,
                    "properties": {key: {"type": "integer"} for key in (
                        "tests", "passed", "failed", "skipped", "pending", "other", "flaky", "suites", "start",
                        "stop", "duration")} | {"extra": {"type": "object"}},
                },
                "tests": {"type": "array", "items": {
                    "type": "object", "required": ["name", "status", "duration"],
                    "properties": {"name": {"type": "string", "minLength": 1}, "status": _STATUS,
                                   "duration": {"type": "integer"}, "line": {"type": "integer"},
                                   "filePath": {"type": "string"}, "message": {"type": "string"},
                                   "trace": {"type": "string"}, "rawStatus": {"type": "string"},
                                   "suite": {"type": "array", "minItems": 1, "items": {"type": "string"}},
                                   "tags": {"type": "array", "items": {"type": "string"}}}}},
            },
        },
    },
}


def test_ctrf_document(tmp_path: Path, links: SourceLinks) -> None:
    path = tmp_path / "ctrf.json"
    CtrfWriter(path, links).run_finished(make_report([*mixed_results(), hostile_result()]))
    document = json.loads(path.read_text())
    jsonschema.validate(document, CTRF_SCHEMA)
    results = document["results"]
    assert results["tool"] == {"name": "agenttest", "version": "0.1.0"}
    summary = results["summary"]
    assert (summary["tests"], summary["passed"], summary["failed"], summary["skipped"]) == (7, 2, 4, 1)
    assert summary["stop"] - summary["start"] == 5000 and summary["suites"] == 3
    tests = {t["name"]: t for t in results["tests"]}
    assert tests["fail"]["message"] == "expected hello" and tests["fail"]["filePath"] == "suites/a.jsonl"
    assert tests["fail"]["line"] == 2 and "✗ contains" in tests["fail"]["trace"]
    assert tests["boom"]["status"] == "failed" and tests["boom"]["rawStatus"] == "error"
    assert tests["later"]["status"] == "skipped" and tests["later"]["message"] == "not built yet"
    hostile = next(t for t in results["tests"] if t["rawStatus"] == "failed" and t["name"].startswith("hostile"))
    assert "\x1b" not in json.dumps(hostile, ensure_ascii=False) and "#xD800" in hostile["trace"]


def test_ctrf_of_an_empty_report() -> None:
    document = render_ctrf(make_report([]).to_dict())
    jsonschema.validate(document, CTRF_SCHEMA)
    summary = document["results"]["summary"]
    assert {key: summary[key] for key in ("tests", "passed", "failed", "skipped", "pending", "other", "suites")} == {
        "tests": 0, "passed": 0, "failed": 0, "skipped": 0, "pending": 0, "other": 0, "suites": 0}
    assert summary["stop"] - summary["start"] == 5000 and summary["duration"] == 4321
    assert document["results"]["tests"] == []


def test_ctrf_counts_of_an_interrupted_run(links: SourceLinks) -> None:
    unrun = CaseResult(id="cut", status="skipped", error="interrupted", file="suites/c.jsonl", line=1)
    document = render_ctrf(make_report([*mixed_results(), unrun], interrupted=True).to_dict(), links)
    summary = document["results"]["summary"]
    assert {key: summary[key] for key in ("tests", "passed", "failed", "skipped", "suites")} == {
        "tests": 7, "passed": 2, "failed": 3, "skipped": 2, "suites": 3}
    assert summary["extra"] == {"errors": 1, "timeouts": 1, "pass_rate": 40.0, "interrupted": True}
    assert sum(1 for test in document["results"]["tests"] if test["rawStatus"] == "failed") == 1


def test_ctrf_tells_each_tests_change_against_the_baseline(links: SourceLinks) -> None:
    now = make_report(mixed_results()).to_dict()
    then = [dataclasses.replace(result, status={"fail": "passed", "pass": "failed", "boom": "passed"}.get(
        result.id, result.status)) for result in mixed_results() if result.id != "chat"]
    now["comparison"] = compare(now, make_report(then).to_dict(), path="base/report.json")
    document = render_ctrf(now, links)
    jsonschema.validate(document, CTRF_SCHEMA)
    tests = {test["name"]: test for test in document["results"]["tests"]}
    changes = {name: test["extra"]["baseline"] for name, test in tests.items() if "baseline" in test.get("extra", {})}
    assert {name: change["change"] for name, change in changes.items()} == {
        "fail": "regression", "boom": "regression", "pass: Passes": "fix", "slow": "still_failing", "chat": "new"}
    evidence = {entry["id"]: entry["evidence"] for entry in now["comparison"]["regressions"]}
    assert changes["fail"] == {"change": "regression", "was": "passed", "evidence": evidence["fail"]}
    assert changes["pass: Passes"] == {"change": "fix", "was": "failed"} and changes["chat"] == {"change": "new"}
    assert tests["fail"]["extra"]["failure_type"] and "baseline" not in tests["later"].get("extra", {})
    assert document["results"]["summary"]["extra"]["baseline"] == {
        "path": "base/report.json", **now["comparison"]["counts"]}


class Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attributes: list[tuple[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attributes.extend(attrs)


def test_html_page_is_self_contained_and_inert() -> None:
    page = render_html(make_report([*mixed_results(), hostile_result(input=HOSTILE)]).to_dict())
    parser = Elements()
    parser.feed(page)
    assert page.startswith("<!DOCTYPE html>")
    assert "script" not in parser.tags and "img" not in parser.tags
    assert not [value for name, value in parser.attributes if name in ("src", "onerror")]
    assert [v for n, v in parser.attributes if n == "href"] == [f"#case-{i}" for i in range(7)]
    assert parser.tags.count("details") == 7
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "NUL#x00" in page and "\x1b" not in page
    assert "<th class=\"n\">Total</th>" in page and ">33.3%<" in page    # 2 of the 6 that ran passed
    assert "expected hello" in page and "user: hi\nassistant: hello\nuser: bye\nagent: goodbye" in page


def test_the_html_header_states_the_verdict_and_a_readable_start_time() -> None:
    page = render_html(make_report(mixed_results()).to_dict())
    assert "<h1>❌ agenttest: failed (2/6)</h1>" in page
    assert "started 2026-01-01 12:00:00 UTC" in page and "2026-01-01T12:00:00+00:00" not in page
    tolerated = make_report(mixed_results()).to_dict()
    tolerated["metadata"]["options"]["fail_on"] = "never"
    assert "<h1>⚠️ agenttest: failed (--fail-on never) (2/6)</h1>" in render_html(tolerated)
    assert "<h1>✅ agenttest: passed (1/1)</h1>" in render_html(make_report(mixed_results()[:1]).to_dict())
