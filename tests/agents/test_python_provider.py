"""`provider: python`: a sync or async function in this process; whatever it raises — sys.exit included — is the
case's agent error, never the end of the run."""

from __future__ import annotations

import asyncio
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agenttest.errors import AgentCallError, ConfigError
from fakes import gate

from .helpers import call_one, make_agent, request

AGENT = '''
import asyncio, sys, threading, fakes.gate

def sync_reply(request):
    return {"content": request["messages"][-1]["content"], "data": threading.current_thread().name}

async def async_reply(request):
    await asyncio.sleep(0)
    return "async " + request["context"]["test_id"]

def no_arguments():
    return "fixed"

def exits(request):
    sys.exit("x")

async def async_exits(request):
    sys.exit(5)

def interrupted(request):
    raise KeyboardInterrupt

def raises(request):
    raise ValueError("no such expense")

def forgets_to_return(request):
    request["messages"]

def blocks(request):
    return fakes.gate.current.wait()
'''


Make = Callable[[str], Any]


@pytest.fixture
def agent(tmp_path: Path) -> Iterator[Make]:
    """An agent on one function of AGENT, written as a module of its own for this test."""
    module = f"pyagent_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{module}.py").write_text(textwrap.dedent(AGENT))
    yield lambda function: make_agent("python", tmp_path, callable=f"{module}:{function}")
    sys.modules.pop(module, None)


def test_sync_agents_run_in_a_thread_async_ones_are_awaited(agent: Make) -> None:
    response = call_one(agent("sync_reply"), request("hello"))
    assert response.content == "hello" and response.data.startswith("agenttest-")
    assert call_one(agent("async_reply")).content == "async T1"
    assert call_one(agent("no_arguments")).content == "fixed"


@pytest.mark.parametrize(("function", "message"), [
    ("exits", "agent raised RuntimeError at {file}:15: called sys.exit('x')"),
    ("async_exits", "agent raised RuntimeError at {file}:18: called sys.exit(5)"),
    ("interrupted", "agent raised RuntimeError at {file}:21: raised KeyboardInterrupt"),
    ("raises", "agent raised ValueError at {file}:24: no such expense"),
    ("forgets_to_return", "agent returned None: return the reply (a string or a response object)"),
])
def test_whatever_the_agent_raises_is_an_agent_error_naming_the_line(agent: Make, tmp_path: Path, function: str,
                                                                     message: str) -> None:
    with pytest.raises(AgentCallError) as caught:
        call_one(agent(function))
    file = tmp_path / f"pyagent_{tmp_path.name.replace('-', '_')}.py"
    assert (caught.value.message, caught.value.kind) == (message.format(file=file), "agent")


def test_a_blocking_sync_agent_is_abandoned_at_the_timeout(agent: Make) -> None:
    blocking = agent("blocks")

    async def main() -> None:
        with pytest.raises(asyncio.TimeoutError):     # only the timeout can end the wait: the agent never returns
            await asyncio.wait_for(blocking.call(request()), 0.2)

    with gate.closed() as blocked:
        asyncio.run(main())
        assert blocked.reached.wait(30)               # it was called, and is still blocked


def test_a_module_that_exits_on_import_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "argparse_agent.py").write_text("import argparse\nargparse.ArgumentParser().parse_args(['--x'])\n")
    with pytest.raises(ConfigError, match=r"cannot import 'argparse_agent': SystemExit at .*argparse_agent.py:2: 2"):
        make_agent("python", tmp_path, callable="argparse_agent:respond")


@pytest.fixture
def imported_here(tmp_path: Path) -> Iterator[None]:
    """The agent modules a test imports from its directory, into the process-wide sys.modules, are forgotten
    after it: run again in the same process, it would find them imported already."""
    yield
    for name, module in list(sys.modules.items()):
        if Path(getattr(module, "__file__", None) or "/").is_relative_to(tmp_path):
            del sys.modules[name]


@pytest.mark.usefixtures("imported_here")
def test_a_module_named_like_one_imported_before_says_which_file_was_imported(tmp_path: Path) -> None:
    (tmp_path / "types.py").write_text("def respond(request):\n    return 'mine'\n")
    with pytest.raises(ConfigError, match=r"'types' is imported from .*/types.py, not .*/types.py: a module "
                                          r"of that name was found first \(rename your file\)"):
        make_agent("python", tmp_path, callable="types:respond")
    (tmp_path / "sys.py").write_text("def respond(request):\n    return 'mine'\n")
    with pytest.raises(ConfigError, match=r"'sys' is a module built into Python, not .*/sys.py"):
        make_agent("python", tmp_path, callable="sys:respond")
    (tmp_path / "json.py").write_text("def dumps(request):\n    return 'mine'\n")    # named like a function there
    with pytest.raises(ConfigError, match=r"'json' is imported from .*/json/__init__.py, not .*/json.py"):
        make_agent("python", tmp_path, callable="json:dumps")
    for project in ("one", "two"):            # two projects in one process, each with its own `agent.py`
        (tmp_path / project).mkdir()
        (tmp_path / project / "agent_of_project.py").write_text(f"def respond(request):\n    return {project!r}\n")
    first = make_agent("python", tmp_path / "one", callable="agent_of_project:respond")
    assert asyncio.run(first.call(request())).content == "one"
    with pytest.raises(ConfigError, match=r"'agent_of_project' is imported from .*/one/agent_of_project.py, not "
                                          r".*/two/agent_of_project.py"):
        make_agent("python", tmp_path / "two", callable="agent_of_project:respond")
    (tmp_path / "mine.py").write_text("x = 1\n")
    with pytest.raises(ConfigError, match=r"'mine' has no callable 'respond'"):
        make_agent("python", tmp_path, callable="mine:respond")
