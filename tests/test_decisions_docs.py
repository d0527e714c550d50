"""docs/decisions.md says what the code does: its table of runs a side is `runs_to_detect_collapse`, its figures are
the statistics module's, and its console examples and `recheck` record are what a real run against a scripted
agent prints and writes."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from agenttest.statistics import Proportion, fisher_one_sided, format_p_value, is_regression, runs_to_detect_collapse
from e2e.noise_project import NoiseProject, noise_project

REPO = Path(__file__).resolve().parents[1]
DOC = (REPO / "docs" / "decisions.md").read_text()
SUITE = "tests/support.jsonl"
GATE = ("--baseline", "main/report.json", "--fail-on", "regression")


def _blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", DOC, re.M | re.S)


@pytest.fixture
def project(tmp_path: Path) -> Iterator[NoiseProject]:
    with noise_project(tmp_path) as proj:
        proj.cases("refund-policy", "asks-receipt", suite=SUITE)
        yield proj


def test_the_table_of_runs_a_side_is_the_codes() -> None:
    table = DOC[DOC.index("| testable drops in the suite |"):]
    table = table[:table.index("\n\n")].splitlines()
    alphas = [float(alpha) for alpha in re.findall(r"alpha ([0-9.]+)", table[0])]
    assert alphas == [0.05, 0.01]
    rows = [[int(cell) for cell in re.findall(r"\d+", line)] for line in table[2:]]
    assert [row[0] for row in rows] == [1, 2, 5, 10, 20, 50, 100]
    for drops, *runs in rows:
        assert runs == [runs_to_detect_collapse(alpha, drops) for alpha in alphas], drops
    assert runs_to_detect_collapse(0.05, 1) == 3 and "3 runs a side find it at 0.05" in DOC


def test_the_figures_in_the_text_are_the_statistics() -> None:
    assert fisher_one_sided(Proportion(5, 5), Proportion(0, 5)) == pytest.approx(1 / 252)
    assert "a p-value of 1/252" in DOC and "(p = 0.004)" in DOC
    partial = Proportion(10, 10), Proportion(7, 10)
    assert not is_regression(*partial) and f"10/10 → 7/10 (p = {format_p_value(fisher_one_sided(*partial))})" in DOC


def test_the_console_of_five_runs_a_side_is_a_real_runs(project: NoiseProject) -> None:
    project.side({}, "-i", SUITE, "--runs", "5", "--output-dir", "main")
    now = project.side({"refund-policy": "FFFFF", "asks-receipt": "PFPPP"}, "-i", SUITE, "--runs", "5", *GATE)
    assert now.code == 1
    lines = now.stdout.splitlines()
    shown = _blocks("text")[0].splitlines()
    start = lines.index(shown[0])
    assert lines[start:start + len(shown)] == shown


def test_the_console_of_rechecks_and_the_record_are_a_real_runs(project: NoiseProject) -> None:
    project.side({}, "-i", SUITE, "--output-dir", "main")
    now = project.side({"refund-policy": "FFF", "asks-receipt": "FP"}, "-i", SUITE, *GATE)
    assert now.code == 1
    lines = now.stdout.splitlines()
    head, announced, *rechecked = _blocks("text")[2].splitlines()
    start = lines.index(head)
    assert lines[start + 2] == announced and sorted(lines[start + 3:start + 5]) == sorted(rechecked)
    shown = json.loads("{" + _blocks("json")[0] + "}")["recheck"]
    real = now.result("asks-receipt")["recheck"]
    assert {**real, "outcomes": [{**real["outcomes"][0], "duration_ms": 840}]} == shown


def test_the_evidence_the_doc_quotes_is_what_the_comparison_writes(project: NoiseProject) -> None:
    """The false-discovery example: two testable drops at three runs a side, as test_noise's merge test has it."""
    project.cases("lone", "partner")
    project.side({"partner": "PPF"}, "-i", "s.jsonl", "--runs", "3", "--output-dir", "main")
    now = project.side({"lone": "FFF", "partner": "PFF"}, "-i", "s.jsonl", "--runs", "3", *GATE)
    [noise] = now.report["comparison"]["noise"]
    assert f"        evidence: {noise['evidence']}" in _blocks("text")[1].splitlines()
    for quoted in ("failed, then passed on recheck 1", "failed, and failed 2 rechecks",
                   "passed, now failed; not rechecked", "failed; not rechecked (budget spent: …)"):
        assert f"`{quoted}`" in DOC
