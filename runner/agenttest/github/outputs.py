"""The step outputs of a run (docs/github-actions.md) appended to `$GITHUB_OUTPUT`: one writer for `agenttest run`
and the Action, so `docker run` and `pip install` users get exactly what the Action gives."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..analysis import conclusion, pass_rate_text
from ..report.base import Reporter, ReportLike
from . import environment

COUNTS = {"total": "total", "passed": "passed", "failed": "failed", "errors": "errors", "timeouts": "timeouts",
          "skipped": "skipped"}


def step_outputs(report: Mapping[str, Any], paths: Mapping[str, Path], workspace: Path) -> dict[str, str]:
    """The outputs of a finished run: the counts, `pass-rate` (empty when no case ran), the artifact paths relative
    to the workspace, `conclusion`, and with a baseline the number of `regressions`."""
    summary = report.get("summary") or {}
    outputs = {name: str(summary.get(key) or 0) for name, key in COUNTS.items()}
    outputs["pass-rate"] = pass_rate_text(summary.get("pass_rate"))
    outputs.update({name: workspace_path(path, workspace) for name, path in paths.items()})
    outputs["conclusion"] = conclusion(report)
    comparison = report.get("comparison")
    if isinstance(comparison, Mapping):
        outputs["regressions"] = str(len(comparison.get("regressions") or []))
    return outputs


def write_error_conclusion(environ: Mapping[str, str] | None = None) -> None:
    """`conclusion: error`, the one output of a step whose run could not start or was cut short (a finished run's
    outputs, its conclusion among them, are written by StepOutputsWriter)."""
    write_outputs(environment.output_file(environ), {"conclusion": "error"})


def write_outputs(path: str | Path | None, outputs: Mapping[str, Any]) -> None:
    """Append step outputs to `$GITHUB_OUTPUT`, each as a heredoc with its own random delimiter (multi-line safe,
    and no value can end its record early: the delimiter is unguessable and checked)."""
    if not path:
        return
    records = []
    for name, value in outputs.items():
        text = "" if value is None else str(value)
        delimiter = f"ghadelimiter_{uuid.uuid4()}"
        if delimiter in name or delimiter in text:
            raise ValueError(f"output {name}: value contains its delimiter")
        records.append(f"{name}<<{delimiter}\n{text}\n{delimiter}\n")
    with open(path, "a", encoding="utf-8", newline="\n") as handle:
        handle.write("".join(records))


def workspace_path(path: Path, workspace: Path) -> str:
    """A path as later steps see it: relative to the workspace (the checkout), with forward slashes."""
    try:
        return path.resolve().relative_to(workspace.resolve()).as_posix()
    except ValueError:
        return str(path)


def output_workspace(cwd: Path, environ: Mapping[str, str] | None = None) -> Path:
    """What the paths in the outputs are relative to: `$GITHUB_WORKSPACE`, else the working directory."""
    return environment.workspace(environ) or cwd


class StepOutputsWriter(Reporter):
    """Appends the run's step outputs to `$GITHUB_OUTPUT` when the run finishes."""

    def __init__(self, path: Path, paths: Mapping[str, Path], workspace: Path) -> None:
        self.path = path
        self.paths = dict(paths)
        self.workspace = workspace

    def run_finished(self, report: ReportLike) -> None:
        try:
            write_outputs(str(self.path), step_outputs(report.data, self.paths, self.workspace))
        except OSError as exc:
            self.problem(f"cannot write the step outputs to {self.path}: {exc.strerror or exc}")
