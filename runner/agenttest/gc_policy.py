"""The garbage collector's policy while a command owns its process (the CLI and the Action; never the Python API,
whose process is the caller's): no collection while the command imports and reads, rare ones during a run's cases,
and none while a run reads its suite and cassettes.

A run allocates a few dozen objects per case, most of which outlive a young collection (the case's result until its
reporters have it; every result, when AfterAll or rechecks need them), so at the default young-generation threshold
a large run made hundreds of collections, the full ones stalling every case in flight, and each walking objects it
could not free; with one every 50,000 allocations there are a handful. Reading builds trees that live long (the
suite until each case is done, a replay's cassettes to the end), so it is not collected at all and what it built is
frozen out of every later collection.

A CLI command starts the same way: what it imports (modules, classes, pydantic's schemas) lives to the end, and the
collections during its imports freed nothing. So no collection comes until a run starts its cases (`command`).
The measurements are in bench/README.md (Garbage collection).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

from .allocation import reads_on_the_heap

_YOUNG_THRESHOLD = 50_000
_owned = [False]            # whether a run owns the process (`owned_by_run` is active)
_paused = [False]           # whether `command` turned collection off (and nothing turned it on since)


@contextmanager
def command(enabled: bool | None = None) -> Iterator[None]:
    """A CLI command, in the process it owns: no collection while it imports and reads, until a run starts its
    cases (`owned_by_run` turns collection back on) or the command ends. A collector the caller turned off stays
    off. `enabled`: whether it was on before the caller paused it itself (`cli`, from before this module loads)."""
    if not (gc.isenabled() if enabled is None else enabled):
        yield
        return
    gc.disable()
    _paused[0] = True
    try:
        yield
    finally:
        if _paused[0]:
            _paused[0] = False
            gc.freeze()     # or the first allocation after would walk everything the command built
            gc.enable()


@contextmanager
def owned_by_run() -> Iterator[None]:
    """A run's policy for its process. Everything imported so far lives until the end: it is frozen out of every
    collection. The objects left at the end are frozen too, so that the interpreter's exit does not walk them all
    once more. The agents' replies are read into the C library's heap (`allocation.reads_on_the_heap`)."""
    reads_on_the_heap()
    threshold = gc.get_threshold()
    if _paused[0]:
        _paused[0] = False
        gc.enable()
    gc.freeze()
    gc.set_threshold(max(threshold[0], _YOUNG_THRESHOLD), *threshold[1:])
    _owned[0] = True
    try:
        yield
    finally:
        _owned[0] = False
        gc.set_threshold(*threshold)
        gc.freeze()


@contextmanager
def reading() -> Iterator[None]:
    """While a run that owns its process reads what lives to its end (suites, cassettes): no collection, and what
    was read frozen afterwards. Elsewhere (the Python API, a collector the caller disabled) it changes nothing."""
    if not _owned[0] or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()         # also resets the young generation's count: the next collection walks only what comes
        gc.enable()
