"""Cassettes as an attacker or a fork meets them, through the real CLI: a recording never holds a secret, whatever
the agent's provider; a replay is keyed on the same canonical bytes as its recording; an entry that names no agent
configuration is not trusted; and the run says when the cassettes it replayed were changed by the pull request."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import urllib.parse
from pathlib import Path

import pytest

from e2e.conftest import Project, Run, helper_server
from fakes.server import ScriptedServer, json_reply

SERVICE_KEY = "svc-SECRET-5b1e77c0"
EXEC_TOKEN = "exec-SECRET-0c93aa41"
LLM_SECRET = "llm-SECRET-d71f02b8"
SECRETS = (SERVICE_KEY, EXEC_TOKEN, LLM_SECRET)

CONFIG = """
    version: 1
    defaults:
      name: svc
    agents:
      svc:
        provider: http
        url: ${SVC_URL}
        body: {api_key: "${SERVICE_API_KEY}", text: "{{last_user_message}}"}
      cli:
        provider: exec
        command: [python3, bot.py, --token, "${EXEC_TOKEN}"]
      llm:
        provider: openai
        base_url: ${LLM_URL}
        model: m-1
        params: {user: "${LLM_SECRET}"}
    """

BOT = '''
import json, sys
request = json.load(sys.stdin)
text = request["messages"][-1]["content"]
if text == "fail":
    print("refused, token " + sys.argv[2], file=sys.stderr)
    sys.exit(3)
print(json.dumps({"content": "bot: " + text}))
'''

SUITE = [{"id": "hello", "input": "hello", "assert": {"type": "contains", "value": "hello"}},
         {"id": "fail", "input": "fail"}]


def forms(secret: str) -> list[str]:
    """The forms a secret may take in a file: as it is, URL-encoded, base64."""
    return [secret, urllib.parse.quote(secret), base64.b64encode(secret.encode()).decode()]


@pytest.fixture
def project(tmp_path: Path) -> Project:
    proj = Project(tmp_path)
    proj.write("agenttest.yaml", CONFIG)
    proj.write("bot.py", BOT)
    proj.suite("tests/s.jsonl", *SUITE)
    return proj


def test_a_cassette_holds_no_secret_of_an_http_exec_or_openai_agent_and_replays_without_them(
        project: Project) -> None:
    env = {"SERVICE_API_KEY": SERVICE_KEY, "EXEC_TOKEN": EXEC_TOKEN, "LLM_SECRET": LLM_SECRET}
    runs: dict[str, Run] = {}
    with ScriptedServer("/chat", json_reply({"content": "svc: hello"})) as service, helper_server() as (_, llm):
        env.update(SVC_URL=service.endpoint, LLM_URL=llm.base_url)
        for agent in ("svc", "cli", "llm"):
            runs[agent] = project.run("-i", "tests/s.jsonl", "-n", agent, "--record", f"tapes/{agent}", env=env)
        assert service.requests[0]["api_key"] == SERVICE_KEY          # the agents did get their secrets
    assert runs["cli"].result("fail")["error"] == (
        "agent error: python3 bot.py --token *** exited with code 3: refused, token ***")
    held = {path: path.read_text() for path in (project.root / "tapes").rglob("*.json")}
    assert len(held) == 3
    for path, text in held.items():
        for secret in SECRETS:
            assert not any(form in text for form in forms(secret)), f"{secret} in {path}"
    cli_tape = json.loads((project.root / "tapes/cli/tests/s.jsonl.json").read_text())
    assert [item["responses"][0]["error"] for item in cli_tape["cases"]["fail"]] == [
        "python3 bot.py --token *** exited with code 3: refused, token ***"]
    described = next(iter(cli_tape["configs"].values()))
    assert described["command"] == ["python3", "bot.py", "--token", "${EXEC_TOKEN}"]     # named, never valued
    # A fork: no secret, no server. The agents' configurations are the same as recorded.
    for agent in ("svc", "cli", "llm"):
        replayed = project.run("-i", "tests/s.jsonl", "-n", agent, "--replay", f"tapes/{agent}")
        assert [(r["id"], r["status"], r.get("error")) for r in replayed.report["results"]] == \
            [(r["id"], r["status"], r.get("error")) for r in runs[agent].report["results"]], replayed.stdout


EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
EXAMPLE_SUITES = sorted(str(suite.relative_to(EXAMPLES)) for suite in EXAMPLES.glob("*/tests/*.jsonl"))


@pytest.mark.parametrize("suite", EXAMPLE_SUITES)
def test_every_example_replays_what_it_recorded(tmp_path: Path, suite: str) -> None:
    """Record, then replay with nothing changed: the same verdicts, every call found (the expense example's tool
    result came back from the cassette with its keys sorted, and its judge's request no longer matched)."""
    example, _, inside = suite.partition("/")
    project = Project(tmp_path / example)
    shutil.copytree(EXAMPLES / example, project.root)
    tapes = str(tmp_path / "tapes")
    if example == "openai":     # the model, judge and simulated user on the local OpenAI-compatible server
        with helper_server() as (_, server):
            recorded = project.run("-i", inside, "--no-cache", "--record", tapes,
                                   env={"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-example-4c1d"})
    else:
        recorded = project.run("-i", inside, "--no-cache", "--record", tapes)
    replayed = project.run("-i", inside, "--replay", tapes)
    live = [(r["id"], r["status"]) for r in recorded.report["results"]]
    assert live and "replay:" not in recorded.stdout
    assert [(r["id"], r["status"]) for r in replayed.report["results"]] == live, replayed.stdout
    assert "replay:" not in replayed.stdout + json.dumps(replayed.report)


def test_a_replay_miss_shows_where_the_two_requests_differ(project: Project) -> None:
    long_start = "I would like to be reimbursed for the following trip, which I took last month: " * 2
    project.suite("tests/s.jsonl", {"id": "long", "input": long_start + "taxi to the airport, 12 EUR"})
    with ScriptedServer("/chat", json_reply({"content": "ok"})) as service:
        project.run("-i", "tests/s.jsonl", "--record", "tapes",
                    env={"SVC_URL": service.endpoint, "SERVICE_API_KEY": SERVICE_KEY})
    project.suite("tests/s.jsonl", {"id": "long", "input": long_start + "taxi to the airport, 13 EUR"})
    missed = project.run("-i", "tests/s.jsonl", "--replay", "tapes").result("long")
    assert missed["error_kind"] == "infra"
    assert ('differs at messages[0].content, character 181: "…xi to the airport, 12 EUR" recorded, "…xi to the '
            'airport, 13 EUR" now') in missed["error"]


def test_a_recorded_call_that_names_no_configuration_is_not_replayed(project: Project) -> None:
    with ScriptedServer("/chat", json_reply({"content": "svc: hello"})) as service:
        project.run("-i", "tests/s.jsonl", "--run", "hello", "--record", "tapes",
                    env={"SVC_URL": service.endpoint, "SERVICE_API_KEY": SERVICE_KEY})
    tape = project.root / "tapes" / "tests" / "s.jsonl.json"
    content = json.loads(tape.read_text())
    for item in content["cases"]["hello"]:
        del item["config"]
    tape.write_text(json.dumps(content))
    replayed = project.run("-i", "tests/s.jsonl", "--run", "hello", "--replay", "tapes").result("hello")
    assert (replayed["status"], replayed["error_kind"]) == ("error", "infra")
    assert replayed["error"] == ("agent error: replay: the recording of this target call in tapes/tests/s.jsonl.json, "
                                 "case 'hello' names no agent configuration, so it cannot be checked against "
                                 "agent 'svc'; re-record with --record tapes")


def test_a_cassette_that_is_a_symlink_or_too_large_is_refused_unread(project: Project) -> None:
    with ScriptedServer("/chat", json_reply({"content": "svc: hello"})) as service:
        project.run("-i", "tests/s.jsonl", "--run", "hello", "--record", "tapes",
                    env={"SVC_URL": service.endpoint, "SERVICE_API_KEY": SERVICE_KEY})
    tape = project.root / "tapes" / "tests" / "s.jsonl.json"
    tape.unlink()
    tape.symlink_to("/dev/zero")              # read whole, it never ends
    endless = project.run("-i", "tests/s.jsonl", "--run", "hello", "--replay", "tapes", timeout=30)
    assert endless.result("hello")["error"] == ("agent error: replay: cannot read the cassette "
                                                "tapes/tests/s.jsonl.json: it is a symbolic link, which agenttest "
                                                "never writes")
    tape.unlink()
    with tape.open("wb") as handle:           # sparse: 300 MB on paper, nothing on disk
        handle.truncate(300 * 1024 * 1024)
    huge = project.run("-i", "tests/s.jsonl", "--run", "hello", "--replay", "tapes", timeout=30)
    assert huge.result("hello")["error"] == ("agent error: replay: cannot read the cassette tapes/tests/s.jsonl.json: "
                                             "it is 314,572,800 bytes, more than the 268,435,456 agenttest reads")


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=root,
                          check=True, capture_output=True, text=True).stdout.strip()


