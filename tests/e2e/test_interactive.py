"""`--interactive` on a pseudo-terminal, as a person runs it (SPEC §2, §5): the person types the simulated user's
turns and sees each reply, tool call and checkpoint; an empty line lets the simulator speak; Ctrl-D ends the
conversation; `--save-conversation` appends what was said as `turns` cases that replay it without a terminal."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from e2e.conftest import Project
from e2e.test_conversation_steps import NO_DELETE, contains, run, said_to, scripted, shop_project


class Terminal:
    """The CLI on a pseudo-terminal: what it printed so far, read as a person reads it, and what was typed."""

    def __init__(self, args: list[str], cwd: Path, env: dict[str, str]) -> None:
        master, slave = pty.openpty()
        self.proc = subprocess.Popen([sys.executable, "-m", "agenttest", *args], cwd=cwd, env=env, stdin=slave,
                                     stdout=slave, stderr=slave, close_fds=True, start_new_session=True)
        os.close(slave)
        self.master = master
        self.screen = ""
        self._read_up_to = 0

    def expect(self, text: str, limit: float = 60) -> None:
        """Wait until `text` is printed after what was expected last. The limit only turns a hang into a failure."""
        deadline = time.monotonic() + limit
        while text not in self.screen[self._read_up_to:]:
            if not self._read(deadline - time.monotonic()):
                raise AssertionError(f"never printed {text!r}; the terminal shows:\n{self.screen}")
        self._read_up_to = self.screen.index(text, self._read_up_to) + len(text)

    def type(self, line: str) -> None:
        os.write(self.master, line.encode() + b"\n")

    def end_of_input(self) -> None:
        os.write(self.master, b"\x04")       # Ctrl-D at the start of a line

    def finish(self, limit: float = 60) -> int:
        deadline = time.monotonic() + limit
        while self._read(deadline - time.monotonic()):
            pass
        code = self.proc.wait(max(deadline - time.monotonic(), 0.1))
        os.close(self.master)
        return code

    def _read(self, limit: float) -> bool:
        """Read what is there within `limit` seconds; False once the program has closed the terminal."""
        if limit <= 0:
            return False
        ready, _, _ = select.select([self.master], [], [], limit)
        if not ready:
            return False
        try:
            data = os.read(self.master, 4096)
        except OSError:         # EIO: the other end is closed
            return False
        self.screen += data.decode("utf-8", "replace").replace("\r", "").replace("\x1b[K", "")
        return bool(data)


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return shop_project(tmp_path)


def cases(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_person_plays_the_user_on_a_terminal_and_the_saved_conversation_replays(project: Project) -> None:
    talk_checkpoints = [{"id": "refund", "assert": contains("refund")},
                        {"id": "order", "after": ["refund"], "assert": contains("order 42")}]
    project.suite("s.jsonl",
                  {"id": "talk", "name": "Refund by hand", "input": "hi", "simulator": scripted("order 42"),
                   "checkpoints": talk_checkpoints, "guards": [NO_DELETE]},
                  {"id": "explore", "input": "approve", "interactive": {"enabled": True}},
                  {"id": "quit", "input": "hi", "simulator": scripted("more"),
                   "checkpoints": [{"id": "never", "assert": contains("zed")}]})
    env = {**{k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "AGENTTEST_"))},
           "CALLS_FILE": str(project.root / "calls.jsonl"), "BRAIN_URL": "http://127.0.0.1:9", "NO_COLOR": "1"}
    terminal = Terminal(["-i", "s.jsonl", "--interactive", "--save-conversation", "saved.jsonl", "--color",
                         "never"], project.root, env)
    terminal.expect("── conversation [talk] Refund by hand")
    assert "Parallel:" not in terminal.screen      # one person, one conversation at a time, whatever the default
    terminal.expect("An empty line lets the simulator speak; /done or Ctrl-D ends the conversation.")
    terminal.expect("user (case) › hi")
    terminal.expect("agent › echo: hi")
    terminal.expect("you (turn 2) › ")
    terminal.type("I want a refund")
    terminal.expect("agent › echo: I want a refund")
    terminal.expect("✓ checkpoint refund reached")
    terminal.expect("you (turn 3) › ")
    terminal.type("")                            # the simulator speaks
    terminal.expect("user (scripted) › order 42")
    terminal.expect("agent › echo: order 42")
    terminal.expect("✓ checkpoint order reached")
    terminal.expect("── ended: checkpoints reached")
    terminal.expect("saved as talk-saved in saved.jsonl")
    terminal.expect("── conversation [explore]")    # the fixed turn ran out while the agent asks: the person goes on
    terminal.expect("/done or Ctrl-D ends the conversation.")
    terminal.expect("agent › This needs a manager: what is the PO number?")
    terminal.expect("you (turn 2) › ")
    terminal.type("PO-7")
    terminal.expect("agent › echo: PO-7")
    terminal.expect("── ended: turns completed")
    terminal.expect("── conversation [quit]")
    terminal.expect("you (turn 2) › ")
    terminal.end_of_input()
    terminal.expect("── ended: goal achieved")
    assert terminal.finish() == 1, terminal.screen
    screen = terminal.screen
    assert "► [talk] Refund by hand" in screen and "  └─ the person ended the conversation but not all required " \
                                                   "checkpoints reached: never" in screen
    report = json.loads((project.root / "agenttest-results" / "report.json").read_text())
    by_id = {r["id"]: r for r in report["results"]}
    assert {i: r["status"] for i, r in by_id.items()} == {"talk": "passed", "explore": "passed", "quit": "failed"}
    assert [(t["input"], t["source"]) for t in by_id["talk"]["metadata"]["turns"]] == [
        ("hi", "case"), ("I want a refund", "person"), ("order 42", "scripted")]
    assert by_id["talk"]["metadata"]["saved"] == {"file": "saved.jsonl", "id": "talk-saved"}
    assert by_id["quit"]["metadata"]["ended"] == {"turn": 2, "goal_achieved": True, "by": "person"}

    saved = cases(project.root / "saved.jsonl")
    assert saved == [
        {"id": "talk-saved", "name": "Refund by hand",
         "description": "saved by --save-conversation from case talk (s.jsonl:1)",
         "turns": [{"input": "hi"}, {"input": "I want a refund"}, {"input": "order 42"}],
         "checkpoints": talk_checkpoints, "guards": [NO_DELETE]},
        {"id": "explore-saved", "description": "saved by --save-conversation from case explore (s.jsonl:2)",
         "turns": [{"input": "approve"}, {"input": "PO-7"}]},
        {"id": "quit-saved", "description": "saved by --save-conversation from case quit (s.jsonl:3)",
         "turns": [{"input": "hi"}], "checkpoints": [{"id": "never", "assert": contains("zed")}]}]

    replayed = run(project, None, "-i", "saved.jsonl")        # no terminal, no simulator: the turns as said
    assert {r["id"]: r["status"] for r in replayed.report["results"]} == {
        "talk-saved": "passed", "explore-saved": "passed", "quit-saved": "failed"}
    assert said_to(project, "talk-saved")[-1] == said_to(project, "talk")[-1] == ["hi", "I want a refund", "order 42"]
    assert said_to(project, "explore-saved")[-1] == ["approve", "PO-7"]
    assert replayed.result("talk-saved")["metadata"]["termination"] == "turns_completed"
    again = run(project, None, "-i", "s.jsonl", "--run", "explore", "--save-conversation", "saved.jsonl")
    assert again.code == 0
    assert cases(project.root / "saved.jsonl")[-1]["id"] == "explore-saved-2"      # ids stay unique in the file


def test_a_simulated_conversation_is_frozen_into_fixed_turns_without_a_terminal(project: Project) -> None:
    project.suite("s.jsonl", {"id": "sim", "input": [{"role": "user", "content": "hi"}],
                              "simulator": scripted("refund please", "order 42"),
                              "checkpoints": [{"id": "order", "assert": contains("order 42")}], "max_turns": 5})
    first = run(project, None, "-i", "s.jsonl", "--save-conversation", "frozen/saved.jsonl", "--runs", "2")
    assert first.code == 0, first.stdout
    [saved] = cases(project.root / "frozen" / "saved.jsonl")     # the first run only
    assert saved["turns"] == [{"input": [{"role": "user", "content": "hi"}]}, {"input": "refund please"},
                              {"input": "order 42"}]
    assert "simulator" not in saved and "max_turns" not in saved
    (project.root / "elsewhere").symlink_to(project.root.parent)
    refused = run(project, None, "-i", "s.jsonl", "--save-conversation", "elsewhere/saved.jsonl")
    assert refused.code == 2 and "--save-conversation elsewhere/saved.jsonl: it leads through a symlink to " \
        in refused.stderr
    assert not (project.root.parent / "saved.jsonl").exists()
