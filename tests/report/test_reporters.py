"""Reporters: each event reaches every reporter that listens to it, in order; one that breaks is said once."""

from __future__ import annotations

from typing import Any

from agenttest.cases.model import InvalidCase
from agenttest.report.base import Reporter, Reporters
from agenttest.results import CaseResult


class _Listener(Reporter):
    def __init__(self, name: str, heard: list[str]) -> None:
        self.name, self.heard = name, heard

    def case_finished(self, result: CaseResult) -> None:
        self.heard.append(f"{self.name} finished {result.id}")

    def flush(self) -> None:
        self.heard.append(f"{self.name} flushed")


class _Starts(Reporter):
    def __init__(self, heard: list[str]) -> None:
        self.heard = heard

    def case_started(self, case: Any) -> None:
        self.heard.append(f"started {case.id}")


class _DuckTyped:
    """Not a Reporter, with case_finished and run_finished only: told what it listens to."""

    def __init__(self, heard: list[str]) -> None:
        self.heard = heard

    def problems(self) -> list[str]:
        return self.__dict__.setdefault("_problems", [])

    def problem(self, message: str, stream: Any = None) -> None:
        self.problems().append(message)

    def case_finished(self, result: CaseResult) -> None:
        self.heard.append(f"duck finished {result.id}")

    def run_finished(self, report: Any) -> None:
        raise RuntimeError("disk full")


def test_each_event_reaches_the_reporters_that_listen_to_it_in_order() -> None:
    heard: list[str] = []
    duck = _DuckTyped(heard)
    reporters = Reporters([_Listener("a", heard), _Starts(heard), Reporter(), _Listener("b", heard), duck])  # type: ignore[list-item]
    reporters.case_started(InvalidCase("bad", id="c1"))
    reporters.case_finished(CaseResult(id="c1", status="passed"))
    reporters.flush()
    assert heard == ["started c1", "a finished c1", "b finished c1", "duck finished c1", "a flushed", "b flushed"]
    assert duck.problems() == [] and not reporters.failed()
    reporters.run_finished(None)  # type: ignore[arg-type]
    assert duck.problems() == ["_DuckTyped failed on run_finished: RuntimeError: disk full"] and reporters.failed()
