"""The garbage collector's policy while a command owns its process (`gc_policy.py`, issue #10): no collection while
a command imports and reads, nor while a run reads its suite; what was read frozen; collection back on for a run's
cases and after the command; nothing changed for a caller's process. Each probe runs in a fresh interpreter:
freezing the test process's objects would keep its later garbage alive."""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from pathlib import Path

# Runs the CLI with the given arguments, counting the collections made while `load_suite` ran and after it.
DURING_LOAD = """
import gc, json, sys
import agenttest.engine.run as run
reading, counts = [False], {"while reading": 0, "after": 0}
def load_suite(*args, **kwargs):
    reading[0] = True
    try:
        return load(*args, **kwargs)
    finally:
        reading[0] = False
load, run.load_suite = run.load_suite, load_suite
gc.callbacks.append(lambda phase, info: phase == "start" and counts.__setitem__(
    "while reading" if reading[0] else "after", counts["while reading" if reading[0] else "after"] + 1))
from agenttest.cli import main
sys.argv = ["agenttest", *sys.argv[1:]]
try:
    main()
except SystemExit as exc:
    counts["exit"] = exc.code
counts["enabled"], counts["threshold"] = gc.isenabled(), gc.get_threshold()[0]
print(json.dumps(counts))
"""

# Runs the CLI with the given arguments, counting the collections made once it is imported.
DURING_COMMAND = """
import gc, json, sys
from agenttest.cli import main
counts = {"collections": 0}
def counted(phase, info):
    if phase == "start":
        counts["collections"] += 1
gc.callbacks.append(counted)
sys.argv = ["agenttest", *sys.argv[1:]]
try:
    main()
except SystemExit as exc:
    counts["exit"] = exc.code
counts["enabled"] = gc.isenabled()
print(json.dumps(counts))
"""

POLICY = """
import gc, json
from agenttest.gc_policy import command, owned_by_run, reading
seen = {}
frozen = gc.get_freeze_count()
with reading():
    seen["api: enabled while reading"] = gc.isenabled()
    api_read = [[i] for i in range(1000)]
seen["api: nothing frozen"] = gc.get_freeze_count() == frozen
with owned_by_run():
    seen["run: threshold"] = gc.get_threshold()[0]
    before = gc.get_freeze_count()
    with reading():
        seen["run: enabled while reading"] = gc.isenabled()
        read = [[i] for i in range(1000)]
    seen["run: enabled after"] = gc.isenabled()
    seen["run: read is frozen"] = gc.get_freeze_count() >= before + 1000
    seen["run: young count reset"] = gc.get_count()[0] < 100
    gc.disable()
    with reading():
        pass
    seen["run: a disabled collector stays disabled"] = not gc.isenabled()
    gc.enable()
seen["after: threshold"] = gc.get_threshold()[0]
with command():
    seen["command: enabled"] = gc.isenabled()
    with owned_by_run():
        seen["command, run: enabled"] = gc.isenabled()
    seen["command, after the run: enabled"] = gc.isenabled()
with command():
    pass
seen["after a command: enabled"] = gc.isenabled()
gc.disable()
with command():
    with owned_by_run():
        seen["caller disabled, run: enabled"] = gc.isenabled()
seen["caller disabled, after: enabled"] = gc.isenabled()
print(json.dumps(seen))
"""


@functools.cache
def default_threshold() -> int:
    """A fresh interpreter's first collection threshold, which a run puts back: 700 to Python 3.12, 2,000 from
    3.13."""
    return int(subprocess.run([sys.executable, "-c", "import gc; print(gc.get_threshold()[0])"],
                              capture_output=True, text=True, check=True).stdout)


def _probe(script: str, *args: str, cwd: Path | None = None) -> dict:
    proc = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=120, cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


def test_a_run_makes_no_collection_while_it_reads_its_suite(tmp_path) -> None:
    """5,000 cases allocate well over the 50,000 objects after which a collection would come (10,000 made three),
    and none comes while they are read; the run's policy is undone when it returns."""
    _suite(tmp_path / "s.jsonl", 5000)
    counts = _probe(DURING_LOAD, "-i", "s.jsonl", "--dry-run", cwd=tmp_path)
    assert counts["exit"] in (0, None)
    assert counts["while reading"] == 0
    assert counts["enabled"] is True and counts["threshold"] == default_threshold()


def test_the_policy_applies_only_inside_a_run() -> None:
    assert _probe(POLICY) == {
        "api: enabled while reading": True, "api: nothing frozen": True,
        "run: threshold": 50_000, "run: enabled while reading": False, "run: enabled after": True,
        "run: read is frozen": True, "run: young count reset": True,
        "run: a disabled collector stays disabled": True, "after: threshold": default_threshold(),
        "command: enabled": False, "command, run: enabled": True, "command, after the run: enabled": True,
        "after a command: enabled": True,
        "caller disabled, run: enabled": False, "caller disabled, after: enabled": False,
    }


def _suite(path: Path, cases: int) -> None:
    path.write_text("".join(json.dumps({"id": f"c{i}", "input": f"case {i}", "assert": [
        {"type": "contains", "value": f"ok case {i}"}, {"type": "regex", "value": "^ok case \\d+$"}]}) + "\n"
        for i in range(cases)))


def test_validate_makes_no_collection_after_the_cli_is_imported(tmp_path) -> None:
    """Its imports (pydantic, the case models) and the 1,000 cases it reads live to the end: ~90 collections
    that freed nothing came during them; none comes now, and the collector is on again when it returns."""
    _suite(tmp_path / "s.jsonl", 1000)
    counts = _probe(DURING_COMMAND, "validate", "-i", "s.jsonl", cwd=tmp_path)
    assert counts == {"collections": 0, "exit": 0, "enabled": True}
