"""What the launch path hands `run_suite` for a run's report: its reporters, the files they write, and the baseline
report read and checked. The engine imports none of this (as pytest's core never imports junitxml)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TextIO

from ..config import RunConfig
from ..errors import UsageError
from .base import Reporters, Reporting
from .ci import artifact_paths
from .reporters import build_reporters

AUTO = "auto"       # `--baseline auto`: the base branch's report, fetched from GitHub (github.pull_request)


def reporting_for(config: RunConfig, stream: TextIO | None = None) -> Reporting:
    """The reporting of a run of `config`: every reporter (`build_reporters`), every artifact's path, and the
    `--baseline` report (`auto`: none yet — the caller hands a `find_baseline` that fetches it). UsageError naming
    the file when the baseline cannot be one."""
    given = config.options.baseline
    baseline = load_baseline(config.cwd / given, given) if given and given != AUTO else None
    return Reporting(reporters=Reporters(build_reporters(config, stream)), files=artifact_files(config),
                     baseline=baseline)


def artifact_files(config: RunConfig) -> list[tuple[Path, str]]:
    """Every file the reporters write, each with the option that named it (the output directory's, for the files
    written there by name)."""
    options = config.options
    paths = {**artifact_paths(config), **({"output": config.output} if config.output else {})}
    named = {"junit": f"--junit {options.junit}", "summary": f"--summary {options.summary}",
             "output": f"-o {options.output}"}
    return [(path, named.get(name, f"--output-dir {options.output_dir}")) for name, path in paths.items()]


def load_baseline(path: Path, shown: str) -> dict[str, Any]:
    """An earlier report.json to compare with: the whole run's (a shard's would make every other case look
    removed). UsageError naming the file when it cannot be one."""
    from .merge import read_report  # here: its report model loads pydantic, which a run without a baseline needs not

    data = read_report(path, f"--baseline {shown}")
    shard = (data.get("metadata") or {}).get("shard")
    if shard:
        raise UsageError(f"--baseline {shown}: the report of shard {shard} only; compare with the merged report "
                         "(agenttest merge)")
    return data
