"""Agents are transports: one canonical request in, one canonical response out."""

from .base import Agent, AgentRequest, AgentResponse, ToolCall, ToolExecution

__all__ = ["Agent", "AgentRequest", "AgentResponse", "ToolCall", "ToolExecution"]
