"""The labels file of `agenttest calibrate`: one labelled example a line — what the judge is shown, and the verdict
a person gave it — read with every problem named by line and field."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, StrictBool, StrictStr, ValidationError, field_validator

from ..assertions.base import json_type
from ..cases.reader import read_entries
from ..errors import UsageError
from ..validation import describe_errors


class LabelLine(BaseModel):
    """One line of a labels file: what the judge is shown, and the verdict a person gave it."""

    model_config = ConfigDict(extra="forbid")

    id: StrictStr | None = None
    input: Any
    output: Any
    criteria: Any
    label: StrictBool
    conversation: list[dict[str, Any]] | None = None

    @field_validator("criteria")
    @classmethod
    def _stated(cls, value: Any) -> Any:
        if value is None or (isinstance(value, str) and not value.strip()):
            raise ValueError("the criteria the judge decides by are missing")
        return value

    @field_validator("id")
    @classmethod
    def _named(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("an id needs a name (or leave it out: the line number names the line)")
        return value


@dataclass(frozen=True)
class Labelled:
    """A valid labelled line."""

    line: int
    id: str
    label: bool
    input: Any
    output: Any
    criteria: Any
    conversation: list[dict[str, Any]] | None


@dataclass(frozen=True)
class Invalid:
    """A line that is no labelled example, and why (its field named)."""

    line: int
    message: str


def read_labels(path: Path, shown: str) -> tuple[list[Labelled], list[Invalid]]:
    """The labelled lines of a labels file (JSONL, or a JSON array; `//` comments and blank lines skipped), and the
    lines that are none, each with a message naming its field. UsageError when the file cannot be read at all."""
    if not path.is_file():
        raise UsageError(f"-i {shown}: {'a directory, not a labels file' if path.is_dir() else 'no such file'}")
    lines: list[Labelled] = []
    invalid: list[Invalid] = []
    first_line: dict[str, int] = {}
    for entry in read_entries(path):
        if entry.error is not None:
            invalid.append(Invalid(entry.line, entry.error))
            continue
        if not isinstance(entry.value, dict):
            invalid.append(Invalid(entry.line, 'expected a JSON object {"input", "output", "criteria", "label"}, '
                                               f"got {json_type(entry.value)}"))
            continue
        try:
            read = LabelLine.model_validate(entry.value)
        except ValidationError as exc:
            invalid.append(Invalid(entry.line, "; ".join(describe_errors(exc, LabelLine))))
            continue
        line_id = read.id or f"line {entry.line}"
        if line_id in first_line:
            invalid.append(Invalid(entry.line, f"id: {line_id!r} is already the id of line {first_line[line_id]}"))
            continue
        first_line[line_id] = entry.line
        lines.append(Labelled(line=entry.line, id=line_id, label=read.label, input=read.input, output=read.output,
                              criteria=read.criteria, conversation=read.conversation))
    return lines, invalid
