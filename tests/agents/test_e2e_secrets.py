"""Secrets through the real CLI in a GitHub Actions step: which values are secrets (keys, URL user-info and query
values, exec `env`), that each is sent once to `::add-mask::`, and that no artifact and no log line holds one in any
form GitHub's runner masks (raw, JSON-escaped, URL-encoded, base64 at three alignments) or any part of one left by
a cut."""

from __future__ import annotations

import base64
import json
import sys
import urllib.parse
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from e2e.conftest import Project, Run
from fakes.openai_server import FakeOpenAI, completion
from fakes.server import ScriptedServer, status_reply
from report.test_annotations import commands_the_runner_would_run

KEY = 'sk-"quo/ted"-KEY-0123456789abcdef'        # an API key with a quote and a slash
PAT = "ghp_PAT0123456789abcdefXYZ"               # a token in a URL's user-info
SIG = "sigABC/def+ghi0123456789"                  # a signature in a URL's query
BASIC = "basic-pass-0123456789"                   # a Basic-auth password in a URL
LITERAL = "literal-pass-4455667788"               # a password written literally in a URL
CFG = "service-config-0123456789"                 # an exec `env` value (its name is no credential's)
TOKEN = "exec-token-0123456789abcdefghij"          # an exec `env` value named like a credential
SECRETS = (KEY, PAT, SIG, BASIC, LITERAL, CFG, TOKEN)

CONFIG = """
    version: 1
    defaults:
      name: llm
    agents:
      llm:
        provider: openai
        base_url: ${LLM_URL}
        api_key: ${LLM_KEY}
        model: m
      bot:
        provider: http
        url: http://${GH_PAT}@127.0.0.1:${BOT_PORT}/chat?sig=${SIG}&v=1
      dead:
        provider: http
        url: http://${GH_PAT}@127.0.0.1:${DEAD_PORT}/chat?sig=${SIG}
      basic:
        provider: http
        url: http://user:${BASIC_PW}@127.0.0.1:${BOT_PORT}/chat
      literal:
        provider: http
        url: http://user:literal-pass-4455667788@127.0.0.1:${DEAD_PORT}/chat
      tool:
        provider: exec
        command: [PYTHON, tool.py]
        env: {SERVICE_CFG: "${SERVICE_CFG}", EXEC_TOKEN: "${EXEC_TOKEN}"}
    """

TOOL = '''
import json, os, sys
request = json.load(sys.stdin)
text = request["messages"][-1]["content"]
token = os.environ["EXEC_TOKEN"]
if text == "fail":
    # the stderr tail (2000 characters) starts at the token's second character
    sys.stderr.write("noise " + token + "y" * (2000 - len(token) + 1))
    sys.exit(3)
print(json.dumps({"content": "config " + os.environ["SERVICE_CFG"] + " token " + token}))
'''


def forms(secret: str) -> list[str]:
    """The forms GitHub's runner masks (actions/runner ValueEncoders), computed here independently."""
    data = secret.encode()
    return [secret, json.dumps(secret)[1:-1], urllib.parse.quote(secret, safe=""),
            base64.b64encode(data).decode(), base64.b64encode(data[1:]).decode(), base64.b64encode(data[2:]).decode()]


def leaks(text: str) -> list[str]:
    """Every form of every secret found in `text`, and every cut of a secret that keeps all but one character."""
    found = [form for secret in SECRETS for form in forms(secret) if form in text]
    return found + [cut for secret in SECRETS for cut in (secret[:-1], secret[1:]) if cut in text]


def artifacts(run: Run) -> dict[str, str]:
    """Every file the run wrote (its results and the step summary), and its log without the `::add-mask::` lines."""
    results = run.cwd / "agenttest-results"
    files = {path.name: path.read_text(errors="replace") for path in results.iterdir() if path.is_file()}
    assert {"report.json", "events.jsonl", "junit.xml", "summary.md", "ctrf.json"} <= set(files), sorted(files)
    files["step summary"] = (run.cwd / "step_summary.md").read_text()
    logged = [line for line in (run.stdout + run.stderr).splitlines() if not line.startswith("::add-mask::")]
    return {**files, "log": "\n".join(logged)}


def echo_authorization() -> Any:
    async def reply(request: web.Request, body: Any) -> web.StreamResponse:
        return web.json_response({"content": f"you sent {request.headers.get('Authorization')}"})
    return reply


def run_step(project: Project, *args: str, **env: str) -> tuple[Run, dict[str, str]]:
    """The CLI as a GitHub Actions step, and what it left (read before the next run writes over it)."""
    summary = project.root / "step_summary.md"
    summary.write_text("")
    run = project.run(*args, "--retries", "0", env={
        "GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary), "LLM_KEY": KEY, "GH_PAT": PAT, "SIG": SIG,
        "BASIC_PW": BASIC, "SERVICE_CFG": CFG, "EXEC_TOKEN": TOKEN, "LLM_URL": "http://127.0.0.1:9/v1", **env})
    assert "Traceback" not in run.stderr, run.stderr
    return run, artifacts(run)


