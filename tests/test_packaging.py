"""The package as the image and `pip install .` ship it: a wheel built the way the Dockerfile builds it carries the
built-in helper prompts, and runs the example's judged and dynamic suites from its installed copy."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from installs import checkout, offline_env

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_the_wheel_carries_the_prompts_and_runs_agent_driven_suites(tmp_path: Path) -> None:
    wheels, target = tmp_path / "wheels", tmp_path / "site"
    # Offline, and nothing written into the checkout: the build runs in a copy, with this environment's setuptools
    # (build isolation would fetch one from the package index).
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-index", "--no-deps", "--no-build-isolation",
                    "--wheel-dir", str(wheels), str(checkout(tmp_path / "src"))],
                   env=offline_env(), check=True, capture_output=True, timeout=300)
    [wheel] = wheels.glob("*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    # `agenttest` on PyPI is an unrelated project: the distribution is agenttest-ci, the command and the import
    # package stay `agenttest`.
    metadata = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert "\nName: agenttest-ci\n" in metadata and wheel.name.startswith("agenttest_ci-")
    assert "\nSummary: The agenttest command: test AI agents in CI" in metadata
    assert {f"agenttest/agents/builtin/prompts/{role}.md" for role in ("validator", "simulator", "generator")} \
        <= set(names)
    assert {f"agenttest/templates/{name}" for name in ("agenttest.yaml", "example.jsonl", "judge-labels.jsonl",
                                                               "workflow.yml")} \
        <= set(names)                                              # what `agenttest init` writes
    assert "agenttest/pytest_plugin.py" in names
    assert "agenttest/py.typed" in names                          # PEP 561: the API's types reach type checkers
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "[pytest11]\nagenttest = agenttest.pytest_plugin" in zipfile.ZipFile(wheel).read(entry_points).decode()
    assert "[console_scripts]\nagenttest = agenttest.cli:main" in zipfile.ZipFile(wheel).read(entry_points).decode()
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--target", str(target),
                    str(wheel)],
                   check=True, capture_output=True, timeout=300)
    # `-S` keeps the development checkout's editable install out; the dependencies come from this environment.
    env = {**{k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "AGENTTEST_"))},
           "PYTHONPATH": os.pathsep.join([str(target), sysconfig.get_paths()["purelib"]])}
    probe = subprocess.run(
        [sys.executable, "-S", "-c", "import agenttest.agents.builtin as b; print(b.__file__); "
                                     "print(all(b.default_prompt(r).strip() for r in b.ROLES))"],
        env=env, capture_output=True, text=True, check=True)
    assert probe.stdout.splitlines() == [str(target / "agenttest" / "agents" / "builtin" / "__init__.py"), "True"]
    out = tmp_path / "out"
    suite = "examples/expense/tests/conversations.jsonl"
    result = subprocess.run([sys.executable, "-S", "-m", "agenttest", "-i", suite, "--output-dir", str(out),
                             "--no-cache"], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads((out / "report.json").read_text())
    assert [r["status"] for r in report["results"]] == ["passed", "passed", "passed"]
