"""The file reporters share one way of writing: atomically, and a file that cannot be written is one line on stderr,
never the end of the run."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

import pytest

from agenttest.github.links import SourceLinks
from agenttest.github.summary import SummaryWriter
from agenttest.report.artifact import FileReporter
from agenttest.report.ctrf import CtrfWriter
from agenttest.report.json_report import JsonReportWriter
from agenttest.report.junit import JUnitWriter

from .conftest import make_report, mixed_results


@pytest.mark.parametrize("make", [
    lambda path, links, errors: JUnitWriter(path, links, errors),
    lambda path, links, errors: CtrfWriter(path, links, errors),
    lambda path, links, errors: SummaryWriter(path, links, errors=errors),
    lambda path, links, errors: JsonReportWriter(path, errors=errors),
])
def test_an_unwritable_path_is_one_line_on_stderr(tmp_path: Path, links: SourceLinks,
                                                  make: Callable[[Path, SourceLinks, TextIO], FileReporter]) -> None:
    (tmp_path / "blocked").write_text("a file where a directory should be")
    errors = io.StringIO()
    writer = make(tmp_path / "blocked" / "artifact", links, errors)
    assert isinstance(writer, FileReporter)
    writer.run_finished(make_report(mixed_results()))
    lines = errors.getvalue().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"✗ cannot write {tmp_path / 'blocked' / 'artifact'}: ")


def test_one_failing_file_does_not_stop_the_next(tmp_path: Path) -> None:
    (tmp_path / "blocked").write_text("")
    errors = io.StringIO()
    JsonReportWriter(tmp_path / "blocked" / "report.json", tmp_path / "out" / "report.md", errors).run_finished(
        make_report(mixed_results()))
    assert (tmp_path / "out" / "report.md").read_text().startswith("## ❌ agenttest")
    assert errors.getvalue().startswith("✗ cannot write ")
    JsonReportWriter(tmp_path / "report.json", errors=errors).run_finished(make_report(mixed_results()))
    assert json.loads((tmp_path / "report.json").read_text())["summary"]["total"] == 6


def test_the_job_summary_warns_on_the_same_stream(tmp_path: Path, links: SourceLinks) -> None:
    step = tmp_path / "step_summary"
    step.write_bytes(b"x" * 999_000)
    errors = io.StringIO()
    SummaryWriter(tmp_path / "summary.md", links, step, errors).run_finished(make_report(mixed_results()))
    assert errors.getvalue() == f"✗ not adding to the job summary: {step} already holds 999000 bytes\n"
    assert (tmp_path / "summary.md").is_file()
