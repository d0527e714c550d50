"""The two allocations a run avoids making over and over (`allocation.py`, issue #27): an agent's reply is read into
glibc's heap, not a mapping of its own, once a run owns the process (and not in a caller's process before); and a
run's event loop, with every case it runs, works from a frame larger than a chunk of CPython's frame stack. Each
probe runs in a fresh interpreter: the glibc threshold, once raised, stays raised for the process."""

from __future__ import annotations

import json
import platform
import subprocess
import sys
from pathlib import Path

import pytest

from agenttest.allocation import with_frame_room

# Whether a 256 KiB block (what asyncio allocates for each read from a socket) is a mapping of its own, counted by
# glibc's mallinfo2 (hblks: the blocks allocated with mmap), before and inside a run's policy for its process.
MAPPED_READS = """
import ctypes, json
class Info(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]
libc = ctypes.CDLL(None)
libc.mallinfo2.restype = Info
def mapped(size):
    before = libc.mallinfo2().hblks
    block = bytearray(size)
    after = libc.mallinfo2().hblks
    del block
    return after - before
import sys
from agenttest.gc_policy import owned_by_run
if sys.argv[1] == "run":
    with owned_by_run():
        seen = {"256 KiB": mapped(256 * 1024), "2 MiB": mapped(2 * 1024 * 1024)}
else:
    seen = {"256 KiB": mapped(256 * 1024)}
print(json.dumps(seen))
"""

AGENT = '''
import sys

async def respond(request):     # async: called on the event loop's thread (a plain function runs in a worker)
    frames, frame = [], sys._getframe()
    while frame is not None:
        frames.append(frame.f_code.co_stacksize)
        frame = frame.f_back
    # 2,048 slots of 8 bytes fill a 16 KiB chunk: a frame larger than that starts a chunk of its own.
    return {"content": "roomy" if max(frames) > 2048 else "cramped"}
'''


def _probe(script: str, *args: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's threshold and mallinfo2")
def test_a_run_reads_its_replies_into_the_heap() -> None:
    """Outside a run (the Python API's process): each 256 KiB read is a mapping (an mmap, then an mremap and a
    munmap: issue #27 counted 10,000 of each at 10,000 cases). In a run: from the heap. A block over 1 MiB is still a
    mapping of its own. (Freeing a mapped block raises glibc's threshold: one process for each.)"""
    assert _probe(MAPPED_READS, "api") == {"256 KiB": 1}
    assert _probe(MAPPED_READS, "run") == {"256 KiB": 0, "2 MiB": 1}


def test_with_frame_room_calls_through() -> None:
    assert with_frame_room(lambda a, b: (a, b), 1, "two") == (1, "two")

    def broken() -> None:
        raise ValueError("in the user's code")

    with pytest.raises(ValueError, match="in the user's code") as raised:
        with_frame_room(broken)
    assert raised.traceback[-1].name == "broken"


def test_a_run_calls_its_agents_from_a_roomy_frame(tmp_path: Path) -> None:
    """The run's event loop works above a frame larger than a stack chunk: on CPython 3.11 the run's imports and
    first calls made inside it crossed a chunk's edge ~1,100 times, an mmap and a munmap each
    (python/cpython#142183)."""
    (tmp_path / "agenttest.yaml").write_text(
        "version: 1\ndefaults: {name: bot}\nagents:\n  bot: {provider: python, callable: \"agent:respond\"}\n")
    (tmp_path / "agent.py").write_text(AGENT)
    case = {"id": "a", "input": "hi", "assert": {"type": "equals", "value": "roomy"}}
    (tmp_path / "s.jsonl").write_text(json.dumps(case) + "\n")
    proc = subprocess.run([sys.executable, "-m", "agenttest", "-i", "s.jsonl"], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    report = json.loads((tmp_path / "agenttest-results" / "report.json").read_text())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert report["results"][0]["output"] == "roomy"
