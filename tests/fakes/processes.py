"""Whether a process the agent under test started outlives the call: its exit is waited for as an event (its pidfd
becomes readable when it exits, zombie or not), not polled for against a deadline."""

from __future__ import annotations

import os
import select


def assert_dies(pid: int) -> None:
    """Return once `pid` has exited. Fail if it still runs after 60 s: a bound only so that a process left running
    fails the test instead of hanging it (a killed process is gone at once)."""
    try:
        pidfd = os.pidfd_open(pid)
    except ProcessLookupError:      # exited and reaped already
        return
    try:
        exited, _, _ = select.select([pidfd], [], [], 60)
    finally:
        os.close(pidfd)
    assert exited, "a process the agent started outlived the call"
