"""The action's files: workflows (actionlint + shellcheck), action metadata (GitHub's schema), Dockerfile (hadolint
and the docker-action rules), and the composite variant kept in step with action.yml."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from agenttest.hosting import ACTION, REPOSITORY, VERSION
from docs_pages import PAGES, all_blocks, text

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def tool(name: str) -> str:
    found = shutil.which(name, path=str(BIN)) or shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed: pip install -e '.[test]'")
    return found


def run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}   # actionlint finds shellcheck
    return subprocess.run(args, cwd=REPO, capture_output=True, text=True, env=env, timeout=120)


def load(path: str) -> dict:
    return yaml.safe_load((REPO / path).read_text())


def test_workflows_pass_actionlint() -> None:
    workflows = sorted((REPO / ".github" / "workflows").glob("*.yml"))
    assert {w.name for w in workflows} >= {"ci.yml", "image.yml", "self-test.yml"}
    proc = run(tool("actionlint"), "-shellcheck", tool("shellcheck"), *map(str, workflows))
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_action_metadata_matches_githubs_schema() -> None:
    proc = run(tool("check-jsonschema"), "--builtin-schema", "vendor.github-actions", "action.yml",
               "composite/action.yml")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_action_declares_the_spec_inputs_and_outputs() -> None:
    action = load("action.yml")
    assert set(action["inputs"]) == {
        "input", "agent", "config", "connector", "output-dir", "parallel", "runs", "min-pass-rate", "timeout",
        "filter", "shard", "fail-fast", "simulator", "before", "after", "baseline", "recheck", "record", "replay",
        "max-cost", "max-tokens", "annotations",
        "max-annotations", "job-summary", "fail-on", "working-directory", "args", "baseline-artifact", "comment",
        "comment-key", "github-token",
        "comment-author"}       # beyond the SPEC's list: the login a token other than GITHUB_TOKEN comments as
    assert set(action["outputs"]) >= {"total", "passed", "failed", "errors", "timeouts", "skipped", "pass-rate",
                                      "report", "junit", "summary", "conclusion", "comment", "baseline"}
    assert action["runs"] == {"using": "docker", "image": "Dockerfile", "args": ["action"]}
    # No run option's input has a default in action.yml: the runner would pass it as set, and an unset input must
    # leave agenttest.yaml's `defaults:` (job_summary, fail_on, …) in force. The token is no run option, and the
    # workflow's reaches an action only as an input's default.
    with_defaults = {name: spec["default"] for name, spec in action["inputs"].items() if "default" in spec}
    assert with_defaults == {"github-token": "${{ github.token }}"}


def test_composite_variant_mirrors_the_docker_action() -> None:
    action, composite = load("action.yml"), load("composite/action.yml")
    assert composite["runs"]["using"] == "composite"
    assert set(composite["inputs"]) == set(action["inputs"]) | {"python-version", "setup-python"}
    for name, spec in action["inputs"].items():
        assert composite["inputs"][name] == spec, name
    assert set(composite["outputs"]) == set(action["outputs"])
    step = next(s for s in composite["runs"]["steps"] if s.get("id") == "run")
    assert {k for k in step["env"] if k.startswith("INPUT_")} == {"INPUT_" + n.upper() for n in action["inputs"]}
    assert all(value == f"${{{{ inputs.{key[6:].lower()} }}}}" for key, value in step["env"].items()
               if key.startswith("INPUT_"))
    for spec in composite["runs"]["steps"]:
        assert "inputs." not in spec.get("run", ""), "inputs must reach scripts through env, not the script text"
    for name, spec in composite["outputs"].items():
        assert spec["value"] == f"${{{{ steps.run.outputs.{name} }}}}"


def test_dockerfile_passes_hadolint() -> None:
    proc = run(tool("hadolint"), "Dockerfile")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_dockerfile_follows_the_docker_action_rules() -> None:
    text = (REPO / "Dockerfile").read_text()
    instructions = [line.split()[0] for line in text.splitlines() if line.strip() and not line.startswith("#")
                    and not line.startswith(" ")]
    assert "USER" not in instructions and "WORKDIR" not in instructions
    assert re.search(r'^ENTRYPOINT \["agenttest"\]$', text, re.M)
    assert re.search(r"^ENV PYTHONUNBUFFERED=1", text, re.M)
    assert re.search(r"^FROM python:3\.\d+-slim\b", text, re.M)
    runs = [line for line in text.splitlines() if line.startswith("RUN ")]
    assert not any("--user" in line for line in runs) and any("pip install --no-cache-dir" in line for line in runs)
    ignored = (REPO / ".dockerignore").read_text().splitlines()
    assert ignored[1:4] == ["*", "!pyproject.toml", "!README.md"] and "!runner/" in ignored


def test_documented_workflows_pass_actionlint(tmp_path: Path) -> None:
    """Every workflow of the README and docs/ (a YAML block that is a workflow or its steps, not agenttest.yaml or a
    pre-commit config), with the action resolved to this checkout so that actionlint also checks every `with:` key
    against action.yml."""
    blocks = [block for block in all_blocks("yaml") if block.startswith("name:") or block.lstrip().startswith("- ")]
    titles = {block.split("\n", 1)[0] for block in blocks if block.startswith("name:")}
    assert {"name: Agent tests (sharded)", "name: Agent tests (pull requests)", "name: Agent tests"} <= titles
    assert len(blocks) >= 6
    workflows = tmp_path / ".github" / "workflows"
    workflows.mkdir(parents=True)
    (tmp_path / "composite").mkdir()
    shutil.copy(REPO / "action.yml", tmp_path / "action.yml")
    shutil.copy(REPO / "composite" / "action.yml", tmp_path / "composite" / "action.yml")
    for index, block in enumerate(blocks):
        local = block.replace(f"{REPOSITORY}/composite@{VERSION}", "./composite").replace(ACTION, "./")
        if not block.startswith("name:"):          # a step shown on its own: wrap it in a job
            local = "on: push\njobs:\n  example:\n    runs-on: ubuntu-latest\n    steps:\n" + local
        (workflows / f"doc-{index}.yml").write_text(local)
    files = sorted(str(p) for p in workflows.glob("*.yml"))
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    proc = subprocess.run([tool("actionlint"), "-shellcheck", tool("shellcheck"), *files], cwd=tmp_path,
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_every_pointer_to_a_doc_leads_to_a_file() -> None:
    """action.yml and image.yml once sent readers to a docs/github-actions.md that did not exist."""
    files = ["action.yml", "composite/action.yml", "Dockerfile", *PAGES, "pyproject.toml",
             *(str(p.relative_to(REPO)) for p in (REPO / ".github" / "workflows").glob("*.yml"))]
    pointers = {(name, match) for name in files
                for match in re.findall(r"\bdocs/[\w./-]+\.md\b", (REPO / name).read_text())}
    assert pointers, "no pointer found: the pattern is wrong"
    assert [(name, doc) for name, doc in sorted(pointers) if not (REPO / doc).is_file()] == []
    assert "Releasing the action" in (REPO / "action.yml").read_text()
    assert "docs/github-actions.md" in (REPO / "action.yml").read_text()
    assert "## Releasing the action" in text("docs/github-actions.md")
