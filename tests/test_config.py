"""agenttest.yaml: discovery, expansion, validation, merging with flags."""

from __future__ import annotations

from pathlib import Path

import pytest

from agenttest.config import build_run_config, derive_agent_id, suite_agent
from agenttest.errors import ConfigError, UsageError
from agenttest.project import find_config, load_project
from agenttest.secrets import mask


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_discovery_walks_up_from_the_first_input(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENTTEST_CONFIG", raising=False)
    config = _write(tmp_path / "proj" / "agenttest.yml", "version: 1\n")
    _write(tmp_path / "proj" / "tests" / "deep" / "s.jsonl", "")
    assert find_config(None, ["proj/tests/deep/s.jsonl"], tmp_path) == config.resolve()
    other = _write(tmp_path / "elsewhere.yaml", "version: 1\n")
    monkeypatch.setenv("AGENTTEST_CONFIG", str(other))
    assert find_config(None, ["proj/tests/deep/s.jsonl"], tmp_path) == other.resolve()
    assert find_config("proj/agenttest.yml", [], tmp_path) == config.resolve()
    with pytest.raises(ConfigError, match=r"config file nope\.yaml not found"):
        find_config("nope.yaml", [], tmp_path)


def test_variables_expand_with_defaults_and_secrets_are_masked(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_TOKEN", "s3cr3t-token-value")
    monkeypatch.delenv("AGENT_DIR", raising=False)
    path = _write(tmp_path / "agenttest.yaml", """
agents:
  a:
    provider: exec
    command: [run, "${AGENT_DIR:-bin}/agent"]
    env: {AUTH: "Bearer ${AGENT_TOKEN}"}
""")
    project = load_project(path)
    settings = project.agents["a"]
    assert settings.command == ["run", "bin/agent"]  # type: ignore[union-attr]
    assert settings.env == {"AUTH": "Bearer s3cr3t-token-value"}  # type: ignore[union-attr]
    assert mask("leaked s3cr3t-token-value here") == "leaked *** here"


def test_errors_name_the_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MISSING_VAR", raising=False)
    cases = {
        "defaults:\n  name: ${MISSING_VAR}\n": "defaults.name: environment variable MISSING_VAR is not set",
        "agent:\n  a: {}\n": "agent: unknown key (did you mean 'agents'?)",
        "agents:\n  a:\n    provider: telnet\n": "agents.a.provider: unknown provider 'telnet'",
        "agents:\n  a:\n    command: [x]\n": "agents.a: needs 'provider'",
        "agents:\n  a:\n    provider: exec\n": "agents.a.command: required",
        "defaults:\n  paralel: 3\n": "defaults.paralel: unknown run option (did you mean 'parallel'?)",
        "version: 2\n": "version:",
        "agents: [\n": "invalid YAML",
    }
    for text, message in cases.items():
        path = _write(tmp_path / "agenttest.yaml", text)
        with pytest.raises(ConfigError) as info:
            load_project(path)
        assert message in str(info.value), text
        assert str(path) in str(info.value)


def test_config_problems_name_their_lines(tmp_path: Path) -> None:
    """SPEC: a config error names the file and the line — of each problem, when there are several."""
    one = _write(tmp_path / "one.yaml", "version: 1\nagents:\n  bot:\n    provider: python\n"
                                        "    callable: bot:respond\n    timeot: 3\n")
    with pytest.raises(ConfigError) as info:
        load_project(one)
    assert str(info.value) == f"{one}:6: agents.bot.timeot: unknown key"
    several = _write(tmp_path / "several.yaml",
                     "connectors:\n  openai.gpt4o:\n    base_url: http://x\n    model: m\n    models: n\n"
                     "agents:\n  bot:\n    provider: http\n    url: http://x\n    headers: [a]\n"
                     "defaults:\n  paralel: 3\n")
    with pytest.raises(ConfigError) as info:
        load_project(several)
    said = str(info.value)
    assert said.startswith(f"{several}: 3 problems:\n"), said
    assert "  line 5: connectors.openai.gpt4o.models: unknown key" in said        # a name with a dot in it
    assert "  line 10: agents.bot.headers: " in said
    assert "  line 12: defaults.paralel: unknown run option (did you mean 'parallel'?)" in said


def test_a_config_problems_line_is_the_key_yaml_keeps(tmp_path: Path) -> None:
    twice = _write(tmp_path / "twice.yaml", "agents:\n  bot:\n    provider: python\n    callable: bot:respond\n"
                                            "    callable: 5\n")
    with pytest.raises(ConfigError) as info:
        load_project(twice)
    assert str(info.value).startswith(f"{twice}:5: agents.bot.callable: expected a string"), str(info.value)
    hyphen = _write(tmp_path / "hyphen.yaml", "version: 1\ndefaults:\n  output-dir: 5\n")
    with pytest.raises(ConfigError) as info:
        load_project(hyphen)
    assert str(info.value).startswith(f"{hyphen}:3: defaults.output_dir: expected a string"), str(info.value)


def test_cli_beats_defaults_beats_builtin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENTTEST_CONFIG", raising=False)
    _write(tmp_path / "agenttest.yaml", "defaults:\n  timeout: 30s\n  parallel: 8\n  name: x\n")
    config = build_run_config({"input": ["s.jsonl"], "parallel": 2}, tmp_path)
    assert (config.timeout, config.options.parallel, config.agent_id, config.options.retries) == (30.0, 2, "x", 2)
    with pytest.raises(UsageError, match=r"^--timeout: invalid duration 'soon'"):
        build_run_config({"input": ["s.jsonl"], "timeout": "soon"}, tmp_path)
    with pytest.raises(UsageError, match=r"^--parallel: must be at least 1, got 0$"):
        build_run_config({"input": ["s.jsonl"], "parallel": 0}, tmp_path)
    with pytest.raises(UsageError, match=r"^--run: invalid pattern '\(unclosed'"):
        build_run_config({"input": ["s.jsonl"], "run": "(unclosed"}, tmp_path)


@pytest.mark.parametrize(("text", "message"), [
    ("defaults:\n  verbose: 'no'\n", "defaults.verbose: expected true or false, got string"),
    ("defaults:\n  run: 5\n", "defaults.run: expected a string, got number"),
    ("defaults:\n  output_dir: 5\n", "defaults.output_dir: expected a string, got number"),
    ("defaults:\n  timeout: 30\n", "defaults.timeout: expected a string, got number"),
    ("defaults:\n  timeout: soon\n", "defaults.timeout: invalid duration 'soon'"),
    ("defaults:\n  parallel: 0\n", "defaults.parallel: must be at least 1, got 0"),
])
def test_defaults_are_type_checked(tmp_path: Path, text: str, message: str) -> None:
    path = _write(tmp_path / "agenttest.yaml", text)
    with pytest.raises(ConfigError) as info:
        load_project(path)
    assert message in str(info.value) and str(path) in str(info.value)


def test_agent_id_from_an_assistants_path() -> None:
    assert derive_agent_id(Path("assistants/workers/system/keyword/tests/x.jsonl")) == "workers.system.keyword"
    assert derive_agent_id(Path("app/assistants/expense/tests")) == "expense"
    assert derive_agent_id(Path("tests/x.jsonl")) is None
    # a suite in a folder of its agent's tests/ (Yao walks up to the agent's package.yao)
    assert derive_agent_id(Path("assistants/tests/hooks-test/tests/regress/x.jsonl")) == "tests.hooks-test"
    assert derive_agent_id(Path("assistants/tests/foo/x.jsonl")) == "tests.foo"


def test_the_agent_of_a_suite_is_the_directory_of_its_package_yao(tmp_path: Path) -> None:
    agent = tmp_path / "assistants" / "workers" / "mailer"
    (agent / "evals" / "deep").mkdir(parents=True)
    (agent / "package.yao").write_text("{}")
    assert suite_agent(agent / "evals" / "deep" / "x.jsonl") == ("workers.mailer", agent)
    assert suite_agent(tmp_path / "assistants" / "workers" / "other" / "tests" / "x.jsonl") == (
        "workers.other", tmp_path / "assistants" / "workers" / "other")


def test_record_and_replay_are_one_or_the_other(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="--record and --replay: a run either records its calls or replays them"):
        build_run_config({"input": ["s.jsonl"], "record": "a", "replay": "b"}, tmp_path)


def test_a_missing_variable_matters_only_where_it_is_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("REMOTE_TOKEN", raising=False)
    path = _write(tmp_path / "agenttest.yaml", """
connectors:
  llm: {model: m, api_key: "${REMOTE_TOKEN}"}
agents:
  local: {provider: exec, command: [run]}
  remote: {provider: http, url: "http://127.0.0.1:9/x", headers: {Authorization: "Bearer ${REMOTE_TOKEN}"}}
  model: {provider: openai, connector: llm}
""")
    project = load_project(path)            # a fork without the token can still load the file…
    project.check_variables("local", uses_connectors=False)   # …and run the local agent
    with pytest.raises(ConfigError, match=r"agents\.remote\.headers\.Authorization: environment variable REMOTE_TOKEN"):
        project.check_variables("remote", uses_connectors=False)
    with pytest.raises(ConfigError, match=r"connectors\.llm\.api_key: environment variable REMOTE_TOKEN"):
        project.check_variables("model", uses_connectors=True)
