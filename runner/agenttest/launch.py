"""What the `run` command and the Action share: the run configuration built, the suite run inside the guarded
log, and a user mistake or an interrupt turned into an exit code, a one-line message and the step output
`conclusion: error`."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from . import held_loop
from .artifacts import ARTIFACT_FILES, artifact_paths, remove_stale
from .assertions import regex_limit
from .config import RunConfig, build_run_config, declared_output_dir
from .engine.run import RunOutcome, run_suite
from .errors import EXIT_INTERRUPTED, EXIT_USAGE, AgentTestError
from .gc_policy import owned_by_run
from .github.environment import in_github_actions
from .github.log import guarded_log, write_line
from .github.outputs import write_error_conclusion
from .report.reporting import reporting_for

if TYPE_CHECKING:
    from .github.pull_request import PullRequestLoop
    from .report.base import Reporting


@dataclass
class Launch:
    """One run as the `run` command or the Action starts it, and how far it got: `run` fills it in."""

    exit_code: int = 0
    config: RunConfig | None = None       # None when the configuration could not be built
    outcome: RunOutcome | None = None     # None when the run did not end by itself
    error: str | None = None              # the one-line message of a user mistake or an interrupt
    comment_default: str = "off"          # `--comment` when neither it nor agenttest.yaml sets it (the Action: auto)
    github_token: str | None = None       # the token of the pull-request loop (the Action's input), else GITHUB_TOKEN
    loop: PullRequestLoop | None = None   # the baseline fetched and the comment posted (github.pull_request)

    def run(self, cli_values: dict[str, Any], cwd: Path | None = None, *, echo_error: bool = False) -> Launch:
        """Build the run configuration from `agenttest run`'s values and run it inside the guarded log (see
        `log_guard_wanted`; a message about a mistake in the configuration is printed inside it too, in GitHub
        Actions). A user mistake (AgentTestError) ends it with exit code 2, an interrupt before the engine took
        over the signals with 130 — with `echo_error`, its one line printed inside the guard; anything else is our
        bug and propagates, the guard resumed, with `config` still telling the caller what the run may have
        written. `--dry-run` prints the cases on stdout for a pipe: its guard (and any `::add-mask::`) goes to
        stderr, the same log for the runner."""
        stream = sys.stderr if cli_values.get("dry_run") else sys.stdout
        guard = in_github_actions()
        try:        # before the guard: the config's secrets are masked (`::add-mask::`) outside any block
            with guarded_log(stream, guard=False):
                self.config = build_run_config(cli_values, cwd)
            guard = log_guard_wanted(self.config.options.annotations, sys.stdout)
        except AgentTestError as exc:
            self.stop(EXIT_USAGE, str(exc))
        except KeyboardInterrupt:
            self.stop(EXIT_INTERRUPTED, "interrupted")
        if self.config is not None and self.error is None:
            self.loop = self._pull_request_loop(self.config)     # its token masked before the guard opens
        reporting: Reporting | None = None
        with guarded_log(stream, guard=guard), owned_by_run(), regex_limit.owned(), held_loop.owned():
            if self.config is not None and self.error is None:
                try:
                    reporting = self._reporting(self.config)
                    outcome = run_suite(self.config, reporting)
                except AgentTestError as exc:
                    self.stop(EXIT_USAGE, str(exc))
                except KeyboardInterrupt:
                    self.stop(EXIT_INTERRUPTED, "interrupted")
                else:
                    self.outcome, self.exit_code = outcome, outcome.exit_code
                    if self.loop is not None and outcome.report is not None:    # every artifact is written:
                        self.loop.after_run(outcome.report.data)                # the comment, whatever the verdict
            self._remove_stale(cli_values, cwd or Path.cwd(), reporting)
            if echo_error and self.error is not None:
                write_line(sys.stderr, "Interrupted." if self.exit_code == EXIT_INTERRUPTED else f"Error: {self.error}")
        return self

    def _remove_stale(self, cli_values: dict[str, Any], cwd: Path, reporting: Reporting | None) -> None:
        """After a run that stopped with exit 2 before any case ran (a usage or config mistake, a key not set,
        `--run` matching nothing), the artifacts an earlier run left in the output directory are removed, so
        that none passes for this run's (docs/command-line.md); after a run that wrote its junit.xml or summary.md
        elsewhere, those (`_remove_moved`); a `--dry-run` writes none and removes none. The mistake stays the one
        line said: the removal is documented, not announced."""
        if cli_values.get("dry_run"):
            return
        if reporting is not None and reporting.reporters.started:
            if self.config is not None:
                self._remove_moved(self.config, cwd)
            return
        if self.error is None or self.exit_code != EXIT_USAGE:
            return
        output_dir = self.config.output_dir if self.config is not None else declared_output_dir(cli_values, cwd)
        if output_dir is not None:
            remove_stale(output_dir, cwd)

    @staticmethod
    def _remove_moved(config: RunConfig, cwd: Path) -> None:
        """After a run that wrote junit.xml or summary.md elsewhere (`--junit`, `--summary`): those an earlier run
        left in the output directory, which an upload of the directory would take for this run's."""
        written = artifact_paths(config)
        moved = [ARTIFACT_FILES[name] for name in ("junit", "summary")
                 if written[name].resolve() != (config.output_dir / ARTIFACT_FILES[name]).resolve()]
        if moved:
            remove_stale(config.output_dir, cwd, moved)

    def _pull_request_loop(self, config: RunConfig) -> PullRequestLoop:
        """The run's pull-request loop (`--baseline auto`, `--comment`), its GitHub token registered as a secret."""
        from .github.pull_request import PullRequestLoop

        return PullRequestLoop.from_environment(config.options, cwd=config.cwd, output_dir=config.output_dir,
                                                comment_default=self.comment_default, token=self.github_token)

    def _reporting(self, config: RunConfig) -> Reporting:
        reporting = reporting_for(config)
        if self.loop is not None and self.loop.fetches_baseline:
            reporting.find_baseline = self.loop.find_baseline
        return reporting

    def stop(self, exit_code: int, error: str) -> Launch:
        """End a run that could not start or was cut short: its exit code, its message, and the step output
        `conclusion: error` (a finished run's outputs are written by its reporter, github.outputs)."""
        self.exit_code, self.error = exit_code, error
        write_error_conclusion()
        return self


def log_guard_wanted(annotations: bool | None, stream: TextIO, environ: Mapping[str, str] | None = None) -> bool:
    """Whether the run's log goes inside a stop-commands block: always in GitHub Actions (the runner parses it);
    elsewhere only when annotations are forced on and the log is not a terminal (some other tool parses it). A
    developer trying `--annotations` in a terminal sees the annotations without the block's two lines of noise."""
    if in_github_actions(environ):
        return True
    return bool(annotations) and not _is_terminal(stream)


def _is_terminal(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())
