"""Generated suites through the real CLI: `-i agents:ID?…` (a built-in generator on a local OpenAI-compatible
server) and `-i scripts:module.func?…`, validated like file cases, run, or saved as JSONL with `--dry-run -o`."""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from e2e.conftest import Project, Run, helper_server, interrupt_cli
from fakes.helper_brain import HelperBrain
from fakes.openai_server import FakeOpenAI

CONFIG = """
    version: 1
    defaults:
      name: echo
    connectors:
      brain:
        base_url: ${BRAIN_URL}
        api_key: sk-brain-key-0b7e
        model: brain-1
    agents:
      echo:
        description: An agent that repeats what it is told
        provider: python
        callable: echo_agent:respond
        tools: [{name: lookup, description: find a thing, parameters: {type: object}}]
      gen:
        builtin: generator
        connector: brain
      sim:
        builtin: simulator
        connector: brain
      short-gen:
        builtin: generator
        connector: brain
        params: {max_tokens: 24}
    """

ECHO = '''
import os

def respond(request):
    with open(os.environ["CALLS_FILE"], "a") as handle:
        handle.write(request["context"]["test_id"] + "\\n")
    return {"content": f"echo: {request['messages'][-1]['content']}"}
'''

SCRIPT = '''
def cases(target, params):
    return [{"id": f"{target['id']}-{i}", "input": f"scripted {i}", "assert": {"type": "contains", "value": "echo"}}
            for i in range(params["n"])]

def broken(target, params):
    raise ValueError("no cases today")

def nothing(target, params):
    return 42
'''


@pytest.fixture
def brain() -> Iterator[tuple[HelperBrain, FakeOpenAI]]:
    with helper_server() as pair:
        yield pair


@pytest.fixture
def project(tmp_path: Path) -> Project:
    proj = Project(tmp_path)
    proj.write("agenttest.yaml", CONFIG)
    proj.write("echo_agent.py", ECHO)
    proj.write("gen.py", SCRIPT)
    return proj


def run(project: Project, server: FakeOpenAI, *args: str) -> Run:
    return project.run(*args, env={"BRAIN_URL": server.base_url, "CALLS_FILE": str(project.root / "calls.txt")})


def target_calls(project: Project) -> list[str]:
    path = project.root / "calls.txt"
    return path.read_text().splitlines() if path.exists() else []


def test_an_agent_generator_writes_cases_that_run_in_place(project: Project,
                                                          brain: tuple[HelperBrain, FakeOpenAI]) -> None:
    helper, server = brain
    project.suite("s.jsonl", {"id": "file-case", "input": "x", "assert": {"type": "contains", "value": "echo"}})
    result = run(project, server, "-i", "agents:gen?count=3&focus=edge-cases&tone=rude&strict=true", "-i", "s.jsonl")
    assert result.code == 0, result.stdout + result.stderr
    ids = [r["id"] for r in result.report["results"]]
    assert ids == ["edge-cases-1", "edge-cases-2", "edge-cases-3", "file-case"]
    generated = result.result("edge-cases-2")
    assert generated["source"] == "agents:gen?count=3&focus=edge-cases&tone=rude&strict=true"
    assert generated["file"] is None and generated["output"] == "echo: generated 2"
    asked = json.loads(helper.bodies["generator"][0]["messages"][-1]["content"])
    assert asked == {"target_agent": {"id": "echo", "description": "An agent that repeats what it is told",
                                      "tools": [{"type": "function", "function": {
                                          "name": "lookup", "description": "find a thing",
                                          "parameters": {"type": "object"}}}]},
                     "count": 3, "focus": "edge-cases", "extra": {"tone": "rude", "strict": True}}
    assert helper.prompts["generator"].startswith("You write test cases for an AI agent.")
    assert result.report["summary"]["usage"]["generator"] == {"calls": 1, "prompt_tokens": 300,
                                                              "completion_tokens": 200, "total_tokens": 500}
    junit = (project.root / "agenttest-results" / "junit.xml").read_text()
    assert '<testsuite name="agents:gen?count=3&amp;focus=edge-cases&amp;tone=rude&amp;strict=true"' in junit


