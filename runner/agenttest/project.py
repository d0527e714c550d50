"""agenttest.yaml: where it is, `${VAR}` expansion (in this file only), and validation with errors naming the key."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, get_args

import yaml

from .agents import registry
from .agents.credentials import CREDENTIAL_NAME
from .agents.urls import credential_spans, register_part
from .cases.sources import existing_path
from .errors import ConfigError, Where
from .hints import closest, did_you_mean
from .option_table import OPTION_NAMES
from .plain_settings import DEFAULTS as PLAIN_MODELS
from .plain_settings import PlainSettings, plain_config
from .secrets import register_secret
from .validation import config_errors

if TYPE_CHECKING:       # the settings models (pydantic) are imported when a config is checked by them
    from pydantic import BaseModel

    from .agents.settings import BuiltinSettings, ConfigFile, ConnectorSettings, ProviderSettings

CONFIG_NAMES = ("agenttest.yaml", "agenttest.yml")
NO_CONFIG = "no agenttest.yaml found (looked upward from the working directory and the first input)"
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class SecretSetting(NamedTuple):
    """A setting that holds a secret `${VAR}`: as written in agenttest.yaml (`--token ${EXEC_TOKEN}`: what a
    cassette shows, the same on every machine and without the secret) and as expanded (what the helper cache
    authenticates with)."""

    written: str
    value: str


class Settings(Mapping[str, Any]):
    """The agents or the connectors of agenttest.yaml by id, each as its settings model reads its entry. The
    config was checked whole when it loaded; an entry that the plain check (plain_settings.py) let through is read
    by its model when first used, so checking a suite (`agenttest validate`) builds none. `entry` gives one as
    written, `${VAR}`s expanded."""

    def __init__(self, entries: Mapping[str, dict[str, Any]], model: Callable[[dict[str, Any]], type[BaseModel]],
                 read: Mapping[str, Any] | None = None, *, where: str = "", prefix: str = "",
                 plain: Callable[[dict[str, Any]], str | None] | None = None) -> None:
        self._entries = dict(entries)
        self._model = model
        self._read = dict(read or {})
        self._where, self._prefix = where, prefix
        self._plain = plain     # the model an entry of the plain shapes is read as without pydantic (PlainSettings)

    def entry(self, key: str) -> dict[str, Any]:
        return self._entries[key]

    def __getitem__(self, key: str) -> Any:
        if key not in self._read:
            entry = self._entries[key]
            model = self._plain(entry) if self._plain is not None else None
            if model is not None:
                self._read[key] = PlainSettings(model, entry, lambda: self._by_model(key))
            else:
                self._read[key] = self._by_model(key)
        return self._read[key]

    def _by_model(self, key: str) -> Any:
        entry = self._entries[key]
        return _settings(self._model(entry), entry, f"{self._prefix}.{key}", self._where)

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"Settings({list(self._entries)!r})"


def _settings(model: type[BaseModel], entry: dict[str, Any], prefix: str, where: str) -> Any:
    from pydantic import ValidationError

    try:
        return model.model_validate(entry)
    except ValidationError as exc:      # what load_project would have said (the plain check let it through)
        raise ConfigError(problems_message(config_errors(exc, model, prefix)), Where(where)) from None


@dataclass
class ProjectConfig:
    """A loaded, validated agenttest.yaml (or the empty one when there is none)."""

    path: Path | None
    defaults: dict[str, Any] = field(default_factory=dict)
    connectors: Mapping[str, ConnectorSettings] = field(default_factory=dict)
    agents: Mapping[str, ProviderSettings | BuiltinSettings] = field(default_factory=dict)
    missing: dict[str, str] = field(default_factory=dict)   # key path → environment variable that is not set
    # key path → every value that holds a secret variable, as written and as expanded (`SecretSetting`)
    secret_settings: dict[str, SecretSetting] = field(default_factory=dict)

    @property
    def directory(self) -> Path:
        return self.path.parent if self.path else Path.cwd()

    @property
    def display_path(self) -> str:
        return str(self.path) if self.path else "agenttest.yaml"

    def role(self, agent_id: str) -> str | None:
        """The built-in role of an agent (`builtin:` validator, simulator or generator), None for any other: read
        from its entry, so that checking a suite builds no settings."""
        agents = self.agents
        if isinstance(agents, Settings):
            return agents.entry(agent_id).get("builtin")
        from .agents.settings import BuiltinSettings

        settings = agents[agent_id]
        return settings.builtin if isinstance(settings, BuiltinSettings) else None

    def missing_variables(self, agent_id: str, uses_connectors: bool) -> list[tuple[str, str]]:
        """(key path, variable) of every variable the agent `agent_id` needs that is not set: in its own entry,
        and in every connector when it can use connectors (a case's `options.connector` picks any)."""
        prefixes = [f"agents.{agent_id}."] + (["connectors."] if uses_connectors else [])
        return [(key, name) for key, name in self.missing.items() if any(key.startswith(p) for p in prefixes)]

    def check_variables(self, agent_id: str, uses_connectors: bool, *, asked_by: str = "",
                        otherwise: str = "") -> None:
        """ConfigError for the first variable that the agent `agent_id` needs and that is not set, saying which
        agent needs it (and `asked_by` whom), how to set it, and `otherwise` what the user can do without it."""
        for key, name in self.missing_variables(agent_id, uses_connectors)[:1]:
            raise ConfigError(f"{key}: {variable_not_set(name)}; agent {agent_id}{asked_by} needs it: set it in the "
                              f"environment first (export {name}=…){otherwise}", Where(self.display_path))


def variable_not_set(name: str) -> str:
    """`environment variable BOT_KYE is not set (did you mean 'BOT_KEY'?)`: a set variable of a close name (only
    names are compared; no value is shown). Close means a misspelling: variables share prefixes (OPENAI_API_KEY and
    OPENAI_BASE_URL are 0.62 alike, BOT_KYE and BOT_KEY 0.86), so the bar is higher than for keys."""
    return f"environment variable {name} is not set{did_you_mean(name, os.environ, cutoff=0.8)}"


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
    first = existing_path(cwd / inputs[0]) if inputs else None   # a long direct message is no path
    if first is not None:
        starts.append(first if first.is_dir() else first.parent)
    starts.append(cwd)
    for start in starts:
        for directory in [start.resolve(), *start.resolve().parents]:
            for name in CONFIG_NAMES:
                if (directory / name).is_file():
                    return directory / name
    return None


def load_project(path: Path | None, *, plain: bool = False) -> ProjectConfig:
    """Read, expand and validate agenttest.yaml. Every problem of the file is reported at once, in one ConfigError
    naming the file and, for each problem, its key path. With `plain` (`agenttest validate`), a config of the plain
    shapes is checked without its models, which read each setting when it is first used (`Settings`)."""
    if path is None:
        return ProjectConfig(path=None)
    where = str(path)
    try:
        text = path.read_text(encoding="utf-8")
        raw = yaml.safe_load(text)
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
    missing: dict[str, str] = {}
    problems: list[str] = []
    secret_settings: dict[str, SecretSetting] = {}
    expanded = _expand(raw, where, (), missing, problems, secret_settings)
    if plain and not problems and plain_config(expanded):
        connectors, agents = _unread(expanded, where)
    else:
        connectors, agents = _checked(expanded, problems, where, text)
    # The keys are normalised as `_check_defaults` does (`output-dir` → `output_dir`); each is a known option.
    defaults = {str(key).replace("-", "_"): value for key, value in _mapping(expanded.get("defaults")).items()}
    return ProjectConfig(path=path, defaults=defaults, connectors=connectors, agents=agents, missing=missing,
                         secret_settings=secret_settings)


def _unread(expanded: dict[str, Any], where: str) -> tuple[Settings, Settings]:
    """The connectors and agents of a config of the plain shapes, each read by its model when first used."""
    connectors = _mapping(expanded.get("connectors"))
    for entry in connectors.values():
        if entry.get("api_key"):
            register_secret(entry["api_key"])
    return (Settings(connectors, _connector_model, where=where, prefix="connectors"),
            Settings(_mapping(expanded.get("agents")), _agent_model, where=where, prefix="agents",
                     plain=_plain_model))


def _checked(expanded: dict[str, Any], problems: list[str], where: str, text: str) -> tuple[Settings, Settings]:
    """The connectors and agents of a config, read by their models; ConfigError naming every problem of the file
    (`problems`, and those the models find) and its line in `text`. Each part is checked on its own, so that one
    mistake does not hide the others."""
    from pydantic import ValidationError

    from .agents.settings import ConfigFile

    parsed: ConfigFile | None = None
    try:
        parsed = ConfigFile.model_validate(expanded)
    except ValidationError as exc:
        problems += config_errors(exc, ConfigFile)
    _check_defaults(_mapping(expanded.get("defaults")), problems)
    agents = {}
    for agent_id, entry in _mapping(expanded.get("agents")).items():
        if isinstance(entry, dict) and (settings := _agent_settings(str(agent_id), entry, problems)) is not None:
            agents[str(agent_id)] = settings
    if problems:
        raise _placed(problems, where, text)
    assert parsed is not None
    for connector in parsed.connectors.values():
        if connector.api_key:
            register_secret(connector.api_key)
    entries = {str(agent_id): entry for agent_id, entry in _mapping(expanded.get("agents")).items()}
    return (Settings(_mapping(expanded.get("connectors")), _connector_model, parsed.connectors),
            Settings(entries, _agent_model, agents))


def _connector_model(entry: dict[str, Any]) -> type[BaseModel]:
    from .agents.settings import ConnectorSettings

    return ConnectorSettings


def _agent_model(entry: dict[str, Any]) -> type[BaseModel]:
    """The settings model of an agent's entry (its provider known: the config was checked)."""
    if "builtin" in entry:
        from .agents.settings import BuiltinSettings

        return BuiltinSettings
    return registry.PROVIDERS[entry["provider"]].settings


def _plain_model(entry: dict[str, Any]) -> str | None:
    """The settings model an agent's entry (of the plain shapes) is read as without pydantic (PlainSettings), if
    any: a built-in provider's whose fields plain_settings.DEFAULTS knows."""
    if "builtin" in entry:
        return None
    name = registry.PROVIDERS[entry["provider"]].settings_name
    return name if name in PLAIN_MODELS else None


def _placed(problems: list[str], where: str, text: str) -> ConfigError:
    """The ConfigError of `problems` (each `key.path: message`) at their lines of the file: one problem at its
    line, as `file:line: …`; several each after its line (`line 7: agents.bot.timeot: unknown key`). A problem
    whose key the file does not hold as written (a default, an expanded value) has no line."""
    lines = _key_lines(text)

    def line_of(problem: str) -> int | None:
        path = problem.split(": ", 1)[0]
        return lines.get(path) or lines.get(path.split(" (", 1)[0])

    if len(problems) == 1:
        return ConfigError(problems[0], Where(where, line_of(problems[0])))
    placed = [f"line {line}: {problem}" if (line := line_of(problem)) else problem for problem in problems]
    return ConfigError(problems_message(placed), Where(where))


def _key_lines(text: str) -> dict[str, int]:
    """Each key path of a YAML file, as problems name it (`agents.bot.timeout`, `pool[1].command`), and the line of
    its key; {} when the file cannot be composed (it was loaded, so only anchors and the like could stop it)."""
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return {}
    lines: dict[str, int] = {}

    def walk(node: yaml.Node, path: str) -> None:
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:      # a key written twice: YAML keeps the last, and so does this
                inner = f"{path}.{key.value}" if path else str(key.value)
                lines[inner] = lines[inner.replace("-", "_")] = key.start_mark.line + 1     # `output-dir` too
                walk(value, inner)
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                inner = f"{path}[{index}]"
                lines[inner] = item.start_mark.line + 1
                walk(item, inner)

    if root is not None:
        walk(root, "")
    return lines


def problems_message(problems: list[str]) -> str:
    """One problem on its line; several as a count and one indented line each."""
    if len(problems) == 1:
        return problems[0]
    return f"{len(problems)} problems:\n" + "\n".join(f"  {problem}" for problem in problems)


def _mapping(value: Any) -> dict[Any, Any]:
    return value if isinstance(value, dict) else {}


def _check_defaults(defaults: dict[str, Any], problems: list[str]) -> dict[str, Any]:
    """`defaults:` with its keys normalised (`output-dir` → `output_dir`), every value type-checked; what is wrong
    is added to `problems`."""
    normal = {str(key).replace("-", "_"): value for key, value in defaults.items()}
    unknown = [key for key in normal if key not in OPTION_NAMES]
    problems += [f"defaults.{key}: unknown run option{did_you_mean(key, OPTION_NAMES)}" for key in unknown]
    known = {key: value for key, value in normal.items() if key in OPTION_NAMES}
    from .options import check_options

    problems += [f"defaults.{option}: {message}" for option, message in check_options(known)]
    return known


def _expand(value: Any, file: str, keys: tuple[str, ...], missing: dict[str, str], problems: list[str],
            secret_settings: dict[str, SecretSetting]) -> Any:
    """Replace ${VAR} / ${VAR:-default} in every string; register the values that are secrets (docs/providers.md:
    Secrets): every variable in an `api_key`, a header, an exec `env` value, a URL's user-info or query value, and
    every variable whose name looks like a credential. A variable that must be set and is not is added to
    `problems`.

    A variable that is not set is an error only where it is used: under `agents.X` or `connectors.Y` it is recorded
    in `missing` (key path → variable) and checked when that agent runs, so a fork without the secrets of a remote
    agent can still test a local one from the same file."""
    if isinstance(value, dict):
        return {k: _expand(v, file, (*keys, str(k)), missing, problems, secret_settings)
                for k, v in value.items()}
    if isinstance(value, list):
        return [_expand(v, file, (*keys, str(i)), missing, problems, secret_settings)
                for i, v in enumerate(value)]
    if not isinstance(value, str) or "${" not in value:
        return value
    secret_place = bool(keys) and (keys[-1] == "api_key" or "headers" in keys or keys[-2:-1] == ("env",))
    pieces: list[str] = []
    substituted: list[tuple[int, int, str]] = []   # (start, end) in the result of each variable's value, its name
    done = length = 0
    for match in _VAR.finditer(value):
        found = _variable(match, keys, missing, problems)
        literal = value[done:match.start()]
        pieces += [literal, found]
        length += len(literal)
        substituted.append((length, length + len(found), match.group(1)))
        length += len(found)
        done = match.end()
    pieces.append(value[done:])
    result = "".join(pieces)
    areas, parts = credential_spans(result)
    for start, end, name in substituted:
        if secret_place or CREDENTIAL_NAME.search(name) or any(a <= start and end <= b for a, b in areas):
            secret_settings[".".join(keys)] = SecretSetting(value, result)
            if start < end:
                register_secret(result[start:end])
        if start == end:
            continue
        for part_start, part_end in parts:          # a whole URL from one variable: its user-info and query values
            if start < part_end and part_start < end:
                register_part(result[part_start:part_end])
    return result


def _variable(match: re.Match[str], keys: tuple[str, ...], missing: dict[str, str], problems: list[str]) -> str:
    """The value of one `${VAR}` / `${VAR:-default}`; "" for one that is not set (checked later where it is
    used, or added to `problems`)."""
    name, default = match.group(1), match.group(2)
    found = os.environ.get(name)
    if found is None or (found == "" and default is not None):
        if default is None:
            if keys[:1] in (("agents",), ("connectors",)) and len(keys) > 2:
                missing.setdefault(".".join(keys), name)
                return ""
            problems.append(f"{'.'.join(keys)}: {variable_not_set(name)}")
            return ""
        found = default
    return found


def _agent_settings(agent_id: str, entry: dict[str, Any],
                    problems: list[str]) -> ProviderSettings | BuiltinSettings | None:
    """The settings of one agent, or None with what is wrong added to `problems`."""
    from pydantic import ValidationError

    from .agents.settings import BuiltinSettings

    prefix = f"agents.{agent_id}"
    providers = sorted(registry.PROVIDERS)
    if "builtin" not in entry and "provider" not in entry:
        entry = _kind_misspelt(prefix, entry, problems)
        if entry is None:
            return None
    if "builtin" in entry:
        model: type[BaseModel] = BuiltinSettings
    else:
        provider = entry.get("provider")
        if provider is None:
            problems.append(f"{prefix}: needs 'provider' ({', '.join(providers)}) or 'builtin'")
            return None
        if provider not in registry.PROVIDERS:
            hint = did_you_mean(str(provider), providers).rstrip(")").lstrip(" (")
            problems.append(f"{prefix}.provider: unknown provider {provider!r} "
                            f"({hint + '; ' if hint else ''}available: {', '.join(providers)})")
            return None
        model = registry.PROVIDERS[provider].settings
    try:
        return model.model_validate(entry)  # type: ignore[return-value]
    except ValidationError as exc:
        problems += config_errors(exc, model, prefix)
        return None


_KINDS = ("provider", "builtin")


def _kind_misspelt(prefix: str, entry: dict[str, Any], problems: list[str]) -> dict[str, Any] | None:
    """An entry with neither `provider` nor `builtin`, read as if the key it has in their place were spelt right:
    `provder: http` is `agents.X.provder: unknown key (did you mean 'provider'?)`, as any other misspelt key, and
    the rest of the entry is checked as that provider's. The entry as it is when no key is such a near miss (it
    then needs one of them); None when one is, and the entry cannot be read without it."""
    from .agents.settings import BuiltinSettings

    known = {info.alias or name for model in (BuiltinSettings, *(p.settings for p in registry.PROVIDERS.values()))
             for name, info in model.model_fields.items()}
    meant = {key: closest(str(key), _KINDS) for key in entry if str(key) not in known}
    misspelt = {key: kind for key, kind in meant.items() if kind is not None}
    if not misspelt:
        return entry
    problems += [f"{prefix}.{key}: unknown key{did_you_mean(str(key), _KINDS)}" for key in misspelt]
    if len(misspelt) > 1:
        return None
    [(key, kind)] = misspelt.items()
    fixed = {kind if name == key else name: value for name, value in entry.items()}
    kinds = registry.PROVIDERS if kind == "provider" else get_args(BuiltinSettings.model_fields[kind].annotation)
    return fixed if fixed[kind] in kinds else None
