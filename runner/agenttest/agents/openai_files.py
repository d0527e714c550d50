"""The files an openai agent's settings may name: its system prompt and its tool schema."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..workspace import UnsafePath, checked_file, repository_root


def read_system(agent_id: str, system: str | None, config_dir: Path) -> str | None:
    """`system` is a file when it names one that exists (relative to the config's directory); a value that looks
    like a path — one word containing `/` or ending in a file extension — must exist; anything else is the text."""
    if not system:
        return system
    where = f"agents.{agent_id}.system"
    looks_like_path = "\n" not in system and " " not in system.strip() and (
        "/" in system or Path(system.strip()).suffix[1:].isalnum())
    path = config_dir / system.strip() if looks_like_path else None
    if path is None or not path.is_file():
        if looks_like_path:
            raise ConfigError(f"{where}: prompt file {system.strip()} not found in {config_dir}")
        return system
    try:
        return config_file(path, system.strip(), config_dir, where).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{where}: cannot read {path}: {exc}") from exc


def read_tools(agent_id: str, tools: str | list[dict[str, Any]] | None, config_dir: Path) -> list[dict[str, Any]]:
    """The OpenAI tool schema, from a JSON file or inline; bare function definitions are wrapped."""
    where = f"agents.{agent_id}.tools"
    if tools is None:
        return []
    if isinstance(tools, str):
        path = config_dir / tools
        try:
            loaded = json.loads(config_file(path, tools, config_dir, where))
        except ValueError as exc:
            raise ConfigError(f"{where}: {path} is not valid JSON: {exc}") from exc
        tools = loaded.get("tools") if isinstance(loaded, dict) and "tools" in loaded else loaded
        if not isinstance(tools, list):
            raise ConfigError(f"{where}: {path} must hold a JSON array of tools")
    result = []
    for index, tool in enumerate(tools):
        if isinstance(tool, dict) and "function" not in tool and "name" in tool:
            tool = {"type": "function", "function": tool}
        if not (isinstance(tool, dict) and isinstance(tool.get("function"), dict) and tool["function"].get("name")):
            raise ConfigError(f"{where}[{index}]: expected {{type: function, function: {{name, parameters}}}}")
        result.append({"type": "function", **tool})
    return result


def config_file(path: Path, shown: str, config_dir: Path, where: str) -> bytes:
    """The bytes of a file agenttest.yaml names (at `where`), read as a suite's files are: only when it resolves,
    symlinks followed, inside the repository holding agenttest.yaml (or its directory, without git), is a regular
    file of at most MAX_SUITE_FILE_BYTES and not under .git/ (`workspace.checked_file`) — a pull request edits
    agenttest.yaml too. ConfigError naming `where` otherwise."""
    if not path.exists():
        raise ConfigError(f"{where}: cannot read {shown}: no such file in {config_dir}")
    try:
        return checked_file(path, repository_root(config_dir), shown).read_bytes()
    except UnsafePath as exc:
        raise ConfigError(f"{where}: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"{where}: cannot read {shown}: {exc.strerror or exc}") from None
