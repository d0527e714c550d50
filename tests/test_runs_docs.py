"""Every example of docs/runs.md is real: its agent, config and suite run with the command it shows and print what
it shows, report.json says what it quotes, the figures it gives are the ones agenttest computes, and the links
between it and the rest of the docs lead somewhere (tests/test_docs.py)."""

from __future__ import annotations

import json
import re
import shlex
from collections import Counter
from pathlib import Path

from agenttest.analysis.stability import STOP_REASONS, percent_interval
from agenttest.statistics import Proportion, clustered_interval, wilson_interval
from e2e.conftest import run_cli

REPO = Path(__file__).resolve().parents[1]
DOC = (REPO / "docs" / "runs.md").read_text()


def _blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", DOC, re.M | re.S)


def _case_blocks(text: str) -> Counter[str]:
    """The console's lines of each case (its `►` line and the lines under it), durations blanked."""
    blocks: list[list[str]] = []
    for line in text.splitlines():
        if line.startswith("►"):
            blocks.append([line])
        elif blocks and line.startswith("  └─"):
            blocks[-1].append(line)
        elif blocks and blocks[-1][-1] != "":
            blocks[-1].append("")       # the case's lines end here
    return Counter(re.sub(r"\((?:<1|\d+)ms\)", "(…)", "\n".join(b).strip()) for b in blocks)


def test_the_example_prints_what_the_page_shows(tmp_path: Path) -> None:
    [agent], [config], [suite] = _blocks("python"), _blocks("yaml"), _blocks("jsonl")
    (tmp_path / "moody.py").write_text(agent)
    (tmp_path / "agenttest.yaml").write_text(config)
    (tmp_path / "runs.jsonl").write_text(suite)
    [command] = [block for block in _blocks("sh") if "runs.jsonl" in block]
    words = shlex.split(command)
    assert words[0] == "agenttest"
    done = run_cli(*words[1:], "--color", "never", cwd=tmp_path)
    assert done.code == 1, done.stdout + done.stderr
    cases, stability = _blocks("text")
    assert _case_blocks(done.stdout) == _case_blocks(cases)
    assert stability.rstrip("\n") in done.stdout.splitlines()
    row, summary = (json.loads(block) for block in _blocks("json"))
    found = next(r for r in done.report["stability_results"] if r["id"] == row["id"])
    assert {key: found[key] for key in row} == row
    assert {key: done.report["summary"][key] for key in summary} == summary


def test_the_figures_the_page_gives_are_agenttests() -> None:
    for passed, runs, low, high in ((3, 3, "43.85", "100"), (0, 3, "0", "56.15"), (5, 9, "26.66", "81.13")):
        assert percent_interval(wilson_interval(passed, runs)) == [float(low), float(high)]
        assert f"{passed} of {runs} is {low}–{high} %" in DOC
    assert percent_interval(clustered_interval([Proportion(10, 10)] * 30)) == [88.64, 100.0]
    assert "30 cases that passed 10 of 10 are 88.64–100 %" in " ".join(DOC.split())
    header, *stops = re.findall(r"^\| `(\w+)` \| ", DOC, re.M)      # the table of reasons, under its header
    assert header == "stopped" and tuple(stops) == STOP_REASONS
