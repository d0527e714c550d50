"""`agenttest run` reads what is of the plain shapes without the pydantic models (issue #27) — the run options
(`options.PlainOptions`), agenttest.yaml (plain_settings.py) and the suite's entries (cases/plain.py) — and runs
exactly as it ran with the models alone: the same console, the same exit code, the same artifacts byte for byte,
only the times apart."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from e2e.conftest import helper_server
from plain_modes import COMMAND, MODELS_ONLY

ROOT = Path(__file__).resolve().parents[2]
RECORDED = Path(__file__).parent / "data" / "cassettes_bfa850b"

# The run's modules, printed after it.
MODULES = """
import atexit, json, sys
atexit.register(lambda: print(json.dumps(sorted(sys.modules))))
""" + COMMAND

# What differs between any two runs: the times (timestamps, durations) and nothing else.
_TIMES = [
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(\+00:00|Z)?"), "TIME"),
    (re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC"), "TIME"),
    (re.compile(r'"actual": ?\d+\.\d{6,}'), '"actual": N'),      # a latency measured
    (re.compile(r'"(duration_ms|duration|start|stop)": ?\d+'), r'"\1": N'),
    (re.compile(r'\btime="[\d.]+"'), 'time="N"'),
    (re.compile(r"<?\b\d+(\.\d+)?(ms|s)\b"), "Nms"),
]


def _timeless(text: str) -> str:
    for pattern, replacement in _TIMES:
        text = pattern.sub(replacement, text)
    return text


def _run(root: Path, args: list[str], env: dict[str, str], script: str) -> tuple[int, str, str, dict[str, str]]:
    argv = [sys.executable, "-c", script, *args]
    base = {key: value for key, value in os.environ.items() if not key.startswith(("GITHUB_", "AGENTTEST_"))}
    proc = subprocess.run(argv, cwd=root, capture_output=True, text=True, timeout=120, env={**base, **env})
    out = root / "agenttest-results"
    artifacts = {path.name: _timeless(_in_order(path)) for path in sorted(out.iterdir())} if out.is_dir() else {}
    return proc.returncode, _timeless(proc.stdout), _timeless(proc.stderr), artifacts


def _in_order(path: Path) -> str:
    """The artifact's text; events.jsonl's lines sorted (cases in parallel finish in any order)."""
    text = path.read_text()
    return "".join(sorted(text.splitlines(keepends=True))) if path.suffix == ".jsonl" else text


def _alike(tmp_path: Path, source: Path, names: list[str], args: list[str],
           env: dict[str, str] | None = None) -> tuple[int, str, str, dict[str, str], dict[str, Any]]:
    """The run of `args` in a copy of `source`, plainly and with the models alone: asserted the same (and the
    summary of its report.json). One case at a time (`--parallel 1`): the console says each as it finishes."""
    said = []
    root = tmp_path / "project"         # the same place for both: paths show in the artifacts
    for script in (COMMAND, MODELS_ONLY):
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir()
        for name in names:
            copy = shutil.copytree if (source / name).is_dir() else shutil.copy2
            copy(source / name, root / name)
        said.append(_run(root, args, env or {}, script))
        summary = json.loads((root / "agenttest-results" / "report.json").read_text())["summary"]
    assert said[0] == said[1]
    return (*said[0], summary)


@pytest.mark.parametrize("flags", [[], ["--max-tokens", "100000", "--timeout", "30s", "--judge", "agents:judge", "-v",
                                        "--no-cache", "--max-annotations", "3", "--color", "never",
                                        "--fail-on", "never", "--recheck", "0"]])
def test_a_recorded_run_replays_alike(tmp_path: Path, flags: list[str]) -> None:
    code, stdout, _, artifacts, _ = _alike(
        tmp_path, RECORDED, ["agenttest.yaml", "tests", "tapes"],
        ["-i", "tests/s.jsonl", "-i", "agents:gen?count=2", "--replay", "tapes", "--parallel", "1", *flags])
    assert code == (0 if flags else 1) and "PASSED" in stdout and set(artifacts) >= {"report.json", "junit.xml"}


def test_the_python_example_runs_alike(tmp_path: Path) -> None:
    source = ROOT / "examples" / "expense"
    code, stdout, stderr, _, summary = _alike(tmp_path, source, [path.name for path in source.iterdir()],
                                              ["-i", "tests", "--parallel", "1"])
    assert code == 1 and summary["passed"] == 10, stdout + stderr


PLAIN_CONFIG = """version: 1
defaults:
  name: bot
  timeout: 30s
  judge: agents:judge
