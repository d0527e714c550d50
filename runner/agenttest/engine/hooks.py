"""Before/After hooks per case and BeforeAll/AfterAll per run: Python functions referenced as module.Function."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import HookError
from ..refs import resolve_callable
from ..threads import call_user
from ..user_errors import describe
from ..workspace import git_root


class Hooks:
    """Finds hook functions in the suite's directory, its `src/`, then the agent's directory and its `src/` (in
    Yao's layout `assistants/<name>/src/env_test.*`, above the suite's `tests/`), and calls them."""

    def __init__(self, agent_dir: Path | None) -> None:
        self._agent_dir = agent_dir      # when a case has none of its own: the run's agent, or the config's

    def resolve(self, ref: str, base_dir: Path, agent_dir: Path | None = None) -> Callable[..., Any]:
        """The hook function `ref` names. Raises HookError when no file or no such function is found, listing
        every directory it looked in."""
        dirs = [base_dir, base_dir / "src"]
        agent_dir = agent_dir or self._agent_dir
        if agent_dir is not None:
            dirs += [agent_dir, agent_dir / "src"]
        return resolve_callable(ref, dirs, what="hook", root=git_root(base_dir), test_suffix=True)

    async def call(self, ref: str, base_dir: Path, *args: Any, agent_dir: Path | None = None) -> Any:
        """Run a hook with as many of `args` as it takes (see `call_user`) and unwrap a `{"data": …}` return.

        Raises HookError, also when the hook raised or called `sys.exit`."""
        func = self.resolve(ref, base_dir, agent_dir)
        try:
            returned = await call_user(func, *args)
        except Exception as exc:
            raise HookError(f"hook {ref} failed: {describe(exc)}") from exc
        if isinstance(returned, dict) and "data" in returned:
            return returned["data"]
        return returned
