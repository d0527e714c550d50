"""agenttest.yaml and the run options: discovery, `${VAR}` expansion, validation, and merging with CLI flags."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from . import __version__
from .agents import registry
from .durations import parse_duration
from .errors import ConfigError, UsageError, Where
from .hints import did_you_mean
from .secrets import register_secret

CONFIG_NAMES = ("agenttest.yaml", "agenttest.yml")
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL", re.IGNORECASE)

# Every run option by its long name, with its built-in default. `defaults:` in the config may set any of them.
RUN_DEFAULTS: dict[str, Any] = {
    "name": None, "output": None, "output_dir": "agenttest-results", "junit": None, "summary": None,
    "connector": None, "user": None, "team": None, "ctx": None, "verbose": False,
    "simulator": None, "before": None, "after": None, "timeout": "2m", "parallel": 4, "runs": 1,
    "min_pass_rate": 100.0, "run": None, "shard": None, "fail_fast": False, "dry_run": False,
    "baseline": None, "retries": 2, "cache": ".agenttest-cache", "no_cache": False, "record": None,
    "replay": None, "max_cost": None, "max_tokens": None, "annotations": None, "max_annotations": 10,
}

# Run options of the product contract that this version does not carry out yet. Setting one is an error rather
# than a silent no-op: a user who asks for `--runs 5` must not get one run and a green build.
NOT_BUILT_YET: dict[str, str] = {
    "runs": "stability analysis", "min_pass_rate": "stability analysis", "shard": "sharding",
    "simulator": "dynamic mode", "baseline": "baseline comparison", "record": "record/replay",
    "replay": "record/replay", "max_cost": "the run budget", "max_tokens": "the run budget",
}


class BuiltinSettings(BaseModel):
    """A helper agent with a built-in prompt (validator, simulator, generator) on a connector."""

    model_config = ConfigDict(extra="forbid")

    builtin: Literal["validator", "simulator", "generator"]
    connector: str | None = None
    description: str = ""


class ConfigFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: Literal[1] = 1
    defaults: dict[str, Any] = Field(default_factory=dict)
    connectors: dict[str, registry.ConnectorSettings] = Field(default_factory=dict)
    agents: dict[str, dict[str, Any]] = Field(default_factory=dict)


@dataclass
class ProjectConfig:
    """A loaded, validated agenttest.yaml (or the empty one when there is none)."""

    path: Path | None
    defaults: dict[str, Any] = field(default_factory=dict)
    connectors: dict[str, registry.ConnectorSettings] = field(default_factory=dict)
    agents: dict[str, registry.ProviderSettings | BuiltinSettings] = field(default_factory=dict)

    @property
    def directory(self) -> Path:
        return self.path.parent if self.path else Path.cwd()

    @property
    def display_path(self) -> str:
        return str(self.path) if self.path else "agenttest.yaml"


@dataclass
class RunConfig:
    """One typed run configuration: what the CLI (or the Action) hands to `run_suite`."""

    inputs: list[str]
    project: ProjectConfig
    cwd: Path
    agent_id: str | None = None
    agent_path: str | None = None
    output: Path | None = None
    output_dir: Path = Path("agenttest-results")
    junit: Path | None = None                   # default: OUTPUT_DIR/junit.xml
    summary: Path | None = None                 # default: OUTPUT_DIR/summary.md
    annotations: bool | None = None             # None: on in GitHub Actions
    max_annotations: int = 10
    connector: str | None = None
    user: str | None = None             # given by -u or defaults: wins over a case's `user`
    team: str | None = None
    ctx_file: Path | None = None
    verbose: bool = False
    before: str | None = None
    after: str | None = None
    timeout: float = 120.0
    parallel: int = 4
    run_filter: str | None = None
    fail_fast: bool = False
    dry_run: bool = False
    retries: int = 2
    options: dict[str, Any] = field(default_factory=dict)   # the merged options, as reported in metadata


def find_config(explicit: str | None, inputs: list[str], cwd: Path) -> Path | None:
    """`--config`, else $AGENTTEST_CONFIG, else the first agenttest.yaml walking up from the first input's
    directory, else from the working directory."""
    chosen = explicit or os.environ.get("AGENTTEST_CONFIG")
    if chosen:
        path = (cwd / chosen).resolve()
        if not path.is_file():
            raise ConfigError(f"config file {chosen} not found")
        return path
    starts = []
    if inputs:
        first = cwd / inputs[0]
        if first.exists():
            starts.append(first if first.is_dir() else first.parent)
    starts.append(cwd)
    for start in starts:
        for directory in [start.resolve(), *start.resolve().parents]:
            for name in CONFIG_NAMES:
                if (directory / name).is_file():
                    return directory / name
    return None


def load_project(path: Path | None) -> ProjectConfig:
    """Read, expand and validate agenttest.yaml; every problem is a ConfigError naming the file and key."""
    if path is None:
        return ProjectConfig(path=None)
    where = str(path)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read: {exc}", Where(where)) from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        raise ConfigError(f"invalid YAML: {getattr(exc, 'problem', None) or exc}", Where(where, line)) from exc
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ConfigError("the top level must be a mapping", Where(where))
    expanded = _expand(raw, where, ())
    try:
        parsed = ConfigFile.model_validate(expanded)
    except ValidationError as exc:
        raise ConfigError(_first_error(exc, ConfigFile), Where(where)) from exc
    _check_defaults(parsed.defaults, where)
    agents = {agent_id: _agent_settings(agent_id, entry, where) for agent_id, entry in parsed.agents.items()}
    for connector in parsed.connectors.values():
        if connector.api_key:
            register_secret(connector.api_key)
    return ProjectConfig(path=path, defaults=_normalise_keys(parsed.defaults), connectors=parsed.connectors,
                         agents=agents)


def build_run_config(cli: dict[str, Any], cwd: Path | None = None) -> RunConfig:
    """Merge explicitly given CLI values over the config's `defaults:` over the built-in defaults."""
    cwd = cwd or Path.cwd()
    inputs = list(cli.get("input") or [])
    project = load_project(find_config(cli.get("config"), inputs, cwd))
    merged = {**RUN_DEFAULTS, **project.defaults, **{k: v for k, v in cli.items() if k in RUN_DEFAULTS}}
    _refuse_unbuilt(merged)
    try:
        timeout = parse_duration(str(merged["timeout"]))
    except ValueError as exc:
        raise UsageError(f"--timeout: {exc}") from exc
    parallel = _positive_int(merged["parallel"], "--parallel")
    retries = _positive_int(merged["retries"], "--retries", minimum=0)
    agent_id, agent_path = _target_agent(merged["name"], inputs, project, cwd)
    if merged["run"]:
        _check_run_filter(merged["run"])
    options = {k: v for k, v in merged.items() if v is not None}
    return RunConfig(
        inputs=inputs, project=project, cwd=cwd, agent_id=agent_id, agent_path=agent_path,
        output=Path(merged["output"]) if merged["output"] else None,
        output_dir=Path(merged["output_dir"]), connector=merged["connector"],
        junit=Path(merged["junit"]) if merged["junit"] else None,
        summary=Path(merged["summary"]) if merged["summary"] else None,
        annotations=None if merged["annotations"] is None else bool(merged["annotations"]),
        max_annotations=_positive_int(merged["max_annotations"], "--max-annotations", minimum=0),
        user=merged["user"], team=merged["team"],
        ctx_file=Path(merged["ctx"]) if merged["ctx"] else None, verbose=bool(merged["verbose"]),
        before=merged["before"], after=merged["after"], timeout=timeout, parallel=parallel,
        run_filter=merged["run"], fail_fast=bool(merged["fail_fast"]), dry_run=bool(merged["dry_run"]),
        retries=retries, options={"input": inputs, **options},
    )