agents:
  bot:
    provider: openai
    description: the agent under test
    base_url: ${BRAIN_URL}
    api_key: ${BRAIN_KEY}
    model: brain-1
    headers: {X-Suite: plain}
    params: {temperature: 0, max_tokens: 200}
    stream: true
    max_tool_steps: 3
  judge:
    builtin: validator
    base_url: ${BRAIN_URL}
    api_key: ${BRAIN_KEY}
    model: brain-1
"""
PLAIN_SUITE = [
    {"id": "said", "input": "hello", "assert": [{"type": "contains", "value": "echo"},
                                                {"type": "regex", "value": "^echo: hello$"}]},
    {"id": "cased", "input": "Hello", "assert": {"type": "contains", "value": "HELLO",
                                                 "options": {"ignore_case": True}}},
    {"id": "judged", "input": "please say refund", "assert": {"type": "agent", "value": "says 'refund'"}},
    {"id": "fails", "input": "no", "tags": ["t"], "timeout": "5s", "assert": {"type": "contains", "value": "never"}},
]


def _plain_project(root: Path) -> Path:
    root.mkdir()
    (root / "agenttest.yaml").write_text(PLAIN_CONFIG)
    (root / "s.jsonl").write_text("".join(json.dumps(case) + "\n" for case in PLAIN_SUITE))
    return root


def test_an_openai_project_runs_alike(tmp_path: Path) -> None:
    source = _plain_project(tmp_path / "source")
    with helper_server() as (_, server):
        env = {"BRAIN_URL": server.base_url, "BRAIN_KEY": "sk-plain"}
        code, stdout, stderr, artifacts, summary = _alike(tmp_path, source, ["agenttest.yaml", "s.jsonl"],
                                                          ["-i", "s.jsonl", "--parallel", "1", "--no-cache"], env)
    assert code == 1, stdout + stderr
    assert (summary["passed"], summary["failed"]) == (3, 1), stdout + stderr
    assert "sk-plain" not in stdout + stderr + "".join(artifacts.values())


def test_a_plain_run_loads_no_pydantic(tmp_path: Path) -> None:
    """Options, config and suite of the plain shapes, an openai agent, `contains` and `regex` assertions without
    options: nothing of the run needs pydantic (its import and first model took ~50 ms, a fifth of such a run)."""
    root = tmp_path / "p"
    root.mkdir()
    (root / "agenttest.yaml").write_text(PLAIN_CONFIG.replace("  judge: agents:judge\n", "").split("  judge:")[0])
    (root / "s.jsonl").write_text(json.dumps(PLAIN_SUITE[0]) + "\n" + json.dumps(PLAIN_SUITE[3]) + "\n")
    with helper_server() as (_, server):
        env = {**os.environ, "BRAIN_URL": server.base_url, "BRAIN_KEY": "k"}
        proc = subprocess.run([sys.executable, "-c", MODULES, "-i", "s.jsonl", "--parallel", "2", "--timeout", "1m"],
                              cwd=root, capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 1 and "Passed:    1" in proc.stdout, proc.stdout + proc.stderr
    loaded = set(json.loads(proc.stdout.splitlines()[-1]))
    assert "agenttest.cases.plain" in loaded and "agenttest.agents.openai" in loaded     # it did run the suite
    assert sorted(name for name in loaded if name.split(".")[0] in ("pydantic", "pydantic_core")) == []
    assert sorted(loaded & {"agenttest.run_options", "agenttest.cases.schema", "agenttest.agents.settings",
                            "agenttest.report.report_file", "agenttest.assertions.option_models"}) == []


def test_a_recording_made_by_the_models_replays_plainly(tmp_path: Path) -> None:
    """A cassette remembers the agent's settings (recorded_config), read here without the model: a recording made
    with the models alone replays every call, the agent the same."""
    root = _plain_project(tmp_path / "p")
    with helper_server() as (_, server):
        env = {"BRAIN_URL": server.base_url, "BRAIN_KEY": "k"}
        recorded = _run(root, ["-i", "s.jsonl", "--no-cache", "--record", "tapes"], env, MODELS_ONLY)
        calls = len(server.requests)
    replayed = _run(root, ["-i", "s.jsonl", "--no-cache", "--replay", "tapes"], env, COMMAND)
    assert recorded[0] == replayed[0] == 1 and calls > 0, replayed
    assert "replay: " not in replayed[1] + replayed[2] + replayed[3]["report.json"], replayed     # no call missed
    assert replayed[3]["report.json"].count('"status": "passed"') == 3
