"""Built-in helper agents — `builtin: validator | simulator | generator`: a carefully written prompt
(`prompts/*.md`, or the user's own file) on an OpenAI-compatible connector, asked for JSON output.

They are ordinary agents (an `OpenAIAgent` with a system prompt): the engine calls them like any other helper, so a
user's own validator, simulator or generator agent is a drop-in replacement.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...errors import ConfigError
from ..settings import BuiltinSettings, OpenAISettings

if TYPE_CHECKING:
    from ..openai import OpenAIAgent
    from ..registry import ProviderContext

__all__ = ["DEFAULT_PARAMS", "ROLES", "BuiltinSettings", "create", "default_prompt", "prompt_text"]

ROLES = ("validator", "simulator", "generator")

# Judges and simulated users should be repeatable, and every reply is read as JSON. `params` in the config win
# (a `null` removes one, for servers that reject `response_format`).
DEFAULT_PARAMS: dict[str, Any] = {"temperature": 0, "response_format": {"type": "json_object"}}


def default_prompt(role: str) -> str:
    """The built-in prompt of a role (shipped with the package)."""
    return resources.files(__package__).joinpath("prompts", f"{role}.md").read_text(encoding="utf-8")


def prompt_text(agent_id: str, settings: BuiltinSettings, config_dir: Path) -> str:
    """The prompt this helper runs with: the user's file when `prompt` names one, else the built-in one."""
    if not settings.prompt:
        return default_prompt(settings.builtin)
    path = config_dir / settings.prompt
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"agents.{agent_id}.prompt: prompt file {settings.prompt} not found in {config_dir}") \
            from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"agents.{agent_id}.prompt: cannot read {path}: {exc}") from exc
    if not text.strip():
        raise ConfigError(f"agents.{agent_id}.prompt: {settings.prompt} is empty")
    return text


def create(agent_id: str, settings: BuiltinSettings, ctx: ProviderContext) -> OpenAIAgent:
    """The helper as an OpenAI-compatible agent with its prompt as the system message. Raises ConfigError."""
    from ..openai import build_openai_agent

    params = {**DEFAULT_PARAMS, **settings.params}
    openai_settings = OpenAISettings(
        provider="openai", description=settings.description, connector=settings.connector,
        base_url=settings.base_url, api_key=settings.api_key, model=settings.model, headers=settings.headers,
        params={key: value for key, value in params.items() if value is not None}, stream=settings.stream)
    return build_openai_agent(agent_id, openai_settings, ctx, system=prompt_text(agent_id, settings, ctx.config_dir))
