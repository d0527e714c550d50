"""Secrets the network providers handle are masked everywhere, and in GitHub Actions registered with the runner
(`::add-mask::`) the moment they become known, where the runner executes it: outside the run's stop-commands
block."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from agenttest.agents.registry import ConnectorSettings
from agenttest.errors import AgentCallError
from agenttest.github.log import guarded_log
from agenttest.secrets import mask, register_secret, registered_secrets
from fakes.openai_server import FakeOpenAI, completion
from fakes.server import ScriptedServer, json_reply
from report.test_annotations import commands_the_runner_would_run, lines_inside_blocks

from .helpers import make_agent, request


def test_add_mask_is_printed_once_per_secret_in_github_actions(monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    register_secret("sk-ci-secret-000111")
    register_secret("sk-ci-secret-000111")
    register_secret("abc")                                  # too short to mask: never announced either
    register_secret("multi\nline%secret\r")
    assert capsys.readouterr().out == ("::add-mask::sk-ci-secret-000111\n"
                                       "::add-mask::multi%0Aline%25secret%0D\n")


def test_no_workflow_commands_outside_github_actions(monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    register_secret("sk-local-secret-222333")
    assert capsys.readouterr().out == ""
    assert mask("key=sk-local-secret-222333") == "key=***"


def test_providers_register_keys_and_credential_headers_written_literally(monkeypatch: pytest.MonkeyPatch,
                                                                          capsys: pytest.CaptureFixture[str],
                                                                          tmp_path: Path) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    connectors = {"c": ConnectorSettings(base_url="http://127.0.0.1:9/v1", model="m", api_key="sk-conn-literal-44")}
    with guarded_log(sys.stdout, guard=True):          # the agents are created inside the guarded run
        print("::error::agent text printed before the agents were made")
        make_agent("openai", tmp_path, base_url="http://127.0.0.1:9/v1", model="m", api_key="sk-inline-literal-55",
                   headers={"X-Api-Key": "header-literal-66", "X-Trace": "not-a-secret"})
        make_agent("openai", tmp_path, connectors=connectors, connector="c")
        make_agent("http", tmp_path, url="http://127.0.0.1:9/chat", headers={"Authorization": "Basic dXNlcjpwYXNz"})
    lines = capsys.readouterr().out.splitlines()
    executed = commands_the_runner_would_run(lines)
    for secret in ("sk-inline-literal-55", "header-literal-66", "sk-conn-literal-44", "dXNlcjpwYXNz"):
        assert f"::add-mask::{secret}" in executed
        assert mask(f"<{secret}>") == "<***>"
    assert not [line for line in lines_inside_blocks(lines) if "add-mask" in line]
    assert "::error::agent text printed before the agents were made" not in executed
    assert "not-a-secret" not in "\n".join(lines)


def test_every_credential_is_registered_by_create_and_none_later(monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str],
                                                                 fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    """In GitHub Actions the run opens a stop-commands block after creating the agent; an `::add-mask::` printed
    inside it is shown verbatim. So every connector a case or `-c` could switch to is registered by create()."""
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    connectors = {
        "own": ConnectorSettings(base_url=fake_openai.base_url, model="m", api_key="sk-own-connector-0101"),
        "other": ConnectorSettings(base_url=fake_openai.base_url, model="m2", api_key="sk-other-connector-0102",
                                   headers={"X-Api-Key": "hdr-other-connector-0103", "X-Team": "qa"}),
        "broken": ConnectorSettings(base_url="ftp://nowhere/v1", model="m", api_key="sk-broken-connector-0104"),
        "unused": ConnectorSettings(base_url=fake_openai.base_url, model="m", api_key="sk-unused-connector-0105",
                                    headers={"Authorization": "Bearer tok-unused-connector-0106"}),
    }
    openai_agent = make_agent("openai", tmp_path, connectors=connectors, connector="own")
    with ScriptedServer("/chat", json_reply({"content": "ok"})) as server:
        http_agent = make_agent("http", tmp_path, url=server.endpoint,
                                headers={"Authorization": "Bearer tok-http-agent-0107", "Cookie": "sid=c00kie-0108"})
        credentials = {"sk-own-connector-0101", "sk-other-connector-0102", "hdr-other-connector-0103",
                       "sk-broken-connector-0104", "sk-unused-connector-0105", "tok-unused-connector-0106",
                       "tok-http-agent-0107", "sid=c00kie-0108"}
        assert credentials <= set(registered_secrets())
        announced = capsys.readouterr().out
        assert all(f"::add-mask::{secret}\n" in announced for secret in credentials)
        before = registered_secrets()

        fake_openai.enqueue(completion("on own"))
        fake_openai.enqueue(completion("on other"))

        async def use_every_connector() -> list[str]:
            outcomes = []
            for options in ({}, {"connector": "other"}, {"connector": "broken"}):
                try:
                    outcomes.append(str((await openai_agent.call(request(**options))).content))
                except AgentCallError as exc:
                    outcomes.append(exc.message)
            outcomes.append(str((await http_agent.call(request())).content))
            await openai_agent.aclose()
            await http_agent.aclose()
            return outcomes

        outcomes = asyncio.run(use_every_connector())
    assert outcomes == ["on own", "on other",
                        "connectors.broken.base_url: 'ftp://nowhere/v1' must be an absolute http:// or https:// URL",
                        "ok"]
    assert registered_secrets() == before
    assert "::add-mask::" not in capsys.readouterr().out
