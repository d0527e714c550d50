"""Start-up stays light (issue #10): `agenttest --version` and `--help` load none of the heavy libraries; each
command imports what it needs when it runs. Measured in bench/, asserted here only as which modules load."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("aiohttp", "pydantic", "jsonschema", "yaml", "jsonpath_ng")

PROBE = """
import json, sys
sys.argv = ["agenttest", *sys.argv[1:]]
from agenttest.cli import main
try:
    main()
except SystemExit:
    pass
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in {heavy})))
"""


@pytest.mark.parametrize("args", [["--version"], ["-V"], ["--help"], ["validate", "--help"]])
def test_the_cli_starts_without_the_heavy_libraries(args: list[str]) -> None:
    probe = PROBE.format(heavy=set(HEAVY))
    proc = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.splitlines()[-1]) == []


def test_a_run_still_loads_what_it_needs() -> None:
    probe = PROBE.format(heavy=set(HEAVY))
    proc = subprocess.run([sys.executable, "-c", probe, "schema"], capture_output=True, text=True, timeout=60)
    assert "pydantic" in json.loads(proc.stdout.splitlines()[-1])
