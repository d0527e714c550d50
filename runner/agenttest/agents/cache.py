"""The cache of helper-agent calls (`--cache DIR`, `--no-cache`): judges, simulators and generators answer a request
they have seen before from disk, so re-running a suite costs nothing where nothing changed. The target is never
cached, nor a repeat of a case under `--runs` (the engine does not offer those).

A key is the SHA-256 of the canonical request less its volatile parts (the chat id and the run number), with the
helper's fingerprint (model, endpoint, parameters, prompt) and the sample index. One JSON file per key, written
atomically, secrets masked.

A cached reply decides a verdict, so the cache trusts only what agenttest wrote on this machine with the helper's
own credentials: each entry carries an HMAC of its key and reply, under a key derived from a random secret kept in
the user's cache directory (never in a repository) and from the secrets of `${VAR}`s the helper's settings hold.
An entry committed in a pull request, edited by hand, copied from another machine or written with other
credentials fails it and is a miss (said once). The cache itself lives outside the checkout by default
(`$XDG_CACHE_HOME/agenttest/helpers`, else `~/.cache/agenttest/helpers`); the secret beside it
(`…/agenttest/key`), so that caching that one directory (`actions/cache`) carries both.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import secrets
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO

from ..files import read_regular_file, write_text
from ..github.log import write_line
from ..secrets import redact
from .base import AgentRequest, AgentResponse

_VOLATILE_CONTEXT = ("chat_id", "run")
MAX_ENTRY_BYTES = 16 * 1024 * 1024        # one helper reply
_KEY_BYTES = 32


def user_cache_home(environ: Mapping[str, str] | None = None) -> Path:
    """`$XDG_CACHE_HOME/agenttest` (an absolute one), else `%LOCALAPPDATA%/agenttest` on Windows, else
    `~/.cache/agenttest`: where the helper cache and its secret are kept unless `--cache` names a directory."""
    env = environ if environ is not None else os.environ
    xdg = env.get("XDG_CACHE_HOME")
    if xdg and Path(xdg).is_absolute():
        return Path(xdg) / "agenttest"
    if os.name == "nt" and env.get("LOCALAPPDATA"):
        return Path(env["LOCALAPPDATA"]) / "agenttest"
    return Path.home() / ".cache" / "agenttest"


def default_cache_directory(environ: Mapping[str, str] | None = None) -> Path:
    return user_cache_home(environ) / "helpers"


class HelperCache:
    """Replies of helper agents on disk, one file per request key, each authenticated (see the module)."""

    def __init__(self, directory: Path, *, checkout: Path | None, shown: str | None = None,
                 key_file: Path | None = None, errors: TextIO | None = None) -> None:
        self.directory = directory
        self._shown = shown or str(directory)       # as the user named it
        self._checkout = checkout.resolve() if checkout is not None else None
        self._key_file = key_file or user_cache_home() / "key"
        self._errors = errors or sys.stderr
        self._secret: bytes | None = None
        self._off: str | None = None        # why the cache is not used (said once)
        self._distrust_said = False

    @staticmethod
    def key(request: AgentRequest, fingerprint: str, sample: int = 0) -> str:
        context = {k: v for k, v in request.context.items() if k not in _VOLATILE_CONTEXT}
        canonical = {"agent": request.agent, "fingerprint": fingerprint, "sample": sample,
                     "messages": request.messages, "options": request.options, "context": context}
        text = json.dumps(canonical, sort_keys=True, ensure_ascii=False, default=str)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def lookup(self, key: str, credentials: list[str]) -> AgentResponse | None:
        """The cached reply, or None: none stored, or one that cannot be trusted (not a regular file, too large, not
        written here with these credentials — said once) or read."""
        signing = self._signing_key(credentials)
        if signing is None:
            return None
        try:
            data = read_regular_file(self._path(key), MAX_ENTRY_BYTES)
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            self._distrusted(str(exc))
            return None
        try:
            entry = json.loads(data)
        except (ValueError, RecursionError):
            entry = None
        response = entry.get("response") if isinstance(entry, dict) else None
        mac = entry.get("mac") if isinstance(entry, dict) else None
        if not isinstance(mac, str) or not hmac.compare_digest(mac, _mac(signing, key, response)):
            self._distrusted("agenttest did not write it on this machine with this helper's credentials")
            return None
        try:
            return AgentResponse.from_raw(response)
        except Exception:      # authenticated, yet no reply: a miss
            return None

    def store(self, key: str, credentials: list[str], request: AgentRequest, response: AgentResponse) -> None:
        signing = self._signing_key(credentials)
        if signing is None:
            return
        stored = redact(response.to_dict())
        entry = {"request": redact(request.to_dict()), "response": stored, "mac": _mac(signing, key, stored)}
        path = self._path(key)
        try:
            if not self.directory.is_dir():
                self.directory.mkdir(parents=True, exist_ok=True)
                # Like .pytest_cache: the cache never ends up in a commit.
                write_text(self.directory / ".gitignore", "# created by agenttest\n*\n")
            real = path.parent.resolve()
            if real != self.directory.resolve() / key[:2]:    # a symlinked subfolder leads elsewhere
                raise OSError(f"{self.directory / key[:2]} leads to {real}")
            write_text(path, json.dumps(entry, ensure_ascii=False, sort_keys=True, indent=1) + "\n")
        except OSError as exc:
            self._turn_off(f"it is not writable ({exc.strerror or exc})")

    def forget(self, key: str) -> None:
        """Drop an entry whose reply turned out unusable, so the next run asks again."""
        with contextlib.suppress(OSError):
            self._path(key).unlink()

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def _signing_key(self, credentials: list[str]) -> bytes | None:
        """The key entries of a helper with these credentials are authenticated with; None when the cache is off."""
        if self._off is not None:
            return None
        if self._secret is None:
            try:
                self._secret = self._machine_secret()
            except (OSError, ValueError) as exc:
                self._turn_off(str(exc))
                return None
        material = json.dumps(sorted(credentials), ensure_ascii=False).encode("utf-8", "surrogatepass")
        return hmac.new(self._secret, b"agenttest helper cache 1\0" + material, hashlib.sha256).digest()

    def _machine_secret(self) -> bytes:
        """The random secret of this machine's (this user's) cache, made on first use, readable by its owner only.
        Never one inside the checkout (the git repository, or the Actions workspace): a pull request could have
        committed it."""
        path = self._key_file
        if self._checkout is not None and path.resolve().is_relative_to(self._checkout):
            raise ValueError(f"its key {path} would lie inside the checkout, where a pull request could have put "
                             "it (set XDG_CACHE_HOME outside the checkout)")
        try:
            text = read_regular_file(path, 1024).decode("ascii").strip()
            if len(text) == 2 * _KEY_BYTES and all(c in "0123456789abcdef" for c in text):
                return bytes.fromhex(text)
        except FileNotFoundError:
            pass
        except (OSError, ValueError, UnicodeDecodeError):
            path.unlink(missing_ok=True)     # not a key agenttest wrote (a symlink, a device): replaced
        secret = secrets.token_bytes(_KEY_BYTES)
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor, tmp = tempfile.mkstemp(prefix=".key.", dir=path.parent)     # mode 0600
        try:
            with os.fdopen(descriptor, "w", encoding="ascii") as handle:
                handle.write(secret.hex() + "\n")
            os.link(tmp, path)          # never over another run's key, made a moment before
        except FileExistsError:
            return bytes.fromhex(read_regular_file(path, 1024).decode("ascii").strip())
        finally:
            Path(tmp).unlink(missing_ok=True)
        return secret

    def _turn_off(self, why: str) -> None:
        if self._off is None:
            self._off = why
            write_line(self._errors, f"⚠ helper cache {self._shown}: {why}; continuing without it")

    def _distrusted(self, why: str) -> None:
        if not self._distrust_said:      # once: a whole committed cache would say it for every entry
            self._distrust_said = True
            write_line(self._errors, f"⚠ helper cache {self._shown}: ignored an entry ({why}); the helper is "
                                     "asked instead")


def _mac(signing: bytes, key: str, response: object) -> str:
    text = json.dumps(response, sort_keys=True, ensure_ascii=False, default=str)
    return hmac.new(signing, f"{key}\0{text}".encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()
