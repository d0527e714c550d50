"""Every example in the README is real: the config loads, the cases load, the quick-start commands exist."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

from agenttest.cases import load_suite
from agenttest.cases.model import Case
from agenttest.config import load_project

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text()


def _blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", README, re.M | re.S)


def test_the_config_example_loads(tmp_path: Path) -> None:
    config = next(block for block in _blocks("yaml") if block.startswith("version: 1"))
    path = tmp_path / "agenttest.yaml"
    path.write_text(config)
    project = load_project(path)
    assert set(project.agents) == {"assistants.expense", "assistants.cli"}
    assert project.defaults["name"] == "assistants.expense"


def test_the_case_examples_load(tmp_path: Path) -> None:
    (suite := tmp_path / "cases.jsonl").write_text(_blocks("jsonl")[0])
    entries = load_suite([str(suite)], cwd=tmp_path, repo_root=tmp_path).entries
    assert [type(e) for e in entries] == [Case, Case, Case]
    assert [e.id for e in entries] == ["greeting", "asks-for-details", "confirm"]


def test_the_quick_start_commands_are_the_ones_ci_runs() -> None:
    commands = _blocks("sh")[:2]
    assert commands[0].strip() == ("python3 -m venv .venv && .venv/bin/pip install . && "
                                   ".venv/bin/agenttest -i examples/expense/tests/expense.jsonl")
    assert commands[1].strip() in (REPO / ".ci" / "run").read_text()


def test_the_case_examples_pass_against_the_example_agent(tmp_path: Path) -> None:
    example = tmp_path / "expense"
    shutil.copytree(REPO / "examples" / "expense", example)
    (example / "tests" / "readme.jsonl").write_text(_blocks("jsonl")[0])
    proc = subprocess.run([sys.executable, "-m", "agenttest", "-i", "tests/readme.jsonl"], cwd=example,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads((example / "agenttest-results" / "report.json").read_text())
    assert [r["status"] for r in report["results"]] == ["passed"] * 3


def test_the_judged_and_conversation_examples_pass_against_the_example_agent(tmp_path: Path) -> None:
    example = tmp_path / "expense"
    shutil.copytree(REPO / "examples" / "expense", example)
    judged, talks = _blocks("jsonl")[1:3]
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
    config = next(block for block in _blocks("yaml") if "builtin: validator" in block)
    path = tmp_path / "agenttest.yaml"
    path.write_text(config)
    project = load_project(path)
    roles = {agent_id: getattr(settings, "builtin", None) for agent_id, settings in project.agents.items()}
    assert roles == {"workers.test.validator": "validator", "workers.test.user": "simulator",
                     "workers.test.generator": "generator"}


def test_the_budget_example_loads_with_its_prices(tmp_path: Path) -> None:
    config = next(block for block in _blocks("yaml") if "price:" in block)
    path = tmp_path / "agenttest.yaml"
    path.write_text(config)
    project = load_project(path)
    assert project.connectors["openai"].price is not None and project.connectors["openai"].price.output == 0.6
    assert project.agents["assistants.local"].price is not None


def test_the_generator_script_example_writes_cases_that_run(tmp_path: Path) -> None:
    script = next(block for block in _blocks("python") if block.startswith("# gen.py"))
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


def _anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation but `-` dropped, spaces as `-`."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_every_link_to_a_readme_section_leads_to_one() -> None:
    anchors = {_anchor(heading) for heading in re.findall(r"^#{1,4} (.+)$", README, re.M)}
    links = [("README.md", anchor) for anchor in re.findall(r"\]\(#([\w-]+)\)", README)]
    for doc in (REPO / "docs").glob("*.md"):
        links += [(doc.name, anchor) for anchor in re.findall(r"\]\(\.\./README\.md#([\w-]+)\)", doc.read_text())]
    assert len(links) > 10
    assert [(name, anchor) for name, anchor in links if anchor not in anchors] == []
    assert "Calling an agent" not in (REPO / "docs" / "providers.md").read_text()    # a section that never was


def test_the_conversation_example_runs_from_the_root_and_from_its_directory(tmp_path: Path) -> None:
    stated = " ".join(README.split())
    for command, cwd in (("agenttest -i examples/expense/tests/conversations.jsonl", REPO),
                         ("agenttest -i tests/conversations.jsonl", REPO / "examples" / "expense")):
        assert command in stated, command
        proc = subprocess.run([sys.executable, "-m", "agenttest", *command.split()[1:], "--output-dir",
                               str(tmp_path / cwd.name), "--no-cache"], cwd=cwd, capture_output=True, text=True,
                              timeout=60)
        assert proc.returncode == 0, proc.stdout + proc.stderr
