"""What a cassette remembers of the agent that answered: the settings that shape its replies, read from
agenttest.yaml without building the agent, so a replay — on a fork with none of the secrets — can tell that a
recording is stale.

Left out: credentials and headers, and where the agent runs (`base_url`, `url`, `cwd`), which differ between a
maintainer's machine and CI without changing what the agent says. A value that holds a secret variable anywhere
else (an http `body`, an exec `command`, `params`) is shown as written — `--token ${EXEC_TOKEN}` — never with the
secret: a cassette is committed, and a fork, which has none of the secrets, must describe the agent the same way.
Files the settings name (a system prompt, a tool schema, a Python agent's module or its tools' modules, a script
an `exec` agent runs) count by a digest of their content. So does the code those can reach (`code`): every file with
a source extension under the directory its imports are found from — agenttest.yaml's for a `python` agent (or one
with `tool_callables`), for an `exec` agent the directories of the files its command names, else its working
directory — inside the repository, leaving out hidden folders, `__pycache__`, `node_modules` and virtual
environments; at most MAX_CODE_FILES files and MAX_CODE_BYTES, those nearest the agent first, and the run says
when there were more. Files it reads that are not code (a prompt, data) are not digested.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..github.log import write_line
from ..project import ProjectConfig
from ..secrets import redact
from ..workspace import repository_root
from .builtin import default_prompt, is_builtin

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
    if is_builtin(settings):
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
    code_dirs: list[Path] = []
    if isinstance(described.get("callable"), str) or described.get("tool_callables"):
        code_dirs.append(config_dir)
    command = described.get("command")
    if command is not None:
        argv = shlex.split(command) if isinstance(command, str) else list(command)
        cwd = config_dir / str(getattr(settings, "cwd", None) or ".")
        described["scripts"] = {arg: digest for arg in argv if (digest := _file_digest(cwd, arg))}
        top = repository_root(config_dir)
        code_dirs += [folder for arg in described["scripts"]            # not the interpreter's: /usr/bin
                      if (folder := (cwd / arg).resolve().parent).is_relative_to(top)] or [cwd]
    if code_dirs:
        described["code"] = _code_digests(agent_id, code_dirs, config_dir)
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


MAX_CODE_FILES = 1_000
MAX_CODE_BYTES = 64 * 1024 * 1024
_CODE_SUFFIXES = frozenset({
    ".py", ".pyi", ".pyx", ".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx", ".sh", ".bash", ".zsh",
    ".ps1", ".rb", ".go", ".rs", ".java", ".kt", ".kts", ".scala", ".groovy", ".php", ".pl", ".pm", ".lua", ".r",
    ".jl", ".swift", ".cs", ".fs", ".c", ".h", ".cc", ".cpp", ".hpp", ".m", ".ex", ".exs", ".erl", ".clj", ".dart",
    ".zig"})
_SKIPPED_DIRS = frozenset({"__pycache__", "node_modules", "site-packages", "dist-packages"})


def _code_digests(agent_id: str, directories: list[Path], config_dir: Path) -> dict[str, str]:
    """`sha256:…` of every file with a source extension under `directories` that lie inside the repository
    holding `config_dir`, by path from `config_dir`; a symlink counts by where it points. At most MAX_CODE_FILES
    files and MAX_CODE_BYTES, the first as `_code_files` walks them (the files nearest the agent first): past those,
    the run says so on stderr (a change in the files left out goes unseen by a replay)."""
    top = repository_root(config_dir)
    files: dict[Path, None] = {}
    for directory in dict.fromkeys(directory.resolve() for directory in directories):
        if directory.is_dir() and directory.is_relative_to(top):
            files.update(dict.fromkeys(_code_files(directory, MAX_CODE_FILES + 1 - len(files))))
    found: dict[str, str] = {}
    size = 0
    for path in files:
        if len(found) == MAX_CODE_FILES or size > MAX_CODE_BYTES:
            write_line(sys.stderr, f"⚠ agent '{agent_id}': more than {MAX_CODE_FILES:,} files or "
                                   f"{MAX_CODE_BYTES // (1024 * 1024)} MB of code; only the first {len(found):,} "
                                   f"(the last: {next(reversed(found))}) are digested for --record and --replay: "
                                   "a change in the others goes unseen")
            break
        shown = Path(os.path.relpath(path, config_dir.resolve())).as_posix()
        if path.is_symlink():
            found[shown] = "symlink:" + os.readlink(path)
            continue
        digest = _file_digest(path.parent, path.name)
        if digest is not None:
            found[shown] = digest
            size += path.stat().st_size if path.exists() else 0
    return found


def _code_files(directory: Path, limit: int) -> list[Path]:
    """Up to `limit` files with a source extension under `directory`, a folder's own files (by name) before its
    subfolders' (by name), never into a hidden folder, `__pycache__`, `node_modules`, site-packages or a virtual
    environment (a folder with `pyvenv.cfg`), nor through a symlinked folder."""
    found: list[Path] = []
    for folder, subfolders, names in os.walk(directory):
        subfolders[:] = sorted(name for name in subfolders if not name.startswith(".") and name not in _SKIPPED_DIRS
                               and not os.path.exists(os.path.join(folder, name, "pyvenv.cfg")))
        found += [Path(folder, name) for name in sorted(names) if Path(name).suffix.lower() in _CODE_SUFFIXES]
        if len(found) >= limit:
            break
    return found[:limit]
