"""`provider: exec` — one subprocess per call: canonical request JSON on stdin, response on stdout."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shlex
import signal
import subprocess
import sys
from typing import Any

from ..errors import AgentCallError, ConfigError
from ..secrets import mask
from .base import AgentRequest, AgentResponse
from .registry import ProviderContext
from .replies import json_or_text
from .settings import ExecSettings

_STDERR_TAIL = 2000
_READ_LIMIT = 2 ** 16   # asyncio's default buffer limit for subprocess pipes


class ExecAgent:
    """Runs the command in its own process group and kills the whole group when the call ends — on success, failure,
    timeout or Ctrl-C — so no child the agent started outlives its call. (On Windows only the agent itself.)"""

    def __init__(self, agent_id: str, argv: list[str], cwd: str, env: dict[str, str]) -> None:
        self.id = agent_id
        self._argv = argv
        self._cwd = cwd
        self._env = {**os.environ, **env} if env else None

    async def call(self, request: AgentRequest) -> AgentResponse:
        """Run the command once: the request on stdin, the reply on stdout; a non-zero exit is an AgentCallError
        quoting the end of stderr."""
        proc, exited, transport = await self._start()
        try:
            stdout, stderr = await _exchange(proc, exited, json.dumps(request.to_dict()).encode())
        finally:    # closed here, not by the garbage collector, which may only get to it once the loop is closed
            transport.close()
        if proc.returncode != 0:
            detail = mask(stderr.decode(errors="replace")).strip()[-_STDERR_TAIL:]   # masked before it is cut
            raise AgentCallError(f"{shlex.join(self._argv)} exited with code {proc.returncode}"
                                 + (f": {detail}" if detail else ""))
        return AgentResponse.from_raw(json_or_text(stdout.decode(errors="replace").rstrip("\n")))

    async def aclose(self) -> None:
        """Nothing to release: every call's process is gone when the call returns."""
        return None

    async def _start(self) -> tuple[asyncio.subprocess.Process, asyncio.Future[None], asyncio.SubprocessTransport]:
        """The running agent, a future done when it exits, and its transport."""
        if sys.platform == "win32":
            group: dict[str, Any] = {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}
        else:
            group = {"start_new_session": True}
        loop = asyncio.get_running_loop()
        pipe = asyncio.subprocess.PIPE
        try:
            transport, protocol = await loop.subprocess_exec(
                lambda: _ExitWatchingProtocol(loop), *self._argv, cwd=self._cwd, env=self._env, stdin=pipe,
                stdout=pipe, stderr=pipe, **group)
        except OSError as exc:
            raise AgentCallError(f"cannot start {shlex.join(self._argv)}: {exc.strerror or exc}") from exc
        return asyncio.subprocess.Process(transport, protocol, loop), protocol.exited, transport


class _ExitWatchingProtocol(asyncio.subprocess.SubprocessStreamProtocol):
    """asyncio's own subprocess protocol, which also says when the process exits: `Process.wait()` waits for its
    pipes to close as well, which a child the agent left behind can hold open for as long as it runs."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit=_READ_LIMIT, loop=loop)
        self.exited: asyncio.Future[None] = loop.create_future()

    def process_exited(self) -> None:
        """Called by the transport when the process exits."""
        super().process_exited()
        if not self.exited.done():
            self.exited.set_result(None)


async def _exchange(proc: asyncio.subprocess.Process, exited: asyncio.Future[None],
                    request: bytes) -> tuple[bytes, bytes]:
    """Write the request, wait for the agent to exit, kill its group, and return what it wrote (stdout, stderr).

    The group is killed as soon as the agent exits, so a child left behind holding stdout open neither outlives the
    call nor keeps it waiting for an end of file; when the call is cancelled (timeout, Ctrl-C) it is killed too."""
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    stdin = proc.stdin

    async def feed() -> None:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):   # an agent that never reads its input
            stdin.write(request)
            await stdin.drain()
        stdin.close()

    feeding = asyncio.ensure_future(feed())
    reads = asyncio.gather(proc.stdout.read(), proc.stderr.read())
    try:
        try:
            await asyncio.shield(exited)
        finally:
            _kill_group(proc)
            if not exited.done():   # cancelled: see the killed agent gone (not its pipes closed) before going on
                await asyncio.shield(exited)
        await feeding
        stdout, stderr = await reads
        await proc.wait()
        return stdout, stderr
    finally:
        feeding.cancel()
        if not reads.done():
            reads.cancel()    # a cancelled gather ends holding a CancelledError: taken, or asyncio logs it unread
            reads.add_done_callback(_taken)


def _taken(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()


def _kill_group(proc: asyncio.subprocess.Process) -> None:
    """Kill the agent's process group: the agent if it still runs and whatever it started. The group outlives its
    leader, so this is done after the agent exited too."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if sys.platform == "win32":   # no process groups to signal: the agent alone
            if proc.returncode is None:
                proc.kill()
        else:
            os.killpg(proc.pid, signal.SIGKILL)



def create(agent_id: str, settings: ExecSettings, ctx: ProviderContext) -> ExecAgent:
    """Split the command (a string is split like a shell would) and run it from the config's directory by default."""
    argv = shlex.split(settings.command) if isinstance(settings.command, str) else list(settings.command)
    if not argv:
        raise ConfigError(f"agents.{agent_id}.command: must not be empty")
    cwd = ctx.config_dir / settings.cwd if settings.cwd else ctx.config_dir
    return ExecAgent(agent_id, argv, str(cwd), settings.env)
