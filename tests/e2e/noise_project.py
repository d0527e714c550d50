"""A project whose agent under test is a `FlakyAgent` (fakes/flaky_agent.py) on 127.0.0.1: the tests of decisions
under noise (test_noise.py, test_decisions_docs.py) run the real CLI against it and count its calls."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from e2e.conftest import Project, Run
from fakes.flaky_agent import CONFIG, FlakyAgent, Script, case, flaky_agent, patterns

GROUPS = ("regressions", "noise", "fixes", "still_failing", "new", "removed", "introduced", "counts")


class NoiseProject(Project):
    """A project with the scripted agent `agent` as its default agent, and a suite of its cases."""

    def __init__(self, root: Path, agent: FlakyAgent, url: str) -> None:
        super().__init__(root)
        self.agent = agent
        self.url = url
        self.write("agenttest.yaml", CONFIG)

    def cases(self, *ids: str, suite: str = "s.jsonl") -> None:
        self.suite(suite, *(case(case_id) for case_id in ids))

    def run(self, *args: str, **kwargs: Any) -> Run:
        env = {"BOT_URL": self.url, **kwargs.pop("env", {})}
        return super().run(*args, env=env, **kwargs)

    def side(self, script: Script | Mapping[str, str], *args: str, env: dict[str, str] | None = None) -> Run:
        """One side of a comparison: the agent scripted afresh (its calls counted from 0), then a run."""
        self.agent.start(script if callable(script) else patterns(script))
        return self.run(*args, env=env or {})


@contextmanager
def noise_project(root: Path) -> Iterator[NoiseProject]:
    with flaky_agent(patterns({})) as (agent, url):
        yield NoiseProject(root, agent, url)


def decided(comparison: Mapping[str, Any], group: str) -> list[tuple[str, str]]:
    """A comparison group's (id, evidence) pairs."""
    return [(entry["id"], entry.get("evidence")) for entry in comparison[group]]


def verdicts(comparison: Mapping[str, Any]) -> dict[str, Any]:
    """What a comparison decided, without where its baseline came from or how long the runs took."""
    return {group: comparison[group] for group in GROUPS}