def test_an_invalid_generated_case_names_its_generator_and_index_and_the_rest_run(
        project: Project, brain: tuple[HelperBrain, FakeOpenAI]) -> None:
    result = run(project, brain[1], "-i", "agents:gen?count=3&invalid=2")
    statuses = [(r["id"], r["status"], r.get("error_kind")) for r in result.report["results"]]
    assert statuses == [("case-1", "passed", None), ("case-2", "error", "invalid"), ("case-3", "passed", None)]
    assert result.result("case-2")["error"] == (
        "invalid test case: agents:gen?count=3&invalid=2 case 2: assert.type: unknown assertion type 'contians' "
        "(did you mean 'contains'? valid: agent, contains, equals, json_path, json_schema, latency, not_contains, "
        "regex, script, tool_called, tool_result, tool_sequence, type)")
    assert result.code == 1


def test_generated_conversations_are_kept_and_run_with_the_default_simulator(
        project: Project, brain: tuple[HelperBrain, FakeOpenAI]) -> None:
    result = run(project, brain[1], "-i", "agents:gen?count=2&dynamic=true", "--simulator", "sim")
    assert result.code == 0, result.stdout + result.stderr
    talk = result.result("case-talk")
    assert talk["status"] == "passed" and talk["metadata"]["mode"] == "dynamic"


def test_dry_run_saves_the_generated_suite_without_calling_the_target(
        project: Project, brain: tuple[HelperBrain, FakeOpenAI]) -> None:
    result = run(project, brain[1], "-i", "agents:gen?count=2&focus=smoke&prose=true", "--dry-run", "-o", "gen.jsonl")
    assert result.code == 0, result.stderr
    assert target_calls(project) == []
    saved = [json.loads(line) for line in (project.root / "gen.jsonl").read_text().splitlines()]
    assert [case["id"] for case in saved] == ["smoke-1", "smoke-2"]
    assert [json.loads(line)["id"] for line in result.stdout.splitlines()] == ["smoke-1", "smoke-2"]
    checked = project.run("validate", "-i", "gen.jsonl")
    assert checked.code == 0 and "2 valid, 0 invalid" in checked.stdout
    rerun = run(project, brain[1], "-i", "gen.jsonl")
    assert rerun.code == 0 and sorted(target_calls(project)) == ["smoke-1", "smoke-2"]


def test_a_generator_that_writes_nothing_is_an_error_of_its_own_and_the_other_cases_still_run(
        project: Project, brain: tuple[HelperBrain, FakeOpenAI]) -> None:
    project.suite("s.jsonl", {"id": "file-case", "input": "x", "assert": {"type": "contains", "value": "echo"}})
    result = run(project, brain[1], "-i", "agents:gen?no_json=true", "-i", "s.jsonl")
    failed = result.result("agents:gen?no_json=true")
    assert (failed["status"], failed["error_kind"], failed["source"]) == ("error", "generator",
                                                                          "agents:gen?no_json=true")
    assert failed["error"] == ("generator gen: its reply holds no test cases (an array, or an object with 'cases'): "
                               "I could not think of any cases.")
    assert result.result("file-case")["status"] == "passed" and result.code == 1


def test_a_generator_reply_cut_off_at_its_token_limit_is_a_generator_error_never_a_case(
        project: Project, brain: tuple[HelperBrain, FakeOpenAI]) -> None:
    result = run(project, brain[1], "-i", "agents:short-gen?count=3")
    [failed] = result.report["results"]
    assert (failed["status"], failed["error_kind"]) == ("error", "generator")
    assert failed["error"] == ("generator short-gen: its reply was cut off at its token limit (max_tokens 24): "
                               "raise it")
    assert target_calls(project) == [] and result.code == 1