@pytest.fixture
def project(tmp_path: Path) -> Project:
    proj = Project(tmp_path)
    proj.write("agenttest.yaml", CONFIG.replace("PYTHON", sys.executable.replace("\\", "/")))
    proj.write("tool.py", TOOL)
    proj.suite("one.jsonl", {"id": "one", "input": "hi", "assert": {"type": "contains", "value": "nope"}})
    return proj


@pytest.fixture
def dead_port() -> str:
    with ScriptedServer("/gone") as gone:
        return str(gone.port)


def assert_no_leaks(*steps: tuple[Run, dict[str, str]]) -> list[Run]:
    for run, written in steps:
        assert run.code == 1, (run.stdout, run.stderr)
        for artifact, text in written.items():
            assert not leaks(text), (artifact, leaks(text))
    return [run for run, _ in steps]


def masks(run: Run) -> list[str]:
    """The `::add-mask::` commands the runner would execute (none inside a stop-commands block), each once."""
    found = [line for line in commands_the_runner_would_run(run.stdout.splitlines()) if line.startswith("::add-mask::")]
    assert len(found) == len(set(found))
    return found


def test_a_secret_straddling_a_cut_is_masked_whole(project: Project) -> None:
    """An error body is quoted to 300 characters and an exec agent's stderr to its last 2000: masking comes first."""
    llm = status_reply(401, "x" * (300 - len(KEY) + 1) + KEY + " and more")
    project.suite("tool.jsonl", {"id": "fail", "input": "fail"})
    with FakeOpenAI(default=llm) as server:
        quoted, tail = assert_no_leaks(run_step(project, "-i", "one.jsonl", LLM_URL=server.base_url),
                                       run_step(project, "-i", "tool.jsonl", "-n", "tool"))
    error = quoted.result("one")["error"]
    assert error.startswith(f"agent error: HTTP 401 from {server.endpoint}: xxx") and error.endswith("*** and more")
    assert f"::add-mask::{KEY}" in masks(quoted)
    assert tail.result("fail")["error"].endswith("yyy") and f"::add-mask::{TOKEN}" in masks(tail)


def test_a_key_with_quotes_and_slashes_is_masked_json_escaped(project: Project) -> None:
    """Tool-call arguments are JSON: junit.xml and the summary show them JSON-encoded, the key with `\\"`."""
    with FakeOpenAI(default=completion("calling", [("lookup", {"echo": KEY})])) as server:
        [run] = assert_no_leaks(run_step(project, "-i", "one.jsonl", LLM_URL=server.base_url))
    assert run.result("one")["trace"]["tool_calls"][0]["arguments"] == {"echo": "***"}


def test_encoded_forms_of_a_secret_are_masked(project: Project) -> None:
    """An agent that replies with its key base64-encoded (alone or as `user:key`), URL-encoded or JSON-escaped."""
    data = KEY.encode()
    reply = (f"b64 {base64.b64encode(data).decode()} basic {base64.b64encode(b'user:' + data).decode()} "
             f"shifted {base64.b64encode(b'u:' + data).decode()} url {urllib.parse.quote(KEY, safe='')} "
             f"json {json.dumps({'key': KEY})}")
    with FakeOpenAI(default=completion(reply)) as server:
        [run] = assert_no_leaks(run_step(project, "-i", "one.jsonl", LLM_URL=server.base_url))
    # Raw values only: the runner masks their encodings itself.
    assert f"::add-mask::{KEY}" in masks(run) and {line[len("::add-mask::"):] for line in masks(run)} <= set(SECRETS)
    assert run.result("one")["output"].startswith("b64 *** basic ")


def test_url_credentials_are_secrets_and_urls_show_no_user_info(project: Project, dead_port: str) -> None:
    """`${VAR}` in a URL's user-info or query, and any URL password, are secrets; messages show no user-info."""
    with ScriptedServer("/chat") as bot:
        bot.enqueue(status_reply(500, "boom"))
        bot.default = echo_authorization()
        ports = {"BOT_PORT": str(bot.port), "DEAD_PORT": dead_port}
        failing, dead, basic, literal = assert_no_leaks(
            *(run_step(project, "-i", "one.jsonl", "-n", name, **ports) for name in ("bot", "dead", "basic",
                                                                                     "literal")))
    assert failing.result("one")["error"] == \
        f"agent error: HTTP 500 from http://127.0.0.1:{bot.port}/chat?sig=***&v=1: boom"
    assert dead.result("one")["error"] == \
        f"agent error: cannot connect to http://127.0.0.1:{dead_port}/chat?sig=***: Connection refused"
    assert literal.result("one")["error"] == \
        f"agent error: cannot connect to http://127.0.0.1:{dead_port}/chat: Connection refused"
    assert basic.result("one")["output"].startswith("you sent Basic ")      # base64("user:" + password), masked
    assert {f"::add-mask::{PAT}", f"::add-mask::{SIG}"} <= set(masks(failing))
    assert f"::add-mask::{BASIC}" in masks(basic) and f"::add-mask::{LITERAL}" in masks(literal)


def test_exec_env_values_from_variables_are_secrets(project: Project) -> None:
    [run] = assert_no_leaks(run_step(project, "-i", "one.jsonl", "-n", "tool"))
    assert run.result("one")["output"] == "config *** token ***"
    assert {f"::add-mask::{CFG}", f"::add-mask::{TOKEN}"} <= set(masks(run))
