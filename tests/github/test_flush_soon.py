"""A finished case's lines are flushed once the event loop has run what is ready (`github.log.flush_soon`): on disk
before the loop waits for anything, at once when no loop runs, and always before any other line is written, on
whichever stream, so the log keeps its order. Real files, read back through a second handle."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TextIO

from agenttest.github.log import write_lines


def _open(path: Path) -> TextIO:  # a text stream with a buffer large enough that nothing reaches the disk unflushed
    return path.open("w", encoding="utf-8", buffering=1 << 16)


def test_lines_reach_the_file_once_the_loop_turns(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    stream = _open(path)

    async def main() -> list[str]:
        seen = []
        for index in range(3):
            write_lines(stream, [f"case {index}"], flush=stream.flush)
        await asyncio.sleep(0)      # the loop turns once: what was ready ran, the flush first
        seen.append(path.read_text(encoding="utf-8"))
        return seen

    assert asyncio.run(main()) == ["case 0\ncase 1\ncase 2\n"]
    stream.close()


def test_without_a_loop_the_lines_are_flushed_at_once(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    with _open(path) as stream:
        write_lines(stream, ["alone"], flush=stream.flush)
        assert path.read_text(encoding="utf-8") == "alone\n"


def test_any_other_line_flushes_what_waits_first(tmp_path: Path) -> None:
    first, second = tmp_path / "first.txt", tmp_path / "second.txt"
    one, two = _open(first), _open(second)

    async def main() -> tuple[str, str]:
        write_lines(one, ["case line"], flush=one.flush)
        write_lines(two, ["a warning"])         # written and flushed at once, after what waited
        return first.read_text(encoding="utf-8"), second.read_text(encoding="utf-8")

    assert asyncio.run(main()) == ("case line\n", "a warning\n")
    one.close()
    two.close()


def test_a_flush_left_by_an_ended_loop_does_not_hold_up_the_next(tmp_path: Path) -> None:
    """A loop that ended before its flush ran (the run's last case) leaves nothing that stops the next run's."""
    path = tmp_path / "out.txt"
    stream = _open(path)

    async def last_line() -> None:
        write_lines(stream, ["end of run 1"], flush=stream.flush)

    asyncio.run(last_line())

    async def next_run() -> str:
        write_lines(stream, ["run 2"], flush=stream.flush)
        await asyncio.sleep(0)
        return path.read_text(encoding="utf-8")

    assert asyncio.run(next_run()).endswith("run 2\n")
    stream.close()
