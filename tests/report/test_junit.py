"""junit.xml: valid against the JUnit XSD with file/line, read correctly by junitparser, safe for any agent text."""

from __future__ import annotations

from pathlib import Path

import pytest
import xunitparser
from hypothesis import given
from hypothesis import strategies as st
from junitparser import Error, Failure, JUnitXml, Skipped
from lxml import etree

from agenttest.github.links import SourceLinks
from agenttest.report.escape import one_line, preview, xml_text
from agenttest.report.junit import BODY_CHARS, JUnitWriter, render_junit
from agenttest.report.verdicts import case_title, failure_body, first_reason
from agenttest.results import AssertionResult, CaseResult

from .conftest import SCHEMA, hostile_result, make_report, mixed_results


def validate(xml: str) -> etree._Element:
    """Parse with lxml (well-formed or raise) and validate against junit-10-with-location.xsd."""
    document = etree.fromstring(xml.encode("utf-8"))
    schema = etree.XMLSchema(etree.parse(str(SCHEMA)))
    schema.assertValid(document)
    return document


def test_structure_counts_and_locations(links: SourceLinks) -> None:
    xml = render_junit(make_report(mixed_results()).to_dict(), links, hostname="runner-1")
    root = validate(xml)
    assert root.tag == "testsuites"
    assert (root.get("tests"), root.get("failures"), root.get("errors"), root.get("time")) == ("6", "1", "2", "4.321")
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == ["suites/a.jsonl", "suites/b.jsonl"]
    a, b = suites
    assert (a.get("tests"), a.get("failures"), a.get("errors"), a.get("skipped")) == ("3", "1", "1", "0")
    assert (b.get("tests"), b.get("failures"), b.get("errors"), b.get("skipped")) == ("3", "0", "1", "1")
    assert a.get("file") == "suites/a.jsonl" and a.get("hostname") == "runner-1"
    assert a.get("timestamp") == "2026-01-01T12:00:00+00:00"
    properties = {p.get("name"): p.get("value") for p in a.find("properties")}
    assert properties == {"agenttest.version": "0.1.0", "agent": "assistants.expense", "connector": "openai.gpt4o",
                          "runs": "1", "pass_rate": "40.0"}     # the run's: 2 passed of the 5 that ran
    assert b.find("properties") is None      # once per file: readers keep one property set for all suites

    cases = {c.get("name"): c for c in root.iter("testcase")}
    passed = cases["pass: Passes"]
    assert (passed.get("classname"), passed.get("file"), passed.get("line"), passed.get("time")) == (
        "suites.a", "suites/a.jsonl", "1", "0.010")
    assert len(passed) == 0
    failure = cases["fail"].find("failure")
    assert failure.get("message") == "expected hello" and failure.get("type") == "contains"
    assert "✗ contains: expected hello (expected hello; actual nope)" in failure.text
    assert "✓ regex: matched" in failure.text
    assert "Input:\nhi" in failure.text and "Output:\nnope" in failure.text
    error = cases["boom"].find("error")
    assert error.get("type") == "infra" and error.get("message").startswith("agent error: HTTP 503")
    timeout = cases["slow"].find("error")
    assert timeout.get("type") == "timeout" and timeout.get("message") == "timeout after 2s"
    assert cases["later"].find("skipped").get("message") == "not built yet"
    out = cases["chat"].find("system-out").text
    assert out.splitlines() == ["user: hi", "assistant: hello", "user: bye", "agent: goodbye"]


def test_junitparser_reads_it(tmp_path: Path, links: SourceLinks) -> None:
    path = tmp_path / "junit.xml"
    JUnitWriter(path, links).run_finished(make_report(mixed_results()))
    xml = JUnitXml.fromfile(str(path))
    suites = list(xml)
    assert [s.name for s in suites] == ["suites/a.jsonl", "suites/b.jsonl"]
    assert (suites[0].tests, suites[0].failures, suites[0].errors, suites[0].skipped) == (3, 1, 1, 0)
    outcomes = {case.name: [type(r) for r in case.result] for suite in suites for case in suite}
    assert outcomes == {"pass: Passes": [], "fail": [Failure], "boom": [Error], "slow": [Error],
                        "later": [Skipped], "chat": []}
    fail = next(case for case in suites[0] if case.name == "fail")
    assert fail.classname == "suites.a" and fail.time == pytest.approx(0.02)
    assert fail.result[0].message == "expected hello" and fail.result[0].type == "contains"
    assert "Input:" in fail.result[0].text
    chat = next(case for case in suites[1] if case.name == "chat")
    assert "agent: goodbye" in chat.system_out


