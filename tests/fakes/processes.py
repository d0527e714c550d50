"""Whether a process the agent under test started is still running (zombies count as dead)."""

from __future__ import annotations

import os
import time


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead for our purposes
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split()[2] != "Z"
    except OSError:
        return False


def assert_dies(pid: int, within: float = 5.0) -> None:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline and alive(pid):
        time.sleep(0.05)
    assert not alive(pid), "a process the agent started outlived the call"
