"""Every example in the README and in docs/ is real: the configs load, the cases load and pass, the commands run."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from agenttest.agents.settings import Price
from agenttest.cases import load_suite
from agenttest.cases.model import Case
from agenttest.config import load_project
from docs_pages import REPO, all_blocks, blocks, text
from installs import checkout, offline_env

README = text("README.md")


def _blocks(language: str) -> list[str]:
    return blocks("README.md", language)


def test_the_config_example_loads(tmp_path: Path) -> None:
    config = next(block for block in blocks("docs/configuration.md", "yaml") if block.startswith("version: 1"))
    path = tmp_path / "agenttest.yaml"
    path.write_text(config)
    project = load_project(path)
    assert set(project.agents) == {"assistants.expense", "assistants.cli"}
    assert project.defaults["name"] == "assistants.expense"


def test_the_case_examples_load(tmp_path: Path) -> None:
    (suite := tmp_path / "cases.jsonl").write_text(blocks("docs/test-cases.md", "jsonl")[0])
    entries = load_suite([str(suite)], cwd=tmp_path, repo_root=tmp_path).entries
    assert [type(e) for e in entries] == [Case, Case, Case]
    assert [e.id for e in entries] == ["greeting", "asks-for-details", "confirm"]


@pytest.mark.slow
def test_the_quick_start_first_command_installs_agenttest_and_runs_the_example(tmp_path: Path) -> None:
    command = _blocks("sh")[0].strip()
    assert command.startswith("python3 -m venv .venv && .venv/bin/pip install . && ")
    clone = checkout(tmp_path / "clone", "examples")
    proc = subprocess.run(["sh", "-c", command], cwd=clone, env=offline_env(), capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 1, proc.stdout + proc.stderr       # one of the nine cases fails on purpose
    report = json.loads((clone / "agenttest-results" / "report.json").read_text())
    assert Counter(r["status"] for r in report["results"]) == {"passed": 7, "failed": 1, "skipped": 1}
    python = str(clone / ".venv" / "bin" / "python")
    installed = subprocess.run([python, "-c", "import agenttest; print(agenttest.__file__)"], cwd=clone,
                               env=offline_env(), capture_output=True, text=True, check=True)
    assert Path(installed.stdout.strip()).is_relative_to(clone / ".venv")      # the copy pip installed, not this one


def test_ci_runs_the_readmes_test_command_with_no_network() -> None:
    install, _, tests = _blocks("sh")[1].strip().rpartition(" && ")
    assert tests == ".venv/bin/pytest"
    ci = (REPO / ".ci" / "run").read_text().splitlines()
    assert ci.index(install) < ci.index(f"unshare --net sh -c 'ip link set lo up && exec {tests}'")


def _shell_command(flag: str) -> str:
    """The one `sh` example of the README and docs/ using `flag` on a project's suites (`tests/agents/`)."""
    [command] = [block.strip() for block in all_blocks("sh")
                 if f" {flag} " in block and block.startswith("agenttest -i tests/agents/")]
    return command


def _agent_project(root: Path, agent: str, *cases: dict[str, Any], agent_id: str = "under-test") -> Path:
    """A project whose agent `agent_id` is `agent` (the module agent.py) and whose suite is
    tests/agents/cases.jsonl."""
    (root / "tests" / "agents").mkdir(parents=True)
    (root / "agenttest.yaml").write_text(f"version: 1\ndefaults:\n  name: {agent_id}\n"
                                         f"agents:\n  {agent_id}: {{provider: python, callable: 'agent:respond'}}\n")
    (root / "agent.py").write_text(agent)
    (root / "tests" / "agents" / "cases.jsonl").write_text("".join(json.dumps(case) + "\n" for case in cases))
    return root