def test_hostile_agent_text_stays_valid_and_visible(links: SourceLinks) -> None:
    results = [hostile_result(), hostile_result(id="err", status="error", error_kind="agent", assertions=[]),
               hostile_result(id="skip", status="skipped", error="reason \x00\x1b[1m" + "]]>")]
    xml = render_junit(make_report(results).to_dict(), links)
    root = validate(xml)
    assert "\x1b" not in xml and "[31m" not in xml
    assert "<![CDATA[ x" not in xml               # the agent's CDATA is text, escaped
    failure = root.find(".//failure")
    body = failure.text
    for visible in ("NUL#x00", "BEL#x07", "VT#x0B", "FF#x0C", "DEL#x7F", "C1#x85", "surrogate#xD800", "nonchar#xFFFE"):
        assert visible in body
    assert "ESCred" in body                      # ANSI colour codes removed, text kept
    assert "</details></summary><script>" in body and "]]>" in body  # literal text, round-tripped by the parser
    assert "\n" not in failure.get("message")
    assert root.find(".//testcase").get("name") == "hostile|`id`: <b>name</b> ::error::x"
    assert root.find(".//skipped").get("message") == "reason #x00]]>"


@given(text=st.text(max_size=30), ident=st.text(min_size=1, max_size=8))
def test_any_text_reads_back_as_written(text: str, ident: str) -> None:
    """junit.xml is written as text, not through an XML library: whatever the strings hold, a parser reads back
    exactly the cleaned text (`xml_text`) in every attribute and element."""
    links = SourceLinks.from_environment(Path("/nonexistent"), {})
    result = CaseResult(id=ident, name=text, status="failed", input=text, output=text, error=text, duration_ms=1,
                        file="suites/a.jsonl", line=1, assertions=[AssertionResult("contains", False, text)])
    skipped = CaseResult(id=ident + "s", status="skipped", input=text, error=text or "x", file="suites/a.jsonl",
                         line=2)
    root = validate(render_junit(make_report([result, skipped], error=text or "e").to_dict(), links,
                                     hostname=text or "h"))
    data = result.to_dict()
    case, other = root.iter("testcase")
    failure = case.find("failure")
    assert case.get("name") == xml_text(case_title(data))
    assert root.find("testsuite").get("hostname") == xml_text(text or "h")
    assert failure.get("message") == xml_text(first_reason(data))
    assert (failure.text or "") == xml_text(preview(failure_body(data, path="suites/a.jsonl"), BODY_CHARS))
    assert other.find("skipped").get("message") == one_line(text or "x", 500)
    assert root.find(".//system-err").text == xml_text(text or "e")


def test_big_outputs_are_cut(links: SourceLinks) -> None:
    big = "x" * 2_000_000
    turns = [{"turn": i, "input": big, "output": big} for i in range(1, 60)]
    results = [hostile_result(output=big, input=big),
               CaseResult(id="dyn", status="failed", input="hi", output=big, file="suites/hostile.jsonl", line=4,
                          metadata={"mode": "dynamic", "turns": turns}, error="max turns (59) exceeded")]
    xml = render_junit(make_report(results).to_dict(), links)
    validate(xml)
    assert len(xml.encode()) < 300_000
    assert "[truncated" in xml


