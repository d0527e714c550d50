"""Real Yao projects: the `yao agent test` suites the Yao authors wrote (tests/fixtures/yao, copied with their
layout) validate and run, every agent against its own suites in one run, hooks found where Yao keeps them; the same
id in two files is two cases everywhere."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import xunitparser

from .conftest import Project

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "yao"
SUITES = 11
CASES = 37
# The suites' own deliberate failures (Yao's tests expect them to fail): a string no agent says, a checkpoint no
# reply reaches.
MEANT_TO_FAIL = {"fail-first": "output does not contain 'IMPOSSIBLE_STRING_12345'",
                 "max-turns-test": "max turns (2) exceeded without reaching: impossible"}


@pytest.fixture
def yao(tmp_path: Path) -> Project:
    shutil.copytree(FIXTURES, tmp_path, dirs_exist_ok=True)
    return Project(tmp_path)


def test_the_yao_authors_suites_validate(yao: Project) -> None:
    checked = yao.run("validate", "-i", "assistants/")
    assert checked.code == 0, checked.stdout + checked.stderr
    assert checked.stdout.strip() == f"{CASES} valid, 0 invalid in {SUITES} files"


def test_a_suite_whose_agent_is_not_defined_is_named_by_validate_and_run(yao: Project) -> None:
    yao.suite("assistants/nosuch/tests/t.jsonl", {"id": "a", "input": "hi"})
    said = ("assistants/nosuch/tests/t.jsonl: its agent 'nosuch' (from its path, as in Yao's "
            "assistants/<agent>/tests/) is not defined in ")
    checked = yao.run("validate", "-i", "assistants/")
    assert checked.code == 2 and said in checked.stderr, checked.stdout + checked.stderr
    run = yao.run("-i", "assistants/")
    assert run.code == 2 and said in run.stderr and "Traceback" not in run.stderr
    named = yao.run("validate", "-i", "assistants/nosuch/tests/t.jsonl")
    assert named.code == 2 and said in named.stderr


def test_one_run_tests_every_agent_against_its_own_suites(yao: Project) -> None:
    run = yao.run("-i", "assistants/", "--junit", "junit.xml")
    assert run.code == 1, run.stdout + run.stderr          # only the suites' deliberate failures
    results = run.report["results"]
    assert len(results) == CASES
    outcomes = {(r["file"], r["id"]): (r["status"], r.get("error")) for r in results}
    assert {key: value for key, value in outcomes.items() if value != ("passed", None)} == {
        ("assistants/tests/simple-greeting/tests/fail_fast.jsonl", "fail-first"):
            ("failed", MEANT_TO_FAIL["fail-first"]),
        ("assistants/tests/dynamic-test-agent/tests/dynamic-inputs.jsonl", "max-turns-test"):
            ("failed", MEANT_TO_FAIL["max-turns-test"]),
    }
    # Each case tested the agent its path names (Yao: assistants/<name>/tests/… → <name>, dots for slashes).
    agents = {r["file"]: r["agent_id"] for r in results}
    assert agents == {
        "assistants/designer/tests/inputs.jsonl": "designer",
        "assistants/keyword/tests/inputs.jsonl": "keyword",
        "assistants/tests/agent-caller/tests/a2a_cases.jsonl": "tests.agent-caller",
        "assistants/tests/dynamic-test-agent/tests/dynamic-inputs.jsonl": "tests.dynamic-test-agent",
        "assistants/tests/hooks-test/tests/inputs.jsonl": "tests.hooks-test",
        "assistants/tests/hooks-test/tests/runner_hooks.jsonl": "tests.hooks-test",
        "assistants/tests/simple-greeting/tests/cases.jsonl": "tests.simple-greeting",
        "assistants/tests/simple-greeting/tests/fail_fast.jsonl": "tests.simple-greeting",
        "assistants/tests/simple-greeting/tests/greetings.jsonl": "tests.simple-greeting",
        "assistants/tests/simple-greeting/tests/parallel.jsonl": "tests.simple-greeting",
        "assistants/yao/craft/tests/inputs.jsonl": "yao.craft",
    }
    assert run.report["summary"]["agent_id"] == ", ".join(sorted(set(agents.values())))
    # One JUnit suite per file, with its own agent (a property name of its own: xunitparser keeps one set of
    # property names for the whole file), and xunitparser reads the file.
    suites = ET.parse(yao.root / "junit.xml").getroot().findall("testsuite")
    assert len(suites) == SUITES
    assert {s.get("name"): _property(s, f"agent:{s.get('name')}") for s in suites} == agents
    parsed, outcome = xunitparser.parse(str(yao.root / "junit.xml"))
    assert len(list(parsed)) == CASES and len(outcome.failures) == 2
    # The hooks of hooks-test (assistants/tests/hooks-test/src/env_test.py) ran: After checks it got Before's data.
    hooked = [r for r in results if r["agent_id"] == "tests.hooks-test" and r["id"] != "T003"]
    assert [(r["id"], r["status"]) for r in hooked] == [("T001", "passed"), ("T002", "passed"),
                                                         ("hook-test-1", "passed")]
    # T001 is in two agents' suites: two cases.
    assert sorted(r["file"] for r in results if r["id"] == "T001") == [
        "assistants/tests/hooks-test/tests/inputs.jsonl", "assistants/tests/simple-greeting/tests/cases.jsonl"]


def test_the_shards_of_a_run_over_several_agents_merge(yao: Project) -> None:
    for index in (1, 2):
        yao.run("-i", "assistants/", "--shard", f"{index}/2", "--output-dir", f"shard{index}")
    merged = yao.run("merge", "shard1/report.json", "shard2/report.json", "--output-dir", "merged")
    assert merged.code == 1, merged.stdout + merged.stderr     # the merged run failed as the whole run would
    report = json.loads((yao.root / "merged" / "report.json").read_text())
    assert (report["summary"]["total"], report["summary"]["passed"]) == (CASES, CASES - len(MEANT_TO_FAIL))
    assert {r["agent_id"] for r in report["results"] if r["file"].startswith("assistants/designer/")} == {"designer"}


def test_global_hooks_and_a_named_agent_find_the_hooks_in_the_agents_src(yao: Project) -> None:
    """`yao agent test -n tests.hooks-test` cannot find env_test.ts (its agent path is empty); here it can."""
    run = yao.run("-i", "assistants/tests/hooks-test/tests/runner_hooks.jsonl", "-n", "tests.hooks-test",
                  "--before", "env_test.BeforeAll", "--after", "env_test.AfterAll")
    assert run.code == 0, run.stdout + run.stderr
    assert run.report["results"][0]["status"] == "passed"
    assert "error" not in run.report


def test_a_hook_named_without_test_is_found_as_yao_finds_it(yao: Project) -> None:
    """Yao appends `_test` to the script part: `env.Before` is `env_test.ts` (here `env_test.py`)."""
    suite = yao.root / "assistants/tests/hooks-test/tests/inputs.jsonl"
    suite.write_text(suite.read_text().replace("env_test.Before", "env.Before").replace("env_test.After", "env.After"))
    checked = yao.run("validate", "-i", "assistants/tests/hooks-test/tests/inputs.jsonl")
    assert checked.code == 0, checked.stdout + checked.stderr
    run = yao.run("-i", "assistants/tests/hooks-test/tests/inputs.jsonl")
    assert {r["status"] for r in run.report["results"]} == {"passed"}, run.stdout


def test_a_hook_not_found_says_every_place_it_looked(yao: Project) -> None:
    suite = yao.root / "assistants/tests/hooks-test/tests/inputs.jsonl"
    suite.write_text(suite.read_text().replace("env_test.Before", "setup_test.Before", 1))
    run = yao.run("-i", "assistants/tests/hooks-test/")
    agent = yao.root / "assistants/tests/hooks-test"
    looked = ", ".join(str(d) for d in (agent / "tests", agent / "tests/src", agent, agent / "src"))
    assert run.result("T001")["error"].startswith(f"before hook: hook 'setup_test.Before': no setup_test.py found "
                                                  f"(looked in {looked}); ")


def test_the_same_id_in_two_files_is_two_cases_for_run_junit_annotations_and_baselines(yao: Project) -> None:
    first = "assistants/tests/hooks-test/tests/inputs.jsonl"
    second = "assistants/tests/simple-greeting/tests/cases.jsonl"
    base = yao.run("-i", first, "-i", second, "--run", "^T00[12]$", "--output-dir", "main")
    assert base.code == 0, base.stdout + base.stderr
    baseline = json.loads((yao.root / "main" / "report.json").read_text())
    assert [(r["file"], r["id"]) for r in baseline["results"]] == [(first, "T001"), (first, "T002"),
                                                                   (second, "T001"), (second, "T002")]
    # T001 of the second file breaks: a regression of that case only, annotated at its own line.
    cases = yao.root / second
    cases.write_text(cases.read_text().replace('"input":"hello"',
                                               '"input":"hello","assert":{"type":"contains","value":"bye"}'))
    run = yao.run("-i", first, "-i", second, "--run", "T001", "--baseline", "main/report.json", "--annotations",
                  "--junit", "junit.xml", env={"GITHUB_ACTIONS": "true"})
    assert run.code == 1
    assert [(r["file"], r["id"], r["status"]) for r in run.report["results"]] == [
        (first, "T001", "passed"), (second, "T001", "failed")]
    comparison = run.report["comparison"]
    assert [(c["file"], c["id"]) for c in comparison["regressions"]] == [(second, "T001")]
    assert comparison["removed"] == [] and comparison["baseline"]["partial"] is True    # --run left the T002s out
    annotations = [line for line in run.stdout.splitlines() if line.startswith("::error file=")]
    assert len(annotations) == 1 and annotations[0].startswith(f"::error file={second},line=1,")
    testcases = ET.parse(yao.root / "junit.xml").getroot().iter("testcase")
    assert sorted((c.get("classname"), c.get("name"), c.find("failure") is not None) for c in testcases) == [
        ("assistants.tests.hooks-test.tests.inputs", "T001", False),
        ("assistants.tests.simple-greeting.tests.cases", "T001", True)]


def _property(suite: ET.Element, name: str) -> str | None:
    return next((p.get("value") for p in suite.iter("property") if p.get("name") == name), None)
