"""Two allocations a run would otherwise make over and over, each a system call or two: CPython's frame stack
crossing a chunk boundary (`with_frame_room`) and glibc mapping every socket read (`reads_on_the_heap`). Measured in
bench/README.md (issue #27's sixth round)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

# CPython 3.11 and 3.12 keep the frames of running functions in 16 KiB chunks, allocated with mmap when a call does
# not fit in the current one and unmapped as soon as it returns (python/cpython#142183, fixed in 3.13's and 3.14's
# later releases by keeping one chunk). A call that sits at a chunk's edge pays an mmap and a munmap each time it is
# made: the run's imports and first calls inside the event loop crossed one ~1,100 times. A frame this large never
# shares the interpreter's first chunk: it gets a chunk of its own (64 KiB: the first power of two holding it and
# CPython's 1,000 spare slots), and everything called from it has the ~39 KiB left — a few hundred frames.
_FRAME_SLOTS = 3100


def _roomy_call(call: Callable[..., T], *args: object) -> T:
    return call(*args)


_roomy_call.__code__ = _roomy_call.__code__.replace(co_stacksize=_FRAME_SLOTS)    # the slots, never filled


def with_frame_room(call: Callable[..., T], *args: object) -> T:
    """`call(*args)` from a frame that starts a chunk of CPython's frame stack (see `_FRAME_SLOTS`), so that calls
    made from it do not cross a chunk's edge back and forth. On other versions, one larger frame and nothing else."""
    return _roomy_call(call, *args)


_HEAP_LIMIT = 1 << 20      # larger than any socket read (asyncio reads up to 256 KiB at a time)


def reads_on_the_heap() -> None:
    """Let glibc serve blocks up to 1 MiB from its heap from now on, for the process's lifetime.

    Each read from a socket allocates a 256 KiB buffer and shrinks it to what came. glibc maps a block that large
    with mmap and, once shrunk, unmaps it when freed: three system calls and a page fault per agent reply. glibc
    raises its mmap threshold to the size of a mapped block that is freed (mallopt(3), M_MMAP_THRESHOLD): one 1 MiB
    block allocated and freed here raises it above any read. Elsewhere (another C library) it costs one allocation.
    Only for a process that a command owns: the threshold is the whole process's."""
    bytes(_HEAP_LIMIT)
