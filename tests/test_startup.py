"""Start-up stays light (issue #10): `agenttest --version` and `--help` load none of the heavy libraries; each
command imports what it needs when it runs. Measured in bench/, asserted here only as which modules load."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("aiohttp", "pydantic", "jsonschema", "yaml", "jsonpath_ng")

# Runs the CLI with the given arguments, then prints every module it loaded.
MODULES = """
import json, sys
sys.argv = ["agenttest", *sys.argv[1:]]
from agenttest.cli import main
try:
    main()
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)))
"""


def _heavy_loaded(*args: str) -> list[str]:
    proc = subprocess.run([sys.executable, "-c", MODULES, *args], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return [m for m in json.loads(proc.stdout.splitlines()[-1]) if m.split(".")[0] in HEAVY]


@pytest.mark.parametrize("args", [["--version"], ["-V"], ["--help"], ["validate", "--help"]])
def test_the_cli_starts_without_the_heavy_libraries(args: list[str]) -> None:
    assert _heavy_loaded(*args) == []


def test_a_run_still_loads_what_it_needs() -> None:
    assert "pydantic" in _heavy_loaded("schema")


def test_validate_loads_no_http_client_no_schema_library_and_no_reporter(tmp_path) -> None:
    """Checking a suite needs the case models and the config, not the providers' code or the artifacts' writers:
    the openai agent's settings are read without aiohttp, a `contains` assertion without jsonschema."""
    (tmp_path / "agenttest.yaml").write_text(
        "agents:\n  bot:\n    provider: openai\n    base_url: http://127.0.0.1:9/v1\n    model: m\n"
        "    api_key: ${BENCH_KEY}\n")
    (tmp_path / "s.jsonl").write_text('{"id": "a", "input": "hi", "assert": {"type": "contains", "value": "x"}}\n')
    proc = subprocess.run([sys.executable, "-c", MODULES, "validate", "-i", "s.jsonl"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert "1 valid, 0 invalid" in proc.stdout, proc.stdout + proc.stderr
    loaded = set(json.loads(proc.stdout.splitlines()[-1]))
    assert "pydantic" in loaded and "agenttest.cases.loader" in loaded  # it did check the suite
    unwanted = {"aiohttp", "jsonschema", "jsonpath_ng", "json_repair", "agenttest.agents.openai",
                "agenttest.agents.exec", "agenttest.agents.replay", "agenttest.engine.run",
                "agenttest.report.reporters", "agenttest.report.junit"}
    assert sorted(unwanted & loaded) == []
