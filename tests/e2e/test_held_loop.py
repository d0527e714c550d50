"""An `async def` agent that blocks the run's event loop (time.sleep, a socket read, a loop that never awaits),
through the real CLI: its case's timeout still ends it, as an error naming the line that held the loop, and a
SIGINT or SIGTERM still stops the run at once (exit 130, partial artifacts) — before, the timeouts never fired, the
signal waited for the agent, and the run then ended as if nothing had asked it to stop."""

from __future__ import annotations

import signal
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from e2e.conftest import Project, interrupt_cli

CONFIG = """
    version: 1
    defaults: {name: bot}
    agents:
      bot: {provider: python, callable: bot:respond}
    """
AGENT = '''
import os, socket, time
from pathlib import Path

async def respond(request):
    Path(os.environ["STARTED"]).write_text("started")
    how = request["messages"][-1]["content"]
    if how == "sleep":
        time.sleep(60)
    elif how == "spin":
        while True:
            pass
    else:                   # a blocking read from a server that never answers, as `requests` makes
        with socket.create_connection(("127.0.0.1", int(how))) as conn:
            conn.recv(1)
    return "late"
'''


@pytest.fixture
def project(tmp_path: Path) -> Project:
    proj = Project(tmp_path)
    proj.write("agenttest.yaml", CONFIG)
    proj.write("bot.py", AGENT)
    return proj


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A TCP server on 127.0.0.1 that accepts and never says a word: its port."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        yield server.getsockname()[1]


def case(case_id: str, how: str, timeout: str | None = None) -> dict[str, object]:
    written: dict[str, object] = {"id": case_id, "input": how, "assert": {"type": "contains", "value": "late"}}
    if timeout:
        written["timeout"] = timeout
    return written


@pytest.mark.parametrize("how", ["sleep", "spin"])
def test_a_case_whose_async_agent_holds_the_loop_ends_at_its_timeout(project: Project, how: str) -> None:
    project.suite("s.jsonl", case("a", how, "1s"), case("b", how, "1s"))
    started = time.monotonic()
    run = project.run("-i", "s.jsonl", "--parallel", "2", env={"STARTED": str(project.root / "started")})
    assert time.monotonic() - started < 30, run.stdout         # not 2 × 60 s
    assert run.code == 1, run.stdout + run.stderr
    for case_id in ("a", "b"):
        result = run.result(case_id)
        assert result["status"] == "error", result
        assert result["error"].startswith("agent error: agent raised LoopHeld at bot.py:"), result["error"]
        assert "(past its case's deadline): a blocking call in async code" in result["error"]


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_stops_a_run_whose_async_agent_holds_the_loop_in_a_blocking_read(
        project: Project, silent_server: int, signum: int) -> None:
    project.suite("s.jsonl", case("a", str(silent_server)), case("b", str(silent_server)))
    marker = project.root / "started"
    started = time.monotonic()
    run = interrupt_cli("-i", "s.jsonl", "--parallel", "2", cwd=project.root, ready=marker.exists, signum=signum,
                        env={"STARTED": str(marker)}, timeout=30)
    assert time.monotonic() - started < 20, run.stdout        # the agent never returns: the signal ended it
    assert run.code == 130, run.stdout + run.stderr
    assert run.report["interrupted"] is True
    first = run.result("a")
    assert first["status"] == "error" and f"({signal.Signals(signum).name} came meanwhile)" in first["error"]
    assert run.result("b")["status"] == "skipped"               # never started: the run was stopping


def test_an_async_script_assertion_that_holds_the_loop_fails_at_the_cases_timeout(project: Project) -> None:
    project.write("checks.py", """
        import time

        async def slow(output):
            time.sleep(60)
            return True
        """)
    project.suite("s.jsonl", {"id": "a", "input": "spin-free", "timeout": "1s",
                              "assert": {"type": "script", "script": "checks.slow"}})
    project.write("bot.py", "async def respond(request):\n    return 'ok'\n")
    started = time.monotonic()
    run = project.run("-i", "s.jsonl", env={"STARTED": str(project.root / "started")})
    assert time.monotonic() - started < 30, run.stdout
    result = run.result("a")
    assert result["status"] == "failed", result          # a script that raised fails its assertion
    assert "raised LoopHeld at checks.py:4: held the run's event loop" in result["error"], result["error"]
