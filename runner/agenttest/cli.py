"""The `agenttest` command as the console script and `python -m agenttest` call it (`main`).

`agenttest --version` (`-V`) is answered here, before anything else is imported: click alone takes ~3× the bare
interpreter's start (issue #27). Every other use goes to the click group of `commands`, imported on first use, and
`main` stands for that group: its attributes are the group's (`main.commands`, `main.get_command`, `main.main`).
"""

from __future__ import annotations

import os
import sys

from . import __version__

TYPE_CHECKING = False       # not typing's: importing typing alone takes ~0.7× the interpreter's start
if TYPE_CHECKING:
    from typing import Any

    import click

_VERSION_ARGUMENTS = (["--version"], ["-V"])


class Command:
    """The `agenttest` command: `--version` alone is printed as click's version option prints it; anything else is
    the click group's (`commands.main`)."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not args and not kwargs and sys.argv[1:] in _VERSION_ARGUMENTS and not _completing():
            try:
                _print_version()
            except OSError:     # a closed pipe: click's own handling (and exit code) applies
                pass
            else:
                raise SystemExit(0)
        import gc

        # No collection while the command imports and reads (gc_policy.command), from before its first import.
        enabled = gc.isenabled()
        gc.disable()
        from .gc_policy import command

        with command(enabled):
            return group()(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(group(), name)


def group() -> click.Group:
    """The click group of the `agenttest` command."""
    from .commands import main as group

    return group


def _print_version() -> None:
    """What click's `version_option` prints (`%(prog)s, version %(version)s`, prog `agenttest`)."""
    stream = sys.stdout
    if stream is None:
        return
    stream.write(f"agenttest, version {__version__}\n")
    stream.flush()


def _completing() -> bool:
    """Whether a shell asks click for completions (`_AGENTTEST_COMPLETE=…`, the variable named after the program
    as it was called): click answers those, whatever the arguments."""
    return any(name.startswith("_") and name.endswith("_COMPLETE") and value for name, value in os.environ.items())


main = Command()
