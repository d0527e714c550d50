"""The pytest plugin (entry point `pytest11`, active once agenttest is installed): the fixtures `agenttest_config`,
`agent` and `assert_agent` — the seeds' script tests and `t.assert.Agent()`, as pytest.

It imports nothing of agenttest until a fixture is used, so a pytest run that uses none pays nothing for it. One
config (one connection pool) per session, closed at its end; under `pytest -n` each worker has its own.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from .api import Agent, Config
    from .assertions.base import Verdict


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("agenttest").addoption(
        "--agenttest-config", metavar="FILE",
        help="agenttest.yaml for the agent fixtures (default: $AGENTTEST_CONFIG, else the first agenttest.yaml "
             "found walking up from the rootdir)")


@pytest.fixture(scope="session")
def agenttest_config(pytestconfig: pytest.Config) -> Iterator[Config]:
    """The project's agenttest.yaml, found as the CLI finds it (from pytest's rootdir), for the whole session."""
    from .api import config_from
    from .errors import AgentTestError

    explicit = pytestconfig.getoption("agenttest_config")
    problem = None
    try:
        config = config_from(pytestconfig.rootpath,
                             str(pytestconfig.invocation_params.dir / explicit) if explicit else None)
    except AgentTestError as exc:
        problem = str(exc)
    if problem is not None:         # outside the `except`: the failure is the message, not a chain
        pytest.fail(problem, pytrace=False)
    yield config
    config.close()


class AgentFactory:
    """The `agent` fixture: `agent("assistants.expense")` (or `agent()` for `defaults.name`) is that agent."""

    def __init__(self, config: Config, test_id: str) -> None:
        self._config = config
        self._test_id = test_id

    def __call__(self, agent_id: str | None = None) -> Agent:
        __tracebackhide__ = True
        from .api import agent_of
        from .errors import AgentTestError

        try:
            return agent_of(self._config, agent_id, test_id=self._test_id)
        except AgentTestError as exc:
            problem = str(exc)
        pytest.fail(problem)            # outside the `except`: the failure is the message, not a chain


@pytest.fixture
def agent(agenttest_config: Config, request: pytest.FixtureRequest) -> AgentFactory:
    """A factory of the config's agents; their requests carry the test's name as `context.test_id`."""
    return AgentFactory(agenttest_config, request.node.name)


class AgentAssertion:
    """The `assert_agent` fixture: `assert_agent(response, "workers.test.validator", criteria=…)` asks the
    validator (as a `type: agent` assertion does) and fails the test with its reason and suggestions. It returns
    the verdict when the judge is satisfied. In an async test: `await assert_agent.acall(…)`."""

    def __init__(self, config: Config, node: pytest.Item) -> None:
        self._config = config
        self._node = node

    def __call__(self, response: Any, validator: str, criteria: Any = None, *,
                 metadata: dict[str, Any] | None = None, threshold: float | None = None, samples: int = 1,
                 connector: str | None = None, input: Any = None, conversation: list[dict[str, Any]] | None = None,
                 timeout: float | str | None = None) -> Verdict:
        __tracebackhide__ = True
        from .api import judge, refuse_inside_loop
        from .errors import AgentTestError, HelperError

        refuse_inside_loop("assert_agent()", "await assert_agent.acall(...)")
        try:
            verdict = judge(response, validator, criteria, metadata=metadata, threshold=threshold, samples=samples,
                            connector=connector, input=input, conversation=conversation, timeout=timeout,
                            config=self._config)
        except (HelperError, AgentTestError) as exc:
            problem = _problem(exc)
        else:
            return self._verdict(verdict)
        pytest.fail(problem)

    async def acall(self, response: Any, validator: str, criteria: Any = None, *,
                    metadata: dict[str, Any] | None = None, threshold: float | None = None, samples: int = 1,
                    connector: str | None = None, input: Any = None,
                    conversation: list[dict[str, Any]] | None = None, timeout: float | str | None = None) -> Verdict:
        __tracebackhide__ = True
        from .api import ajudge
        from .errors import AgentTestError, HelperError

        try:
            verdict = await ajudge(response, validator, criteria, metadata=metadata, threshold=threshold,
                                   samples=samples, connector=connector, input=input, conversation=conversation,
                                   timeout=timeout, config=self._config)
        except (HelperError, AgentTestError) as exc:
            problem = _problem(exc)
        else:
            return self._verdict(verdict)
        pytest.fail(problem)

    def _verdict(self, verdict: Verdict) -> Verdict:
        """The verdict, kept in the test's user properties (JUnit shows them); a failure when it did not pass."""
        __tracebackhide__ = True
        from .hints import helper_name
        from .secrets import mask

        details = verdict.details or {}
        self._node.user_properties.append(
            (helper_name("judge", str(details.get("judge") or "judge")),
             mask(f"{'passed' if verdict.passed else 'failed'}"
                  f"{'' if verdict.score is None else f' (score {verdict.score:g})'}: {details.get('reason', '')}")))
        if verdict.passed:
            return verdict
        lines = [verdict.message]
        if verdict.score is not None and "score" not in verdict.message:
            lines.append(f"score: {verdict.score:g}")
        if verdict.expected is not None:
            lines.append(f"criteria: {verdict.expected}")
        suggestions = details.get("suggestions") or []
        if suggestions:
            lines.append("suggestions:")
            lines.extend(f"  - {suggestion}" for suggestion in suggestions)
        pytest.fail(mask("\n".join(lines)))


def _problem(exc: Exception) -> str:
    """Why the judge could not decide (it failed, or was asked wrongly): never a verdict on the agent."""
    from .errors import HelperError

    return f"the judge gave no verdict: {exc.message}" if isinstance(exc, HelperError) else str(exc)


@pytest.fixture
def assert_agent(agenttest_config: Config, request: pytest.FixtureRequest) -> AgentAssertion:
    """`t.assert.Agent()`: judge a response with a validator agent of the config, failing with its reason."""
    return AgentAssertion(agenttest_config, request.node)


__all__ = ["AgentAssertion", "AgentFactory"]
