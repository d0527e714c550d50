"""Child processes measured from the OS (wall, user+sys CPU, peak RSS via os.wait4), and the benchmark agent server
run in its own process."""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
import urllib.request
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

SERVER_SCRIPT = Path(__file__).with_name("agent_server.py")
LAUNCHER = Path(__file__).with_name("launcher.py")


class BenchError(Exception):
    """A measurement that must not be reported: a run that failed, or a tool that did not start."""


@dataclass
class ChildRun:
    """One finished child process. CPU and RSS come from wait4's rusage, which on Linux covers the child and every
    descendant it waited for; ru_maxrss is the largest of their peaks, in KB (see launcher.py for its floor)."""

    argv: list[str]
    exit_code: int
    wall_s: float
    user_s: float
    sys_s: float
    peak_rss_kb: int
    load_avg: list[float]
    started_at: str
    log: str

    @property
    def cpu_s(self) -> float:
        return self.user_s + self.sys_s

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "cpu_s": self.cpu_s, "peak_rss_mb": self.peak_rss_kb / 1024}

    def log_tail(self, lines: int = 30) -> str:
        path = Path(self.log)
        text = path.read_text(errors="replace") if path.is_file() else ""
        return "\n".join(text.splitlines()[-lines:])


def run_child(argv: list[str], *, cwd: Path, env: dict[str, str], log: Path, timeout: float = 900) -> ChildRun:
    """Run `argv` to its end through launcher.py, its output to `log`; wall time from spawn to exit. Killed after
    `timeout` seconds."""
    load = [round(value, 2) for value in os.getloadavg()]
    started_at = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    proc = subprocess.run([sys.executable, "-I", "-S", str(LAUNCHER), str(timeout), str(cwd), str(log), "--", *argv],
                          env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    try:
        code, wall, user, system, rss = proc.stdout.split()
    except ValueError:
        raise BenchError(f"the launcher failed on {argv}: {proc.stderr.strip()[-800:]}") from None
    return ChildRun(argv=argv, exit_code=int(code), wall_s=float(wall), user_s=float(user), sys_s=float(system),
                    peak_rss_kb=int(rss), load_avg=load, started_at=started_at, log=str(log))


class AgentServer:
    """`agent_server.py` in its own process (so its CPU is not the child's), on a port of its choosing."""

    def __init__(self, python: str, latency: float, log: Path) -> None:
        self.latency = latency
        self._log = log.open("wb")
        self.proc = subprocess.Popen([python, str(SERVER_SCRIPT), "--latency", str(latency)],
                                     stdout=subprocess.PIPE, stderr=self._log, stdin=subprocess.DEVNULL)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().strip()
        if not line.isdigit():
            self.stop()
            raise BenchError(f"the agent server did not start (see {log})")
        self.port = int(line)
        self.base_url = f"http://127.0.0.1:{self.port}/v1"

    def stats(self) -> dict[str, Any]:
        """Connections, requests and chat completions served so far, and the server's CPU seconds."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/stats", timeout=10) as response:
            return json.loads(response.read())

    def stop(self) -> None:
        """Terminate the server and wait for it."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        self._log.close()

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def __enter__(self) -> AgentServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def child_env(**extra: str) -> dict[str, str]:
    """The environment of measured children: ours without CI and agenttest variables (a GitHub Actions shell
    would change the console and write step outputs), nor the interpreter's switches a shell may set that an
    install does not have (`PYTHONDONTWRITEBYTECODE`: a checkout whose bytecode is stale compiles at every start;
    `PYTHONUNBUFFERED`: every write of the child a system call), plus `extra`."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("GITHUB_", "AGENTTEST_"))}
    for name in ("FORCE_COLOR", "PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED"):
        env.pop(name, None)
    env.update(extra)
    return env


def median(values: list[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2
