"""The workspace a docker or composite action step runs in."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    (root / ".git").mkdir(parents=True)
    (root / "agenttest.yaml").write_text(textwrap.dedent("""
        version: 1
        defaults:
          name: echo
        agents:
          echo:
            provider: python
            callable: echo_agent:respond
        """))
    (root / "echo_agent.py").write_text("def respond(request):\n"
                                        "    return 'echo: ' + request['messages'][-1]['content']\n")
    cases = [{"id": "pass", "input": "hi", "assert": {"type": "contains", "value": "echo: hi"}},
             {"id": "fail", "input": "hi", "assert": {"type": "contains", "value": "::error::nope"}}]
    (root / "evals").mkdir()
    (root / "evals" / "suite.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    return root
