"""Suites from `-i` values (files, directories, globs, direct messages), built into validated cases.

A broken entry never aborts loading: it becomes an InvalidCase at its line, reported as an `error` result, and the
other cases still run (Yao aborts the whole run). Only a bad `-i` value itself is a UsageError. Which files a value
names is `sources`' business, how a file becomes entries `reader`'s; here each entry is validated into a Case.

A case's `expected` becomes its one assertion, an `equals` prepared like any other, when the case has no `assert`
(nor `assertions`); with one, `expected` is ignored, as in Yao, and kept only for the report.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from .. import assertions as _register_assertion_types  # noqa: F401  (importing the package fills the registry)
from ..assertions.base import REGISTRY, AssertionSpec, json_type, known_types, prepare_assertion
from ..errors import SuiteError
from ..hints import closest
from ..validation import describe_errors
from ..workspace import attachment_root
from .inputs import InputError, normalize_input
from .model import Case, InvalidCase, Suite
from .reader import RawEntry, read_entries
from .schema import AssertionEntry, CaseEntry
from .sources import display_path, sources

INVALID = "invalid test case: "


def load_suite(inputs: list[str], *, cwd: Path, project_dir: Path | None = None, exclude: Iterable[Path] = (),
               repo_root: Path | None = None) -> Suite:
    """Load every `-i` value, in order, into one Suite.

    `file://` attachments must stay inside `repo_root` when it is given, else inside each suite's
    `workspace.attachment_root` (its git repository, or the project `project_dir` holding it, or its directory).

    Raises UsageError for a value that names nothing loadable (a missing `.jsonl`/`.json` file, a glob matching no
    file, a directory without `*.jsonl`, a generator input). Every problem inside a file is an InvalidCase instead.
    """
    cwd = cwd.absolute()
    found = [source for value in inputs for source in sources(value, cwd, exclude)]
    builder = _SuiteBuilder()
    loaded: set[Path] = set()
    for source in found:
        if isinstance(source, str):
            builder.add_message(source, cwd)
            continue
        real = source.resolve()
        if real in loaded:
            continue
        loaded.add(real)
        display = display_path(source, cwd)
        builder.suite.files.append(display)
        root = repo_root or attachment_root(source.parent, project_dir)
        for entry in read_entries(source):
            builder.add_entry(entry, display, source.parent, root)
    return builder.suite


@dataclass
class _SuiteBuilder:
    """Turns entries into Cases or InvalidCases, in order, and refuses an id defined earlier in the run."""

    suite: Suite = field(default_factory=Suite)
    first_defined: dict[str, str] = field(default_factory=dict)
    messages: int = 0

    def add_message(self, text: str, cwd: Path) -> None:
        self.messages += 1
        case_id = f"T{self.messages:03d}"
        entry: Case | InvalidCase = Case(id=case_id, input=text, messages=[{"role": "user", "content": text}],
                                         base_dir=cwd, raw={"id": case_id, "input": text})
        if case_id in self.first_defined:
            entry = InvalidCase(f"{INVALID}duplicate id {case_id!r} (first defined {self.first_defined[case_id]})",
                                id=case_id, input=text)
        else:
            self.first_defined[case_id] = "by a direct message (-i)"
        self.suite.entries.append(entry)

    def add_entry(self, raw: RawEntry, file: str, base_dir: Path, repo_root: Path) -> None:
        case_id, raw_input = _known_id_and_input(raw.value)
        problem = raw.error
        if problem is None and case_id is not None and case_id in self.first_defined:
            problem = f"duplicate id {case_id!r} (first defined {self.first_defined[case_id]})"
        elif case_id is not None:
            self.first_defined.setdefault(case_id, f"at {file}:{raw.line}")
        if problem is not None:
            self.suite.entries.append(InvalidCase(INVALID + problem, id=case_id, file=file, line=raw.line,
                                                  input=raw_input))
            return
        try:
            entry = build_case(raw.value, file=file, line=raw.line, base_dir=base_dir, repo_root=repo_root)
        except RecursionError:
            entry = InvalidCase(f"{INVALID}nested too deeply", id=case_id, file=file, line=raw.line)
        self.suite.entries.append(entry)


def _known_id_and_input(value: Any) -> tuple[str | None, Any]:
    """The entry's id (when it is a non-empty string) and raw input, for reporting an entry that is invalid."""
    if not isinstance(value, dict):
        return None, None
    case_id = value.get("id")
    return (case_id if isinstance(case_id, str) and case_id else None), value.get("input")