def _as_typed(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`command` run by a shell with this environment's `agenttest` on PATH, as a user types it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "AGENTTEST_"))}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.run(["sh", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def test_an_agent_receives_the_request_the_readme_shows(tmp_path: Path) -> None:
    documented = json.loads(next(block for block in blocks("docs/configuration.md", "json")
                                 if block.startswith('{"agent":')))
    context = documented["context"]
    case = {"id": context["test_id"], "input": documented["messages"][0]["content"],
            "options": documented["options"]}
    dumping = "import json\ndef respond(request):\n    json.dump(request, open('request.json', 'w'))\n    return 'ok'\n"
    project = _agent_project(tmp_path, dumping, case, agent_id=documented["agent"])
    run = _as_typed("agenttest -i tests/agents/", project)
    assert run.returncode == 0, run.stdout + run.stderr
    received = json.loads((project / "request.json").read_text())
    assert re.fullmatch(rf"test-{context['test_id']}-[0-9a-f]{{8}}", received["context"]["chat_id"])
    assert received == {**documented, "context": {**context, "chat_id": received["context"]["chat_id"]}}


# Wrong on the first `fails` calls of a case, right after: runs of one case may be called at the same time.
FLAKY_AGENT = """
import collections, threading
calls, lock = collections.Counter(), threading.Lock()
def respond(request):
    case = request["context"]["test_id"]
    with lock:
        calls[case] += 1
        call = calls[case]
    return "wrong" if call <= {"once-in-five": 1, "twice-in-five": 2}[case] else "right"
"""


def test_the_runs_command_passes_a_case_whose_pass_rate_reaches_the_minimum(tmp_path: Path) -> None:
    command = _shell_command("--runs")
    assert command == "agenttest -i tests/agents/ --runs 5 --min-pass-rate 80"
    right = {"type": "equals", "value": "right"}
    project = _agent_project(tmp_path, FLAKY_AGENT, {"id": "once-in-five", "input": "x", "assert": right},
                             {"id": "twice-in-five", "input": "x", "assert": right})
    run = _as_typed(command, project)
    assert run.returncode == 1, run.stdout + run.stderr
    report = json.loads((project / "agenttest-results" / "report.json").read_text())
    assert [(r["id"], r["status"], len(r["runs"])) for r in report["results"]] == [
        ("once-in-five", "passed", 5), ("twice-in-five", "failed", 5)]
    assert [(s["passed"], s["pass_rate"], s["flaky"]) for s in report["stability_results"]] == [
        (4, 80.0, True), (3, 60.0, True)]


# Writes a line to calls.txt for each call it answers itself.
NOTED_AGENT = """
def respond(request):
    with open("calls.txt", "a") as calls:
        calls.write(request["context"]["test_id"] + "\\n")
    return "echo: " + request["messages"][-1]["content"]
"""


def test_the_record_command_writes_cassettes_for_git_that_a_replay_answers_from(tmp_path: Path) -> None:
    command = _shell_command("--record")
    assert command == "agenttest -i tests/agents/ --record tests/cassettes && git add tests/cassettes"
    project = _agent_project(tmp_path, NOTED_AGENT, {"id": "hello", "input": "hello", "assert": {
        "type": "equals", "value": "echo: hello"}})
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    recorded = _as_typed(command, project)
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    staged = subprocess.run(["git", "diff", "--cached", "--name-only"], cwd=project, capture_output=True, text=True,
                            check=True).stdout.split()
    assert staged == ["tests/cassettes/tests/agents/cases.jsonl.json"]
    assert (project / "calls.txt").read_text() == "hello\n"
    replayed = _as_typed("agenttest -i tests/agents/ --replay tests/cassettes", project)
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert (project / "calls.txt").read_text() == "hello\n"               # answered from the cassette


def test_the_case_examples_pass_against_the_example_agent(tmp_path: Path) -> None:
    example = tmp_path / "expense"
    shutil.copytree(REPO / "examples" / "expense", example)
    (example / "tests" / "readme.jsonl").write_text(blocks("docs/test-cases.md", "jsonl")[0])
    proc = subprocess.run([sys.executable, "-m", "agenttest", "-i", "tests/readme.jsonl"], cwd=example,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads((example / "agenttest-results" / "report.json").read_text())
    assert [r["status"] for r in report["results"]] == ["passed"] * 3


def test_the_judged_and_conversation_examples_pass_against_the_example_agent(tmp_path: Path) -> None:
    example = tmp_path / "expense"
    shutil.copytree(REPO / "examples" / "expense", example)
    judged, talks = blocks("docs/test-cases.md", "jsonl")[1], blocks("docs/conversations.md", "jsonl")[0]
    (example / "tests" / "readme.jsonl").write_text(judged + talks)
    proc = subprocess.run([sys.executable, "-m", "agenttest", "-i", "tests/readme.jsonl"], cwd=example,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads((example / "agenttest-results" / "report.json").read_text())
    assert {r["id"]: r["status"] for r in report["results"]} == {
        "judged-policy": "passed", "judged-three-times": "passed", "judged-by-default": "passed",
        "submit-by-talking": "passed", "scripted": "passed"}
    votes = next(r for r in report["results"] if r["id"] == "judged-three-times")["assertions"][0]["details"]["votes"]
    assert votes == {"passed": 3, "failed": 0}


def test_the_helper_agents_example_loads(tmp_path: Path) -> None:
    config = next(block for block in blocks("docs/configuration.md", "yaml") if "builtin: validator" in block)
    path = tmp_path / "agenttest.yaml"
    path.write_text(config)
    project = load_project(path)
    roles = {agent_id: getattr(settings, "builtin", None) for agent_id, settings in project.agents.items()}
    assert roles == {"workers.test.validator": "validator", "workers.test.user": "simulator",
                     "workers.test.generator": "generator"}


def test_the_budget_example_loads_with_its_prices(tmp_path: Path) -> None:
    config = next(block for block in blocks("docs/budgets.md", "yaml") if "price:" in block)
    path = tmp_path / "agenttest.yaml"
    path.write_text(config)
    project = load_project(path)
    assert project.connectors["openai"].price == Price(input=0.15, output=0.6)
    assert project.agents["assistants.local"].price == Price(input=0, output=0)


def test_the_generator_script_example_writes_cases_that_run(tmp_path: Path) -> None:
    script = next(block for block in blocks("docs/generators.md", "python") if block.startswith("# gen.py"))
    (tmp_path / "gen.py").write_text(script)
    (tmp_path / "echo.py").write_text("def respond(request):\n"
                                      "    return 'echo: ' + request['messages'][-1]['content']\n")
    (tmp_path / "agenttest.yaml").write_text("version: 1\nagents:\n"
                                             "  echo: {provider: python, callable: echo:respond}\n")
    proc = subprocess.run([sys.executable, "-m", "agenttest", "-i", "scripts:gen.cases?n=2"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads((tmp_path / "agenttest-results" / "report.json").read_text())
    assert [(r["id"], r["status"]) for r in report["results"]] == [("echo-0", "passed"), ("echo-1", "passed")]


def test_the_conversation_example_runs_from_the_root_and_from_its_directory(tmp_path: Path) -> None:
    stated = " ".join(README.split())
    for command, cwd in (("agenttest -i examples/expense/tests/conversations.jsonl", REPO),
                         ("agenttest -i tests/conversations.jsonl", REPO / "examples" / "expense")):
        assert command in stated, command
        proc = subprocess.run([sys.executable, "-m", "agenttest", *command.split()[1:], "--output-dir",
                               str(tmp_path / cwd.name), "--no-cache"], cwd=cwd, capture_output=True, text=True,
                              timeout=60)
        assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_first_suite_runs_against_the_readmes_bot(tmp_path: Path) -> None:
    """Your first suite, as the README walks through it: `init`, the stand-in agent bot.py, one case of your own,
    and the run of the cases that need no model — against the bot over real HTTP, which gets the request shown."""
    section = README.split("## Your first suite", 1)[1].split("\n## ", 1)[0]
    [bot] = re.findall(r"^```python\n(.*?)^```", section, re.M | re.S)
    [case] = re.findall(r"^```jsonl\n(.*?)^```", section, re.M | re.S)
    [command] = re.findall(r"^```sh\n(.*?)^```", section, re.M | re.S)
    request_shown, reply_shown = (json.loads(block)
                                  for block in re.findall(r"^```json\n(.*?)^```", section, re.M | re.S))
    assert "agenttest init" in section and command.startswith("agenttest -i tests/agents/example.jsonl --run ")
    (tmp_path / ".git").mkdir()
    init = _as_typed("agenttest init", tmp_path)
    assert init.returncode == 0, init.stderr
    [shown] = [block for block in re.findall(r"^```text\n(.*?)^```", section, re.M | re.S)
               if block.startswith("$ agenttest init\n")]
    printed = shown.splitlines()[1:]
    assert printed[-1] == "…" and init.stdout.splitlines()[:len(printed) - 1] == printed[:-1]    # as it begins
    with (tmp_path / "tests" / "agents" / "example.jsonl").open("a") as suite:
        suite.write(case)
    # The bot as shown, on a port of the system's choosing (printed when it listens), noting what it is sent.
    listen = 'HTTPServer(("127.0.0.1", 8080), Chat).serve_forever()'
    assert listen in bot
    noted = bot.replace("        said = ", "        open('requests.jsonl', 'a').write(json.dumps(request) + '\\n')\n"
                                          "        said = ")
    noted = noted.replace(listen, 'server = HTTPServer(("127.0.0.1", 0), Chat)\n'
                                  'print(server.server_port, flush=True)\nserver.serve_forever()')
    (tmp_path / "bot.py").write_text(noted)
    server = subprocess.Popen([sys.executable, "bot.py"], cwd=tmp_path, stdout=subprocess.PIPE, text=True)
    try:
        port = int(server.stdout.readline())           # type: ignore[union-attr]
        run = _as_typed(f"AGENT_URL=http://127.0.0.1:{port}/chat {command.strip()}", tmp_path)
    finally:
        server.kill()
        server.wait()
    assert run.returncode == 0, run.stdout + run.stderr
    report = json.loads((tmp_path / "agenttest-results" / "report.json").read_text())
    assert [(r["id"], r["status"]) for r in report["results"] if r["status"] != "skipped"] == [
        ("greets", "passed"), ("repeats-the-question", "passed")]
    greets = next(json.loads(line) for line in (tmp_path / "requests.jsonl").read_text().splitlines()
                  if json.loads(line)["context"]["test_id"] == "greets")
    assert re.fullmatch(r"test-greets-[0-9a-f]{8}", greets["context"]["chat_id"])
    assert greets == {**request_shown, "context": {**request_shown["context"], "chat_id": greets["context"]["chat_id"]}}
    assert set(reply_shown) == {"content"}