def test_a_script_generator_gets_the_target_and_its_parameters(project: Project,
                                                              brain: tuple[HelperBrain, FakeOpenAI]) -> None:
    result = run(project, brain[1], "-i", "scripts:gen.cases?n=2", "-i", "scripts:gen.broken", "-i",
                 "scripts:gen.nothing")
    outcome = {r["id"]: (r["status"], r.get("error_kind"), r.get("error")) for r in result.report["results"]}
    assert outcome == {
        "echo-0": ("passed", None, None), "echo-1": ("passed", None, None),
        "scripts:gen.broken": ("error", "generator", "generator scripts:gen.broken: gen.broken raised ValueError at "
                                                     "gen.py:6: no cases today"),
        "scripts:gen.nothing": ("error", "generator", "generator scripts:gen.nothing: what it returned holds no "
                                                      "test cases (an array, or an object with 'cases'): 42")}
    broken = next(r for r in result.report["results"] if r["id"] == "scripts:gen.broken")
    assert broken["trace"]["traceback"].splitlines()[1:] == [      # where in the user's code: -v prints it too
        '  File "gen.py", line 6, in broken', '    raise ValueError("no cases today")', "ValueError: no cases today"]
    assert "trace" not in next(r for r in result.report["results"] if r["id"] == "scripts:gen.nothing")
    missing = run(project, brain[1], "-i", "scripts:gen.nope")
    assert missing.code == 2
    assert "-i scripts:gen.nope: generator 'nope' is not defined in" in missing.stderr


def test_an_unknown_generator_agent_is_a_configuration_error(project: Project,
                                                            brain: tuple[HelperBrain, FakeOpenAI]) -> None:
    result = run(project, brain[1], "-i", "agents:genn?count=2")
    assert result.code == 2
    assert "agent 'genn' is not defined in" in result.stderr and "(did you mean 'gen'?)" in result.stderr


def test_a_generator_is_bounded_by_the_timeout_and_ctrl_c_ends_the_run_at_once(
        project: Project, brain: tuple[HelperBrain, FakeOpenAI]) -> None:
    late = run(project, brain[1], "-i", "agents:gen?count=1&slow=5", "--timeout", "500ms")
    failed = late.result("agents:gen?count=1&slow=5")
    assert (failed["status"], failed["error_kind"]) == ("error", "generator")
    assert failed["error"] == "generator agents:gen?count=1&slow=5: no cases within the timeout (500ms)"
    stopped = interrupt_cli("-i", "agents:gen?count=1&slow=100000", cwd=project.root,      # never answers
                            ready=lambda: brain[0].calls["generator"] >= 2, signum=signal.SIGINT,
                            env={"BRAIN_URL": brain[1].base_url, "CALLS_FILE": str(project.root / "calls.txt")})
    assert stopped.code == 130 and stopped.stderr.strip().endswith("Interrupted."), stopped.stdout + stopped.stderr
    assert target_calls(project) == []


@pytest.mark.parametrize(("value", "message"), [
    ("agents:gen?count=0", "-i agents:gen?count=0: count must be a whole number from 1 to 1000, got 0"),
    ("agents:gen?count=many", "-i agents:gen?count=many: count must be a whole number from 1 to 1000, got 'many'"),
    ("agents:gen?count=2&count=3", "-i agents:gen?count=2&count=3: parameter 'count' is given twice"),
])
def test_generator_parameters_are_checked(project: Project, brain: tuple[HelperBrain, FakeOpenAI], value: str,
                                          message: str) -> None:
    result = run(project, brain[1], "-i", value)
    assert result.code == 2 and result.stderr.strip() == f"Error: {message}"
    assert brain[0].calls["generator"] == 0


def test_a_generator_that_writes_more_than_asked_is_cut_with_a_warning(
        project: Project, brain: tuple[HelperBrain, FakeOpenAI]) -> None:
    project.write("wordy.py", '''
        def cases(target, params):
            return [{"id": f"c{i}", "input": "x", "assert": {"type": "contains", "value": "echo"}} for i in range(9)]
        ''')
    scripted = run(project, brain[1], "-i", "scripts:wordy.cases?count=2")
    assert len(scripted.report["results"]) == 9          # a script's parameters are its own
    result = run(project, brain[1], "-i", "agents:gen?count=3", "--dry-run")
    assert [json.loads(line)["id"] for line in result.stdout.splitlines()] == ["case-1", "case-2", "case-3"]