def test_duplicate_names_and_direct_input(links: SourceLinks) -> None:
    results = [CaseResult(id="a", status="passed", file="suites/a.jsonl", line=1),
               CaseResult(id="a", status="error", error="invalid test case: duplicate id 'a'", error_kind="invalid",
                          file="suites/a.jsonl", line=2),
               CaseResult(id="direct", status="passed", input="hello")]
    root = validate(render_junit(make_report(results).to_dict(), links))
    names = [c.get("name") for c in root.iter("testcase")]
    assert names == ["a", "a (line 2)", "direct"]
    direct = root.findall("testsuite")[1]
    assert direct.get("name") == "agenttest" and direct.get("file") is None
    assert direct.find("testcase").get("classname") == "agenttest" and direct.find("testcase").get("line") is None


def test_generated_suites_keep_their_whole_name_and_duplicates_a_number(links: SourceLinks) -> None:
    results = [CaseResult(id="x-1", status="passed", source="agents:workers.test.generator?focus=x"),
               CaseResult(id="x-1", status="passed", source="agents:workers.test.generator?focus=x&invalid=2"),
               CaseResult(id="g-1", status="passed", source="scripts:gen.cases"),
               CaseResult(id="g-1", status="error", error="invalid test case: duplicate id 'g-1'",
                          error_kind="invalid", source="scripts:gen.cases")]
    root = validate(render_junit(make_report(results).to_dict(), links))
    cases = [(c.get("classname"), c.get("name")) for c in root.iter("testcase")]
    assert cases == [("agents:workers.test.generator?focus=x", "x-1"),
                     ("agents:workers.test.generator?focus=x&invalid=2", "x-1"),
                     ("scripts:gen.cases", "g-1"), ("scripts:gen.cases", "g-1 (2)")]


def test_empty_report_and_run_error(links: SourceLinks) -> None:
    root = validate(render_junit(make_report([], error="BeforeAll: boom", interrupted=True).to_dict(), links))
    suite = root.find("testsuite")
    assert suite.get("tests") == "0" and suite.find("system-err").text == "BeforeAll: boom"
    assert {p.get("name"): p.get("value") for p in suite.find("properties")}["interrupted"] == "true"


def test_paths_are_repository_relative(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    sub = tmp_path / "sub"
    sub.mkdir()
    links = SourceLinks.from_environment(sub, {})
    results = [CaseResult(id="a", status="passed", file="./evals/x.jsonl", line=1),
               CaseResult(id="b", status="passed", file=str(sub / "evals" / "x.jsonl"), line=2)]
    root = validate(render_junit(make_report(results).to_dict(), links))
    assert [s.get("name") for s in root.findall("testsuite")] == ["sub/evals/x.jsonl"]
    assert {c.get("file") for c in root.iter("testcase")} == {"sub/evals/x.jsonl"}
    assert {c.get("classname") for c in root.iter("testcase")} == {"sub.evals.x"}


def test_the_at_line_of_a_failure_is_repository_relative_as_file_is(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    sub = tmp_path / "sub"
    sub.mkdir()
    links = SourceLinks.from_environment(sub, {})
    results = [CaseResult(id="a", status="failed", file="./evals/x.jsonl", line=3, error="bad"),
               CaseResult(id="b", status="error", file="evals/x.jsonl", line=4, error="agent down")]
    root = validate(render_junit(make_report(results).to_dict(), links))
    for case in root.iter("testcase"):
        body = (case.find("failure") if case.find("failure") is not None else case.find("error")).text
        assert case.get("file") == "sub/evals/x.jsonl"
        assert body.splitlines()[-1] == f"At: sub/evals/x.jsonl:{case.get('line')}"


def test_xunitparser_reads_several_suites(tmp_path: Path, links: SourceLinks) -> None:
    """xunitparser 1.3.4 keeps one property set for the whole file and asserts that no name repeats: with the
    properties in every suite it crashed on any run of two suite files."""
    path = tmp_path / "junit.xml"
    JUnitWriter(path, links).run_finished(make_report(mixed_results()))
    suite, result = xunitparser.parse(str(path))
    assert suite.properties["agent"] == "assistants.expense" and suite.properties["pass_rate"] == "40.0"
    assert result.testsRun == 6
    assert (len(result.failures), len(result.errors), len(result.skipped)) == (1, 2, 1)
    assert {case.methodname for case, _ in result.failures} == {"fail"}
