"""Cassettes: every agent call of a run — the target's and the helpers' — recorded (`--record DIR`) and played
back (`--replay DIR`) without opening a connection, so a fork's pull request, which has no secrets, can still run.

A call is known by the case it belongs to, a hash of its canonical request with the volatile parts left out (the
chat id) and secrets masked, and its rank among identical calls of that case (a judge's samples). Each recording
also names the configuration of the agent that answered (`recorded_config`: model, parameters, prompt, tools, code
— never credentials or endpoints), so a replay after that configuration changed is an error, not a stale pass.
One JSON file per suite file (mirroring its path from the repository root), per generator input, and one for
direct messages; keys sorted, no timestamps, so a re-recording that changed nothing changes no byte and a pull
request's diff shows what did.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import re
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import orjson

from ..errors import AgentCallError
from ..files import encoded, read_regular_file, write_if_changed
from ..gc_policy import reading
from ..github.log import write_line
from ..secrets import mask, redact, redacts_nothing, shorten
from ..workspace import write_refusal
from .base import AgentRequest, AgentResponse
from .recorded_config import RecordedConfig

FORMAT = "agenttest-cassettes"
_VOLATILE = ("chat_id",)
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
MAX_CASSETTE_BYTES = 256 * 1024 * 1024     # 10,000 recorded cases take ~9 MB
# How a cassette file is written: one space a level, keys sorted, so that a pull request's diff is small. Written in
# pieces (a 10,000-case cassette is 9 MB of text; as one string it and its pieces took ~80 MB at once).
_CASSETTE = json.JSONEncoder(sort_keys=True, ensure_ascii=False, indent=1, default=str)


# `json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)`, built once: json.dumps builds an encoder
# for every call given options (~0.8 µs of its ~4 for a request).
_KEY_TEXT = json.JSONEncoder(sort_keys=True, ensure_ascii=False, default=str)


def canonical(request: AgentRequest) -> tuple[dict[str, Any], str]:
    """What identifies a call — the request as agents receive it, chat id left out, secrets masked (`keyed`) —
    and its key."""
    return keyed(redact(_identified(request)))


def call_key(request: AgentRequest) -> str:
    """`canonical(request)`'s key, worked out for the common call more cheaply (a replay looks up every call):
    the request's JSON is written once, and only when it shows a string that opens like JSON (`keyed` sorts it) or
    something `redact` would change is the key worked out by `canonical` itself. (Masking every string of a
    request, the walk `redact` makes, took ~7 µs of ~14, timed on one request.)"""
    try:
        text = _KEY_TEXT.encode(_identified(request))
    except (TypeError, ValueError, RecursionError):       # `canonical` fails the same way, or masks a key first
        return canonical(request)[1]
    if '"{' in text or '"[' in text or not redacts_nothing(text):
        return canonical(request)[1]
    return _digest(text)


def _identified(request: AgentRequest) -> dict[str, Any]:
    context = {key: value for key, value in request.context.items() if key not in _VOLATILE}
    return {"agent": request.agent, "role": request.role, "messages": request.messages, "options": request.options,
            "context": context}


def keyed(shown: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """`shown` with every string in it that is a JSON object or array written with its keys sorted, at every depth,
    and its key: a hash of it. A helper's request is its payload as JSON text, and that payload quotes the agent's
    reply: replayed from a cassette (written with sorted keys) the reply's objects come back in another order than
    the agent sent them, and the same request must still be the same call."""
    text = _KEY_TEXT.encode(shown)
    if '"{' in text or '"[' in text:         # a string that opens like JSON: most calls hold none
        shown = _sorted(shown)
        text = _KEY_TEXT.encode(shown)
    return shown, _digest(text)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _sorted(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_sorted(item) for item in value]
    if isinstance(value, str) and value[:1] in ("{", "["):
        parsed = _json_container(value)
        if parsed is not None:          # a tool's result quoted in a conversation is JSON inside JSON
            return json.dumps(_sorted(parsed), sort_keys=True, ensure_ascii=False)
    return value


def _json_container(text: str) -> dict[str, Any] | list[Any] | None:
    """The object or array `text` holds, else None."""
    try:
        parsed = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return parsed if isinstance(parsed, (dict, list)) else None


# What orjson writes a request as, sorted: anything but JSON's own types goes to no `default` (and fails).
_PLAIN = orjson.OPT_SORT_KEYS | orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATACLASS | \
    orjson.OPT_PASSTHROUGH_DATETIME


def _plain_key(shown: dict[str, Any]) -> bytes | None:
    """A cheaper key for a request of plain JSON values (its sorted JSON by orjson, hashed), when equal ones mean
    equal keys: None unless every value is a string, a number, a boolean, a list or an object with string keys,
    with no null (orjson writes NaN as null too), no integer beyond 64 bits, no lone surrogate, no string that
    opens like JSON (`keyed` sorts those) and no secret (`redact` masks those). Such a request has the same key
    (`keyed`, `canonical`) as another exactly when their orjson JSON is the same: either JSON spells each value
    one way. (Over the 10,000 requests of a recording `keyed` takes ~5 µs a request, this ~3.)"""
    try:
        text = orjson.dumps(shown, option=_PLAIN)
    except orjson.JSONEncodeError:
        return None
    if b"null" in text or b'"{' in text or b'"[' in text or not redacts_nothing(text):
        return None
    return hashlib.sha256(text).digest()


@dataclass
class _Interaction:
    key: str | None                    # None until worked out (`keyed`): a recording read from a file
    agent: str
    role: str
    request: dict[str, Any]
    responses: list[dict[str, Any]] = field(default_factory=list)
    config: str | None = None          # the digest of the answering agent's configuration (None: not known)
    plain: bytes | None = None         # `_plain_key` of a recorded request, when it has one

    def keyed(self) -> _Interaction:
        """With its key, and its request as `keyed` gives it (JSON text inside sorted), worked out once."""
        if self.key is None:
            self.request, self.key = keyed(self.request)
        return self

    def to_dict(self) -> dict[str, Any]:
        self.keyed()
        data = {"key": self.key, "agent": self.agent, "role": self.role, "request": self.request,
                "responses": self.responses}
        if self.config is not None:
            data["config"] = self.config
        return data


@dataclass
class _File:
    """One cassette file: its recorded calls by case, and the agent configurations they name, by digest."""

    cases: dict[str, list[_Interaction]] = field(default_factory=dict)
    configs: dict[str, dict[str, Any]] = field(default_factory=dict)


class Cassettes:
    """The recordings in `directory`, read when replaying and written (`save`) when recording."""

    def __init__(self, directory: Path, shown: str | None = None, *, cwd: Path | None = None,
                 root: Path | None = None) -> None:
        self.directory = directory
        self._shown = shown or str(directory)       # the directory as the user named it, for messages
        self._cwd = cwd                             # suite files are named relative to it …
        self._root = root.resolve() if root else None   # … and filed relative to the repository root
        # No folder below this one may be a symlink on the way to a cassette: the repository root for a directory
        # inside it (`tapes` itself included), else the directory the user named.
        named = Path(os.path.normpath(directory.absolute()))
        self._within = self._root if self._root and named.is_relative_to(self._root) and named != self._root \
            else named
        self._loaded: dict[Path, _File] = {}
        self._recorded: dict[Path, dict[str, _Interaction]] = defaultdict(dict)
        self._configs: dict[Path, dict[str, dict[str, Any]]] = defaultdict(dict)
        self._ranks: dict[tuple[str, str, str], int] = defaultdict(int)
        self._paths: dict[str, Path] = {}           # source → its cassette file (every case of a file asks)
        self.saved = False                          # whether `save` was called

    # -- where a case's calls are kept --------------------------------------------------------------------------

    def path_for(self, case: tuple[str, str]) -> Path:
        """The cassette file of a case (its suite file, generator input, or the direct messages)."""
        source = case[0]
        if source not in self._paths:
            self._paths[source] = self._path_for(source)
        return self._paths[source]

    def _path_for(self, source: str) -> Path:
        if not source:
            return self.directory / "messages.json"
        if ":" in source and not Path(source).suffix:     # a generator input (`agents:gen?count=3`)
            return self.directory / "generated" / f"{_UNSAFE.sub('_', source).strip('_')}.json"
        parts = [part for part in PurePosixPath(self._filed(source).replace("\\", "/")).parts
                 if part not in ("/", ".", "..")]
        return self.directory.joinpath(*parts).with_name(parts[-1] + ".json") if parts else \
            self.directory / "suite.json"

    def _filed(self, source: str) -> str:
        """A suite file's path from the repository root, whichever directory the run started in (as given when
        it lies outside the repository)."""
        if self._cwd is None or self._root is None:
            return source
        try:
            return (self._cwd / source).resolve().relative_to(self._root).as_posix()
        except (ValueError, OSError):
            return source

    def write_refusal(self, source: str) -> str | None:
        """Why the cassette of `source` (a suite file, a generator input, "") must not be written: a folder of the
        cassette directory that is a symlink leading out of it and out of the repository (`workspace.write_refusal`).
        None when it may."""
        path = self.path_for((source, ""))
        why = write_refusal(path, self._root or self.directory.resolve(), within=self.directory)
        return f"{self._display(path)}: {why}" if why else None

    def _rank(self, case: tuple[str, str], found: _Interaction) -> int:
        """The call's rank among the calls of this case with the same request (0 for the first): the calls that
        found the same recording, which is the first of the case with their key."""
        slot = (*case, id(found))
        rank = self._ranks[slot]
        self._ranks[slot] += 1
        return rank

    # -- replay --------------------------------------------------------------------------------------------------

    def play(self, request: AgentRequest, case: tuple[str, str],
             config: RecordedConfig | None = None) -> AgentResponse:
        """The recorded response of this call, by an agent configured as `config` is. AgentCallError (`infra`)
        saying what is missing, and how the nearest recording differs, when there is none."""
        path = self.path_for(case)
        try:
            cassette = self._read(path)
        except AgentCallError as exc:
            raise AgentCallError(f"replay: {exc.message}", kind="infra") from None
        interactions = cassette.cases.get(case[1], [])
        found = _find(request, interactions)
        rank = self._rank(case, found) if found is not None else 0
        if found is not None and rank < len(found.responses) and (config is None or found.config == config.digest):
            return _response(found.responses[rank], request)
        where = f"{self._display(path)}, case {case[1]!r}"      # only a miss is explained
        if found is not None and config is not None and found.config is None:
            raise AgentCallError(f"replay: the recording of this {request.role} call in {where} names no agent "
                                 f"configuration, so it cannot be checked against agent {request.agent!r}; "
                                 f"re-record with --record {self._display()}", kind="infra")
        if found is not None and config is not None and found.config != config.digest:
            then = cassette.configs.get(found.config)
            change = _first_difference(config.described, then) if then is not None else "its configuration"
            raise AgentCallError(f"replay: agent {request.agent!r} changed since {where} was recorded ({change}); "
                                 f"re-record with --record {self._display()}", kind="infra")
        if found is not None:
            raise AgentCallError(f"replay: this {request.role} call was recorded {len(found.responses)} time(s) in "
                                 f"{where}, and is made again; record with --record {self._display()}", kind="infra")
        if not interactions:
            raise AgentCallError(f"replay: nothing recorded for {where}; record with --record {self._display()}",
                                 kind="infra")
        nearest, difference = _nearest(canonical(request)[0], interactions)
        raise AgentCallError(f"replay: no recording of this {request.role} call to {request.agent} in {where}; the "
                             f"nearest ({nearest.role} call to {nearest.agent}) differs at {difference}; re-record "
                             f"with --record {self._display()}", kind="infra")

    # -- record --------------------------------------------------------------------------------------------------

    def record(self, request: AgentRequest, case: tuple[str, str], outcome: AgentResponse | AgentCallError,
               config: RecordedConfig | None = None) -> None:
        """Keep one call's outcome (a response, or the error it failed with), in the order calls were made, with
        the configuration of the agent that answered."""
        shown, key = canonical(request)
        path = self.path_for(case)
        digest = None
        if config is not None:
            digest = config.digest
            self._configs[path][digest] = config.described
        interaction = self._recorded[path].setdefault(
            f"{case[1]}\x1f{key}", _Interaction(key, request.agent, request.role, shown, config=digest))
        if isinstance(outcome, AgentCallError):     # `… --token *** exited with code 3`
            interaction.responses.append(redact({"error": outcome.message, "kind": outcome.kind}))
        else:
            interaction.responses.append(redact(outcome.to_dict()))

    def save_record(self, shown: str) -> dict[str, Any]:
        """Save, and say where (report.json's `metadata.record`): the directory as the user named it (`shown`) and
        each file holding this run's recordings, relative to it."""
        files = sorted(path.relative_to(self.directory).as_posix() for path in self.save())
        return {"directory": shown, "files": files}

    def save(self) -> list[Path]:
        """Write every cassette file this run recorded into: the cases that ran replace their old recordings, the
        others are kept; a file whose content did not change is not rewritten. The files that hold this run's
        recordings now (written, or holding them already), in the order they were first recorded into."""
        self.saved = True
        written = []
        for path, recorded in self._recorded.items():
            source = next(source for source, known in self._paths.items() if known == path)
            refused = self.write_refusal(source)
            if refused:
                write_line(sys.stderr, f"⚠ --record: {refused}; not written")
                continue
            try:
                old = self._read(path)
            except AgentCallError as exc:
                write_line(sys.stderr, f"⚠ --record: {exc.message}; recording it anew")
                old = _File()
            # What this run recorded was masked as it was recorded; what is kept of an earlier recording (perhaps
            # by an older agenttest) is masked here: a cassette is committed.
            cases: dict[str, list[dict[str, Any]]] = {
                case: [redact(i.to_dict()) for i in interactions] for case, interactions in old.cases.items()}
            fresh: dict[str, list[dict[str, Any]]] = defaultdict(list)
            for slot, interaction in recorded.items():
                fresh[slot.split("\x1f", 1)[0]].append(interaction.to_dict())
            cases.update({case: sorted(items, key=lambda item: item["key"]) for case, items in fresh.items()})
            known = {**redact(old.configs), **self._configs[path]}
            named = {item["config"] for items in cases.values() for item in items if "config" in item}
            content: dict[str, Any] = {"format": FORMAT, "version": 1, "cases": dict(sorted(cases.items()))}
            if named:
                content["configs"] = {digest: known[digest] for digest in sorted(named) if digest in known}
            try:
                write_if_changed(path, encoded(itertools.chain(_CASSETTE.iterencode(content), "\n")))
                written.append(path)
            except OSError as exc:
                write_line(sys.stderr, f"⚠ --record: cannot write {self._display(path)}: {exc}")
        return written

    # -- files ---------------------------------------------------------------------------------------------------

    def _read(self, path: Path) -> _File:
        if path not in self._loaded:
            with reading():
                self._loaded[path] = _load(path, self._display(path), self._within)
        return self._loaded[path]

    def _display(self, path: Path | None = None) -> str:
        if path is None:
            return self._shown
        return str(Path(self._shown) / path.relative_to(self.directory))


def _find(request: AgentRequest, interactions: list[_Interaction]) -> _Interaction | None:
    """The first recording of the case with the call's key (`call_key`). Looked up by `_plain_key` first, which
    gives the same answer when the request has one: a request of plain JSON values, as a suite file and the
    recordings give them — not one a script generator (`scripts:`) wrote, which may hold values orjson writes as
    JSON and json by their str (an Enum), and so match a recording of another request."""
    case = request.case
    plain = None if case is not None and case[0].startswith("scripts:") else _plain_key(_identified(request))
    if plain is not None:
        found = next((i for i in interactions if i.plain == plain), None)
        if found is not None:
            return found
    key = call_key(request)
    return next((i for i in interactions if i.keyed().key == key), None)


def _load(path: Path, shown: str, within: Path) -> _File:
    """A cassette file (empty when there is none). AgentCallError naming it when it cannot be read: not a regular
    file (a symlink, a device), under a folder below `within` that is a symlink, larger than MAX_CASSETTE_BYTES, or
    not a cassette. A call's key is worked out again from its recorded request, never taken from the file."""
    try:
        data = json.loads(read_regular_file(path, MAX_CASSETTE_BYTES, within=within))
    except FileNotFoundError:
        return _File()
    except (OSError, ValueError, RecursionError) as exc:
        raise AgentCallError(f"cannot read the cassette {shown}: {_reason(exc)}", kind="infra") from None
    try:
        cases = data["cases"]
        configs = data.get("configs") or {}
        if not isinstance(configs, dict):
            raise TypeError("'configs' is not an object")
        return _File(
            cases={str(case): [_interaction(i) for i in items] for case, items in cases.items()},
            configs={str(digest): described for digest, described in configs.items() if isinstance(described, dict)})
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
        raise AgentCallError(f"cannot read the cassette {shown}: {exc}", kind="infra") from None


def _interaction(item: dict[str, Any]) -> _Interaction:
    """A recorded call as read: its key is worked out when a lookup needs it (`_Interaction.keyed`), the cheaper
    `_plain_key` at once."""
    request = item["request"]
    if not isinstance(request, dict):
        raise TypeError("a recorded 'request' is not an object")
    return _Interaction(None, str(item["agent"]), str(item["role"]), request, list(item["responses"]),
                        None if item.get("config") is None else str(item["config"]), _plain_key(request))


def _reason(exc: BaseException) -> str:
    return (exc.strerror or str(exc)) if isinstance(exc, OSError) else str(exc)


def _response(recorded: dict[str, Any], request: AgentRequest) -> AgentResponse:
    if "error" in recorded and set(recorded) <= {"error", "kind"}:
        raise AgentCallError(str(recorded["error"]), kind=str(recorded.get("kind") or "agent"))
    return AgentResponse.from_raw(recorded)


def _nearest(shown: dict[str, Any], interactions: list[_Interaction]) -> tuple[_Interaction, str]:
    """The recorded call closest to `shown` (fewest differing values, the same agent first) and where the two
    first differ, as `messages[2].content: 'a' ≠ 'b'`."""
    scored = sorted(interactions, key=lambda i: (i.agent != shown["agent"],
                                                 len(_differences(shown, i.keyed().request))))
    nearest = scored[0]
    differences = _differences(shown, nearest.request)
    if not differences:
        return nearest, "nothing visible (a changed secret?)"
    return nearest, _difference_text(differences[0])


def _first_difference(now: dict[str, Any], then: dict[str, Any]) -> str:
    differences = _differences(now, then)
    return _difference_text(differences[0]) if differences else "its configuration"


def _difference_text(difference: tuple[str, Any, Any]) -> str:
    """`place: then recorded, now now`; of two texts, the stretch where they part (a helper's request is one long
    JSON text: cut at the start, both sides would read the same)."""
    place, now, then = difference
    place = place or "the request"
    if isinstance(now, str) and isinstance(then, str) and max(len(now), len(then)) > _BEFORE + _AFTER:
        start = next((i for i, (x, y) in enumerate(zip(now, then, strict=False)) if x != y),
                     min(len(now), len(then)))
        return (f"{place}, character {start + 1}: {_stretch(then, start)} recorded, "
                f"{_stretch(now, start)} now")
    return f"{place}: {_short(then)} recorded, {_short(now)} now"


def _differences(a: Any, b: Any, place: str = "") -> list[tuple[str, Any, Any]]:
    """Where `a` and `b` differ, in order: (place, a's value, b's value), the place "" for the whole. Two JSON
    texts (a helper's payload) are compared as what they hold: `messages[0].content, at output.amount`."""
    if isinstance(a, str) and isinstance(b, str) and a != b and a[:1] in ("{", "[") and b[:1] in ("{", "["):
        inner_a, inner_b = _json_container(a), _json_container(b)
        if inner_a is not None and inner_b is not None:
            return [(f"{place}, at {inner}" if inner else place, x, y)
                    for inner, x, y in _differences(inner_a, inner_b, "")]
    if isinstance(a, dict) and isinstance(b, dict):
        found = []
        for key in sorted(set(a) | set(b), key=str):
            found += _differences(a.get(key), b.get(key), f"{place}.{key}" if place else str(key))
        return found
    if isinstance(a, list) and isinstance(b, list):
        found = []
        for index in range(max(len(a), len(b))):
            found += _differences(a[index] if index < len(a) else None, b[index] if index < len(b) else None,
                                  f"{place}[{index}]")
        return found
    return [] if a == b else [(place, a, b)]


_BEFORE, _AFTER = 20, 40      # characters shown of two texts around where they part


def _stretch(text: str, start: int) -> str:
    """`text` from a little before `start` to a little after, marked `…` where cut, as a JSON string."""
    begin = max(0, start - _BEFORE)
    piece = ("…" if begin else "") + text[begin:start + _AFTER] + ("…" if start + _AFTER < len(text) else "")
    return mask(json.dumps(piece, ensure_ascii=False))


def _short(value: Any) -> str:
    return shorten(json.dumps(value, ensure_ascii=False, default=str), 77, "...")


class RecordingAgent:
    """An agent whose every call is recorded in the cassettes, with its configuration (`recorded_config`)."""

    def __init__(self, inner: Any, cassettes: Cassettes, config: RecordedConfig | None = None) -> None:
        self.id = inner.id
        self._inner = inner
        self._cassettes = cassettes
        self._config = config

    async def call(self, request: AgentRequest) -> AgentResponse:
        case = request.case or ("", request.context.get("test_id", "run"))
        try:
            response = await self._inner.call(request)
        except AgentCallError as exc:
            self._cassettes.record(request, case, exc, self._config)
            raise
        self._cassettes.record(request, case, response, self._config)
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __getattr__(self, name: str) -> Any:      # identity(), connector_for(): the inner agent's
        return getattr(self._inner, name)


class ReplayingAgent:
    """An agent that answers from the cassettes and never opens a connection."""

    waits = False       # its call answers at once, never giving the event loop a turn: no timeout can cut it

    def __init__(self, agent_id: str, cassettes: Cassettes, config: RecordedConfig | None = None) -> None:
        self.id = agent_id
        self._cassettes = cassettes
        self._config = config

    async def call(self, request: AgentRequest) -> AgentResponse:
        return self._cassettes.play(request, request.case or ("", request.context.get("test_id", "run")),
                                    self._config)

    async def aclose(self) -> None:
        return None
