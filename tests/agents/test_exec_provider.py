"""`provider: exec`: one process per call, and nothing it started outlives the call — not after a reply, not after a
failure, not after a timeout — even when the agent itself already exited."""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from agenttest.agents.base import AgentRequest, AgentResponse
from agenttest.errors import AgentCallError
from fakes.processes import assert_dies

from .helpers import call_one, make_agent, request

AGENT = '''
import json, subprocess, sys, time
request = json.load(sys.stdin)
mode = request["messages"][-1]["content"]
pid_file = sys.argv[1]

def start_child(**streams):
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"], **streams)
    with open(pid_file, "w") as handle:
        handle.write(str(child.pid))

if mode == "detached":             # a child with its own stdio, left running after a successful reply
    start_child(stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
elif mode == "holds-stdout":       # a child that inherited stdout, so the pipe stays open after the agent exits
    start_child()
elif mode == "fails":
    start_child(stdout=subprocess.DEVNULL)
    sys.stderr.write("no such expense")
    sys.exit(3)
elif mode == "hangs":
    start_child()
    time.sleep(60)
elif mode == "escapes":            # a child in a session of its own, holding stdout: no group kill reaches it
    start_child(start_new_session=True)
    time.sleep(60)
elif mode == "json-string":
    print(json.dumps("a bare string"))
    sys.exit(0)
elif mode == "plain":
    print("  just text")
    sys.exit(0)
print(json.dumps({"content": "done: " + mode}), flush=True)
'''


@pytest.fixture
def pid_file(tmp_path: Path) -> Path:
    return tmp_path / "child.pid"


def exec_agent(tmp_path: Path, pid_file: Path, command: list[str] | None = None) -> Any:
    (tmp_path / "agent.py").write_text(textwrap.dedent(AGENT))
    return make_agent("exec", tmp_path, command=command or [sys.executable, "agent.py", str(pid_file)])


def call_within(agent: Any, req: AgentRequest) -> AgentResponse:
    """The call, bounded only so that a call waiting for the agent's children (they sleep 300 s) fails the test
    instead of hanging it."""
    async def main() -> AgentResponse:
        return await asyncio.wait_for(agent.call(req), 120)
    return asyncio.run(main())


async def cancel_once_the_child_runs(agent: Any, req: AgentRequest, pid_file: Path) -> None:
    """Call the agent, and cancel the call (as a case's timeout does) once the child it starts is running."""
    call = asyncio.ensure_future(agent.call(req))
    while not (pid_file.exists() and pid_file.read_text()):
        assert not call.done(), call.result()      # the agent ended without starting its child
        await asyncio.sleep(0.01)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call


pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc to see zombies")


def test_a_child_left_running_after_a_reply_is_killed(tmp_path: Path, pid_file: Path) -> None:
    assert call_within(exec_agent(tmp_path, pid_file), request("detached")).content == "done: detached"
    assert_dies(int(pid_file.read_text()))


def test_a_child_holding_stdout_neither_survives_nor_delays_the_reply(tmp_path: Path, pid_file: Path) -> None:
    response = call_within(exec_agent(tmp_path, pid_file), request("holds-stdout"))
    assert response.content == "done: holds-stdout"
    assert_dies(int(pid_file.read_text()))


def test_a_shell_that_backgrounds_a_child_and_exits(tmp_path: Path, pid_file: Path) -> None:
    script = f'sleep 300 & echo $! > {pid_file}; echo \'{{"content": "from sh"}}\'; exit 0'
    assert call_within(exec_agent(tmp_path, pid_file, ["sh", "-c", script]), request()).content == "from sh"
    assert_dies(int(pid_file.read_text()))


def test_a_child_of_a_failed_agent_is_killed(tmp_path: Path, pid_file: Path) -> None:
    with pytest.raises(AgentCallError, match="exited with code 3: no such expense"):
        call_within(exec_agent(tmp_path, pid_file), request("fails"))
    assert_dies(int(pid_file.read_text()))


def test_the_agent_and_its_child_are_killed_on_timeout(tmp_path: Path, pid_file: Path) -> None:
    asyncio.run(cancel_once_the_child_runs(exec_agent(tmp_path, pid_file), request("hangs"), pid_file))
    assert_dies(int(pid_file.read_text()))


def test_a_timed_out_call_leaves_no_unread_error_for_asyncio_to_log(tmp_path: Path, pid_file: Path) -> None:
    agent = exec_agent(tmp_path, pid_file)
    logged: list[str] = []

    async def main() -> None:
        asyncio.get_running_loop().set_exception_handler(lambda loop, context: logged.append(context["message"]))
        # Cancelled while its reads of stdout are still pending (the escaped child holds stdout open).
        await cancel_once_the_child_runs(agent, request("escapes"), pid_file)
        reads = asyncio.all_tasks() - {asyncio.current_task()}
        if reads:                        # the cancelled reads end, and the callbacks of their gathering future run
            await asyncio.wait(reads, timeout=60)
        assert all(task.done() for task in reads)
        await asyncio.sleep(0)
        gc.collect()                     # a future never read says so when it is collected

    try:
        asyncio.run(main())
    finally:
        os.kill(int(pid_file.read_text()), signal.SIGKILL)
    assert logged == []                  # it was "_GatheringFuture exception was never retrieved"


@pytest.mark.parametrize(("mode", "content"), [("json-string", "a bare string"), ("plain", "  just text")])
def test_bare_string_replies(tmp_path: Path, pid_file: Path, mode: str, content: str) -> None:
    assert call_one(exec_agent(tmp_path, pid_file), request(mode)).content == content
