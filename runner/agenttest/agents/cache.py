"""The cache of helper-agent calls (`--cache DIR`, default `.agenttest-cache`; `--no-cache`): judges, simulators and
generators answer a request they have seen before from disk, so re-running a suite costs nothing where nothing
changed. The target is never cached, nor a repeat of a case under `--runs` (the engine does not offer those).

A key is the SHA-256 of the canonical request less its volatile parts (the chat id and the run number), with the
helper's fingerprint (model, endpoint, parameters, prompt) and the sample index. One JSON file per key, written
atomically, secrets masked.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sys
from pathlib import Path
from typing import TextIO

from ..actions_log import write_line
from ..files import write_text
from ..secrets import redact
from .base import AgentRequest, AgentResponse

_VOLATILE_CONTEXT = ("chat_id", "run")


class HelperCache:
    """Replies of helper agents on disk, one file per request key."""

    def __init__(self, directory: Path, errors: TextIO | None = None) -> None:
        self.directory = directory
        self._errors = errors or sys.stderr
        self._broken = False         # writing failed once: say so once, then run without storing

    @staticmethod
    def key(request: AgentRequest, fingerprint: str, sample: int = 0) -> str:
        context = {k: v for k, v in request.context.items() if k not in _VOLATILE_CONTEXT}
        canonical = {"agent": request.agent, "fingerprint": fingerprint, "sample": sample,
                     "messages": request.messages, "options": request.options, "context": context}
        text = json.dumps(canonical, sort_keys=True, ensure_ascii=False, default=str)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def lookup(self, key: str) -> AgentResponse | None:
        """The cached reply, or None (also for an entry that cannot be read: it is simply asked again)."""
        try:
            entry = json.loads(self._path(key).read_text(encoding="utf-8"))
            return AgentResponse.from_raw(entry["response"])
        except Exception:      # missing, half-written by a killed run, or edited by hand: a miss
            return None

    def store(self, key: str, request: AgentRequest, response: AgentResponse) -> None:
        if self._broken:
            return
        entry = {"request": redact(request.to_dict()), "response": redact(response.to_dict())}
        try:
            if not self.directory.is_dir():
                self.directory.mkdir(parents=True, exist_ok=True)
                # Like .pytest_cache: the cache never ends up in a commit.
                write_text(self.directory / ".gitignore", "# created by agenttest\n*\n")
            write_text(self._path(key), json.dumps(entry, ensure_ascii=False, sort_keys=True, indent=1) + "\n")
        except OSError as exc:
            self._broken = True
            write_line(self._errors, f"⚠ helper cache {self.directory} is not writable ({exc.strerror or exc}); "
                                     "continuing without it")

    def forget(self, key: str) -> None:
        """Drop an entry whose reply turned out unusable, so the next run asks again."""
        with contextlib.suppress(OSError):
            self._path(key).unlink()

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

