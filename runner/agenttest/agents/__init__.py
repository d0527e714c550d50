"""Agents are transports: one canonical request in, one canonical response out."""

from . import exec as _exec  # noqa: F401  (registers the provider)
from . import http as _http  # noqa: F401
from . import openai as _openai  # noqa: F401
from . import python as _python  # noqa: F401
from .base import Agent, AgentRequest, AgentResponse, ToolCall, ToolExecution

__all__ = ["Agent", "AgentRequest", "AgentResponse", "ToolCall", "ToolExecution"]
