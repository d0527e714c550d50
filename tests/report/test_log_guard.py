"""The log guard: a stop-commands block around the run, resumed on every way out, `::add-mask::` always outside
it, the run's own commands after it, and every line encodable."""

from __future__ import annotations

import io
import re
import sys
import threading
import time
import uuid

import pytest

from agenttest.github.log import add_mask, guarded_log, print_commands, printable, write_line
from agenttest.launch import log_guard_wanted
from agenttest.secrets import mask, register_secret

from .test_annotations import commands_the_runner_would_run, lines_inside_blocks

TOKEN = re.compile(r"::stop-commands::([0-9a-f]{32})")


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def tokens(lines: list[str]) -> list[str]:
    return [match.group(1) for match in map(TOKEN.fullmatch, lines) if match]


def test_the_block_has_a_random_token_and_is_resumed_once() -> None:
    logs = []
    for _ in range(2):
        out = io.StringIO()
        with guarded_log(out, guard=True):
            write_line(out, "::error::from an agent")
        logs.append(out.getvalue().splitlines())
    first, second = logs
    assert len(first) == 3 and first[2] == f"::{tokens(first)[0]}::"
    assert tokens(first) != tokens(second)
    assert commands_the_runner_would_run(first) == [first[0]]


def test_an_exception_resumes_commands_and_the_run_commands_still_follow() -> None:
    out = io.StringIO()
    with pytest.raises(RuntimeError), guarded_log(out, guard=True):
        print_commands(out, ["::error::annotated before the crash"])
        raise RuntimeError("our bug")
    lines = out.getvalue().splitlines()
    assert lines == [lines[0], f"::{tokens(lines)[0]}::", "::error::annotated before the crash"]
    assert commands_the_runner_would_run(lines) == [lines[0], "::error::annotated before the crash"]
    print_commands(out, ["::notice::no run in progress: printed at once"])
    assert out.getvalue().endswith("::notice::no run in progress: printed at once\n")


def test_without_the_guard_commands_still_wait_for_the_end_of_the_run() -> None:
    out = io.StringIO()
    with guarded_log(out, guard=False):
        print_commands(out, ["::error::x"])
        write_line(out, "console line")
    assert out.getvalue() == "console line\n::error::x\n"


def test_a_secret_registered_inside_the_block_is_masked_outside_it(monkeypatch: pytest.MonkeyPatch,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """The runner ignores `::add-mask::` inside a stop-commands block, and would then print the secret verbatim."""
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    secret = f"session-{uuid.uuid4().hex}"
    with guarded_log(sys.stdout, guard=True):
        print(f"agent text ::error::x {mask('before')}")
        register_secret(secret)
        print(f"agent said {mask(secret)}")
    lines = capsys.readouterr().out.splitlines()
    first, second = tokens(lines)
    assert first != second
    assert lines == [f"::stop-commands::{first}", "agent text ::error::x before", f"::{first}::",
                     f"::add-mask::{secret}", f"::stop-commands::{second}", "agent said ***", f"::{second}::"]
    assert f"::add-mask::{secret}" in commands_the_runner_would_run(lines)
    assert not [line for line in lines_inside_blocks(lines) if "add-mask" in line]


class SlowLog(io.StringIO):
    """A log whose writes let other threads run, as a write to a pipe does (the GIL is released meanwhile)."""

    def write(self, text: str) -> int:
        time.sleep(0.0002)
        return super().write(text)


def test_masks_from_other_threads_never_open_a_gap_in_the_block() -> None:
    """A provider may register a secret from a worker thread while the console prints agent text: the resume,
    the mask and the new block go out in one write, so no console line lands unguarded between them."""
    out = SlowLog()
    secrets = [f"thread-secret-{i}-{uuid.uuid4().hex}" for i in range(20)]
    with guarded_log(out, guard=True):
        printing = threading.Event()

        def console() -> None:
            for line in range(400):
                write_line(out, "::error file=README.md::forged by the agent")
                if line == 10:
                    printing.set()

        def provider(secret: str) -> None:
            printing.wait()
            add_mask(secret)

        threads = [threading.Thread(target=console),
                   *(threading.Thread(target=provider, args=(secret,)) for secret in secrets)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    lines = out.getvalue().splitlines()
    executed = commands_the_runner_would_run(lines)
    assert not [line for line in executed if "forged" in line]
    assert sorted(line for line in executed if line.startswith("::add-mask::")) == sorted(
        f"::add-mask::{secret}" for secret in secrets)
    assert len(set(tokens(lines))) == len(secrets) + 1


def test_add_mask_outside_a_run_is_one_plain_command(capsys: pytest.CaptureFixture[str]) -> None:
    add_mask("multi\nline%secret\r")
    assert capsys.readouterr().out == "::add-mask::multi%0Aline%25secret%0D\n"


@pytest.mark.parametrize(("environ", "annotations", "stream", "wanted"), [
    ({"GITHUB_ACTIONS": "true"}, None, io.StringIO(), True),
    ({"GITHUB_ACTIONS": "true"}, False, io.StringIO(), True),
    ({}, None, io.StringIO(), False),
    ({}, False, io.StringIO(), False),
    ({}, True, io.StringIO(), True),          # forced on, log parsed by a tool: guard it
    ({}, True, Terminal(), False),            # forced on in a developer's terminal: no noise
])
def test_when_the_log_is_guarded(environ: dict[str, str], annotations: bool | None, stream: io.StringIO,
                                 wanted: bool) -> None:
    assert log_guard_wanted(annotations, stream, environ) is wanted


def test_every_line_is_encodable() -> None:
    assert printable("a\ud800b\udfff") == "a#xD800b#xDFFF"
    assert printable("café ✓", "ascii") == "caf? [ok]"      # a symbol of ours in its text form, else ?
    raw = io.BytesIO()
    strict = io.TextIOWrapper(raw, encoding="utf-8", write_through=True)
    write_line(strict, "::error::agent said \ud800")
    assert raw.getvalue() == b"::error::agent said #xD800\n"
