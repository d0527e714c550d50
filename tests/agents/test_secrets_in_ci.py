"""Secrets the network providers handle are masked everywhere, and in GitHub Actions registered with the runner
(`::add-mask::`) the moment they become known, where the runner executes it: outside the run's stop-commands
block."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agenttest.actions_log import guarded_log
from agenttest.agents.registry import ConnectorSettings
from agenttest.secrets import mask, register_secret
from report.test_annotations import commands_the_runner_would_run, lines_inside_blocks

from .helpers import make_agent


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
