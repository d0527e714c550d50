"""`provider: python` — an in-process callable (sync or async) that gets the canonical request dict."""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Callable
from typing import Any

from ..errors import AgentCallError, ConfigError
from ..threads import run_in_thread
from .base import AgentRequest, AgentResponse
from .registry import ProviderContext, ProviderSettings, register_provider


class PythonSettings(ProviderSettings):
    callable: str   # `package.module:function`, importable from the config file's directory


class PythonAgent:
    """Calls a Python function in this process. A sync function runs in a worker thread so the loop stays free;
    on timeout the thread cannot be killed and finishes in the background (its result is discarded)."""

    def __init__(self, agent_id: str, func: Callable[..., Any]) -> None:
        self.id = agent_id
        self._func = func

    async def call(self, request: AgentRequest) -> AgentResponse:
        try:
            if inspect.iscoroutinefunction(self._func):
                raw = await self._func(request.to_dict())
            else:
                raw = await run_in_thread(self._func, request.to_dict())
                if inspect.isawaitable(raw):
                    raw = await raw
        except AgentCallError:
            raise
        except Exception as exc:
            raise AgentCallError(f"agent raised {type(exc).__name__}: {exc}") from exc
        return AgentResponse.from_raw(raw)

    async def aclose(self) -> None:
        return None


@register_provider("python", PythonSettings)
def create(agent_id: str, settings: PythonSettings, ctx: ProviderContext) -> PythonAgent:
    module_name, _, func_name = settings.callable.partition(":")
    if not module_name or not func_name:
        raise ConfigError(f"agents.{agent_id}.callable: {settings.callable!r} must look like module:function")
    config_dir = str(ctx.config_dir)
    if config_dir not in sys.path:
        sys.path.insert(0, config_dir)
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:
        raise ConfigError(f"agents.{agent_id}.callable: cannot import {module_name!r}: "
                          f"{type(exc).__name__}: {exc}") from exc
    func = getattr(module, func_name, None)
    if not callable(func):
        raise ConfigError(f"agents.{agent_id}.callable: {module_name!r} has no callable {func_name!r}")
    return PythonAgent(agent_id, func)
