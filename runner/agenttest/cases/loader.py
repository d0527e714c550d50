"""Suites from `-i` values (files, directories, globs, direct messages), built into validated cases.

A broken entry never aborts loading: it becomes an InvalidCase at its line, reported as an `error` result, and the
other cases still run (Yao aborts the whole run). Only a bad `-i` value itself is a UsageError. Which files a value
names is `sources`' business, how a file becomes entries `reader`'s; here each entry is validated into a Case.

A case's `expected` becomes its one assertion, an `equals` prepared like any other, when the case has no `assert`
(nor `assertions`); with one, `expected` is ignored, as in Yao, and kept only for the report.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from .. import assertions as _register_assertion_types  # noqa: F401  (importing the package fills the registry)
from ..assertions.base import NO_OPTIONS, REGISTRY, AssertionSpec, json_type, known_types, prepare_assertion
from ..bounds import TOO_DEEP, stored, too_deep
from ..durations import parse_duration
from ..errors import SuiteError
from ..hints import closest, did_you_mean
from ..refs import definition_problem, reference_problem
from ..validation import describe_errors
from ..workspace import UnsafePath, attachment_root, checked_file
from . import steps
from .inputs import InputError, normalize_input
from .model import (
    SCRIPTED,
    Case,
    Checkpoint,
    Conversation,
    Guard,
    Interactive,
    InvalidCase,
    Simulate,
    Step,
    Suite,
    UserTurn,
    definition_of,
)
from .plain import PlainAssertion, PlainCase, plain_assertion, plain_case
from .reader import RawEntry, read_entries, why_no_entries
from .sources import GeneratorSource, display_path, sources
from .steps import SpecsAt

if TYPE_CHECKING:       # the models are imported when an entry needs them (`_entry`): a plain suite loads no pydantic
    from pydantic import BaseModel

    from .schema import AssertionEntry, CaseEntry, CheckpointEntry, SimulatorEntry

ModelT = TypeVar("ModelT", bound="BaseModel")
INVALID = "invalid test case: "
DEFAULT_MAX_TURNS = 20
_AGENT_PREFIX = "agents:"
_TYPE_AND_VALUE = frozenset({"type", "value"})   # an assertion with only these keys needs no model


@dataclass(frozen=True)
class Checks:
    """What a case is checked against beyond its own text: the agents of agenttest.yaml (id → its `builtin` role,
    or None for an ordinary agent; None when there is no config to check against) and `--simulator`."""

    agents: Mapping[str, str | None] | None = None
    default_simulator: str | None = None
    default_judge: str | None = None       # `--judge` / `defaults.judge`: the judge of `agent` assertions without `use`
    root: Path | None = None      # every file a case names must lie inside it (set per suite file)
    connectors: Collection[str] | None = None     # the config's connectors (None: no config to check against)
    pinned_at_zero: Collection[str] = ()          # agents whose `params` fix temperature 0: samples would agree
    plain: bool = False     # read entries of the plain shapes without their models (`agenttest validate`: plain.py)
    # The `{"type": …, "value": "…"}` assertions prepared so far, by what they say and where: one object for all
    # the cases of a load that write the same one (`_assertion_spec`).
    shared_specs: dict[tuple[Any, ...], AssertionSpec] = field(default_factory=dict, compare=False, repr=False)
    # Each case's definition digest worked out from its entry as read (a run, which reports it on every result:
    # cheaper than parsing the entry's text again later); `validate` needs none.
    digests: bool = False


def load_suite(inputs: list[str], *, cwd: Path, project_dir: Path | None = None, exclude: Iterable[Path] = (),
               repo_root: Path | None = None, checks: Checks | None = None) -> Suite:
    """Load every `-i` value, in order, into one Suite.

    `file://` attachments must stay inside `repo_root` when it is given, else inside each suite's
    `workspace.attachment_root` (its git repository, or the project `project_dir` holding it, or its directory).

    Generator inputs are kept in `Suite.generators`, at the place their cases go: they are called by the engine.

    Raises UsageError for a value that names nothing loadable (a missing `.jsonl`/`.json` file, a glob matching no
    file, a directory without `*.jsonl`, a malformed generator input). Every problem inside a file is an
    InvalidCase instead.
    """
    cwd = cwd.absolute()
    found = [source for value in inputs for source in sources(value, cwd, exclude)]
    builder = _SuiteBuilder(checks=checks or Checks())
    loaded: set[Path] = set()
    for source in found:
        if isinstance(source, GeneratorSource):
            builder.suite.generators.append((len(builder.suite.entries), source))
            continue
        if isinstance(source, str):
            builder.add_message(source, cwd)
            continue
        real = source.resolve()
        if real in loaded:
            continue
        loaded.add(real)
        display = display_path(source, cwd)
        builder.suite.files.append(display)
        base_dir = source.parent
        root = repo_root or attachment_root(base_dir, project_dir)
        try:        # a suite file that is a symlink out of the repository, a FIFO, a huge file: not read
            entries = read_entries(checked_file(source, attachment_root(base_dir, project_dir), display))
        except UnsafePath as exc:
            entries = [RawEntry(1, error=f"suite file {exc}")]
        for entry in entries:
            builder.add_entry(entry, display, base_dir, root)
    return builder.suite


@dataclass
class _SuiteBuilder:
    """Turns entries into Cases or InvalidCases, in order, and refuses an id defined earlier in the same file. The
    same id in two files is two cases (real Yao repositories number `T001…` in every agent's suite): a case is
    known by (file, id)."""

    checks: Checks = field(default_factory=Checks)
    suite: Suite = field(default_factory=Suite)
    first_defined: dict[str, dict[str, int]] = field(default_factory=dict)   # file → id → the line defining it
    messages: int = 0

    def add_message(self, text: str, cwd: Path) -> None:
        self.messages += 1
        case_id = f"T{self.messages:03d}"      # direct messages have no file: T001, T002, … never collide
        self.suite.entries.append(Case(id=case_id, input=text, messages=[{"role": "user", "content": text}],
                                       base_dir=cwd, written={"id": case_id, "input": text}))

    def add_entry(self, raw: RawEntry, file: str, base_dir: Path, repo_root: Path) -> None:
        case_id, raw_input = _known_id_and_input(raw.value)
        problem = raw.error
        defined = self.first_defined.get(file)
        if defined is None:
            defined = self.first_defined[file] = {}
        if problem is None and case_id is not None and case_id in defined:
            problem = f"duplicate id {case_id!r} (first defined at {file}:{defined[case_id]})"
        elif case_id is not None:
            defined.setdefault(case_id, raw.line)
        if problem is not None:
            self.suite.entries.append(InvalidCase(INVALID + problem, id=case_id, file=file, line=raw.line,
                                                  input=raw_input))
            return
        # each case of a file is checked with its repository root (the same Path object for all its cases)
        if self.checks.root is not repo_root and self.checks.root != repo_root:
            self.checks = replace(self.checks, root=repo_root)
        try:
            entry = build_case(raw.value, file=file, line=raw.line, base_dir=base_dir, repo_root=repo_root,
                               checks=self.checks, warnings=self.suite.warnings, text=raw.text)
        except RecursionError:
            entry = InvalidCase(f"{INVALID}{TOO_DEEP}", id=case_id, file=file, line=raw.line)
        if self.checks.digests and isinstance(entry, Case):     # from the entry as read, nothing having changed it
            entry.digest = definition_of(raw.value)
        self.suite.entries.append(entry)


def build_generated(values: list[Any], source: GeneratorSource, *, base_dir: Path, repo_root: Path,
                    checks: Checks, warnings: list[str]) -> list[Case | InvalidCase]:
    """The cases a generator wrote, validated exactly like a file's: each invalid one is an InvalidCase naming the
    generator and its index (`agents:gen case 3`), the rest are Cases. Ids must be unique among them."""
    entries: list[Case | InvalidCase] = []
    first: dict[str, int] = {}
    for index, value in enumerate(values, start=1):
        where = f"{source.spelled} case {index}"
        case_id, raw_input = _known_id_and_input(value)
        if case_id is not None and case_id in first:
            entries.append(InvalidCase(f"{INVALID}{where}: duplicate id {case_id!r} (first written as case "
                                       f"{first[case_id]})", id=case_id, input=raw_input, source=source.spelled))
            continue
        if case_id is not None:
            first[case_id] = index
        try:
            entry = build_case(value, file=None, line=None, base_dir=base_dir, repo_root=repo_root, checks=checks,
                               warnings=warnings, where=where)
        except RecursionError:
            entry = InvalidCase(f"{INVALID}{where}: {TOO_DEEP}", id=case_id)
        if isinstance(entry, InvalidCase) and entry.id is None:
            entry.id = where            # no id to name it by: its generator and index
        entry.source = source.spelled
        entries.append(entry)
    return entries


def no_cases_found(inputs: list[str], suite: Suite, cwd: Path) -> str:
    """`no test cases found in x.jsonl (x.jsonl: it is empty)`: the inputs, and why each of their files held none."""
    reasons = [f"{name}: {why}" for name in suite.files if (why := why_no_entries(cwd / name))]
    return f"no test cases found in {', '.join(inputs)}" + (f" ({'; '.join(reasons)})" if reasons else "")


def _known_id_and_input(value: Any) -> tuple[str | None, Any]:
    """The entry's id (when it is a non-empty string) and raw input, for reporting an entry that is invalid."""
    if not isinstance(value, dict):
        return None, None
    case_id = value.get("id")
    return (stored(case_id) if isinstance(case_id, str) and case_id else None), value.get("input")


def build_case(value: Any, *, file: str | None, line: int | None, base_dir: Path, repo_root: Path,
               checks: Checks | None = None, warnings: list[str] | None = None,
               where: str | None = None, text: str | None = None) -> Case | InvalidCase:
    """Validate one parsed entry into a Case, or an InvalidCase listing every problem found (joined by `; `).
    Warnings (the case is still valid) are appended to `warnings` as `place: field: message`; `where` names an
    entry that has no file (a generated case). `text` is the entry's JSON as the file holds it: the Case keeps it
    rather than the parsed value."""
    if checks is None or (checks.root is not repo_root and checks.root != repo_root):
        checks = replace(checks or Checks(), root=repo_root)
    lead = f"{where}: " if where else ""
    if too_deep(value, text=text):       # every later walk (checks, comparisons, artifacts) stays shallow
        case_id, raw_input = _known_id_and_input(value)
        return InvalidCase(f"{INVALID}{lead}{TOO_DEEP}", id=case_id, file=file, line=line,
                           input=raw_input if not too_deep(raw_input) else None)

    def invalid(problems: list[str]) -> InvalidCase:
        case_id, raw_input = _known_id_and_input(value)
        return InvalidCase(INVALID + lead + "; ".join(problems), id=case_id, file=file, line=line, input=raw_input)

    if not isinstance(value, dict):
        return invalid([f"expected a JSON object, got {json_type(value)}"])
    conversational = (value.get("simulator") is not None or bool(value.get("checkpoints"))
                      or value.get("turns") is not None)
    # Without one, the simulated user opens the conversation. Said even beside other mistakes (an unknown key):
    # `inptu` is fixed at once when the message also says that `input` is missing.
    missing_input = ["missing required field 'input'"] if value.get("input") is None and not conversational else []
    entry = _entry(value, checks.plain)
    if isinstance(entry, list):
        return invalid(entry + missing_input)
    problems: list[str] = list(missing_input)
    notes: list[str] = []
    messages: list[dict[str, Any]] = []
    if entry.input is not None:
        try:
            messages = normalize_input(entry.input, base_dir=base_dir, repo_root=repo_root)
        except InputError as exc:
            problems.append(str(exc))
    problems += _hook_problems(entry, base_dir, checks)

    def specs_at(written: Any, key: str) -> list[AssertionSpec]:
        return _prepared_specs(written, key, base_dir, checks, problems, notes)

    interactive = _interactive(entry)
    specs, conversation = _checks(entry, value, messages, conversational, interactive, base_dir, repo_root, checks,
                                  specs_at, problems, notes)
    if problems:
        return invalid(problems)
    if warnings is not None:
        place = f"{file}:{line}" if file else where or entry.id
        warnings.extend(f"{place}: {note}" for note in notes)
    return Case(
        # id, name and tags reach every artifact as they are: stored capped, as any untrusted value
        id=stored(entry.id), input=entry.input, messages=messages, assertions=specs, expected=entry.expected,
        has_expected="expected" in entry.model_fields_set, name=stored(entry.name),
        options={k: v for k, v in value.get("options", {}).items() if v is not None} if entry.options else NO_OPTIONS,
        user=entry.user, team=entry.team, metadata=entry.metadata, skip=entry.skip_reason,
        timeout=entry.timeout_seconds, before=entry.before, after=entry.after,
        tags=tuple(stored(tag) for tag in entry.tags) if entry.tags else (), file=file, line=line, base_dir=base_dir,
        written=value if text is None else text, conversation=conversation, interactive=interactive,
    )


def _entry(value: dict[str, Any], plain: bool) -> CaseEntry | PlainCase | list[str]:
    """The entry as its model reads it — or, with `plain`, as plain.py does when it can — or the model's problems."""
    found = plain_case(value) if plain else None
    if found is not None:
        return found
    from .schema import CaseEntry

    return _by_model(CaseEntry, value)


def _by_model(model: type[ModelT], value: dict[str, Any], prefix: str = "") -> ModelT | list[str]:
    """`value` read by `model`, or what is wrong with it (`describe_errors`, each problem after `prefix`)."""
    from pydantic import ValidationError

    try:
        return model.model_validate(value)
    except ValidationError as exc:
        return describe_errors(exc, model, prefix=prefix)


def _checks(entry: CaseEntry | PlainCase, value: dict[str, Any], messages: list[dict[str, Any]], conversational: bool,
            interactive: Interactive | None, base_dir: Path, repo_root: Path, checks: Checks, specs_at: SpecsAt,
            problems: list[str], notes: list[str]) -> tuple[list[AssertionSpec], Conversation | None]:
    """What a case checks: its assertions when it has one reply, or its conversation (turns, the Yao way's
    simulator and checkpoints, or a single turn written for a person, seed 000's static mode)."""
    if entry.turns is not None:
        _not_checked(value, "a conversation with turns; put it in a turn's 'assert', or in 'final' to check the "
                            "end of the conversation", problems)
        if entry.input is not None:
            problems.append("input: a case with turns takes no top-level input; make it the first turn: "
                            "{\"input\": …}")
        return [], _scripted_conversation(entry, base_dir, repo_root, checks, specs_at, problems, notes)
    if conversational:
        _not_checked(value, "a dynamic case (simulator + checkpoints); put what each reply must satisfy in a "
                            "checkpoint's 'assert'", problems)
        return [], _conversation(entry, messages, checks, specs_at, problems, notes)
    specs = _assertion_specs(entry, base_dir, checks, problems, notes)
    if interactive is not None and interactive.enabled:
        # Written for a person: the input is the first turn of a conversation they go on with (seed 000's single
        # turn in static mode).
        turn = UserTurn(input=entry.input, messages=messages, assertions=specs)
        return [], Conversation(simulator=None, checkpoints=[], steps=[turn], script=True,
                                max_turns=entry.max_turns or DEFAULT_MAX_TURNS,
                                guards=_guards(entry, specs_at, problems), final=_final(entry, specs_at))
    problems.extend(f"{key}: only for conversations (turns, or simulator + checkpoints); a single-turn case checks "
                    "its reply with 'assert'" for key in ("guards", "final") if getattr(entry, key) is not None)
    return specs, None


def _hook_problems(entry: CaseEntry | PlainCase, base_dir: Path, checks: Checks) -> list[str]:
    """The case's Before and After hooks that cannot be found — by `validate` too, not only when the case runs: a
    reference that is no `module.function`, a module the suite may not read, or a module beside the suite (or in its
    `src/`, where the run looks first) that does not define the function."""
    problems = []
    for key in ("before", "after"):
        ref = getattr(entry, key)
        if not ref:
            continue
        dirs = (base_dir, base_dir / "src")
        problem = reference_problem(ref, "hook", dirs, checks.root, test_suffix=True) or \
            definition_problem(ref, "hook", dirs, checks.root, test_suffix=True)
        if problem:
            problems.append(f"{key}: {problem}")
    return problems


def _not_checked(value: dict[str, Any], where: str, problems: list[str]) -> None:
    """A conversation's top-level `assert`, `assertions` or `expected` would never be checked: a problem each."""
    for key in ("assert", "assertions", "expected"):
        if key in value:
            problems.append(f"{key}: not checked in {where}")


def _interactive(entry: CaseEntry | PlainCase) -> Interactive | None:
    if entry.interactive is None:
        return None
    timeout = entry.interactive.timeout
    return Interactive(enabled=entry.interactive.enabled,
                       timeout=parse_duration(timeout) if timeout is not None else Interactive.timeout)


def _guards(entry: CaseEntry | PlainCase, specs_at: SpecsAt, problems: list[str]) -> list[Guard]:
    return steps.guards(entry.guards, specs_at, problems) if entry.guards is not None else []


def _final(entry: CaseEntry | PlainCase, specs_at: SpecsAt) -> list[AssertionSpec]:
    return specs_at(entry.final, "final") if entry.final is not None else []


def _scripted_conversation(entry: CaseEntry, base_dir: Path, repo_root: Path, checks: Checks, specs_at: SpecsAt,
                           problems: list[str], notes: list[str]) -> Conversation | None:
    """A conversation written as `turns`: its steps, and the simulator its simulated stretches need."""
    turns = steps.turn_steps(entry.turns or [], base_dir=base_dir, repo_root=repo_root, specs_at=specs_at,
                             problems=problems)
    checkpoint_entries = entry.checkpoints or []
    checkpoints = [_checkpoint(item, f"checkpoints[{i}]", specs_at, problems)
                   for i, item in enumerate(checkpoint_entries)]
    _check_order(checkpoint_entries, problems)
    simulated = any(isinstance(step, Simulate) for step in turns)
    use: str | None = None
    if entry.simulator is not None or (simulated and checks.default_simulator):
        use = _simulator_id(entry.simulator or _no_simulator(), checks, problems, notes)
    steps.check_stretches(turns, [item.id for item in checkpoint_entries],
                          simulator=use is not None or entry.simulator is not None, problems=problems)
    fixed = sum(1 for step in turns if isinstance(step, UserTurn))
    if entry.max_turns is not None and entry.max_turns < fixed:
        problems.append(f"max_turns: {entry.max_turns} is fewer than the {fixed} fixed turns of 'turns'")
    guards, final = _guards(entry, specs_at, problems), _final(entry, specs_at)
    persona, goal, extra = _persona_goal_extra(entry.simulator, problems)
    if problems:
        return None
    return Conversation(
        simulator=use, checkpoints=[c for c in checkpoints if c is not None], steps=turns, script=True,
        guards=guards, final=final, max_turns=entry.max_turns or max(DEFAULT_MAX_TURNS, fixed), persona=persona,
        goal=goal, extra=extra, connector=_simulator_connector(entry.simulator), replies=_replies(entry.simulator))


def _conversation(entry: CaseEntry, messages: list[dict[str, Any]], checks: Checks, specs_at: SpecsAt,
                  problems: list[str], notes: list[str]) -> Conversation | None:
    """A dynamic case the Yao way: a simulator and at least one checkpoint. `max_turns` alone leaves a case
    standard; a simulator without checkpoints, or checkpoints without any simulator, is a problem rather than a
    case that silently checks nothing. Its steps are its `input` (when it has one) and one simulated stretch."""
    simulator, checkpoints = entry.simulator, entry.checkpoints
    if not checkpoints:
        if checkpoints is not None:
            problems.append("checkpoints: empty; a dynamic case needs at least one checkpoint")
        elif simulator is not None:
            problems.append("simulator: a dynamic case needs checkpoints (e.g. \"checkpoints\": [{\"id\": \"greets\", "
                            "\"assert\": {\"type\": \"contains\", \"value\": \"Hello\"}}]): without them nothing "
                            "would be checked")
        return None
    use = _simulator_id(simulator or _no_simulator(), checks, problems, notes)
    specs = [_checkpoint(item, f"checkpoints[{i}]", specs_at, problems) for i, item in enumerate(checkpoints)]
    _check_order(checkpoints, problems)
    persona, goal, extra = _persona_goal_extra(simulator, problems)
    if specs and all(spec is not None and not spec.required for spec in specs):
        problems.append("checkpoints: every checkpoint is optional (required: false), so the conversation could "
                        "never fail; make at least one required")
    guards, final = _guards(entry, specs_at, problems), _final(entry, specs_at)
    if use is None or any(spec is None for spec in specs) or problems:
        return None
    opening: list[Step] = [UserTurn(input=entry.input, messages=messages)] if messages else []
    return Conversation(
        simulator=use, checkpoints=[spec for spec in specs if spec is not None], steps=[*opening, Simulate()],
        guards=guards, final=final, max_turns=entry.max_turns or DEFAULT_MAX_TURNS, persona=persona, goal=goal,
        extra=extra, connector=_simulator_connector(simulator), replies=_replies(simulator))


def _no_simulator() -> SimulatorEntry:
    from .schema import SimulatorEntry

    return SimulatorEntry()


def _persona_goal_extra(simulator: SimulatorEntry | None,
                        problems: list[str]) -> tuple[str | None, str | None, dict[str, Any]]:
    """What the simulated user is told: `persona` and `goal` (strings), and every other key of its metadata."""
    metadata = dict((simulator.options.metadata if simulator and simulator.options else None) or {})
    persona, goal = metadata.pop("persona", None), metadata.pop("goal", None)
    for key, text in (("persona", persona), ("goal", goal)):
        if text is not None and not isinstance(text, str):
            problems.append(f"simulator.options.metadata.{key}: expected a string, got {json_type(text)}")
    return persona, goal, metadata


def _simulator_connector(simulator: SimulatorEntry | None) -> str | None:
    return simulator.options.connector if simulator and simulator.options else None


def _replies(simulator: SimulatorEntry | None) -> list[str]:
    return list(simulator.replies or []) if simulator else []


def _simulator_id(simulator: SimulatorEntry, checks: Checks, problems: list[str], notes: list[str]) -> str | None:
    use = (simulator.use or "").strip() or checks.default_simulator
    if not use:
        problems.append("simulator.use: a dynamic case needs a simulator: an agent id, or \"scripted\" with "
                        "\"replies\"; or pass --simulator ID")
        return None
    if use.startswith(_AGENT_PREFIX):
        notes.append(f"simulator.use: {use!r} needs no '{_AGENT_PREFIX}' prefix; read as {use[len(_AGENT_PREFIX):]!r}")
        use = use[len(_AGENT_PREFIX):]
    if use == SCRIPTED:
        if not simulator.replies:
            problems.append("simulator.replies: use \"scripted\" replays the user's turns listed in \"replies\"; "
                            "give at least one")
        elif any(not reply.strip() for reply in simulator.replies):
            problems.append("simulator.replies: a reply is empty")
        return use
    if simulator.replies is not None:
        problems.append(f"simulator.replies: only for use \"scripted\" (use is {use!r})")
    problem = _agent_problem(use, "simulator", checks)
    if problem:
        problems.append(f"simulator.use: {problem}")
        return None
    problem = _connector_problem(use, simulator.options.connector if simulator.options else None, checks)
    if problem:
        problems.append(f"simulator.options.connector: {problem}")
        return None
    return use


def _checkpoint(item: CheckpointEntry, place: str, specs_at: SpecsAt, problems: list[str]) -> Checkpoint | None:
    if item.assert_ is not None and item.assertion is not None:
        problems.append(f"{place}: use either 'assert' or 'assertion', not both")
        return None
    key, written = ("assertion", item.assertion) if item.assertion is not None else ("assert", item.assert_)
    if written is None or written == []:
        problems.append(f"{place}: needs 'assert': what the agent's reply must satisfy to reach it")
        return None
    before = len(problems)
    specs = specs_at(written, f"{place}.{key}")
    if len(problems) > before:
        return None
    return Checkpoint(id=item.id, assertions=specs, description=item.description, after=list(item.after or []),
                      required=item.required is not False, by_turn=item.by_turn)


def _check_order(checkpoints: list[CheckpointEntry], problems: list[str]) -> None:
    """Ids are unique; every `after` names another checkpoint of the case; `after` has no cycle."""
    ids: dict[str, int] = {}
    for index, item in enumerate(checkpoints):
        if item.id in ids:
            problems.append(f"checkpoints[{index}].id: duplicate checkpoint id {item.id!r} "
                            f"(first at checkpoints[{ids[item.id]}])")
        ids.setdefault(item.id, index)
    graph: dict[str, list[str]] = {}
    for item in checkpoints:
        graph.setdefault(item.id, list(item.after or []))
    for index, item in enumerate(checkpoints):
        for name in item.after or []:
            if name not in ids:
                problems.append(f"checkpoints[{index}].after: unknown checkpoint {name!r}"
                                f"{did_you_mean(name, ids) or ' (checkpoints: ' + ', '.join(ids) + ')'}")
    cycle = _cycle(graph)
    if cycle:
        problems.append(f"checkpoints: 'after' goes round in a circle ({' → '.join(cycle)}): none of them could "
                        "ever be reached")


def _cycle(graph: dict[str, list[str]]) -> list[str] | None:
    """A cycle of the `after` graph as a path that ends where it starts, or None."""
    state: dict[str, int] = {}    # 1: on the current path, 2: done

    def visit(node: str, path: list[str]) -> list[str] | None:
        state[node] = 1
        for nxt in graph.get(node, []):
            if nxt not in graph:
                continue
            if state.get(nxt) == 1:
                return [*path[path.index(nxt):], nxt] if nxt in path else [node, nxt]
            if state.get(nxt) is None:
                found = visit(nxt, [*path, nxt])
                if found:
                    return found
        state[node] = 2
        return None

    for start in graph:
        if state.get(start) is None:
            found = visit(start, [start])
            if found:
                return found
    return None


def _connector_problem(agent_id: str | None, connector: Any, checks: Checks) -> str | None:
    """Why a builtin helper cannot use `connector` (one of the config's, by name), or None. Another agent is left
    alone: an HTTP agent may take a connector name of its own."""
    if not agent_id or not isinstance(connector, str) or checks.agents is None or checks.connectors is None:
        return None
    if checks.agents.get(agent_id) is None or connector in checks.connectors:
        return None
    hint = did_you_mean(connector, checks.connectors) or f" (defined: {', '.join(checks.connectors) or 'none'})"
    return f"connector {connector!r} is not defined in agenttest.yaml{hint}"


def _agent_problem(agent_id: str, role: str, checks: Checks) -> str | None:
    """Why `agent_id` cannot serve as `role` (a `validator` or `simulator`), or None."""
    if checks.agents is None:
        return None
    if agent_id not in checks.agents:
        hint = did_you_mean(agent_id, checks.agents) or f" (agents: {', '.join(checks.agents) or 'none'})"
        return f"agent {agent_id!r} is not defined in agenttest.yaml{hint}"
    builtin = checks.agents[agent_id]
    if builtin is not None and builtin != role:
        return f"agent {agent_id!r} is a builtin {builtin}, not a {role}"
    return None


def _assertion_specs(entry: CaseEntry | PlainCase, base_dir: Path, checks: Checks, problems: list[str],
                     notes: list[str]) -> list[AssertionSpec]:
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
    return _prepared_specs(written, key, base_dir, checks, problems, notes)


def _prepared_specs(written: Any, key: str, base_dir: Path, checks: Checks, problems: list[str],
                    notes: list[str]) -> list[AssertionSpec]:
    """`written` (one assertion, an array of them, or a type name) at `key`, prepared."""
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
        spec = _assertion_spec(item, place, type_place, base_dir, checks)
        if isinstance(spec, list):
            problems.extend(spec)
            continue
        problem = _agent_problem(spec.helper_agent, "validator", checks) if spec.helper_agent else None
        if problem:
            problems.append(f"{place}.use: {problem}")
            continue
        problem = _connector_problem(spec.helper_agent, spec.options.get("connector"), checks) \
            if spec.helper_agent else None
        if problem:
            problems.append(f"{place}.options.connector: {problem}")
            continue
        notes.extend(f"{place}.{warning}" for warning in spec.warnings)
        samples = spec.options.get("samples")
        if spec.helper_agent in checks.pinned_at_zero and isinstance(samples, int) and samples > 1:
            notes.append(f"{place}.options.samples: agent {spec.helper_agent!r} runs at temperature 0, so its "
                         f"{samples} samples will most likely agree, at {samples} times the cost: give it a "
                         "temperature above 0, or leave samples out")
        specs.append(spec)
    return specs


def _shared(value: Any) -> Any:
    """A short string value as one object for every assertion that writes it (the same pattern in every case of a
    suite is one string, not one a case); any other value as it is. The first _SHARED_VALUES strings seen are kept
    to share: a value written once a case (most expected texts) is not kept a second time for each."""
    if type(value) is not str or len(value) > _SHARED_CHARS:
        return value
    shared = _SHARED.get(value)
    if shared is None:
        if len(_SHARED) >= _SHARED_VALUES:
            return value
        shared = _SHARED[value] = value
    return shared


_SHARED: dict[str, str] = {}
_SHARED_CHARS, _SHARED_VALUES = 200, 1024


def _assertion_spec(item: Any, place: str, type_place: str, base_dir: Path,
                    checks: Checks) -> AssertionSpec | list[str]:
    """One prepared assertion, or its problems. `place` is its field (`assert[1]`), `type_place` its type's. An
    `agent` assertion without `use` is judged by the default judge, when there is one."""
    root = checks.root
    if not isinstance(item, dict):
        return [f"{place}: expected an assertion object, got {json_type(item)}"]
    shared: tuple[Any, ...] | None = None
    if item.keys() <= _TYPE_AND_VALUE and isinstance(item.get("type", ""), str):
        # Most assertions are `{"type": …, "value": …}`, which AssertionEntry accepts as it is: no model needed.
        kind = item.get("type") or "equals"
        value = item.get("value")
        if value is None or (type(value) is str and len(value) <= _SHARED_CHARS):
            shared = (kind, value, "value" in item, base_dir, root, checks.default_judge)
            found = checks.shared_specs.get(shared)
            if found is not None:       # the same as another case's, prepared then: nothing changes it after
                return found
        spec = AssertionSpec(type=_registered(kind), value=_shared(value), base_dir=base_dir, root=root)
    else:
        written = _assertion_entry(item, place, checks.plain)
        if isinstance(written, list):
            return written
        kind = written.kind
        spec = AssertionSpec(type=_registered(kind), value=written.resolved_value, path=written.path,
                             message=written.message, negate=written.negate, options=dict(written.options or {}),
                             use=written.use, script=written.script, base_dir=base_dir, root=root)
    if kind == "agent" and spec.use is None and checks.default_judge:
        spec.use = f"agents:{checks.default_judge}"
    if kind not in REGISTRY:
        valid = [name for name in known_types() if name]  # "" is registered as a spelling of equals
        meant = closest(kind, valid)
        hint = f"did you mean {meant!r}? " if meant else ""
        return [f"{type_place}: unknown assertion type {kind!r} ({hint}valid: {', '.join(valid)})"]
    try:
        prepare_assertion(spec)
    except SuiteError as exc:
        return [f"{place}.{exc.where.field}: {exc.message}" if exc.where.field else f"{place}: {exc.message}"]
    except Exception as exc:  # a prepare step that breaks on an odd value must not take down the whole load
        return [f"{place}: cannot prepare the {spec.type!r} assertion: {type(exc).__name__}: {exc}"]
    if shared is not None and len(checks.shared_specs) < _SHARED_VALUES:
        checks.shared_specs[shared] = spec
    return spec


def _registered(kind: str) -> str:
    """A known type's name as the registry holds it, one string for every assertion of that type (a suite's own copy
    of `contains` costs ~57 bytes an assertion for as long as the run lasts); any other as written."""
    known = REGISTRY.get(kind)
    return known.name if known is not None else kind


def _assertion_entry(item: dict[str, Any], place: str, plain: bool) -> AssertionEntry | PlainAssertion | list[str]:
    """The assertion as its model reads it — or, with `plain`, as plain.py does when it can — or its problems."""
    found = plain_assertion(item) if plain else None
    if found is not None:
        return found
    from .schema import AssertionEntry

    return _by_model(AssertionEntry, item, place)
