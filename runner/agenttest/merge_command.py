"""`agenttest merge`: the shards' report.json files joined into the artifacts of one run (`report.merge`), compared
with a baseline — a report.json, or the base branch's fetched from GitHub — and, with `--comment`, the pull
request's one comment posted for the whole run (a shard posts none)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from .errors import UsageError
from .github.log import write_line
from .hints import plural
from .report.merge import check_reports, merge_reports, read_report
from .report.verdicts import comparison_line
from .workspace import repository_root, write_refusal

if TYPE_CHECKING:
    from .github.pull_request import PullRequestLoop


@dataclass(frozen=True)
class MergeOptions:
    """What `agenttest merge` is asked beyond its reports: the baseline (a report.json, or `auto`: the base
    branch's, fetched from GitHub), when it exits 1, and the whole run's pull-request comment."""

    baseline: str | None = None
    fail_on: str = "failure"
    comment: str | None = None
    comment_key: str = "default"
    comment_author: str | None = None
    baseline_artifact: str = "agenttest-results"


def merge_command(paths: list[Path], output_dir: Path, options: MergeOptions | None = None,
                  out: TextIO | None = None) -> int:
    """Read, merge and write the shards' artifacts into `output_dir` (and the job summary); compare with the
    baseline and post the comment when asked; say what came of it in a few lines. Returns the exit code: 2 when the
    reports cannot be merged."""
    from .analysis import exit_code, failures_under_regression, run_ok, without_a_baseline
    from .errors import EXIT_USAGE

    out = out or sys.stdout
    options = options or MergeOptions()
    try:
        loop = _pull_request_loop(options, output_dir)
        reports = [(str(path), read_report(path)) for path in paths]
        merged, compared_with = _merged(reports, options, loop)
    except UsageError as exc:
        write_line(sys.stderr, f"Error: {exc}")
        return EXIT_USAGE
    refused = write_refusal(output_dir, repository_root(Path.cwd()))
    if refused:
        write_line(sys.stderr, f"Error: --output-dir {output_dir}: {refused}; agenttest will not write there")
        return EXIT_USAGE
    merged["metadata"]["options"]["fail_on"] = options.fail_on      # the summary's verdict is the merge's
    written = _write_artifacts(merged, output_dir)
    summary = merged["summary"]
    write_line(out, f"Merged {plural(len(reports), 'shard')} into {output_dir}: {plural(summary['total'], 'case')}, "
                    f"{summary['passed']} passed, {summary['failed']} failed, {plural(summary['errors'], 'error')}, "
                    f"{summary['timeouts']} timed out, {summary['skipped']} skipped")
    comparison = merged.get("comparison")
    if comparison:
        write_line(out, f"Compared with {compared_with}: {comparison_line(comparison)}")
    regressions = failures_under_regression(comparison)
    if options.fail_on == "regression" and comparison is None:
        write_line(sys.stderr, without_a_baseline(fetched=loop is not None and loop.fetches_baseline))
    if loop is not None:
        loop.after_run(merged)
    spent = bool((summary.get("budget") or {}).get("spent"))
    if not written:
        return EXIT_USAGE
    return exit_code(run_ok(merged), options.fail_on, regressions, spent=spent)


def _merged(reports: Sequence[tuple[str, Mapping[str, Any]]], options: MergeOptions,
            loop: PullRequestLoop | None) -> tuple[dict[str, Any], str | None]:
    """The merged report, compared with the baseline — a report.json, or the base branch's fetched from GitHub
    once the reports are known to merge — and what it was compared with. UsageError when they cannot be."""
    if loop is not None and loop.fetches_baseline:
        check_reports(reports)      # refused before GitHub is asked
        found = asyncio.run(loop.fetch_baseline())
        earlier = (found.run_url or "auto", found.report) if found.report is not None else None
        merged = merge_reports(reports, earlier)
        merged["metadata"]["baseline"] = loop.baseline_source()
    else:
        earlier = (options.baseline, read_report(Path(options.baseline))) if options.baseline else None
        merged = merge_reports(reports, earlier)
    return merged, earlier[0] if earlier else None


def _write_artifacts(merged: dict[str, Any], output_dir: Path) -> bool:
    """report.json, junit.xml, summary.md (and the job summary) and ctrf.json of the merged report; False when one
    could not be written (each says why; the others are still written)."""
    from .artifacts import artifact_files
    from .github.environment import step_summary_file
    from .github.links import SourceLinks
    from .github.summary import SummaryWriter
    from .report.base import MergedReport
    from .report.ctrf import CtrfWriter
    from .report.json_report import JsonReportWriter
    from .report.junit import JUnitWriter

    links = SourceLinks.from_environment()
    files = artifact_files(output_dir)
    report = MergedReport(merged)
    writers = (JsonReportWriter(files["report"]), JUnitWriter(files["junit"], links),
               SummaryWriter(files["summary"], links, step_summary_file()), CtrfWriter(files["ctrf"], links))
    for writer in writers:
        try:
            writer.run_finished(report)
        except Exception as exc:         # one broken artifact must not cost the others
            writer.problem(f"{type(writer).__name__} failed: {type(exc).__name__}: {exc}")
    return not any(writer.problems() for writer in writers)


def _pull_request_loop(options: MergeOptions, output_dir: Path) -> PullRequestLoop | None:
    """The merge's pull-request loop when it fetches its baseline or posts a comment (the run's, `launch`), its
    token registered as a secret; None otherwise. UsageError for a comment key or author that cannot be one."""
    from .github.pull_request import PullRequestLoop
    from .options import merge_options
    from .report.reporting import AUTO

    if options.baseline != AUTO and options.comment in (None, "off"):
        return None
    values = {"baseline": options.baseline, "fail_on": options.fail_on, "comment": options.comment,
              "comment_key": options.comment_key, "comment_author": options.comment_author,
              "baseline_artifact": options.baseline_artifact}
    run_options = merge_options({k: v for k, v in values.items() if v is not None})
    return PullRequestLoop.from_environment(run_options, cwd=Path.cwd(), output_dir=output_dir)
