"""What agenttest.yaml accepts, and each provider in it, as pydantic models — kept apart from the providers
themselves, so reading and validating a config loads no HTTP client, subprocess or provider code, and imported only
when a config is checked by them (`agenttest validate` of a plain config needs none: plain_settings.py).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class Price(BaseModel):
    """What a model costs, in USD per million tokens, for the run budget (`--max-cost`) and the cost by role."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    input: float = Field(ge=0)
    output: float = Field(ge=0)


class ProviderSettings(BaseModel):
    """Fields every agent entry may have; providers subclass this with their own (unknown keys are errors)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    provider: str
    description: str = ""                              # given to generators
    price: Price | None = None                         # overrides its connector's price; 0/0 for a free agent
    tools: str | list[dict[str, Any]] | None = None    # OpenAI tool schema (a JSON file, or inline): given to
                                                       # generators; the openai provider also offers them
    input_tools: list[str] = Field(default_factory=list)   # tools whose call asks the user (awaiting input), besides
                                                           # request_confirmation, ask_user and get_user_input


class ConnectorSettings(BaseModel):
    """A named OpenAI-compatible endpoint (`connectors:` in agenttest.yaml)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    type: str = "openai"
    base_url: str = "https://api.openai.com/v1"
    api_key: str | None = None
    model: str
    headers: dict[str, str] = Field(default_factory=dict)
    params: dict[str, Any] = Field(default_factory=dict)
    price: Price | None = None              # USD per 1M tokens: {input, output}


class OpenAISettings(ProviderSettings):
    """A `provider: openai` entry of agenttest.yaml."""

    connector: str | None = None          # a name under `connectors:`; the inline fields below override it
    base_url: str | None = None
    api_key: str | None = None
    model: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    params: dict[str, Any] = Field(default_factory=dict)
    system: str | None = None             # the prompt, or a file relative to the config's directory
    stream: bool = False
    mock_tools: dict[str, Any] = Field(default_factory=dict)      # tool name → the result its calls get
    tool_callables: dict[str, str] = Field(default_factory=dict)  # tool name → `module:function` computing it
    max_tool_steps: int = Field(10, ge=1)  # model calls in one turn's tool loop


class ResponseMapping(BaseModel):
    """JSONPath of each canonical field in the agent's reply. The defaults read a canonical response; `null` stops
    a field from being read."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    content: str | None = "$.content"
    tool_calls: str | None = "$.tool_calls"
    tools: str | None = "$.tools"
    data: str | None = "$.data"
    awaiting_input: str | None = "$.awaiting_input"
    finish_reason: str | None = "$.finish_reason"
    model: str | None = "$.model"
    usage: str | None = "$.usage"


class HttpSettings(ProviderSettings):
    """A `provider: http` entry of agenttest.yaml."""

    url: str
    method: Literal["POST", "PUT", "PATCH"] = "POST"
    headers: dict[str, str] = Field(default_factory=dict)
    body: Any = None                      # a template; default: the canonical request
    response: ResponseMapping = Field(default_factory=ResponseMapping)
    stream: Literal["sse"] | None = None  # ask for server-sent events (`Accept: text/event-stream`)


class PythonSettings(ProviderSettings):
    """A `provider: python` entry of agenttest.yaml."""

    callable: str   # `package.module:function`, importable from the config file's directory


class ExecSettings(ProviderSettings):
    """A `provider: exec` entry of agenttest.yaml."""

    command: list[str] | str
    cwd: str | None = None                      # default: the config file's directory
    env: dict[str, str] = Field(default_factory=dict)


class BuiltinSettings(BaseModel):
    """A `builtin:` entry of agenttest.yaml: the role, where the model is (a connector and/or inline fields, as for
    `provider: openai`), and optionally a prompt file that replaces the built-in prompt."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    builtin: Literal["validator", "simulator", "generator"]
    description: str = ""
    connector: str | None = None
    base_url: str | None = None
    api_key: str | None = None
    model: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    params: dict[str, Any] = Field(default_factory=dict)
    stream: bool = False
    prompt: str | None = None     # a file, relative to the config's directory
    price: Price | None = None    # overrides its connector's price


class ConfigFile(BaseModel):
    """agenttest.yaml's top level (`project.load_project` checks each agent's entry by its own model)."""

    model_config = ConfigDict(extra="forbid")

    version: Literal[1] = 1
    defaults: dict[str, Any] = Field(default_factory=dict)
    connectors: dict[str, ConnectorSettings] = Field(default_factory=dict)
    agents: dict[str, dict[str, Any]] = Field(default_factory=dict)
