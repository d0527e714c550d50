"""Providers by name: each declares the settings it accepts in agenttest.yaml and builds an Agent from them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .base import Agent


class Price(BaseModel):
    """What a model costs, in USD per million tokens, for the run budget (`--max-cost`) and the cost by role."""

    model_config = ConfigDict(extra="forbid")

    input: float = Field(ge=0)
    output: float = Field(ge=0)


class ProviderSettings(BaseModel):
    """Fields every agent entry may have; providers subclass this with their own (unknown keys are errors)."""

    model_config = ConfigDict(extra="forbid")

    provider: str
    description: str = ""                              # given to generators
    price: Price | None = None                         # overrides its connector's price; 0/0 for a free agent
    tools: str | list[dict[str, Any]] | None = None    # OpenAI tool schema (a JSON file, or inline): given to
                                                       # generators; the openai provider also offers them


class ConnectorSettings(BaseModel):
    """A named OpenAI-compatible endpoint (`connectors:` in agenttest.yaml)."""

    model_config = ConfigDict(extra="forbid")

    type: str = "openai"
    base_url: str = "https://api.openai.com/v1"
    api_key: str | None = None
    model: str
    headers: dict[str, str] = Field(default_factory=dict)
    params: dict[str, Any] = Field(default_factory=dict)
    price: Price | None = None              # USD per 1M tokens: {input, output}


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
    """A registered provider: its name in agenttest.yaml, the settings it accepts, and its factory."""

    name: str
    settings: type[ProviderSettings]
    create: Factory


PROVIDERS: dict[str, Provider] = {}


def register_provider(name: str, settings: type[ProviderSettings]) -> Callable[[Factory], Factory]:
    """Register `create(agent_id, settings, ctx) -> Agent` for `provider: <name>` entries."""

    def register(create: Factory) -> Factory:
        PROVIDERS[name] = Provider(name=name, settings=settings, create=create)
        return create

    return register
