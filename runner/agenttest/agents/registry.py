"""Providers by name: each declares the settings it accepts in agenttest.yaml and builds an Agent from them.

The built-in providers are a table of names, settings and the module that builds their agents: the module (and the
HTTP client or subprocess code it needs) is imported only when an agent of that provider is built, and the settings
models (pydantic) when a config is checked by them, so reading a config stays cheap.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .base import Agent

if TYPE_CHECKING:
    from .settings import ConnectorSettings, Price, ProviderSettings

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


class Provider:
    """A provider: its name in agenttest.yaml, the settings it accepts and its factory — each a class or function,
    or the `module:name` that holds it (imported on first use)."""

    def __init__(self, name: str, settings: type[ProviderSettings] | str, factory: Factory | str) -> None:
        self.name = name
        self._settings = settings
        self.factory = factory

    @property
    def settings(self) -> type[ProviderSettings]:
        if isinstance(self._settings, str):
            self._settings = _imported(self._settings)
        return self._settings

    @property
    def settings_name(self) -> str | None:
        """The name of its settings model when that is one of agents.settings (read without importing it: a
        built-in provider's), else None."""
        if isinstance(self._settings, str):
            module, _, name = self._settings.partition(":")
            return name if module == ".settings" else None
        return self._settings.__name__ if self._settings.__module__ == f"{__package__}.settings" else None

    def create(self, agent_id: str, settings: Any, ctx: ProviderContext) -> Agent:
        if isinstance(self.factory, str):
            self.factory = _imported(self.factory)
        return self.factory(agent_id, settings, ctx)

    def __repr__(self) -> str:
        return f"Provider(name={self.name!r}, settings={self._settings!r}, factory={self.factory!r})"


def _imported(reference: str) -> Any:
    module, _, name = reference.partition(":")
    return getattr(importlib.import_module(module, __package__), name)


PROVIDERS: dict[str, Provider] = {
    "exec": Provider("exec", ".settings:ExecSettings", ".exec:create"),
    "http": Provider("http", ".settings:HttpSettings", ".http:create"),
    "openai": Provider("openai", ".settings:OpenAISettings", ".openai:create"),
    "python": Provider("python", ".settings:PythonSettings", ".python:create"),
}


def register_provider(name: str, settings: type[ProviderSettings]) -> Callable[[Factory], Factory]:
    """Register `create(agent_id, settings, ctx) -> Agent` for `provider: <name>` entries."""

    def register(create: Factory) -> Factory:
        PROVIDERS[name] = Provider(name=name, settings=settings, factory=create)
        return create

    return register


def __getattr__(name: str) -> Any:
    # The settings models this module has always offered (`registry.ConnectorSettings`), imported when asked for.
    if name in ("ConnectorSettings", "Price", "ProviderSettings"):
        return getattr(importlib.import_module(".settings", __package__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