def test_a_replay_says_when_the_pull_request_changed_its_cassettes(project: Project) -> None:
    """A pull request controls its cassettes, recorded verdicts included: report.json, the summary and the log say
    which ones it changed (compared with its base commit), or why that could not be told."""
    git(project.root, "init", "-q")
    with ScriptedServer("/chat", json_reply({"content": "svc: hello"})) as service:
        project.run("-i", "tests/s.jsonl", "--run", "hello", "--record", "tapes",
                    env={"SVC_URL": service.endpoint, "SERVICE_API_KEY": SERVICE_KEY})
    git(project.root, "add", "-A")
    git(project.root, "commit", "-qm", "base")
    base = git(project.root, "rev-parse", "HEAD")
    tape = project.root / "tapes" / "tests" / "s.jsonl.json"
    tape.write_text(tape.read_text().replace("svc: hello", "svc: hello, forged"))
    git(project.root, "commit", "-qam", "the pull request")
    event = project.root.parent / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 7, "base": {"sha": base, "ref": "main"}}}))
    actions = {"GITHUB_ACTIONS": "true", "GITHUB_EVENT_PATH": str(event)}

    forged = project.run("-i", "tests/s.jsonl", "--run", "hello", "--replay", "tapes", env=actions)
    assert forged.code == 0 and forged.result("hello")["output"] == "svc: hello, forged"
    assert forged.report["replay"] == {"directory": "tapes", "compared_with": base, "pull_request_base": True,
                                       "changed": ["tapes/tests/s.jsonl.json"]}
    said = (f"replayed from cassettes this pull request changed (compared with its base commit {base[:12]}): "
            "tapes/tests/s.jsonl.json — their recorded replies, judge verdicts included, are the pull request's own")
    assert said in forged.stdout
    summary = (project.root / "agenttest-results" / "summary.md").read_text()
    assert f"> ⚠️ **Replay:** {said}" in summary

    untouched = project.run("-i", "tests/s.jsonl", "--run", "hello", "--replay", "tapes")      # a push: HEAD
    assert untouched.report["replay"]["changed"] == []
    assert "○ replayed from tapes, unchanged since the last commit" in untouched.stdout
    tape.write_text(tape.read_text().replace("forged", "forged again"))
    edited = project.run("-i", "tests/s.jsonl", "--run", "hello", "--replay", "tapes")
    assert edited.report["replay"]["changed"] == ["tapes/tests/s.jsonl.json"]
    assert "replayed from cassettes changed since the last commit: tapes/tests/s.jsonl.json" in edited.stdout

    event.write_text(json.dumps({"pull_request": {"base": {"sha": "0123456789abcdef" * 2 + "01234567"}}}))
    shallow = project.run("-i", "tests/s.jsonl", "--run", "hello", "--replay", "tapes", env=actions)
    assert shallow.code == 0
    assert shallow.report["replay"]["could_not_tell"] == ("the pull request's base commit 0123456789ab is not in "
                                                          "this clone (check out with fetch-depth: 0)")
    no_git = project.run("-i", "tests/s.jsonl", "--run", "hello", "--replay", "tapes",
                         env={"PATH": str(project.root / "no-such-bin")})
    assert no_git.code == 0 and no_git.report["replay"]["could_not_tell"] == "git is not installed"
    assert "could not tell whether they were changed: git is not installed" in no_git.stdout


def test_what_is_kept_of_an_earlier_cassette_is_masked_when_recording_again(project: Project) -> None:
    env = {"SERVICE_API_KEY": SERVICE_KEY}
    with ScriptedServer("/chat", json_reply({"content": "svc: hello"})) as service:
        env["SVC_URL"] = service.endpoint
        project.run("-i", "tests/s.jsonl", "--record", "tapes", env=env)
        tape = project.root / "tapes" / "tests" / "s.jsonl.json"
        older = json.loads(tape.read_text())          # as an older agenttest left it: the secret in clear
        older["cases"]["fail"][0]["responses"] = [{"error": f"refused with key {SERVICE_KEY}", "kind": "agent"}]
        tape.write_text(json.dumps(older))
        project.run("-i", "tests/s.jsonl", "--run", "hello", "--record", "tapes", env=env)
    kept = json.loads(tape.read_text())["cases"]["fail"][0]["responses"]
    assert kept == [{"error": "refused with key ***", "kind": "agent"}]
