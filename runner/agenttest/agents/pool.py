"""Every agent a run talks to — the target and its helpers (judges, simulators, generators) — built once from
agenttest.yaml and closed once.

Agents are built before any case runs, so a configuration mistake exits 2 and every credential is registered
(`::add-mask::`) while the log is still ours. Connections open lazily, on the run's event loop.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, UsageError
from ..hints import did_you_mean
from ..project import NO_CONFIG, ProjectConfig
from . import builtin, registry
from .base import Agent
from .builtin import is_builtin
from .openai_files import read_system, read_tools

if TYPE_CHECKING:  # the wrappers are imported when a run records, replays or meters (`validate` needs none)
    from .meter import Meter
    from .replay import Cassettes
    from .settings import BuiltinSettings

# The settings that never count towards an agent's identity (they are secrets, not behaviour).
_SECRET_FIELDS = {"api_key", "headers", "env"}


class AgentPool:
    """The agents of one run, by id. `target` and `helper` build an agent on first use and return the same one
    after; `aclose` closes all of them."""

    def __init__(self, project: ProjectConfig, *, parallel: int = 4, retries: int = 2,
                 connector_override: str | None = None, meter: Meter | None = None,
                 cassettes: Cassettes | None = None, replay: bool = False) -> None:
        self.project = project
        self._parallel = parallel
        self._retries = retries
        self._connector_override = connector_override
        self._meter = meter
        self._cassettes = cassettes
        self._replay = replay
        self._agents: dict[str, Agent] = {}

    def target(self, agent_id: str | None) -> Agent:
        """The agent under test. ConfigError/UsageError when there is no config, no id, no such agent, or the id
        names a helper."""
        project = self.project
        if project.path is None:
            raise ConfigError(f"{NO_CONFIG}; create one that defines the agent under test: `agenttest init` "
                              "writes one")
        if not agent_id:
            targets = [name for name, settings in project.agents.items() if not is_builtin(settings)]
            raise UsageError(f"no target agent: pass -n/--name or set defaults.name in {project.display_path} "
                             f"(agents: {', '.join(targets) or 'none'})")
        settings = self._settings(agent_id)
        if is_builtin(settings):
            raise ConfigError(f"agent {agent_id!r} is a builtin {settings.builtin} helper, not an agent to test")
        return self._build(agent_id, settings, connector_override=self._connector_override)

    def helper(self, agent_id: str, *, asked_by: str = "", otherwise: str = "") -> Agent:
        """A helper agent: any agent of the config, built-in or not. ConfigError when it is not defined or cannot
        be built (one for a `${VAR}` that is not set says it is `asked_by` whom, and `otherwise` what to do)."""
        if self.project.path is None:
            raise ConfigError(f"helper agent {agent_id!r} needs an agenttest.yaml that defines it ({NO_CONFIG}; "
                              "`agenttest init` writes one)")
        return self._build(agent_id, self._settings(agent_id), connector_override=None, asked_by=asked_by,
                           otherwise=otherwise)

    def has_variables(self, agent_id: str) -> bool:
        """Whether every `${VAR}` the agent needs is set (a fork or a pre-commit hook may have none of them)."""
        settings = self.project.agents.get(agent_id)
        return not self.project.missing_variables(agent_id, uses_connectors=hasattr(settings, "connector"))

    def get(self, agent_id: str) -> Agent:
        """An agent already built by `target` or `helper`."""
        return self._agents[agent_id]

    def info(self, agent_id: str) -> dict[str, Any]:
        """What generators are told about an agent: its id, description and tools."""
        settings = self._settings(agent_id)
        tools = getattr(settings, "tools", None)
        return {"id": agent_id, "description": settings.description,
                "tools": read_tools(agent_id, tools, self.project.directory)}

    def cacheable(self, agent_id: str) -> bool:
        """Whether a helper's replies may be served from the cache: a model behind an endpoint (`builtin:`,
        `provider: openai` or `http`), whose behaviour the fingerprint captures. Never a `python` or `exec` helper:
        its code can change without any setting changing, and running it again costs nothing."""
        settings = self._settings(agent_id)
        return is_builtin(settings) or settings.provider in ("openai", "http")

    def fingerprint(self, agent_id: str) -> str:
        """A digest of what makes an agent answer the way it does (model, endpoint, parameters, prompt, tools;
        never its credentials), so a cached reply is not served once any of them changed."""
        agent = self._agents.get(agent_id)
        identity = getattr(agent, "identity", None)
        settings = self._settings(agent_id)
        described: Any = identity() if callable(identity) else settings.model_dump(exclude=_SECRET_FIELDS)
        text = json.dumps({"id": agent_id, "agent": described}, sort_keys=True, default=str)
        import hashlib  # here: checking a suite (`validate`) needs none of it

        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]

    def credentials(self, agent_id: str, connector: str | None = None) -> list[str]:
        """The settings holding a secret `${VAR}` that a helper answers with — its own, and those of its connector
        and of the connector a request picks — as expanded: what its cache entries are authenticated with. Not a
        key written in the file, which a pull request can read."""
        settings = self._settings(agent_id)
        places = [f"agents.{agent_id}."] + [f"connectors.{name}." for name in
                                            {getattr(settings, "connector", None), connector} if name]
        return sorted(setting.value for place, setting in self.project.secret_settings.items()
                      if place.startswith(tuple(places)))

    async def aclose(self) -> None:
        """Close every agent's connections (and processes)."""
        agents, self._agents = list(self._agents.values()), {}
        for agent in agents:
            await agent.aclose()

    def _settings(self, agent_id: str) -> registry.ProviderSettings | BuiltinSettings:
        project = self.project
        settings = project.agents.get(agent_id)
        if settings is None:
            hint = did_you_mean(agent_id, project.agents) or f" (defined: {', '.join(project.agents) or 'none'})"
            raise ConfigError(f"agent {agent_id!r} is not defined in {project.display_path}{hint}")
        return settings

    def price(self, agent_id: str, connector: str | None = None) -> registry.Price | None:
        """What the agent's calls cost: its own `price`, else that of the connector it uses (`connector`, a
        request's override, else its own); None when unknown."""
        settings = self._settings(agent_id)
        if settings.price is not None:
            return settings.price
        name = connector or getattr(settings, "connector", None)
        found = self.project.connectors.get(name) if name else None
        return found.price if found is not None else None

    def _model_prompt(self, agent_id: str, settings: registry.ProviderSettings | BuiltinSettings) -> str | None:
        """What a model agent (`builtin:`, `provider: openai`) adds to every request — its system prompt and tool
        definitions — read from the config as a replay reads it too; None for an agent that is no model."""
        directory = self.project.directory
        try:
            if is_builtin(settings):
                return builtin.prompt_text(agent_id, settings, directory)
            if settings.provider != "openai":
                return None
            tools = read_tools(agent_id, getattr(settings, "tools", None), directory)
            system = read_system(agent_id, getattr(settings, "system", None), directory) or ""
        except ConfigError:          # a replay on a checkout without the file: its estimate leaves it out
            return ""
        return system + (json.dumps(tools, ensure_ascii=False) if tools else "")

    def token_limit(self, agent_id: str, connector: str | None = None) -> str | None:
        """The reply-length limit the agent's requests carry (`max_tokens 16`), from its `params` over those of the
        connector it uses (`connector`, a request's override, else its own; an openai agent switched to another
        connector has that connector's params alone); None when none is set there."""
        settings = self._settings(agent_id)
        own = getattr(settings, "connector", None)
        if not hasattr(settings, "params"):
            return None
        found = self.project.connectors.get(connector or own or "")
        params = dict(found.params) if found is not None else {}
        if not connector or connector == own or is_builtin(settings):
            params.update(settings.params)
        for name in ("max_completion_tokens", "max_tokens"):
            if params.get(name) is not None:
                return f"{name} {params[name]}"
        return None

    def _build(self, agent_id: str, settings: registry.ProviderSettings | BuiltinSettings,
               connector_override: str | None, asked_by: str = "", otherwise: str = "") -> Agent:
        if agent_id in self._agents:
            return self._agents[agent_id]
        agent: Agent
        if self._replay and self._cassettes is not None:     # no connection, no credential, no variable needed
            from .recorded_config import recorded_config  # a replay's and a recording's only
            from .replay import ReplayingAgent

            agent = ReplayingAgent(agent_id, self._cassettes, recorded_config(self.project, agent_id))
        else:
            self.project.check_variables(agent_id, uses_connectors=hasattr(settings, "connector"), asked_by=asked_by,
                                         otherwise=otherwise)
            context = registry.ProviderContext(config_dir=self.project.directory, pool_size=self._parallel,
                                               retries=self._retries, connectors=self.project.connectors,
                                               connector_override=connector_override)
            try:
                if is_builtin(settings):
                    agent = builtin.create(agent_id, settings, context)
                else:
                    agent = registry.PROVIDERS[settings.provider].create(agent_id, settings, context)
            except ConfigError as exc:       # `agents.<id>.…: …` is a place in the config file: name it
                if exc.where.file is None and self.project.path is not None and exc.message.startswith("agents."):
                    exc.where = replace(exc.where, file=self.project.display_path)
                raise
            if self._cassettes is not None:
                from .recorded_config import recorded_config
                from .replay import RecordingAgent

                agent = RecordingAgent(agent, self._cassettes, recorded_config(self.project, agent_id))
        if self._meter is not None:     # a replayed call is charged what it used when recorded: the same budget
            from .meter import MeteredAgent

            agent = MeteredAgent(agent, self._meter,
                                 lambda request: self.price(agent_id, request.options.get("connector")),
                                 prompt=self._model_prompt(agent_id, settings))
        self._agents[agent_id] = agent
        return agent
