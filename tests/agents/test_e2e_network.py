"""The real CLI, in a subprocess, against local OpenAI-compatible and custom HTTP agents: verdicts, error kinds,
usage, connector overrides and secrets, as a user sees them in report.json and the log."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from e2e.conftest import Project, Run, run_cli
from fakes.helper_brain import HelperBrain
from fakes.openai_server import FakeOpenAI, by_input, completion, using_tools
from fakes.raw_server import RawServer, cut_body, reset
from fakes.server import ScriptedServer, json_reply, slow, sse_reply, status_reply, text_reply

REPO = Path(__file__).resolve().parents[2]
API_KEY = "sk-e2e-never-shown-7f3a9c"

CONFIG = """
    version: 1
    defaults:
      name: llm
    connectors:
      main:
        base_url: ${MAIN_URL}
        api_key: ${MAIN_KEY}
        model: gpt-main
        price: {input: 2.5, output: 10}
      other:
        base_url: ${OTHER_URL}
        api_key: ${MAIN_KEY}
        model: gpt-other
    agents:
      llm:
        provider: openai
        connector: main
        system: You are terse.
        stream: true
        tools: [{name: create_expense, parameters: {type: object}}]
        mock_tools: {create_expense: {id: EXP-1}}
      dead:
        provider: openai
        base_url: http://127.0.0.1:${DEAD_PORT}/v1
        model: m
      bot:
        provider: http
        url: ${BOT_URL}
        headers: {Authorization: "Bearer ${MAIN_KEY}"}
        body: {question: "{{last_user_message}}", session: "{{context.chat_id}}"}
        response: {content: $.answer.text, data: $.answer.data}
    """


@pytest.fixture
def servers() -> Iterator[tuple[FakeOpenAI, FakeOpenAI, ScriptedServer]]:
    with FakeOpenAI() as main, FakeOpenAI() as other, ScriptedServer("/chat") as bot:
        yield main, other, bot
    assert main.invalid == [] and other.invalid == []


def run(project: Project, servers: tuple[FakeOpenAI, FakeOpenAI, ScriptedServer], *args: str,
        env: dict[str, str] | None = None) -> Run:
    main, other, bot = servers
    with ScriptedServer("/gone") as gone:
        dead_port = str(gone.port)
    full_env = {"MAIN_URL": main.base_url, "OTHER_URL": other.base_url, "MAIN_KEY": API_KEY,
                "BOT_URL": bot.endpoint, "DEAD_PORT": dead_port, **(env or {})}
    return project.run(*args, env=full_env)


@pytest.fixture
def project(tmp_path: Path) -> Project:
    proj = Project(tmp_path)
    proj.write("agenttest.yaml", CONFIG)
    return proj


def test_openai_agent_passes_and_records_usage_and_tool_calls(project: Project, servers: tuple) -> None:
    main = servers[0]
    main.default = by_input({"taxi": using_tools(completion("Filing it.", [("create_expense", {"amount": 35})],
                                                            usage=(50, 9)))})
    project.suite("s.jsonl",
                  {"id": "hello", "input": "hello", "assert": {"type": "contains", "value": "echo: hello"}},
                  {"id": "taxi", "input": "file my taxi, 35",
                   "assert": {"type": "tool_called", "value": {"name": "create_expense", "arguments": {"amount": 35}}}})
    result = run(project, servers, "-i", "s.jsonl")
    assert result.code == 0, result.stdout + result.stderr
    taxi = result.result("taxi")
    assert taxi["status"] == "passed"
    assert taxi["output"] == 'Done: {"id": "EXP-1"}'     # the mocked result went back, and the model answered
    assert taxi["usage"] == {"prompt_tokens": 50 + 11, "completion_tokens": 9 + 7, "total_tokens": 59 + 18}
    assert {r["model"] for r in main.requests} == {"gpt-main"}
    assert all(r["stream"] and r["messages"][0]["role"] == "system" for r in main.requests)


def test_faults_are_verdicts_with_error_kinds(project: Project, servers: tuple) -> None:
    main = servers[0]
    main.default = by_input({
        "overloaded": status_reply(503, "The server is overloaded", retry_after="0"),
        "garbage": text_reply("<html>oops</html>", "text/html"),
        "slow": slow(5, completion("too late")),
        "cut": sse_reply(["data: " + json.dumps({"choices": [{"index": 0, "delta": {"content": "Hel"}}]}) + "\n\n"],
                         cut=True),
    })
    project.suite("s.jsonl",
                  {"id": "overloaded", "input": "overloaded"},
                  {"id": "garbage", "input": "garbage"},
                  {"id": "slow", "input": "slow", "timeout": "300ms"},
                  {"id": "cut", "input": "cut"},
                  {"id": "fine", "input": "fine", "assert": {"type": "contains", "value": "fine"}})
    result = run(project, servers, "-i", "s.jsonl")
    assert result.code == 1
    endpoint = main.endpoint
    overloaded = result.result("overloaded")
    assert (overloaded["status"], overloaded["error_kind"]) == ("error", "agent")
    assert overloaded["error"] == f"agent error: HTTP 503 from {endpoint}: The server is overloaded (after 3 attempts)"
    garbage = result.result("garbage")
    assert garbage["error"] == f"agent error: reply from {endpoint} is not valid JSON (HTTP 200, text/html): " \
                               "<html>oops</html>"
    assert result.result("slow")["status"] == "timeout"
    assert result.result("cut")["error"].startswith(f"agent error: the reply from {endpoint} was cut off after ")
    assert result.result("fine")["status"] == "passed"
    assert sum(1 for r in main.requests if "overloaded" in json.dumps(r)) == 3   # --retries default 2


def test_connection_refused_is_an_infra_error(project: Project, servers: tuple) -> None:
    project.suite("s.jsonl", {"id": "a", "input": "hi"})
    result = run(project, servers, "-i", "s.jsonl", "-n", "dead", "--retries", "0")
    a = result.result("a")
    assert (a["status"], a["error_kind"]) == ("error", "infra")
    assert a["error"].startswith("agent error: cannot connect to http://127.0.0.1:")
    assert a["error"].endswith("/v1/chat/completions: Connection refused")


def test_connector_override_cli_over_case_over_agent(project: Project, servers: tuple) -> None:
    main, other, _ = servers
    project.suite("s.jsonl", {"id": "agent-default", "input": "one"},
                  {"id": "case-override", "input": "two", "options": {"connector": "other"}})
    assert run(project, servers, "-i", "s.jsonl").code == 0
    assert [r["model"] for r in main.requests] == ["gpt-main"]
    assert [r["model"] for r in other.requests] == ["gpt-other"]
    project.suite("t.jsonl", {"id": "cli", "input": "three", "options": {"connector": "main"}})
    assert run(project, servers, "-i", "t.jsonl", "-c", "other").code == 0
    assert len(main.requests) == 1 and len(other.requests) == 2
    unknown = run(project, servers, "-i", "t.jsonl", "-c", "nope")
    assert unknown.code == 2 and "--connector: 'nope' is not defined under connectors" in unknown.stderr


def test_custom_http_agent_with_template_and_mapping(project: Project, servers: tuple) -> None:
    bot = servers[2]
    bot.default = json_reply({"answer": {"text": "Your expense EXP-7 is approved.", "data": {"id": "EXP-7"}}})
    project.suite("s.jsonl", {"id": "status", "input": "status of EXP-7?",
                              "assert": {"type": "json_path", "path": "$.id", "value": "EXP-7"}})
    result = run(project, servers, "-i", "s.jsonl", "-n", "bot")
    assert result.code == 0, result.stdout + result.stderr
    [sent] = bot.requests
    assert sent["question"] == "status of EXP-7?" and sent["session"].startswith("test-status-")
    assert bot.headers[0]["Authorization"] == f"Bearer {API_KEY}"


def test_secrets_never_reach_artifacts_or_logs(project: Project, servers: tuple) -> None:
    main, _, bot = servers
    # A hostile agent that echoes its credentials back, in a reply and in an error.
    main.default = by_input({"leak": completion(f"my key is {API_KEY}"),
                             "deny": status_reply(401, f"Incorrect API key provided: {API_KEY}")})
    bot.default = json_reply({"answer": {"text": f"header was Bearer {API_KEY}"}})
    project.suite("s.jsonl", {"id": "leak", "input": "leak", "assert": {"type": "contains", "value": API_KEY}},
                  {"id": "deny", "input": "deny"})
    project.suite("b.jsonl", {"id": "bot", "input": "hi"})
    runs = [run(project, servers, "-i", "s.jsonl", "-v", env={"GITHUB_ACTIONS": "true"}),
            run(project, servers, "-i", "b.jsonl", "-n", "bot", "--output-dir", "bot-results")]
    assert runs[0].stdout.startswith(f"::add-mask::{API_KEY}\n")
    assert runs[0].stdout.count("::add-mask::") == 1
    assert runs[0].result("deny")["error"].endswith("Incorrect API key provided: ***")
    assert "my key is ***" in runs[0].result("leak")["output"]
    for result in runs:
        log = [line for line in (result.stdout + result.stderr).splitlines() if not line.startswith("::add-mask::")]
        assert API_KEY not in "\n".join(log)
    written = [p for p in project.root.rglob("*") if p.is_file() and "results" in str(p.parent)]
    assert len(written) >= 4
    for path in written:
        assert API_KEY not in path.read_text(errors="replace"), path


def test_the_openai_example_runs_against_an_openai_compatible_server(tmp_path: Path) -> None:
    reply = by_input({
        "What can you help": completion("Hi! I can help you file and track your expenses."),
        "taxi": using_tools(completion(None, [("create_expense", {"amount": 35, "currency": "EUR",
                                                                  "description": "Taxi ride to the client"})]),
                            "Filed: your taxi ride is expense EXP-1."),
        "approval limit": completion('{"approval_limit_eur": 5000}'),
    })
    with FakeOpenAI(default=reply) as server:
        result = run_cli("-i", "examples/openai/tests/support.jsonl", "--output-dir", str(tmp_path / "out"),
                         cwd=REPO, env={"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-example",
                                        "OPENAI_MODEL": "gpt-4o-mini"})
        assert server.invalid == []
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert result.code == 0, result.stdout + result.stderr
    assert [r["status"] for r in report["results"]] == ["passed"] * 3
    first = server.requests[0]
    assert first["model"] == "gpt-4o-mini" and first["temperature"] == 0 and first["stream"] is True
    assert first["messages"][0]["content"].startswith("You are the expense reimbursement assistant")
    assert first["tools"][0]["function"]["name"] == "create_expense"


def test_the_openai_example_judges_and_converses_with_the_built_in_helpers(tmp_path: Path) -> None:
    target = by_input({
        "What can you help": completion("Hi! I can help you file and track your expense reports."),
        "file an expense": completion("Sure, what was it and how much?"),
        "taxi": using_tools(completion(None, [("create_expense", {"amount": 35, "currency": "EUR"})]),
                            "Done: it is filed as EXP-1."),
    })
    brain = HelperBrain(target=target)

    async def reply(request: web.Request, body: Any) -> web.StreamResponse:
        system = body["messages"][0].get("content", "")
        if system.startswith("You play the user"):       # the simulated user, as a model would play it
            said = [m["content"] for m in json.loads(body["messages"][-1]["content"])["conversation"]
                    if m["role"] == "user"]
            message = ["A taxi ride to a client, 35 EUR.", "Thanks! Is it filed now?"][min(len(said) - 1, 1)]
            return await completion(json.dumps({"message": message, "goal_achieved": False}))(request, body)
        return await brain(request, body)

    with FakeOpenAI(default=reply) as server:
        result = run_cli("-i", "examples/openai/tests/conversations.jsonl", "--output-dir", str(tmp_path / "out"),
                         "--no-cache", cwd=REPO, env={"OPENAI_BASE_URL": server.base_url,
                                                      "OPENAI_API_KEY": "sk-example", "OPENAI_MODEL": "gpt-4o-mini"})
        assert server.invalid == []
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert result.code == 0, result.stdout + result.stderr
    talk = next(r for r in report["results"] if r["id"] == "files-by-conversation")
    # Turn 2 calls the tool, gets its mocked result and confirms, in one turn of the tool loop.
    assert [t.get("checkpoints_reached") for t in talk["metadata"]["turns"]] == [None, ["files", "confirms"]]
    assert brain.prompts["judge"].startswith("You are the judge")
    # The judged case, then `confirms` at turn 2 (due as soon as `files` is reached, in the same turn).
    assert report["summary"]["usage"]["judge"]["calls"] == 2


def test_a_body_cut_mid_way_and_a_reset_connection(tmp_path: Path) -> None:
    project = Project(tmp_path)
    project.write("agenttest.yaml", """
        version: 1
        agents:
          cut:
            provider: http
            url: ${CUT_URL}
          reset:
            provider: http
            url: ${RESET_URL}
        """)
    project.suite("s.jsonl", {"id": "a", "input": "hi"})
    with RawServer(cut_body(b'{"content": "abc', 100)) as cut, RawServer(reset) as resetting:
        env = {"CUT_URL": cut.url("/chat"), "RESET_URL": resetting.url("/chat")}
        was_cut = project.run("-i", "s.jsonl", "-n", "cut", "--retries", "0", env=env)
        was_reset = project.run("-i", "s.jsonl", "-n", "reset", "--retries", "0", env=env)
    a = was_cut.result("a")
    assert (a["status"], a["error_kind"]) == ("error", "agent")
    assert a["error"] == (f"agent error: the reply from {cut.url('/chat')} was cut off after 16 bytes of 100 "
                          "(connection closed mid-body)")
    assert "ContentLengthError" not in was_cut.stdout + was_cut.stderr
    b = was_reset.result("a")
    assert (b["status"], b["error_kind"]) == ("error", "infra")
    assert b["error"] == f"agent error: connection to {resetting.url('/chat')} failed: Connection reset by peer"


def test_a_base_url_without_its_version_gets_a_hint_on_404(tmp_path: Path) -> None:
    project = Project(tmp_path)
    project.write("agenttest.yaml", """
        version: 1
        agents:
          llm: {provider: openai, base_url: "${LLM_URL}", model: m}
        """)
    project.suite("s.jsonl", {"id": "a", "input": "hi"})
    with FakeOpenAI() as server:
        missing = project.run("-i", "s.jsonl", "-n", "llm", env={"LLM_URL": server.origin})
        right = project.run("-i", "s.jsonl", "-n", "llm", env={"LLM_URL": server.base_url})
    assert (missing.code, right.code) == (1, 0)
    assert missing.result("a")["error"] == (
        f"agent error: HTTP 404 from {server.origin}/chat/completions: 404: Not Found — base_url usually ends in /v1 "
        "(https://host/v1, http://localhost:11434/v1): requests go to <base_url>/chat/completions")
