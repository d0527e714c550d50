"""Files agenttest reads whole, through the real CLI: a report named by `--baseline` or `merge`, the `--ctx` file,
and the files agenttest.yaml names (`tools:`, `system:`, a helper's `prompt:`). A FIFO (which would block the run
for good), a symlink to `/dev/zero` (which never ends) and a file larger than the cap are refused before anything of
them is read, with an error naming the file; a file agenttest.yaml names must also stay inside the repository."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from e2e.conftest import ECHO_AGENT, Project


@pytest.fixture
def project(tmp_path: Path) -> Project:
    proj = Project(tmp_path / "repo")
    proj.write("agenttest.yaml", """
        version: 1
        defaults: {name: echo}
        agents:
          echo: {provider: python, callable: echo_agent:respond}
        """)
    proj.write("echo_agent.py", ECHO_AGENT)
    proj.suite("s.jsonl", {"id": "c", "input": "hi", "assert": {"type": "contains", "value": "hi"}})
    return proj


def _fifo(path: Path) -> str:
    os.mkfifo(path)                 # nobody ever writes to it: a reader that opens it waits for good
    return path.name


def _sparse(path: Path, size: int) -> str:
    with path.open("wb") as handle:  # sparse: the size on paper, nothing on disk
        handle.truncate(size)
    return path.name


def _zero(path: Path) -> str:
    path.symlink_to("/dev/zero")
    return path.name


BIG = 300 * 1024 * 1024
TOO_BIG = f"it is {BIG:,} bytes, more than the {256 * 1024 * 1024:,} agenttest reads"


def test_a_baseline_or_a_report_to_merge_that_is_a_fifo_dev_zero_or_too_large_is_refused_unread(
        project: Project) -> None:
    root = project.root
    for name, why in ((_fifo(root / "fifo.json"), "it is not a regular file"),
                      (_sparse(root / "big.json", BIG), TOO_BIG),
                      (_zero(root / "zero.json"), "it is not a regular file")):
        run = project.run("-i", "s.jsonl", "--baseline", name, timeout=30)
        assert run.code == 2, run.stdout + run.stderr
        assert f"--baseline {name}: not a report.json ({why})" in run.stderr
        merged = project.run("merge", name, timeout=30)
        assert merged.code == 2 and f"{name}: not a report.json ({why})" in merged.stderr, merged.stderr
        assert "Traceback" not in run.stderr + merged.stderr


def test_a_baseline_that_is_a_symlink_to_a_report_is_read(project: Project) -> None:
    first = project.run("-i", "s.jsonl", "--output-dir", "main")
    assert first.code == 0
    (project.root / "latest.json").symlink_to(project.root / "main" / "report.json")
    compared = project.run("-i", "s.jsonl", "--baseline", "latest.json")
    assert compared.code == 0, compared.stdout + compared.stderr
    assert compared.report["comparison"]["baseline"]["path"] == "latest.json"
    assert compared.report["comparison"]["pass_rate"]["before"] == 100.0


def test_a_ctx_file_that_is_a_fifo_or_dev_zero_is_refused_unread(project: Project) -> None:
    for name in (_fifo(project.root / "ctx.json"), _zero(project.root / "ctx0.json")):
        run = project.run("-i", "s.jsonl", "--ctx", name, timeout=30)
        assert run.code == 2, run.stdout + run.stderr
        assert f"--ctx {project.root / name}: it is not a regular file" in run.stderr


@pytest.mark.parametrize(("field", "target"), [("tools", "outside"), ("tools", "/dev/zero"),
                                               ("system", "outside"), ("prompt", "outside")])
def test_a_file_agenttest_yaml_names_must_stay_inside_the_repository(project: Project, field: str,
                                                                       target: str) -> None:
    outside = project.root.parent / "outside"
    outside.mkdir()
    (outside / "tools.json").write_text(json.dumps([{"name": "leak", "parameters": {"type": "object"}}]))
    (project.root / "linked.json").symlink_to(outside / "tools.json" if target == "outside" else target)
    kind = "builtin: validator" if field == "prompt" else "provider: openai"
    project.write("agenttest.yaml", f"""
version: 1
defaults: {{name: echo, judge: llm}}
agents:
  echo: {{provider: python, callable: echo_agent:respond}}
  llm:
    {kind}
    base_url: http://127.0.0.1:9/v1
    model: m
    {field}: linked.json
""")
    project.suite("s.jsonl", {"id": "c", "input": "hi", "assert": {"type": "agent", "value": "polite"}})
    run = project.run("-i", "s.jsonl", *(() if field == "prompt" else ("-n", "llm")), timeout=30)
    assert run.code == 2, run.stdout + run.stderr
    assert f"agents.llm.{field}: linked.json is outside the repository" in run.stderr
