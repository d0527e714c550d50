"""`provider: exec` — one subprocess per call: canonical request JSON on stdin, response on stdout."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shlex
import signal
from typing import Any

from pydantic import Field

from ..errors import AgentCallError, ConfigError
from .base import AgentRequest, AgentResponse
from .registry import ProviderContext, ProviderSettings, register_provider

_STDERR_TAIL = 2000


class ExecSettings(ProviderSettings):
    command: list[str] | str
    cwd: str | None = None                      # default: the config file's directory
    env: dict[str, str] = Field(default_factory=dict)


class ExecAgent:
    """Runs the command in its own process group, so a timeout or Ctrl-C kills the agent and its children."""

    def __init__(self, agent_id: str, argv: list[str], cwd: str, env: dict[str, str]) -> None:
        self.id = agent_id
        self._argv = argv
        self._cwd = cwd
        self._env = {**os.environ, **env} if env else None

    async def call(self, request: AgentRequest) -> AgentResponse:
        try:
            proc = await asyncio.create_subprocess_exec(
                *self._argv, cwd=self._cwd, env=self._env, start_new_session=True,
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        except OSError as exc:
            raise AgentCallError(f"cannot start {shlex.join(self._argv)}: {exc.strerror or exc}") from exc
        try:
            stdout, stderr = await proc.communicate(json.dumps(request.to_dict()).encode())
        except BaseException:
            _kill_group(proc)
            with contextlib.suppress(Exception):
                await asyncio.shield(proc.wait())
            raise
        if proc.returncode != 0:
            detail = stderr.decode(errors="replace").strip()[-_STDERR_TAIL:]
            raise AgentCallError(f"{shlex.join(self._argv)} exited with code {proc.returncode}"
                                 + (f": {detail}" if detail else ""))
        return AgentResponse.from_raw(_parse_stdout(stdout.decode(errors="replace")))

    async def aclose(self) -> None:
        return None


def _parse_stdout(text: str) -> Any:
    """JSON if stdout is JSON, else the text itself (a bare string reply)."""
    stripped = text.strip()
    if stripped[:1] in ("{", "[", '"'):
        try:
            return json.loads(stripped)
        except ValueError:
            pass
    return text.rstrip("\n")


def _kill_group(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)


@register_provider("exec", ExecSettings)
def create(agent_id: str, settings: ExecSettings, ctx: ProviderContext) -> ExecAgent:
    argv = shlex.split(settings.command) if isinstance(settings.command, str) else list(settings.command)
    if not argv:
        raise ConfigError(f"agents.{agent_id}.command: must not be empty")
    cwd = ctx.config_dir / settings.cwd if settings.cwd else ctx.config_dir
    return ExecAgent(agent_id, argv, str(cwd), settings.env)
