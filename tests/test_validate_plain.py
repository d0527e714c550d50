"""`agenttest validate` reads what is of the plain shapes without the pydantic models (issue #27) and says exactly
what it said before: the same lines, the same exit code, with the plain reading and with the models alone — on the
examples, the Yao fixtures, and suites and configs full of mistakes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from plain_modes import COMMAND, MODELS_ONLY

ROOT = Path(__file__).resolve().parents[1]


def _said(cwd: Path, *args: str, models_only: bool) -> tuple[int, str, str]:
    argv = [sys.executable, "-c", MODELS_ONLY if models_only else COMMAND]
    env = {key: value for key, value in os.environ.items() if not key.startswith(("GITHUB_", "AGENTTEST_"))}
    proc = subprocess.run([*argv, "validate", *args], cwd=cwd, capture_output=True, text=True, timeout=120,
                          env={**env, "SET_KEY": "k"})
    return proc.returncode, proc.stdout, proc.stderr


@pytest.mark.parametrize(("project", "inputs"), [
    ("examples/expense", ["-i", "tests"]), ("examples/openai", ["-i", "tests"]),
    ("tests/fixtures/yao", ["-i", "assistants"]),
])
def test_the_examples_validate_alike(tmp_path: Path, project: str, inputs: list[str]) -> None:
    copy = tmp_path / "project"
    shutil.copytree(ROOT / project, copy)
    said = _said(copy, *inputs, models_only=False)
    assert said == _said(copy, *inputs, models_only=True)
    assert said[0] == 0 and " valid, 0 invalid in " in said[1]


CASES = [
    {"id": "plain", "input": "hi", "assert": [{"type": "contains", "value": "x"}, {"type": "regex", "value": "^h"}]},
    {"id": "rich", "name": "n", "input": [{"role": "user", "content": "hi"}], "tags": ["t"], "timeout": "30s",
     "skip": "later", "metadata": {"k": 1}, "expected": None,
     "assert": {"type": "regex", "pattern": "h", "negate": True, "message": "m"}},
    {"id": "options", "input": "hi", "assert": {"type": "contains", "value": "x", "options": {"ignore_case": True}}},
    {"id": "judged", "input": "hi", "assert": {"type": "agent", "use": "judge", "value": "polite"}},
    {"id": "plain", "input": "again"},                                                # a duplicate id
    {"id": "", "input": "hi"}, {"id": "t", "inptu": "hi"}, {"id": "t2", "input": "hi", "timeout": "5 minutes"},
    {"id": "t3", "input": "hi", "tags": "x"}, {"id": "t4", "input": "hi", "max_turns": 0},
    {"id": "t5", "input": "hi", "assert": {"type": "regex", "value": "("}},
    {"id": "t6", "input": "hi", "assert": {"type": "contians", "value": "x"}},
    {"id": "t7", "input": "hi", "assert": {"type": "contains", "name": "x"}},
    {"id": "t8", "input": "hi", "assert": {"type": "contains", "negate": "yes", "value": "x"}},
    {"id": "t9", "input": "hi", "before": "nowhere.hook"},
    {"id": "c", "simulator": {"use": "scripted", "replies": ["more"]},
     "checkpoints": [{"id": "done", "assert": {"type": "contains", "value": "ok"}}]},
]
SUITE = "\n".join([*(json.dumps(case) for case in CASES), "[1, 2]", "{not json"]) + "\n"
CONFIGS = {
    "plain": "version: 1\ndefaults:\n  name: bot\n  judge: judge\nagents:\n  bot:\n    provider: openai\n"
             "    base_url: http://127.0.0.1:9/v1\n    model: m\n    api_key: ${UNSET_KEY}\n"
             "  judge:\n    builtin: validator\n    base_url: http://127.0.0.1:9/v1\n    model: m\n"
             "    api_key: ${SET_KEY}\n",
    "bad defaults": "defaults:\n  name: bot\n  timeout: 30\n  paralel: 2\nagents:\n  bot:\n    provider: python\n"
                    "    callable: m:f\n",
    "bad agent": "agents:\n  bot:\n    provider: openai\n    stream: maybe\n  x:\n    provder: python\n",
    "unset in defaults": "defaults:\n  name: ${UNSET_NAME}\nagents:\n  bot:\n    provider: python\n"
                         "    callable: m:f\n",
    "connector": "connectors:\n  gpt:\n    model: m\n    api_key: ${SET_KEY}\n    params:\n      temperature: 0\n"
                 "agents:\n  bot:\n    provider: openai\n    connector: gpt\n  judge:\n    builtin: validator\n"
                 "    connector: gpt\n",
    "no config": None,
}


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_suites_with_mistakes_validate_alike(tmp_path: Path, config: str) -> None:
    text = CONFIGS[config]
    if text is not None:
        (tmp_path / "agenttest.yaml").write_text(text)
    (tmp_path / "suite.jsonl").write_text(SUITE)
    (tmp_path / "good.jsonl").write_text(json.dumps(CASES[0]) + "\n")
    for inputs in (["-i", "suite.jsonl"], ["-i", "good.jsonl"], ["good.jsonl", "--judge", "judge"]):
        said = _said(tmp_path, *inputs, models_only=False)
        assert said == _said(tmp_path, *inputs, models_only=True), inputs
        assert said[1] + said[2]