def derive_agent_id(path: Path) -> str | None:
    """Yao's rule: the components after an `assistants` directory, joined with dots."""
    parts = path.parts
    if "assistants" not in parts:
        return None
    after = list(parts[parts.index("assistants") + 1:])
    if after and "." in after[-1]:      # a file name, not a directory
        after = after[:-1]
    if after and after[-1] == "tests":
        after = after[:-1]
    return ".".join(after) or None


def _target_agent(name: str | None, inputs: list[str], project: ProjectConfig,
                  cwd: Path) -> tuple[str | None, str | None]:
    agent_path = None
    if not name:
        for value in inputs:
            derived = derive_agent_id(Path(value))
            if derived:
                name = derived
                candidate = Path(value)
                agent_path = str(candidate.parent.parent if candidate.parent.name == "tests" else candidate.parent)
                break
    if not name:
        if len(project.agents) == 1:
            return next(iter(project.agents)), None
        return None, None
    return name, agent_path


def _refuse_unbuilt(merged: dict[str, Any]) -> None:
    for name, feature in NOT_BUILT_YET.items():
        if merged[name] is not None and merged[name] != RUN_DEFAULTS[name]:
            flag = "--" + name.replace("_", "-")
            raise UsageError(f"{flag}: {feature} is not built yet (agenttest {__version__})")


