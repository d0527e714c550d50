"""ValidationErrors as field messages: the one a config shows, every one a suite entry shows."""

from __future__ import annotations

from typing import Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from agenttest.validation import describe_errors, field_errors, first_error


class _Closed(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Connector(_Closed):
    model: str
    base_url: str | None = None


class Agent(_Closed):
    command: list[str]
    timeout: int = 1

    @field_validator("timeout")
    @classmethod
    def _positive(cls, value: int) -> int:
        if value < 1:
            raise ValueError("must be at least 1")
        return value


class Project(_Closed):
    version: Literal[1] = 1
    connectors: dict[str, Connector] = Field(default_factory=dict)
    pool: list[Agent] | None = None
    assert_: str | None = Field(None, alias="assert")


def _error(model: type[BaseModel], value: Any) -> ValidationError:
    with pytest.raises(ValidationError) as info:
        model.model_validate(value)
    return info.value


@pytest.mark.parametrize(("model", "value", "prefix", "message"), [
    (Agent, {"comand": ["x"]}, "agents.a", "agents.a.comand: unknown key (did you mean 'command'?)"),
    (Agent, {}, "agents.a", "agents.a.command: required"),
    (Agent, {"command": ["x"], "timeout": 0}, "agents.a", "agents.a.timeout: must be at least 1"),
    (Agent, {"command": "x"}, "", "command: expected an array, got string"),
    (Agent, {"command": ["x"], "timeout": "soon"}, "", "timeout: expected an integer, got string"),   # lax: parsed
    (Project, {"version": 2}, "", "version: Input should be 1"),
    (Project, {"conectors": {}}, "", "conectors: unknown key (did you mean 'connectors'?)"),
    (Project, {"Assert": "x"}, "", "Assert: unknown key (did you mean 'assert'? keys are case-sensitive)"),
    (Project, {"connectors": {"c": {"model": "m", "baseurl": "u"}}}, "",
     "connectors.c.baseurl: unknown key (did you mean 'base_url'?)"),
    (Project, {"pool": [{"command": []}, {"comand": []}]}, "", "pool[1].comand: unknown key (did you mean 'command'?)"),
])
def test_first_error_names_the_field(model: type[BaseModel], value: Any, prefix: str, message: str) -> None:
    assert first_error(_error(model, value), model, prefix) == message


def test_an_unknown_key_is_shown_before_the_missing_key_it_meant() -> None:
    exc = _error(Agent, {"timeout": 0, "comand": ["x"]})
    assert [error.kind for error in field_errors(exc, Agent)] == ["missing", "invalid", "unknown_key"]
    assert first_error(exc, Agent) == "comand: unknown key (did you mean 'command'?)"


def test_describe_errors_lists_every_problem_in_the_suite_wording() -> None:
    exc = _error(Project, {"connectors": {"c": {"baseurl": "u"}}, "version": 2})
    assert describe_errors(exc, Project, "x") == [
        "x.version: Input should be 1",
        "missing required field 'x.connectors.c.model'",
        "x.connectors.c: unknown key 'baseurl' (did you mean 'base_url'?)",
    ]
