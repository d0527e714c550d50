"""Providers by name: each declares the settings it accepts in agenttest.yaml and builds an Agent from them.

The built-in providers are a table of names, settings and the module that builds their agents: the module (and the
HTTP client or subprocess code it needs) is imported only when an agent of that provider is built, so reading a
config stays cheap.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .base import Agent
from .settings import (
    ConnectorSettings,
    ExecSettings,
    HttpSettings,
    OpenAISettings,
    Price,
    ProviderSettings,
    PythonSettings,
)

__all__ = ["PROVIDERS", "ConnectorSettings", "Price", "Provider", "ProviderContext", "ProviderSettings",
           "register_provider"]


@dataclass
class ProviderContext:
    """What a provider may need beyond its own settings."""

    config_dir: Path
    pool_size: int = 4
    retries: int = 2
    connectors: dict[str, ConnectorSettings] = field(default_factory=dict)
    connector_override: str | None = None


Factory = Callable[[str, Any, ProviderContext], Agent]


@dataclass
class Provider:
    """A provider: its name in agenttest.yaml, the settings it accepts, and its factory — a function, or the
    `module:function` that holds it (imported on first use)."""

    name: str
    settings: type[ProviderSettings]
    factory: Factory | str

    def create(self, agent_id: str, settings: Any, ctx: ProviderContext) -> Agent:
        if isinstance(self.factory, str):
            module, _, function = self.factory.partition(":")
            self.factory = getattr(importlib.import_module(module, __package__), function)
        return self.factory(agent_id, settings, ctx)


PROVIDERS: dict[str, Provider] = {
    "exec": Provider("exec", ExecSettings, ".exec:create"),
    "http": Provider("http", HttpSettings, ".http:create"),
    "openai": Provider("openai", OpenAISettings, ".openai:create"),
    "python": Provider("python", PythonSettings, ".python:create"),
}


def register_provider(name: str, settings: type[ProviderSettings]) -> Callable[[Factory], Factory]:
    """Register `create(agent_id, settings, ctx) -> Agent` for `provider: <name>` entries."""

    def register(create: Factory) -> Factory:
        PROVIDERS[name] = Provider(name=name, settings=settings, factory=create)
        return create

    return register
