"""`agenttest merge` on shard reports an attacker crafted, through the real CLI: a field of the wrong type or out of
bounds is exit 2 naming the file and the field — never a traceback, an overflow or a lost artifact — and values
that are merely odd merge, bounded as every artifact value is."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from e2e.conftest import Project, echo_project

ACTIONS = {"GITHUB_ACTIONS": "true"}


def _summary(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    return lambda report: report["summary"].__setitem__(key, value)


def _result(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    return lambda report: report["results"][0].__setitem__(key, value)


CRAFTED = [
    (_summary("duration_ms", "5m"), "summary.duration_ms: expected a number, got string"),
    (_summary("duration_ms", float("inf")), "summary.duration_ms: must be a finite number, got inf"),
    (_summary("runs_per_case", "2"), "summary.runs_per_case: expected an integer or auto:MAX, got string"),
    (_summary("runs_per_case", "auto:99999"), "summary.runs_per_case: auto:MAX must be from 3 to 1000, got 99999"),
    (_summary("runs_per_case", 2.0), "summary.runs_per_case: expected an integer or auto:MAX, got number"),
    (_summary("runs_per_case", 10**9), "summary.runs_per_case: must be at most 10000, got 1000000000"),
    (_summary("cost", {"judge": "x"}), "summary.cost.judge: expected a number, got string"),
    (_summary("budget", {"tokens": float("inf")}), "summary.budget.tokens: expected an integer, got number"),
    (_summary("usage", {"judge": {"calls": -1}}), "summary.usage.judge.calls: must be at least 0, got -1"),
    (_result("duration_ms", float("inf")), "results[0].duration_ms: must be a finite number, got inf"),
    (_result("position", "first"), "results[0].position: expected an integer, got string"),
    (_result("stability", {"runs": 2, "passed": "all"}), "results[0].stability.passed: expected an integer, got"),
    (lambda report: report.__setitem__("warnings", [["nested"]]), "warnings[0]: expected a string, got array"),
    (lambda report: report["metadata"].__setitem__("shard", 2), "metadata.shard: expected a string, got number"),
]


@pytest.fixture(scope="module")
def two_shards(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project with the reports of the two shards of one run, made once for the module."""
    made = echo_project(tmp_path_factory.mktemp("shards"))
    made.suite("s.jsonl", *[{"id": f"c{i}", "input": f"x{i}", "assert": {"type": "contains", "value": "echo"}}
                            for i in range(4)])
    for k in (1, 2):
        run = made.run("-i", "s.jsonl", "--shard", f"{k}/2", "--output-dir", f"shard{k}",
                       env={"XDG_CACHE_HOME": str(made.root / "cache")})
        assert run.code == 0, run.stdout + run.stderr
    return made.root


@pytest.fixture
def shards(project: Project, two_shards: Path) -> Project:
    """`project` with copies of the suite and the shard reports of `two_shards`, for the test to craft."""
    project.copy(two_shards, "s.jsonl", "shard1", "shard2")
    return project


def craft(project: Project, edit: Callable[[dict[str, Any]], None]) -> None:
    path = project.root / "shard1" / "report.json"
    report = json.loads(path.read_text())
    edit(report)
    path.write_text(json.dumps(report))          # `inf` is written 1e999's way: Infinity (then read back as inf)
    path.write_text(path.read_text().replace("Infinity", "1e999"))


@pytest.mark.parametrize(("edit", "said"), CRAFTED, ids=[said.split(":")[0] for _, said in CRAFTED])
def test_a_crafted_field_is_a_usage_error_naming_the_file_and_the_field(
        shards: Project, edit: Callable[[dict[str, Any]], None], said: str) -> None:
    craft(shards, edit)
    merged = shards.run("merge", "shard1/report.json", "shard2/report.json", env=ACTIONS)
    assert merged.code == 2, merged.stdout + merged.stderr
    assert f"Error: shard1/report.json: {said}" in merged.stderr
    assert "Traceback" not in merged.stderr
    as_baseline = shards.run("-i", "s.jsonl", "--baseline", "shard1/report.json")
    assert as_baseline.code == 2 and f"--baseline shard1/report.json: {said}" in as_baseline.stderr
    assert "Traceback" not in as_baseline.stderr


def test_odd_values_merge_bounded_with_every_artifact(shards: Project) -> None:
    def odd(report: dict[str, Any]) -> None:
        result = report["results"][0]
        result.update(id="<b>x</b>" + "i" * 100_000, error="e" * 5_000_000, duration_ms=1e14,
                      metadata={"deep": json.loads("[" * 500 + "]" * 500)})
        report["summary"]["duration_ms"] = 10**15

    craft(shards, odd)
    merged = shards.run("merge", "shard1/report.json", "shard2/report.json", "--output-dir", "merged", env=ACTIONS)
    assert merged.code == 0, merged.stdout + merged.stderr
    out = shards.root / "merged"
    assert sorted(p.name for p in out.iterdir()) == ["ctrf.json", "junit.xml", "report.json", "summary.md"]
    report = json.loads((out / "report.json").read_text())
    assert (out / "report.json").stat().st_size < 1_000_000
    odd_result = next(r for r in report["results"] if r["id"].startswith("<b>x</b>"))
    assert len(odd_result["error"]) < 40_000 and "5,000,000" in odd_result["error"]
    assert report["summary"]["duration_ms"] == 10**15
    json.loads((out / "ctrf.json").read_text())


def test_a_budget_estimated_in_one_shard_stays_estimated_when_merged(shards: Project) -> None:
    """A shard whose agent reported no usage counted estimated tokens against the budget; the merged run's budget
    is built on them too, and says so (it used to drop the mark)."""
    budgets = {"shard1": {"tokens": 10, "max_tokens": 1000, "estimated": True}, "shard2": {"tokens": 5,
                                                                                         "max_tokens": 1000}}
    for shard, budget in budgets.items():
        path = shards.root / shard / "report.json"
        report = json.loads(path.read_text())
        report["summary"]["budget"] = budget
        path.write_text(json.dumps(report))
    merged = shards.run("merge", "shard1/report.json", "shard2/report.json", "--output-dir", "merged")
    assert merged.code == 0, merged.stdout + merged.stderr
    summary = json.loads((shards.root / "merged" / "report.json").read_text())["summary"]
    assert summary["budget"] == {"tokens": 15, "max_tokens": 1000, "estimated": True}
