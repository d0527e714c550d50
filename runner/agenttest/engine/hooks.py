"""Before/After hooks per case and BeforeAll/AfterAll per run: Python functions referenced as module.Function."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import HookError
from ..refs import resolve_callable
from ..threads import run_in_thread


class Hooks:
    """Finds hook functions in the suite's directory, its `src/`, then the agent's directory, and calls them."""

    def __init__(self, agent_dir: Path | None) -> None:
        self._agent_dir = agent_dir

    def resolve(self, ref: str, base_dir: Path) -> Callable[..., Any]:
        dirs = [base_dir, base_dir / "src"]
        if self._agent_dir is not None:
            dirs.append(self._agent_dir)
        return resolve_callable(ref, dirs, what="hook")

    async def call(self, ref: str, base_dir: Path, *args: Any) -> Any:
        """Run a hook (sync ones in a worker thread) and unwrap a `{"data": …}` return. Raises HookError."""
        func = self.resolve(ref, base_dir)
        try:
            if inspect.iscoroutinefunction(func):
                returned = await func(*args)
            else:
                returned = await run_in_thread(func, *args)
        except Exception as exc:
            raise HookError(f"hook {ref} failed: {type(exc).__name__}: {exc}") from exc
        if isinstance(returned, dict) and "data" in returned:
            return returned["data"]
        return returned
