"""A run keeps each passed result as the JSON of its report.json shape and lets each case go once it is done
(`result_log.ResultLog`, issue #27): its memory grows by little more than its report. It writes exactly what it wrote
when it held every result and every case to the end — the same console, exit code and artifacts, byte for byte,
only the times apart — and it holds them all when AfterAll or rechecks need them."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from e2e.test_run_plain import ROOT, _run
from plain_modes import COMMAND

# The same run with every result kept whole, as every run kept them before.
WHOLE = """
import agenttest.result_log as result_log
_init = result_log.ResultLog.__init__
result_log.ResultLog.__init__ = lambda self, size, *, lean: _init(self, size, lean=False)
""" + COMMAND

# The run, saying how many cases are alive when it finishes, and what its report's results are.
ALIVE = """
import gc, sys
import agenttest.report.base as base
_finished = base.Reporters.run_finished
def run_finished(self, report):
    from agenttest.cases.model import Case
    gc.unfreeze()       # what a run reads is frozen out of the collections (gc_policy), and out of get_objects
    alive = sum(1 for item in gc.get_objects() if type(item) is Case)
    print(f"ALIVE {alive} {type(report.data['results']).__name__}", file=sys.stderr)
    _finished(self, report)
base.Reporters.run_finished = run_finished
""" + COMMAND

AGENT = '''
def respond(request):
    text = request["messages"][-1]["content"]
    if text == "huge":
        return {"content": "ok", "data": {"n": 2 ** 70}}
    return {"content": f"ok {text}"}
'''
CONFIG = """version: 1
defaults: {name: bot, timeout: 30s}
agents:
  bot: {provider: python, callable: "agent:respond"}
"""
SUITE = [
    {"id": "a", "input": "one", "assert": [{"type": "contains", "value": "ok one"}], "tags": ["t"],
     "metadata": {"owner": "x"}},
    {"id": "b", "input": "two", "assert": {"type": "equals", "value": "nope"}},
    {"id": "c", "input": "three", "skip": True},
    {"id": "d", "input": "huge", "assert": {"type": "json_path", "path": "$.n", "value": 2 ** 70}},
    {"id": "e", "input": "five", "assert": {"type": "regex", "value": "^ok f"}},
    {"id": "f", "input": "six", "assert": {"type": "script", "value": "scripts:nothing"}},
]


def _project(root: Path) -> Path:
    root.mkdir()
    (root / "agenttest.yaml").write_text(CONFIG)
    (root / "agent.py").write_text(AGENT)
    (root / "s.jsonl").write_text("".join(json.dumps(case) + "\n" for case in SUITE))
    return root


def _alike(tmp_path: Path, source: Path, args: list[str]) -> tuple[int, str, dict[str, str]]:
    """The run of `args` in a copy of `source`, as it runs and with every result kept whole: asserted the same. One
    case at a time (`--parallel 1`): the console says each as it finishes."""
    args = [*args, "--parallel", "1"]
    said = []
    root = tmp_path / "project"
    for script in (COMMAND, WHOLE):
        shutil.rmtree(root, ignore_errors=True)
        shutil.copytree(source, root)
        code, stdout, stderr, artifacts = _run(root, args, {}, script)
        said.append((code, stdout, stderr, {name: _DURATIONS.sub("D", text) for name, text in artifacts.items()}))
    assert said[0] == said[1]
    code, stdout, _, artifacts = said[0]
    return code, stdout, artifacts


# Times the runs measure besides those `_run` masks: a case's durations over its runs.
_DURATIONS = re.compile(r'"(avg|min|max)_duration_ms": ?[\d.]+|"std_deviation_ms": ?[\d.]+')


def _report(artifacts: dict[str, str]) -> dict:
    """report.json of `artifacts`, its masked times (`"duration_ms": N`) read as 0."""
    return json.loads(re.sub(r'": N\b|\bD\b', lambda m: '": 0' if m.group().startswith('"') else '"d": 0',
                             artifacts["report.json"]))


def test_a_run_writes_what_it_wrote_holding_every_result(tmp_path: Path) -> None:
    source = _project(tmp_path / "source")
    code, stdout, artifacts = _alike(tmp_path, source, ["-i", "s.jsonl"])
    report = _report(artifacts)
    assert code == 1 and [r["status"] for r in report["results"]] == [
        "passed", "failed", "skipped", "passed", "passed", "error"], stdout
    assert set(artifacts) == {"report.json", "junit.xml", "summary.md", "ctrf.json", "events.jsonl"}


def test_runs_shards_and_the_example_run_alike(tmp_path: Path) -> None:
    source = _project(tmp_path / "source")
    code, _, artifacts = _alike(tmp_path, source, ["-i", "s.jsonl", "--runs", "3", "--shard", "2/2"])
    report = _report(artifacts)
    positions = [r["position"] for r in report["results"]]
    assert code == 1 and len(positions) == 3 and positions == sorted(positions) and set(positions) < set(range(6))
    assert [r["status"] for r in report["results"]] == ["passed", "failed", "passed"]    # a and e kept as JSON
    assert [(row["id"], row["runs"]) for row in report["stability_results"]] == [("a", 3), ("b", 3), ("e", 3)]
    example = tmp_path / "example"
    shutil.copytree(ROOT / "examples" / "expense", example)
    code, stdout, artifacts = _alike(tmp_path / "ex", example, ["-i", "tests"])
    assert code == 1 and _report(artifacts)["summary"]["passed"] == 10, stdout


def test_the_cases_are_let_go_unless_afterall_or_rechecks_need_them(tmp_path: Path) -> None:
    root = _project(tmp_path / "project")
    (root / "hooks.py").write_text("def after_all(*args):\n    pass\n")

    def alive(*args: str) -> str:
        _, _, stderr, _ = _run(root, ["-i", "s.jsonl", *args], {}, ALIVE)
        return next(line for line in stderr.splitlines() if line.startswith("ALIVE"))

    assert alive() == "ALIVE 0 ResultDicts"
    assert alive("--after", "hooks.after_all") == f"ALIVE {len(SUITE) - 1} ResultDicts"
    baseline = root / "agenttest-results" / "report.json"
    kept = tmp_path / "baseline.json"
    kept.write_text(baseline.read_text())
    assert alive("--baseline", str(kept), "--recheck", "1") == f"ALIVE {len(SUITE) - 1} ResultDicts"
    assert alive("--baseline", str(kept), "--recheck", "0") == "ALIVE 0 ResultDicts"
