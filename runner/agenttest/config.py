"""The run configuration: flags over `defaults:` over built-in defaults, and the agent under test."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from .agent_paths import suite_agent
from .agents.cache import default_cache_directory
from .artifacts import ARTIFACT_FILES
from .cases.model import Case, InvalidCase
from .cases.sources import existing_path
from .errors import AgentTestError
from .option_table import OptionTable
from .options import PlainOptions, merge_options
from .project import ProjectConfig, find_config, load_project

if TYPE_CHECKING:
    from .run_options import RunOptions


def _default_options() -> RunOptions:
    from .run_options import RunOptions

    return RunOptions()


@dataclass
class RunConfig:
    """One typed run configuration: what the CLI (or the Action) hands to `run_suite`."""

    inputs: list[str]
    project: ProjectConfig
    cwd: Path
    options: RunOptions | PlainOptions = field(default_factory=_default_options)
    agent_id: str | None = None
    agent_path: str | None = None

    @property
    def output(self) -> Path | None:
        return self.cwd / self.options.output if self.options.output else None

    @property
    def output_dir(self) -> Path:
        return self.cwd / self.options.output_dir

    @property
    def junit(self) -> Path:
        return self.cwd / self.options.junit if self.options.junit else self.output_dir / ARTIFACT_FILES["junit"]

    @property
    def summary(self) -> Path:
        return self.cwd / self.options.summary if self.options.summary else self.output_dir / ARTIFACT_FILES["summary"]

    @property
    def cache_dir(self) -> Path:
        """The helper cache: `--cache DIR`, else outside the checkout, in the user's cache directory."""
        return self.cwd / self.options.cache if self.options.cache else default_cache_directory()

    @property
    def ctx_file(self) -> Path | None:
        return self.cwd / self.options.ctx if self.options.ctx else None

    @property
    def timeout(self) -> float:
        return self.options.timeout_seconds

    def target_of(self, file: str | None) -> tuple[str | None, Path | None]:
        """The agent a suite file's cases test, and the directory where their hooks are looked up after the
        suite's own: `-n`/`defaults.name` tests every case, else each file's agent comes from its path (Yao's
        `assistants/<name>/tests/…`), else the run's agent. The directory is the path's agent directory (with `-n`
        too: Yao's hooks live there), else the config's."""
        derived = suite_agent(self.cwd / file) if file else None
        agent_id = self.options.name or (derived[0] if derived else None) or self.agent_id
        default_dir = self.project.directory if self.project.path else None
        return agent_id, derived[1] if derived else default_dir

    def assign_targets(self, entries: list[Case | InvalidCase]) -> list[str]:
        """Set each entry's target (and each case's agent directory); return the targets, each once, in order."""
        of_file: dict[str | None, tuple[str | None, Path | None]] = {}     # worked out once per suite file
        for entry in entries:
            if entry.file not in of_file:
                of_file[entry.file] = self.target_of(entry.file)
            agent_id, directory = of_file[entry.file]
            entry.target = agent_id
            if isinstance(entry, Case):
                entry.agent_dir = directory
        return list(dict.fromkeys(e.target for e in entries if isinstance(e, Case) and e.target))

    def reported_options(self) -> dict[str, Any]:
        """The options as the report's metadata shows them: the inputs, and every option that has a value."""
        return {"input": self.inputs, **self.options.model_dump(exclude_none=True)}


def build_run_config(cli: dict[str, Any], cwd: Path | None = None) -> RunConfig:
    """Merge explicitly given CLI values over the config's `defaults:` over the built-in defaults.
    Raises ConfigError / UsageError naming the file, key or flag."""
    cwd = cwd or Path.cwd()
    inputs = list(cli.get("input") or [])
    project = load_project(find_config(cli.get("config"), inputs, cwd), plain=True)
    options = merge_options(project.defaults, cli, plain=True)     # of the plain shapes: read without the model
    agent_id, agent_path = _target_agent(options.name, inputs, project, cwd)
    return RunConfig(inputs=inputs, project=project, cwd=cwd, options=options, agent_id=agent_id,
                     agent_path=agent_path)


def declared_output_dir(cli: dict[str, Any], cwd: Path) -> Path | None:
    """The output directory of a run whose configuration could not be built (agenttest.yaml has a mistake): the
    `--output-dir` flag, else the `defaults.output_dir` the file declares, else the built-in one; None when that
    cannot be told (no such `--config`, a file that is no YAML mapping, a value that is no plain string)."""
    if cli.get("output_dir"):
        return cwd / cli["output_dir"]
    try:
        path = find_config(cli.get("config"), list(cli.get("input") or []), cwd)
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) if path is not None else None
    except (AgentTestError, OSError, UnicodeDecodeError, yaml.YAMLError):
        return None
    defaults = raw.get("defaults") or {} if isinstance(raw, dict) else {} if raw is None else None
    if not isinstance(defaults, dict):
        return None
    declared = [value for key, value in defaults.items() if str(key).replace("-", "_") == "output_dir"]
    if not declared:
        return cwd / OptionTable.output_dir
    value = declared[-1]
    return cwd / value if len(declared) == 1 and isinstance(value, str) and value and "${" not in value else None


def derive_agent_id(path: Path) -> str | None:
    """Yao's rule: the components after an `assistants` directory, joined with dots (see `suite_agent`)."""
    found = suite_agent(path)
    return found[0] if found else None


def _target_agent(name: str | None, inputs: list[str], project: ProjectConfig,
                  cwd: Path) -> tuple[str | None, str | None]:
    """The run's agent: `-n`/`defaults.name`, else derived from the first `assistants/…` suite path (however it is
    spelled: the resolved path counts), else the config's only agent. The agent path is relative to `cwd` when
    inside it. Each file's own agent is `RunConfig.target_of`."""
    if name:
        return name, None
    for value in inputs:
        suite = existing_path(cwd / value)
        derived = suite_agent(suite) if suite is not None else None
        if derived is not None:
            agent_id, directory = derived
            return agent_id, str(directory.relative_to(cwd) if directory.is_relative_to(cwd) else directory)
    if len(project.agents) == 1:
        return next(iter(project.agents)), None
    return None, None
