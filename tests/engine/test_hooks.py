"""Hooks are called the way every piece of user code is: with the arguments they take, off the event loop, and a hook
that calls sys.exit is a hook error, not the end of the run."""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path
from typing import Any

import pytest

from agenttest.engine.hooks import Hooks
from agenttest.errors import HookError
from fakes import gate

HOOKS = '''
import asyncio, sys, fakes.gate

def Before(ctx, case):
    return {"data": {"user": ctx["user_id"], "case": case["id"]}}

def After(ctx, case):                  # takes fewer than the four arguments an After hook is given
    return [ctx["user_id"], case["id"]]

def NoArgs():
    return "called"

async def AsyncBefore(ctx, case):
    await asyncio.sleep(0)
    return {"data": "async"}

def Exits(ctx, case):
    sys.exit("x")

async def AsyncExits(ctx):
    raise SystemExit(4)

def Blocks(ctx, case):
    return fakes.gate.current.wait()

def Raises(ctx, case):
    raise ValueError("database is down")
'''


@pytest.fixture
def hooks_dir(tmp_path: Path) -> Path:
    (tmp_path / "env_test.py").write_text(textwrap.dedent(HOOKS))
    return tmp_path


def call(hooks_dir: Path, ref: str, *args: Any) -> Any:
    return asyncio.run(Hooks(None).call(ref, hooks_dir, *args))


CTX = {"user_id": "alice"}
CASE = {"id": "T1"}


def test_data_is_unwrapped_and_hooks_get_the_arguments_they_take(hooks_dir: Path) -> None:
    assert call(hooks_dir, "env_test.Before", CTX, CASE) == {"user": "alice", "case": "T1"}
    assert call(hooks_dir, "env_test.After", CTX, CASE, {"status": "passed"}, None) == ["alice", "T1"]
    assert call(hooks_dir, "env_test.NoArgs", CTX, CASE) == "called"
    assert call(hooks_dir, "env_test.AsyncBefore", CTX, CASE) == "async"


@pytest.mark.parametrize(("ref", "message"), [
    ("env_test.Exits", "hook env_test.Exits failed: RuntimeError at {file}:18: called sys.exit('x')"),
    ("env_test.AsyncExits", "hook env_test.AsyncExits failed: RuntimeError at {file}:21: called sys.exit(4)"),
    ("env_test.Raises", "hook env_test.Raises failed: ValueError at {file}:27: database is down"),
])
def test_a_failing_hook_is_a_hook_error_naming_the_line_that_raised(hooks_dir: Path, ref: str, message: str) -> None:
    with pytest.raises(HookError) as caught:
        call(hooks_dir, ref, CTX, CASE)
    assert caught.value.message == message.format(file=hooks_dir / "env_test.py")


def test_a_hook_file_that_exits_on_import_is_a_hook_error(tmp_path: Path) -> None:
    (tmp_path / "cli_test.py").write_text("import sys\nsys.exit(2)\n\ndef Before(ctx, case):\n    pass\n")
    with pytest.raises(HookError, match=r"loading .*cli_test.py failed: SystemExit at .*cli_test.py:2: 2"):
        call(tmp_path, "cli_test.Before", CTX, CASE)


def test_a_blocking_sync_hook_does_not_block_the_loop_and_is_abandoned_at_the_timeout(hooks_dir: Path) -> None:
    async def main() -> None:
        with pytest.raises(asyncio.TimeoutError):     # only the timeout can end the wait: the hook never returns
            await asyncio.wait_for(Hooks(None).call("env_test.Blocks", hooks_dir, CTX, CASE), 0.2)

    with gate.closed() as blocked:
        asyncio.run(main())
        assert blocked.reached.wait(30)               # it was called, and is still blocked
