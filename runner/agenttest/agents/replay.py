"""Cassettes: every agent call of a run — the target's and the helpers' — recorded (`--record DIR`) and played
back (`--replay DIR`) without opening a connection, so a fork's pull request, which has no secrets, can still run.

A call is known by the case it belongs to, a hash of its canonical request with the volatile parts left out (the
chat id) and secrets masked, and its rank among identical calls of that case (a judge's samples). One JSON file
per suite file (mirroring its path), per generator input, and one for direct messages; keys sorted, no
timestamps, so a re-recording that changed nothing changes no byte and a pull request's diff shows what did.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from ..errors import AgentCallError
from ..files import write_text
from ..secrets import redact
from .base import AgentRequest, AgentResponse

FORMAT = "agenttest-cassettes"
_VOLATILE = ("chat_id",)
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def canonical(request: AgentRequest) -> dict[str, Any]:
    """What identifies a call: the request as agents receive it, chat id left out, secrets masked."""
    context = {key: value for key, value in request.context.items() if key not in _VOLATILE}
    return redact({"agent": request.agent, "role": request.role, "messages": request.messages,
                   "options": request.options, "context": context})


def request_key(shown: dict[str, Any]) -> str:
    text = json.dumps(shown, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


@dataclass
class _Interaction:
    key: str
    agent: str
    role: str
    request: dict[str, Any]
    responses: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "agent": self.agent, "role": self.role, "request": self.request,
                "responses": self.responses}


class Cassettes:
    """The recordings in `directory`, read when replaying and written (`save`) when recording."""

    def __init__(self, directory: Path, shown: str | None = None) -> None:
        self.directory = directory
        self._shown = shown or str(directory)       # the directory as the user named it, for messages
        self._loaded: dict[Path, dict[str, list[_Interaction]]] = {}
        self._recorded: dict[Path, dict[str, dict[str, _Interaction]]] = defaultdict(dict)
        self._ranks: dict[tuple[str, str, str], int] = defaultdict(int)

    # -- where a case's calls are kept --------------------------------------------------------------------------

    def path_for(self, case: tuple[str, str]) -> Path:
        """The cassette file of a case (its suite file, generator input, or the direct messages)."""
        source, _ = case
        if not source:
            return self.directory / "messages.json"
        if ":" in source and not Path(source).suffix:     # a generator input (`agents:gen?count=3`)
            return self.directory / "generated" / f"{_UNSAFE.sub('_', source).strip('_')}.json"
        parts = [part for part in PurePosixPath(source.replace("\\", "/")).parts if part not in ("/", ".", "..")]
        return self.directory.joinpath(*parts).with_name(parts[-1] + ".json") if parts else \
            self.directory / "suite.json"

    def rank(self, case: tuple[str, str], key: str) -> int:
        """The call's rank among the calls of this case with the same request (0 for the first)."""
        slot = (*case, key)
        rank = self._ranks[slot]
        self._ranks[slot] += 1
        return rank

    # -- replay --------------------------------------------------------------------------------------------------

    def play(self, request: AgentRequest, case: tuple[str, str]) -> AgentResponse:
        """The recorded response of this call. AgentCallError (`infra`) saying what is missing, and how the
        nearest recording differs, when there is none."""
        shown = canonical(request)
        key = request_key(shown)
        rank = self.rank(case, key)
        path = self.path_for(case)
        interactions = self._read(path).get(case[1], [])
        found = next((i for i in interactions if i.key == key), None)
        if found is not None and rank < len(found.responses):
            return _response(found.responses[rank], request)
        where = f"{self._display(path)}, case {case[1]!r}"
        if found is not None:
            raise AgentCallError(f"replay: this {request.role} call was recorded {len(found.responses)} time(s) in "
                                 f"{where}, and is made again; record with --record {self._display()}", kind="infra")
        if not interactions:
            raise AgentCallError(f"replay: nothing recorded for {where}; record with --record {self._display()}",
                                 kind="infra")
        nearest, difference = _nearest(shown, interactions)
        raise AgentCallError(f"replay: no recording of this {request.role} call to {request.agent} in {where}; the "
                             f"nearest ({nearest.role} call to {nearest.agent}) differs at {difference}; re-record "
                             f"with --record {self._display()}", kind="infra")

    # -- record --------------------------------------------------------------------------------------------------

    def record(self, request: AgentRequest, case: tuple[str, str], outcome: AgentResponse | AgentCallError) -> None:
        """Keep one call's outcome (a response, or the error it failed with), in the order calls were made."""
        shown = canonical(request)
        key = request_key(shown)
        cases = self._recorded[self.path_for(case)]
        interaction = cases.setdefault(f"{case[1]}\x1f{key}", _Interaction(key, request.agent, request.role, shown))
        if isinstance(outcome, AgentCallError):
            interaction.responses.append({"error": outcome.message, "kind": outcome.kind})
        else:
            interaction.responses.append(redact(outcome.to_dict()))

    def save(self) -> list[Path]:
        """Write every cassette file this run recorded into: the cases that ran replace their old recordings, the
        others are kept; a file whose content did not change is not rewritten. The paths written."""
        written = []
        for path, recorded in self._recorded.items():
            cases: dict[str, list[dict[str, Any]]] = {
                case: [i.to_dict() for i in interactions] for case, interactions in self._read(path).items()}
            fresh: dict[str, list[dict[str, Any]]] = defaultdict(list)
            for slot, interaction in recorded.items():
                fresh[slot.split("\x1f", 1)[0]].append(interaction.to_dict())
            cases.update({case: sorted(items, key=lambda item: item["key"]) for case, items in fresh.items()})
            text = json.dumps({"format": FORMAT, "version": 1, "cases": dict(sorted(cases.items()))},
                              sort_keys=True, ensure_ascii=False, indent=1, default=str) + "\n"
            if path.is_file() and path.read_text(encoding="utf-8") == text:
                continue
            write_text(path, text)
            written.append(path)
        return written

    # -- files ---------------------------------------------------------------------------------------------------

    def _read(self, path: Path) -> dict[str, list[_Interaction]]:
        if path not in self._loaded:
            self._loaded[path] = _load(path)
        return self._loaded[path]

    def _display(self, path: Path | None = None) -> str:
        if path is None:
            return self._shown
        return str(Path(self._shown) / path.relative_to(self.directory))


