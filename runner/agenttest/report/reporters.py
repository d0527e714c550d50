"""The reporters of a run: every artifact (console, report.json, events.jsonl, …) listens to the engine's events."""

from __future__ import annotations

import os
import sys
from typing import TextIO

from ..artifacts import artifact_paths
from ..config import RunConfig
from .base import Reporter
from .ci import ci_reporters
from .console import ConsoleReporter, artifact_places, use_colour
from .events import EventsWriter
from .json_report import JsonReportWriter


def build_reporters(config: RunConfig, stream: TextIO | None = None) -> list[Reporter]:
    """The reporters of a run, in the order they are told about each event."""
    out = stream or sys.stdout
    tty = out.isatty() and os.environ.get("TERM") != "dumb"
    paths = artifact_paths(config)
    return [
        ConsoleReporter(out, color=use_colour(config.options.color, tty), live=tty, verbose=config.options.verbose,
                        artifacts=artifact_places(config)),
        EventsWriter(paths["events"]),
        JsonReportWriter(paths["report"], config.output),
        *ci_reporters(config, out),
    ]
