"""End-to-end helpers: run the real `agenttest` CLI in a subprocess on real files and read its artifacts."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from fakes.helper_brain import HelperBrain
from fakes.openai_server import FakeOpenAI
from fakes.server import Reply


@dataclass
class Run:
    """A finished CLI run: its exit code, output, and the report and events it left in `agenttest-results/`, read
    when it ended (a later run in the same directory cannot change what this one says)."""

    code: int
    stdout: str
    stderr: str
    cwd: Path
    report_text: str | None = None
    events_text: str | None = None

    @property
    def report(self) -> dict[str, Any]:
        assert self.report_text is not None, f"no report.json was written\n{self.stdout}{self.stderr}"
        return json.loads(self.report_text)

    @property
    def events(self) -> list[dict[str, Any]]:
        assert self.events_text is not None, "no events.jsonl was written"
        return [json.loads(line) for line in self.events_text.splitlines()]

    def result(self, case_id: str) -> dict[str, Any]:
        return next(r for r in self.report["results"] if r["id"] == case_id)


def _cli_env(env: dict[str, str] | None) -> dict[str, str]:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "AGENTTEST_"))}
    full_env.update(env or {})
    return full_env


def _finished(code: int, stdout: str, stderr: str, cwd: Path) -> Run:
    results = cwd / "agenttest-results"
    return Run(code, stdout, stderr, cwd, _read(results / "report.json"), _read(results / "events.jsonl"))


def run_cli(*args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 60) -> Run:
    proc = subprocess.run([sys.executable, "-m", "agenttest", *args], cwd=cwd, env=_cli_env(env), capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    return _finished(proc.returncode, proc.stdout, proc.stderr, cwd)


def interrupt_cli(*args: str, cwd: Path, ready: Callable[[], bool], signum: int = signal.SIGTERM,
                  env: dict[str, str] | None = None, wait: float = 60, timeout: float = 60) -> Run:
    """Start the CLI, wait until `ready()` says the moment has come, send `signum`, and return the run once it has
    ended. The bounds (`wait` for the moment, `timeout` for the end) only turn a hang into a failure: a test makes
    whatever the signal must cut short block for good, so that ending at all shows it was cut short."""
    proc = subprocess.Popen([sys.executable, "-m", "agenttest", *args], cwd=cwd, env=_cli_env(env),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + wait
    while not ready():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            stdout, stderr = proc.communicate()
            raise AssertionError(f"the moment to signal never came\n{stdout}{stderr}")
        time.sleep(0.05)
    proc.send_signal(signum)
    stdout, stderr = proc.communicate(timeout=timeout)
    return _finished(proc.returncode, stdout, stderr, cwd)


def finished_cases(cwd: Path) -> set[str]:
    """The ids of the cases events.jsonl says have finished so far (its last line may be half written)."""
    events = cwd / "agenttest-results" / "events.jsonl"
    lines = events.read_text().split("\n")[:-1] if events.exists() else []
    return {event["id"] for event in map(json.loads, lines) if event["type"] == "result"}


def _read(path: Path) -> str | None:
    return path.read_text() if path.is_file() else None


class Project:
    """A throwaway project: agenttest.yaml, an in-process agent, suites and hook files under tmp_path."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def write(self, relative: str, text: str) -> Path:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
        return path

    def suite(self, relative: str, *cases: dict[str, Any] | str) -> Path:
        lines = [case if isinstance(case, str) else json.dumps(case) for case in cases]
        return self.write(relative, "\n".join(lines) + "\n")

    def run(self, *args: str, **kwargs: Any) -> Run:
        return run_cli(*args, cwd=self.root, **kwargs)

    def copy(self, source: Path, *names: str) -> None:
        """Copies of the files and directories `names` of the project at `source`: artifacts that one fixture
        made for several tests, each of which may change its own copies."""
        for name in names:
            if (source / name).is_dir():
                shutil.copytree(source / name, self.root / name)
            else:
                shutil.copy2(source / name, self.root / name)


# Notes each call's case id in $AGENT_STARTED_FILE when it starts and in $AGENT_CALLS_FILE when it answers.
ECHO_AGENT = '''
import asyncio, json, os

async def respond(request):
    note("AGENT_STARTED_FILE", request)
    text = request["messages"][-1]["content"]
    if isinstance(text, str) and text.startswith("sleep "):
        await asyncio.sleep(float(text.split()[1]))
    note("AGENT_CALLS_FILE", request)
    if text == "boom":
        raise RuntimeError("agent exploded")
    return {"content": f"echo: {text}", "usage": {"prompt_tokens": 3, "completion_tokens": 2}}

def note(variable, request):
    path = os.environ.get(variable)
    if path:
        with open(path, "a") as handle:
            handle.write(request["context"]["test_id"] + "\\n")
'''


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return echo_project(tmp_path)


def echo_project(root: Path) -> Project:
    """A project at `root` whose default agent is ECHO_AGENT."""
    proj = Project(root)
    proj.write("agenttest.yaml", """
        version: 1
        defaults:
          name: echo
        agents:
          echo:
            provider: python
            callable: echo_agent:respond
        """)
    proj.write("echo_agent.py", ECHO_AGENT)
    return proj


@contextmanager
def helper_server(target: Reply | None = None) -> Iterator[tuple[HelperBrain, FakeOpenAI]]:
    """A local OpenAI-compatible server playing judge, simulator and generator (and `target` for an openai agent
    under test); it fails the test on any request the real API would reject."""
    helper = HelperBrain(target=target)
    with FakeOpenAI(default=helper) as server:
        yield helper, server
    assert server.invalid == [], "requests the real API would reject"