def test_validate_checks_generators_and_helpers_without_calling_them(
        project: Project, brain: tuple[HelperBrain, FakeOpenAI]) -> None:
    unknown = project.run("validate", "-i", "agents:genn")
    assert unknown.code == 2 and "agent 'genn' is not defined in" in unknown.stderr
    wrong_role = project.run("validate", "-i", "agents:sim")
    assert wrong_role.code == 2 and "agent 'sim' is a builtin simulator, not a generator" in wrong_role.stderr
    script = project.run("validate", "-i", "scripts:gen.nope")
    assert script.code == 2 and "generator 'nope' is not defined in" in script.stderr
    project.write("agenttest.yaml", CONFIG.replace("      sim:\n        builtin: simulator\n",
                                                   "      sim:\n        builtin: simulator\n"
                                                   "        prompt: nowhere.md\n"))
    project.suite("s.jsonl", {"id": "t", "input": "hi", "simulator": {"use": "sim"},
                              "checkpoints": [{"id": "c", "assert": {"type": "contains", "value": "x"}}]})
    broken = run(project, brain[1], "validate", "-i", "s.jsonl", "-i", "agents:gen")
    assert broken.code == 2 and "agents.sim.prompt: prompt file nowhere.md not found" in broken.stderr
    # Without the connector's variables (a fork, a pre-commit hook) the helpers that need them are not built.
    fork = project.run("validate", "-i", "s.jsonl", "-i", "agents:gen")
    assert fork.code == 0, fork.stdout + fork.stderr
    assert brain[0].calls == {}


GEN_AGENT = '''
import json, time

def write(request):
    asked = json.loads(request["messages"][-1]["content"])
    extra = asked.get("extra") or {}
    if extra.get("slow"):
        started = time.monotonic()
        time.sleep(float(extra["slow"]))
        with open("generation.txt", "w") as handle:
            handle.write(str(time.monotonic() - started))
    return json.dumps({"cases": [{"id": f"w{i}", "input": "x", "assert": {"type": "contains", "value": "echo"}}
                                 for i in range(1, int(extra.get("wrote", asked["count"])) + 1)]})
'''


@pytest.fixture
def own_generator(project: Project) -> Project:
    project.write("agenttest.yaml", CONFIG.rstrip(" ") + "      pygen:\n        provider: python\n"
                                             "        callable: gen_agent:write\n")
    project.write("gen_agent.py", GEN_AGENT)
    return project


@pytest.mark.parametrize(("wrote", "warning", "kept"), [
    (5, "the generator wrote 5 cases where 3 were asked for; the first 3 are used", 3),
    (2, "the generator wrote 2 cases where 3 were asked for; all are used", 2),
])
def test_a_generator_that_writes_more_or_fewer_than_asked_is_warned_in_a_run_and_a_dry_run(
        own_generator: Project, brain: tuple[HelperBrain, FakeOpenAI], wrote: int, warning: str, kept: int) -> None:
    source = f"agents:pygen?count=3&wrote={wrote}"
    dry = run(own_generator, brain[1], "-i", source, "--dry-run", "-o", "gen.jsonl")
    assert dry.code == 0, dry.stderr
    assert f"⚠ {source}: {warning}" in dry.stderr.splitlines()
    assert len((own_generator.root / "gen.jsonl").read_text().splitlines()) == kept
    ran = run(own_generator, brain[1], "-i", source)
    assert ran.code == 0 and f"⚠ {source}: {warning}" in ran.stdout.splitlines()
    assert len(ran.report["results"]) == kept


def test_a_dry_run_that_generated_nothing_writes_no_file_and_an_empty_suite_says_why(
        project: Project, brain: tuple[HelperBrain, FakeOpenAI]) -> None:
    dry = run(project, brain[1], "-i", "agents:gen?no_json=true", "--dry-run", "-o", "gen.jsonl")
    assert dry.code == 2 and dry.stdout == ""
    assert dry.stderr.splitlines()[-1] == "✗ nothing written to gen.jsonl: no valid case"
    assert not (project.root / "gen.jsonl").exists()
    project.write("empty.jsonl", "")
    checked = project.run("validate", "empty.jsonl")
    assert checked.code == 2 and checked.stdout.strip() == "0 valid, 0 invalid in 1 file"
    assert checked.stderr.strip() == "Error: no test cases found in empty.jsonl (empty.jsonl: it is empty)"


def test_the_run_duration_counts_the_generators_time(own_generator: Project,
                                                    brain: tuple[HelperBrain, FakeOpenAI]) -> None:
    result = run(own_generator, brain[1], "-i", "agents:pygen?count=1&slow=0.3")
    assert result.code == 0, result.stdout + result.stderr
    generating = float((own_generator.root / "generation.txt").read_text())
    assert result.report["summary"]["duration_ms"] >= int(generating * 1000)
