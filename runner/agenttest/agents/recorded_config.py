"""What a cassette remembers of the agent that answered: the settings that shape its replies, read from
agenttest.yaml without building the agent, so a replay — on a fork with none of the secrets — can tell that a
recording is stale.

Left out: credentials and headers, and where the agent runs (`base_url`, `url`, `cwd`), which differ between a
maintainer's machine and CI without changing what the agent says. Files the settings name (a system prompt, a
tool schema, a Python agent's module or its tools' modules, a script an `exec` agent runs) count by a digest of
their content.
"""

from __future__ import annotations

import hashlib
import json
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..project import ProjectConfig
from .builtin import BuiltinSettings, default_prompt

_LEFT_OUT = {"api_key", "headers", "env", "base_url", "url", "cwd", "price", "description"}
_CONNECTOR_FIELDS = {"type", "model", "params"}


@dataclass(frozen=True)
class RecordedConfig:
    """An agent's settings as a cassette stores them, and their digest (computed once per run)."""

    described: dict[str, Any]
    digest: str


def recorded_config(project: ProjectConfig, agent_id: str) -> RecordedConfig:
    """The agent's settings as a cassette stores them (plain JSON, file contents as digests)."""
    settings = project.agents[agent_id]
    config_dir = project.directory
    described: dict[str, Any] = settings.model_dump(mode="json", exclude=_LEFT_OUT, exclude_defaults=True)
    connector = project.connectors.get(described.get("connector") or "")
    if connector is not None:
        described["connector"] = {"name": described["connector"],
                                  **connector.model_dump(mode="json", include=_CONNECTOR_FIELDS)}
    if isinstance(settings, BuiltinSettings):
        prompt = _file_digest(config_dir, settings.prompt) if settings.prompt else _digest(
            default_prompt(settings.builtin).encode("utf-8"))
        described["prompt"] = prompt
    for key in ("system", "tools"):
        value = described.get(key)
        if isinstance(value, str):
            described[key] = _file_digest(config_dir, value) or value
    if isinstance(described.get("callable"), str):
        described["source"] = _module_digest(config_dir, described["callable"])
    if isinstance(described.get("tool_callables"), dict):
        described["tool_sources"] = {name: _module_digest(config_dir, str(target))
                                     for name, target in described["tool_callables"].items()}
    command = described.get("command")
    if command is not None:
        argv = shlex.split(command) if isinstance(command, str) else list(command)
        cwd = config_dir / str(getattr(settings, "cwd", None) or ".")
        described["scripts"] = {arg: digest for arg in argv if (digest := _file_digest(cwd, arg))}
    return RecordedConfig(described, config_digest(described))


def config_digest(described: dict[str, Any]) -> str:
    """A short, stable digest of `recorded_config`."""
    return _digest(json.dumps(described, sort_keys=True, ensure_ascii=False, default=str).encode("utf-8"))[:16]


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _file_digest(directory: Path, name: str) -> str | None:
    """`sha256:…` of the file `name` (relative to `directory`) when it is one, else None."""
    if "\n" in name or len(name) > 4096:
        return None
    path = directory / name
    try:
        if path.is_file():
            return "sha256:" + _digest(path.read_bytes())[:16]
    except OSError:
        return None
    return None


def _module_digest(config_dir: Path, target: str) -> str | None:
    """The digest of a Python agent's module source, found without importing it (`pkg.mod:func` →
    `pkg/mod.py` or `pkg/mod/__init__.py` under the config's directory); None when it is not there (an installed
    package)."""
    module = target.split(":", 1)[0].replace(".", "/")
    for candidate in (f"{module}.py", f"{module}/__init__.py"):
        found = _file_digest(config_dir, candidate)
        if found:
            return found
    return None
