"""Agents are transports: one canonical request in, one canonical response out.

Importing this package loads no provider: `registry.PROVIDERS` imports each one when its first agent is built."""

from .base import Agent, AgentRequest, AgentResponse, ToolCall, ToolExecution

__all__ = ["Agent", "AgentRequest", "AgentResponse", "ToolCall", "ToolExecution"]