def _check_run_filter(pattern: str) -> None:
    text = pattern[4:] if pattern.startswith("tag:") else pattern
    try:
        re.compile(text)
    except re.error as exc:
        raise UsageError(f"--run: invalid pattern {pattern!r}: {exc}") from exc


def _positive_int(value: Any, flag: str, minimum: int = 1) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise UsageError(f"{flag}: {value!r} is not a whole number") from None
    if number < minimum:
        raise UsageError(f"{flag}: must be at least {minimum}")
    return number


def _expand(value: Any, file: str, keys: tuple[str, ...]) -> Any:
    """Replace ${VAR} / ${VAR:-default} in every string; remember values that are secrets."""
    if isinstance(value, dict):
        return {k: _expand(v, file, (*keys, str(k))) for k, v in value.items()}
    if isinstance(value, list):
        return [_expand(v, file, (*keys, str(i))) for i, v in enumerate(value)]
    if not isinstance(value, str) or "${" not in value:
        return value
    secret_place = bool(keys) and (keys[-1] == "api_key" or "headers" in keys)

    def substitute(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        found = os.environ.get(name)
        if found is None or (found == "" and default is not None):
            if default is None:
                raise ConfigError(f"{'.'.join(keys)}: environment variable {name} is not set", Where(file))
            found = default
        if found and (secret_place or _SECRET_NAME.search(name)):
            register_secret(found)
        return found

    return _VAR.sub(substitute, value)


def _agent_settings(agent_id: str, entry: dict[str, Any],
                    file: str) -> registry.ProviderSettings | BuiltinSettings:
    prefix = f"agents.{agent_id}"
    if "builtin" in entry:
        model: type[BaseModel] = BuiltinSettings
    else:
        provider = entry.get("provider")
        if provider is None:
            raise ConfigError(f"{prefix}: needs 'provider' ({', '.join(sorted(registry.PROVIDERS))}) or 'builtin'",
                              Where(file))
        if provider not in registry.PROVIDERS:
            raise ConfigError(f"{prefix}.provider: unknown provider {provider!r} "
                              f"(available: {', '.join(sorted(registry.PROVIDERS))})", Where(file))
        model = registry.PROVIDERS[provider].settings
    try:
        return model.model_validate(entry)  # type: ignore[return-value]
    except ValidationError as exc:
        raise ConfigError(_first_error(exc, model, prefix), Where(file)) from exc


def _check_defaults(defaults: dict[str, Any], file: str) -> None:
    for key in defaults:
        normal = key.replace("-", "_")
        if normal not in RUN_DEFAULTS:
            raise ConfigError(f"defaults.{key}: unknown run option{did_you_mean(normal, RUN_DEFAULTS)}", Where(file))


def _normalise_keys(defaults: dict[str, Any]) -> dict[str, Any]:
    return {k.replace("-", "_"): v for k, v in defaults.items()}


def _first_error(exc: ValidationError, model: type[BaseModel], prefix: str = "") -> str:
    """pydantic's first error as `dotted.key: message`, with a did-you-mean for unknown keys."""
    errors = exc.errors()
    # An unknown key usually explains a "missing" one (a typo), so it is reported first.
    error = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
    location = ".".join(str(part) for part in error["loc"])
    key = f"{prefix}.{location}" if prefix and location else prefix or location
    if error["type"] == "extra_forbidden":
        return f"{key}: unknown key{did_you_mean(str(error['loc'][-1]), model.model_fields)}"
    if error["type"] == "missing":
        return f"{key}: required"
    return f"{key}: {error['msg']}"
