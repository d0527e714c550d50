"""What a cassette remembers of the agent that answered: the settings that shape its replies, read from
agenttest.yaml without building the agent, so a replay — on a fork with none of the secrets — can tell that a
recording is stale.

Left out: credentials and headers, and where the agent runs (`base_url`, `url`, `cwd`), which differ between a
maintainer's machine and CI without changing what the agent says. A value that holds a secret variable anywhere
else (an http `body`, an exec `command`, `params`) is shown as written — `--token ${EXEC_TOKEN}` — never with the
secret: a cassette is committed, and a fork, which has none of the secrets, must describe the agent the same way.
Files the settings name (a system prompt, a tool schema, a Python agent's module or its tools' modules, a script
an `exec` agent runs) count by a digest of their content.
"""

from __future__ import annotations

import hashlib
import json
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..project import ProjectConfig
from ..secrets import redact
from .builtin import BuiltinSettings, default_prompt

_LEFT_OUT = {"api_key", "headers", "env", "base_url", "url", "cwd", "price", "description", "input_tools"}
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
    templates = {place: setting.written for place, setting in project.secret_settings.items()}
    described: dict[str, Any] = _as_written(
        settings.model_dump(mode="json", exclude=_LEFT_OUT, exclude_defaults=True), f"agents.{agent_id}", templates)
    connector = project.connectors.get(described.get("connector") or "")
    if connector is not None:
        name = described["connector"]
        described["connector"] = {"name": name, **_as_written(
            connector.model_dump(mode="json", include=_CONNECTOR_FIELDS), f"connectors.{name}", templates)}
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
    described = redact(described)        # a secret the settings hold some other way: masked, as everywhere
    return RecordedConfig(described, config_digest(described))


def _as_written(value: Any, place: str, templates: dict[str, str]) -> Any:
    """`value` (settings at key path `place` of agenttest.yaml) with each value that holds a secret variable as it
    is written in the file."""
    if place in templates:
        return templates[place]
    if isinstance(value, dict):
        return {key: _as_written(item, f"{place}.{key}", templates) for key, item in value.items()}
    if isinstance(value, list):
        return [_as_written(item, f"{place}.{index}", templates) for index, item in enumerate(value)]
    return value


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
        if not path.is_file():
            return None
        digest = hashlib.sha256()
        with path.open("rb") as handle:       # an exec agent's argument may be a model's weights: never whole
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    except OSError:
        return None
    return "sha256:" + digest.hexdigest()[:16]


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
