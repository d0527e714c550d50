"""Built-in helper agents — `builtin: validator | simulator | generator`: a carefully written prompt
(`prompts/*.md`, or the user's own file) on an OpenAI-compatible connector, asked for JSON output.

They are ordinary agents (an `OpenAIAgent` with a system prompt): the engine calls them like any other helper, so a
user's own validator, simulator or generator agent is a drop-in replacement.
"""

from __future__ import annotations

import re
import sys
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeGuard

from ...errors import ConfigError
from ..base import AgentRequest, AgentResponse
from ..openai_files import config_file

if TYPE_CHECKING:
    from ..openai import OpenAIAgent
    from ..registry import ProviderContext
    from ..settings import BuiltinSettings

__all__ = ["DEFAULT_PARAMS", "ROLES", "SAMPLING_TEMPERATURE", "BuiltinSettings", "SamplingHelper", "create",
           "default_prompt", "example_placeholders", "is_builtin", "is_sample", "prompt_text"]

ROLES = ("validator", "simulator", "generator")

# Judges and simulated users should be repeatable, and every reply is read as JSON. `params` in the config win
# (a `null` removes one, for servers that reject `response_format`).
DEFAULT_PARAMS: dict[str, Any] = {"temperature": 0, "response_format": {"type": "json_object"}}
# A judge asked N times (`options.samples`) samples at this temperature unless its `params` set one: at 0 the N
# answers would be one answer paid N times.
SAMPLING_TEMPERATURE = 0.7


def is_builtin(settings: object) -> TypeGuard[BuiltinSettings]:
    """Whether an agent's settings are a `builtin:` helper's: never while no settings model is loaded (an agent of
    the plain shapes is read without them, project.PlainSettings, and pydantic need not load for this)."""
    models = sys.modules.get(f"{__package__.rpartition('.')[0]}.settings")
    return models is not None and isinstance(settings, models.BuiltinSettings)


def default_prompt(role: str) -> str:
    """The built-in prompt of a role (shipped with the package)."""
    from importlib import resources  # here: importlib.resources loads tempfile, shutil, random… (issue #27)

    return resources.files(__package__).joinpath("prompts", f"{role}.md").read_text(encoding="utf-8")


@cache
def example_placeholders() -> frozenset[str]:
    """The texts of the `"<…>"` placeholders in the built-in prompts' example replies, without their brackets and
    in lower case: a reply holding one copied the example instead of answering (weak models do)."""
    return frozenset(found.strip().lower() for role in ROLES
                     for found in re.findall(r'"<([^"<>]+)>"', default_prompt(role)))


def prompt_text(agent_id: str, settings: BuiltinSettings, config_dir: Path) -> str:
    """The prompt this helper runs with: the user's file when `prompt` names one, else the built-in one."""
    if not settings.prompt:
        return default_prompt(settings.builtin)
    path = config_dir / settings.prompt
    if not path.exists():
        raise ConfigError(f"agents.{agent_id}.prompt: prompt file {settings.prompt} not found in {config_dir}")
    try:
        text = config_file(path, settings.prompt, config_dir, f"agents.{agent_id}.prompt").decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"agents.{agent_id}.prompt: cannot read {path}: {exc}") from exc
    if not text.strip():
        raise ConfigError(f"agents.{agent_id}.prompt: {settings.prompt} is empty")
    return text


def create(agent_id: str, settings: BuiltinSettings, ctx: ProviderContext) -> OpenAIAgent | SamplingHelper:
    """The helper as an OpenAI-compatible agent with its prompt as the system message — with a twin at
    SAMPLING_TEMPERATURE for repeated samples, unless its `params` set a temperature. Raises ConfigError."""
    from ..openai import build_openai_agent
    from ..settings import OpenAISettings

    system = prompt_text(agent_id, settings, ctx.config_dir)

    def build(params: dict[str, Any]) -> OpenAIAgent:
        openai_settings = OpenAISettings(
            provider="openai", description=settings.description, connector=settings.connector,
            base_url=settings.base_url, api_key=settings.api_key, model=settings.model, headers=settings.headers,
            params=_present(params), stream=settings.stream)
        # On whichever connector an assertion switches it to, the helper keeps its JSON mode and temperature.
        connectors = {name: connector.model_copy(update={"params": _present({**connector.params, **params})})
                      for name, connector in ctx.connectors.items()}
        return build_openai_agent(agent_id, openai_settings, replace(ctx, connectors=connectors), system=system)

    params = {**DEFAULT_PARAMS, **settings.params}
    if "temperature" in settings.params:
        return build(params)
    return SamplingHelper(build(params), build({**params, "temperature": SAMPLING_TEMPERATURE}))


def __getattr__(name: str) -> Any:
    # BuiltinSettings is a pydantic model: imported when asked for (reading the prompts needs none of it).
    if name == "BuiltinSettings":
        from ..settings import BuiltinSettings

        return BuiltinSettings
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _present(params: dict[str, Any]) -> dict[str, Any]:
    """The parameters without those set to null (a `null` removes a default, for servers that reject it)."""
    return {key: value for key, value in params.items() if value is not None}


def is_sample(request: AgentRequest) -> bool:
    """Whether a helper is asked this as one of several samples (`options.metadata.samples` > 1)."""
    metadata = request.options.get("metadata")
    samples = metadata.get("samples") if isinstance(metadata, dict) else None
    return isinstance(samples, int) and samples > 1


class SamplingHelper:
    """A built-in helper that answers a repeated sample (`is_sample`) at SAMPLING_TEMPERATURE, anything else at
    its own temperature."""

    def __init__(self, exact: OpenAIAgent, sampling: OpenAIAgent) -> None:
        self.id = exact.id
        self._exact = exact
        self._sampling = sampling

    async def call(self, request: AgentRequest) -> AgentResponse:
        return await (self._sampling if is_sample(request) else self._exact).call(request)

    async def aclose(self) -> None:
        await self._exact.aclose()
        await self._sampling.aclose()

    def identity(self) -> dict[str, Any]:
        return {**self._exact.identity(), "sampling_temperature": SAMPLING_TEMPERATURE}
