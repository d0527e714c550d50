"""`provider: python` — an in-process callable (sync or async) that gets the canonical request dict."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..bounds import from_python
from ..errors import AgentCallError, ConfigError
from ..threads import call_user
from ..user_errors import describe
from .base import AgentRequest, AgentResponse
from .registry import ProviderContext

if TYPE_CHECKING:
    from .settings import PythonSettings


class PythonAgent:
    """Calls a Python function in this process. A sync function runs in a worker thread so the loop stays free;
    on timeout the thread cannot be killed and finishes in the background (its result is discarded)."""

    def __init__(self, agent_id: str, func: Callable[..., Any]) -> None:
        self.id = agent_id
        self._func = func

    async def call(self, request: AgentRequest) -> AgentResponse:
        """Call the function with the request dict; whatever it raises (sys.exit too) is an AgentCallError."""
        try:
            raw = await call_user(self._func, request.to_dict(), deadline=request.deadline)
        except AgentCallError:
            raise
        except Exception as exc:
            raise AgentCallError(f"agent raised {describe(exc)}") from exc
        if raw is None:   # almost always a function that forgot its `return`
            raise AgentCallError("agent returned None: return the reply (a string or a response object)")
        try:
            raw = from_python(raw)
        except ValueError as exc:
            raise AgentCallError(f"agent reply {exc}") from None
        return AgentResponse.from_raw(raw)

    async def aclose(self) -> None:
        """Nothing to release."""
        return None



def create(agent_id: str, settings: PythonSettings, ctx: ProviderContext) -> PythonAgent:
    """Import `module:function` from the config file's directory. Raises ConfigError when it cannot."""
    return PythonAgent(agent_id, import_callable(f"agents.{agent_id}.callable", settings.callable, ctx.config_dir))


def import_callable(where: str, reference: str, config_dir: Path) -> Callable[..., Any]:
    """The function `module:function` names, imported from `config_dir` (an agent's `callable`, a tool's entry in
    `tool_callables`). Raises ConfigError naming `where` when it cannot be."""
    module_name, _, func_name = reference.partition(":")
    if not module_name or not func_name:
        raise ConfigError(f"{where}: {reference!r} must look like module:function")
    directory = str(config_dir)
    if directory not in sys.path:
        sys.path.insert(0, directory)
    try:
        module = importlib.import_module(module_name)
    except (Exception, SystemExit) as exc:   # a module that runs argparse or sys.exit on import
        sys.modules.pop(module_name, None)
        raise ConfigError(f"{where}: cannot import {module_name!r}: {describe(exc)}") from exc
    # The config's own file, when there is one, must be what was imported: a module of that name imported before
    # (the standard library's `types`, another project's `agent` in the same process) would be called instead.
    mine = Path(directory, *module_name.split(".")).with_suffix(".py")
    found = getattr(module, "__file__", None)
    if mine.is_file() and (found is None or Path(found).resolve() != mine.resolve()):
        imported = f"is imported from {found}" if found else "is a module built into Python"
        raise ConfigError(f"{where}: {module_name!r} {imported}, not {mine}: a module of that name was found first "
                          "(rename your file)")
    func = getattr(module, func_name, None)
    if not callable(func):
        raise ConfigError(f"{where}: {module_name!r} has no callable {func_name!r}")
    return func