def _load(path: Path) -> dict[str, list[_Interaction]]:
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        cases = data["cases"]
        return {case: [_Interaction(str(i["key"]), str(i["agent"]), str(i["role"]), i["request"],
                                    list(i["responses"])) for i in items] for case, items in cases.items()}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise AgentCallError(f"replay: cannot read the cassette {path}: {exc}", kind="infra") from None


def _response(recorded: dict[str, Any], request: AgentRequest) -> AgentResponse:
    if "error" in recorded and set(recorded) <= {"error", "kind"}:
        raise AgentCallError(str(recorded["error"]), kind=str(recorded.get("kind") or "agent"))
    return AgentResponse.from_raw(recorded)


def _nearest(shown: dict[str, Any], interactions: list[_Interaction]) -> tuple[_Interaction, str]:
    """The recorded call closest to `shown` (fewest differing values, the same agent first) and where the two
    first differ, as `messages[2].content: 'a' ≠ 'b'`."""
    scored = sorted(interactions, key=lambda i: (i.agent != shown["agent"], len(_differences(shown, i.request))))
    nearest = scored[0]
    differences = _differences(shown, nearest.request)
    if not differences:
        return nearest, "nothing visible (a changed secret?)"
    place, now, then = differences[0]
    return nearest, f"{place}: {_short(then)} recorded, {_short(now)} now"


def _differences(a: Any, b: Any, place: str = "") -> list[tuple[str, Any, Any]]:
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
    return [] if a == b else [(place or "the request", a, b)]


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 80 else text[:77] + "..."


class RecordingAgent:
    """An agent whose every call is recorded in the cassettes."""

    def __init__(self, inner: Any, cassettes: Cassettes) -> None:
        self.id = inner.id
        self._inner = inner
        self._cassettes = cassettes

    async def call(self, request: AgentRequest) -> AgentResponse:
        case = request.case or ("", request.context.get("test_id", "run"))
        try:
            response = await self._inner.call(request)
        except AgentCallError as exc:
            self._cassettes.record(request, case, exc)
            raise
        self._cassettes.record(request, case, response)
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __getattr__(self, name: str) -> Any:      # identity(), connector_for(): the inner agent's
        return getattr(self._inner, name)


class ReplayingAgent:
    """An agent that answers from the cassettes and never opens a connection."""

    def __init__(self, agent_id: str, cassettes: Cassettes) -> None:
        self.id = agent_id
        self._cassettes = cassettes

    async def call(self, request: AgentRequest) -> AgentResponse:
        return self._cassettes.play(request, request.case or ("", request.context.get("test_id", "run")))

    async def aclose(self) -> None:
        return None
