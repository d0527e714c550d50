"""Workflow commands (`::error file=…,line=…::message`), escaped exactly as `@actions/core` escapes them.

Agent text printed in the log is kept from becoming a command by the stop-commands block around the run
(`log.guarded_log`); in our own commands, by escaping here: secrets masked and ANSI sequences stripped first
(`escape.plain`), then `%`, CR and LF in the message, and also `:` and `,` in a property.
"""

from __future__ import annotations

from typing import Any

from ..report.escape import plain
from .log import escape_data


def command_data(value: Any) -> str:
    """The message of a workflow command, escaped exactly as `@actions/core` escapes data (`%`, CR, LF), so the
    whole command stays on one line and the runner's unescaping gives the text back."""
    return escape_data(plain(value))


def command_property(value: Any) -> str:
    """A property value (title, file) of a workflow command, escaped as `@actions/core` does: data escaping
    plus `:` and `,`."""
    return command_data(value).replace(":", "%3A").replace(",", "%2C")


def workflow_command(command: str, message: Any, **properties: Any) -> str:
    """One `::command k=v,…::message` line; properties that are None or empty are left out, as the toolkit does."""
    props = ",".join(f"{key}={command_property(value)}" for key, value in properties.items()
                     if value is not None and value != "")
    return f"::{command}{' ' + props if props else ''}::{command_data(message)}"