def build_case(value: Any, *, file: str | None, line: int | None, base_dir: Path,
               repo_root: Path) -> Case | InvalidCase:
    """Validate one parsed entry into a Case, or an InvalidCase listing every problem found (joined by `; `)."""
    case_id, raw_input = _known_id_and_input(value)

    def invalid(problems: list[str]) -> InvalidCase:
        return InvalidCase(INVALID + "; ".join(problems), id=case_id, file=file, line=line, input=raw_input)

    if not isinstance(value, dict):
        return invalid([f"expected a JSON object, got {json_type(value)}"])
    try:
        entry = CaseEntry.model_validate(value)
    except ValidationError as exc:
        return invalid(describe_errors(exc, CaseEntry))
    if entry.is_dynamic:
        return invalid(["dynamic cases (simulator + checkpoints) are not supported yet"])
    problems: list[str] = []
    messages: list[dict[str, Any]] = []
    if entry.input is None:
        problems.append("missing required field 'input'")
    else:
        try:
            messages = normalize_input(entry.input, base_dir=base_dir, repo_root=repo_root)
        except InputError as exc:
            problems.append(str(exc))
    specs = _assertion_specs(entry, base_dir, problems)
    if problems:
        return invalid(problems)
    return Case(
        id=entry.id, input=entry.input, messages=messages, assertions=specs, expected=entry.expected,
        has_expected="expected" in entry.model_fields_set, name=entry.name,
        options={k: v for k, v in value.get("options", {}).items() if v is not None} if entry.options else {},
        user=entry.user, team=entry.team, metadata=entry.metadata, skip=entry.skip_reason,
        timeout=entry.timeout_seconds, before=entry.before, after=entry.after, tags=list(entry.tags or []),
        file=file, line=line, base_dir=base_dir, raw=value,
    )


def _assertion_specs(entry: CaseEntry, base_dir: Path, problems: list[str]) -> list[AssertionSpec]:
    """The case's assertions, prepared; problems are appended with their field (`assert[1].value: …`).

    Without `assert`/`assertions`, a given `expected` (even `null`) is the one assertion, an `equals`.
    """
    if entry.assert_ is not None and entry.assertions is not None:
        problems.append("use either 'assert' or 'assertions', not both")
        return []
    key, written = ("assertions", entry.assertions) if entry.assertions is not None else ("assert", entry.assert_)
    if written is None and "expected" in entry.model_fields_set:
        key, written = "expected", {"type": "equals", "value": entry.expected}
    if written is None:
        return []
    if isinstance(written, str):
        items = [(key, {"type": written}, key)]
    elif isinstance(written, dict):
        items = [(key, written, f"{key}.type")]
    elif isinstance(written, list):
        items = [(f"{key}[{i}]", item, f"{key}[{i}].type") for i, item in enumerate(written)]
    else:
        problems.append(f"{key}: expected an assertion object, an array of them or a type name, "
                        f"got {json_type(written)}")
        return []
    specs = []
    for place, item, type_place in items:
        spec = _assertion_spec(item, place, type_place, base_dir)
        if isinstance(spec, AssertionSpec):
            specs.append(spec)
        else:
            problems.extend(spec)
    return specs


def _assertion_spec(item: Any, place: str, type_place: str, base_dir: Path) -> AssertionSpec | list[str]:
    """One prepared assertion, or its problems. `place` is its field (`assert[1]`), `type_place` its type's."""
    if not isinstance(item, dict):
        return [f"{place}: expected an assertion object, got {json_type(item)}"]
    try:
        written = AssertionEntry.model_validate(item)
    except ValidationError as exc:
        return describe_errors(exc, AssertionEntry, prefix=place)
    if written.kind not in REGISTRY:
        valid = [name for name in known_types() if name]  # "" is registered as a spelling of equals
        meant = closest(written.kind, valid)
        hint = f"did you mean {meant!r}? " if meant else ""
        return [f"{type_place}: unknown assertion type {written.kind!r} ({hint}valid: {', '.join(valid)})"]
    spec = AssertionSpec(type=written.kind, value=written.resolved_value, path=written.path, message=written.message,
                         negate=written.negate, options=dict(written.options or {}), use=written.use,
                         script=written.script, base_dir=base_dir)
    try:
        prepare_assertion(spec)
    except SuiteError as exc:
        return [f"{place}.{exc.where.field}: {exc.message}" if exc.where.field else f"{place}: {exc.message}"]
    except Exception as exc:  # a prepare step that breaks on an odd value must not take down the whole load
        return [f"{place}: cannot prepare the {spec.type!r} assertion: {type(exc).__name__}: {exc}"]
    return spec
