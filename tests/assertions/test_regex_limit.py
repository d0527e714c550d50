"""`regex_limit`: a search that backtracks catastrophically on a reply is stopped, in a process the run owns."""

from __future__ import annotations

import re
import signal
import threading
import time
from collections.abc import Callable

import pytest

from agenttest.agents.base import AgentResponse, ToolExecution
from agenttest.assertions import AssertionResult, regex_limit

Check = Callable[..., AssertionResult]
HOSTILE = "a" * 40 + "!"                 # against ^(\w+\s?)*$: 2^40 ways to fail
BACKTRACKS = r"^(\w+\s?)*$"


@pytest.fixture
def owned(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(regex_limit, "SEARCH_SECONDS", 0.2)
    with regex_limit.owned():
        yield


@pytest.mark.usefixtures("owned")
def test_a_search_that_backtracks_is_stopped_and_the_assertion_fails_saying_why(check: Check) -> None:
    started = time.monotonic()
    result = check({"type": "regex", "value": BACKTRACKS}, HOSTILE)
    assert time.monotonic() - started < 5
    assert result.passed is False
    assert result.message == (f"output not checked: the pattern '{BACKTRACKS}' was stopped after 0.2s on this text: it "
                              "backtracks catastrophically on it (a repeated group that can match the same text in "
                              "many ways, such as (\\w+\\s?)*)")
    assert check({"type": "regex", "value": BACKTRACKS}, "a b c").passed      # the timer is off again
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


@pytest.mark.usefixtures("owned")
def test_a_tool_result_pattern_is_stopped_too(check: Check) -> None:
    response = AgentResponse(tools=[ToolExecution(id="1", name="lookup", arguments={}, result=HOSTILE)])
    result = check({"type": "tool_result", "value": {"tool": "lookup", "result": f"regex:{BACKTRACKS}"}}, response)
    assert result.passed is False and "was stopped after 0.2s" in result.message


def test_outside_a_run_searches_are_not_timed_and_the_handler_is_put_back(monkeypatch: pytest.MonkeyPatch) -> None:
    before = signal.getsignal(signal.SIGALRM)
    with regex_limit.owned():
        assert signal.getsignal(signal.SIGALRM) is regex_limit._alarm
    assert signal.getsignal(signal.SIGALRM) is before
    calls: list[tuple[int, float]] = []
    monkeypatch.setattr(regex_limit, "setitimer", lambda *args: calls.append(args))
    assert regex_limit.search(re.compile("b"), "abc") is not None
    assert calls == []                  # the Python API, the pytest plugin: the caller's process


@pytest.mark.usefixtures("owned")
def test_a_search_off_the_main_thread_is_not_timed(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[int, float]] = []
    monkeypatch.setattr(regex_limit, "setitimer", lambda *args: calls.append(args))
    found: list[object] = []
    thread = threading.Thread(target=lambda: found.append(regex_limit.search(re.compile("b"), "abc")))
    thread.start()
    thread.join()
    assert found[0] is not None and calls == []     # the alarm would stop the main thread, not this one
