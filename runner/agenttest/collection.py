"""The garbage collector's policy while a command owns its process (the CLI and the Action; never the Python API,
whose process is the caller's): no collection while the command imports and reads, rare ones during a run's cases,
and none while a run reads its suite and cassettes.

A run allocates a few objects per case and holds each result to the end, so the default young-generation threshold
(700) meant ~900 collections and 7 full ones (~1.6 s, every case in flight stalled) in a 10,000-case run; with one
every 50,000 allocations there are ~6, and each still walks ~30 ms of objects it cannot free: half of them came
while the 10,000 cases were read (a replay read a 9 MB cassette too, three more). Reading builds trees that live to
the end, so it is not collected at all and what it built is frozen out of every later collection.

A CLI command starts the same way: what it imports (modules, classes, pydantic's schemas) lives to the end, and
`validate` of 1,000 cases spent ~25 ms of its ~450 in ~90 collections during its imports that freed nothing. So no
collection comes until a run starts its cases (`command`).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

_YOUNG_THRESHOLD = 50_000
_owned = [False]            # whether a run owns the process (`owned_by_run` is active)
_paused = [False]           # whether `command` turned collection off (and nothing turned it on since)


@contextmanager
def command() -> Iterator[None]:
    """A CLI command, in the process it owns: no collection while it imports and reads, until a run starts its
    cases (`owned_by_run` turns collection back on) or the command ends. A collector the caller turned off stays
    off."""
    if not gc.isenabled():
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
    once more (~0.5 s at 10,000 cases)."""
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
