"""Hand-made reports for the reporters' unit tests: every status, and agent text chosen to break each format."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agenttest.assertions.base import AssertionResult
from agenttest.github.links import SourceLinks
from agenttest.report.base import Report, RunInfo
from agenttest.results import CaseResult, Summary

# jenkinsci/xunit-plugin's junit-10.xsd (MIT) plus the optional testcase file/line attributes.
SCHEMA = Path(__file__).parent / "data" / "junit-10-with-location.xsd"

# Everything an agent might send back that breaks one format or another.
HOSTILE = (
    "::error file=README.md,line=1::pwned\n"
    "  ::set-output name=failed::0\n"
    "x ##[error]legacy ##[set-output name=passed]9\n"
    "::stop-commands::abc\n"
    "</details></summary><script>alert(1)</script><img src=x onerror=alert(1)>\n"
    "]]> <![CDATA[ x ]]> & &amp; \"quotes\" 'single'\n"
    "NUL\x00 BEL\x07 VT\x0b FF\x0c ESC\x1b[31mred\x1b[0m DEL\x7f C1\x85 surrogate\ud800 nonchar\ufffe\n"
    "| a | b |\n|---|---|\n"
    "```\n~~~\n# heading\n[link](https://evil.example) ![img](https://evil.example/x.png) @octocat www.evil.example\n"
    "100% %0A %25 a:b, c\r\nend\r"
)


def hostile_result(**overrides: Any) -> CaseResult:
    fields: dict[str, Any] = dict(
        id="hostile|`id`", name="<b>name</b> ::error::x", status="failed", input=HOSTILE, output=HOSTILE,
        duration_ms=1234, error="contains assertion failed: " + HOSTILE, file="suites/hostile.jsonl", line=3,
        assertions=[AssertionResult("contains", False, "expected ::error::x in " + HOSTILE, expected="::x",
                                    actual=HOSTILE),
                    AssertionResult("regex", True, "matched")],
    )
    fields.update(overrides)
    return CaseResult(**fields)


def make_report(results: list[CaseResult], *, error: str | None = None, interrupted: bool = False) -> Report:
    info = RunInfo(agent_id="assistants.expense", connector="openai.gpt4o", inputs=["suites/a.jsonl"],
                   total=len(results), started_at="2026-01-01T12:00:00+00:00", options={"timeout": "2m0s"})
    return Report(info=info, results=results, summary=Summary.from_statuses([r.status for r in results], 4321),
                  completed_at="2026-01-01T12:00:05+00:00", interrupted=interrupted, error=error, version="0.1.0")


def mixed_results() -> list[CaseResult]:
    return [
        CaseResult(id="pass", name="Passes", status="passed", input="hi", output="hello", duration_ms=10,
                   file="suites/a.jsonl", line=1, assertions=[AssertionResult("contains", True, "found")]),
        CaseResult(id="fail", status="failed", input="hi", output="nope", duration_ms=20, file="suites/a.jsonl",
                   line=2, error="expected hello",
                   assertions=[AssertionResult("contains", False, "expected hello", expected="hello", actual="nope"),
                               AssertionResult("regex", True, "matched")]),
        CaseResult(id="boom", status="error", input="hi", duration_ms=5, file="suites/a.jsonl", line=4,
                   error="agent error: HTTP 503 from http://localhost:1/chat", error_kind="infra"),
        CaseResult(id="slow", status="timeout", input="hi", duration_ms=2000, file="suites/b.jsonl", line=1,
                   error="timeout after 2s"),
        CaseResult(id="later", status="skipped", input="hi", file="suites/b.jsonl", line=2, error="not built yet"),
        CaseResult(id="chat", status="passed", input=[{"role": "user", "content": "hi"},
                                                      {"role": "assistant", "content": "hello"},
                                                      {"role": "user", "content": "bye"}],
                   output="goodbye", duration_ms=7, file="suites/b.jsonl", line=3),
    ]


@pytest.fixture
def links(tmp_path: Path) -> SourceLinks:
    (tmp_path / ".git").mkdir()
    return SourceLinks.from_environment(tmp_path, {"GITHUB_SERVER_URL": "https://github.com",
                                                   "GITHUB_REPOSITORY": "octo/repo", "GITHUB_SHA": "abc123"})
