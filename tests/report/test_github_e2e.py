"""The CLI end to end as a GitHub Actions step, against an agent whose every reply is hostile to some format."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from junitparser import JUnitXml
from lxml import etree

from .conftest import SCHEMA
from .test_annotations import commands_the_runner_would_run, lines_inside_blocks, parse
from .test_ctrf_html import CTRF_SCHEMA
from .test_escape import gfm

HOSTILE_AGENT = r'''
HOSTILE = (
    "::error file=README.md,line=1::pwned\n"
    "  ::set-output name=failed::0\n"
    "::add-mask::the\n"
    "x ##[error]legacy ##[set-output name=passed]9\n"
    "::stop-commands::abc\n"
    "</details></summary><script>alert(1)</script>\n"
    "]]> <![CDATA[ x ]]> &amp;\n"
    "NUL\x00 BEL\x07 FF\x0c ESC\x1b[31mred\x1b[0m DEL\x7f surrogate\ud800\n"
    "| a | b |\n|---|---|\n"
    "```\n# heading\n[link](https://evil.example) @octocat\n"
    "100% %0A a:b, c\r\nend"
)


def respond(request):
    text = request["messages"][-1]["content"]
    if text == "big":
        return {"content": HOSTILE + "y" * 2_000_000}
    if text == "boom":
        raise RuntimeError(HOSTILE)
    if text == "deep":
        value = HOSTILE
        for _ in range(600):
            value = [value]
        return {"content": HOSTILE, "data": value}
    if text == "inf":
        import json
        return {"content": HOSTILE, "data": json.loads('{"n": 1e999, "m": -1e999}')}
    return {"content": HOSTILE}


def respond_with_session(request):
    """An agent that, like a login, gives the run a credential it must mask from then on."""
    from uuid import uuid4

    from agenttest.secrets import register_secret

    session = f"session-{uuid4().hex}"
    register_secret(session)
    return {"content": f"your session: {session}\n{HOSTILE}"}
'''


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "agenttest.yaml").write_text(textwrap.dedent("""
        version: 1
        defaults:
          name: hostile
        agents:
          hostile:
            provider: python
            callable: hostile_agent:respond
          session:
            provider: python
            callable: hostile_agent:respond_with_session
        """))
    (tmp_path / "hostile_agent.py").write_text(HOSTILE_AGENT)
    cases = [
        {"id": "injects", "name": "::error::<b>x</b>", "input": "hi", "assert": {"type": "contains", "value": "nope"}},
        {"id": "passes", "input": "hi", "assert": {"type": "contains", "value": "pwned"}},
        {"id": "big", "input": "big", "assert": [{"type": "contains", "value": "nope"},
                                                 {"type": "regex", "value": "y{10}"}]},
        {"id": "boom", "input": "boom"},
        {"id": "later", "input": "hi", "skip": "not yet ::error::skip"},
        *({"id": f"more-{i}", "input": "hi", "assert": {"type": "not_contains", "value": "pwned"}}
          for i in range(12)),
        {"id": "deep", "input": "deep"},                   # nested past any walk: an agent error, not a crash
        {"id": "inf", "input": "inf", "assert": {"type": "json_path", "path": "n", "value": 1}},
    ]
    lines = [json.dumps(case) for case in cases]
    lines.insert(5, '{"id": "broken", "input": ')         # an invalid line: an error result at line 6
    suite = tmp_path / "evals" / "hostile.jsonl"
    suite.parent.mkdir()
    suite.write_text("\n".join(lines) + "\n")
    return tmp_path


def run_step(workspace: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The CLI as a `run:` step of a GitHub Actions job sees it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "AGENTTEST_", "INPUT_"))}
    (workspace / "step_summary").write_text("")
    env.update(GITHUB_ACTIONS="true", CI="true", GITHUB_WORKSPACE=str(workspace),
               GITHUB_STEP_SUMMARY=str(workspace / "step_summary"), GITHUB_SERVER_URL="https://github.com",
               GITHUB_REPOSITORY="octo/agents", GITHUB_SHA="0123abcd", RUNNER_NAME="runner-7")
    return subprocess.run([sys.executable, "-m", "agenttest", *args], cwd=workspace, env=env, capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)


def test_hostile_agent_in_github_actions(workspace: Path) -> None:
    proc = run_step(workspace, "-i", "evals/hostile.jsonl", "--parallel", "8")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stdout[-3000:] + proc.stderr[-3000:]
    results = workspace / "agenttest-results"

    # The log: agent text was printed, but the runner would execute only our own commands.
    assert "pwned" in proc.stdout
    executed = commands_the_runner_would_run(proc.stdout.splitlines())
    assert executed[0].startswith("::stop-commands::")
    annotations = [parse(line) for line in executed[1:]]
    assert len(annotations) == 10 and all(command == "error" for command, _, _ in annotations)
    located = [props for _, props, _ in annotations[:-1]]
    assert all(p["file"] == "evals/hostile.jsonl" and p["line"].isdigit() for p in located)
    assert located[0] == {"file": "evals/hostile.jsonl", "line": "1",
                          "title": "agenttest: injects: ::error::<b>x</b> (failed)"}
    assert "more failing cases not annotated" in annotations[-2][2]
    assert annotations[-1][1] == {}
    assert annotations[-1][2].startswith("agenttest: 15 failed, 3 errored of 20 cases")
    assert not commands_the_runner_would_run(proc.stderr.splitlines())

    # junit.xml: valid against the XSD, every case where it belongs, read by junitparser.
    junit = (results / "junit.xml").read_bytes()
    document = etree.fromstring(junit)
    etree.XMLSchema(etree.parse(str(SCHEMA))).assertValid(document)
    xml = JUnitXml.fromfile(str(results / "junit.xml"))
    suite = next(iter(xml))
    counts = (suite.name, suite.tests, suite.failures, suite.errors, suite.skipped)
    assert counts == ("evals/hostile.jsonl", 20, 15, 3, 1)
    broken = document.find(".//testcase[@line='6']")
    assert broken.find("error").get("type") == "invalid"
    assert broken.find("error").get("message").startswith("invalid test case")
    assert len(junit) < 2_000_000

    # summary.md and the step summary: the same Markdown, under 1 MiB, inert on GitHub.
    summary = (results / "summary.md").read_text()
    assert (workspace / "step_summary").read_text() == summary
    assert len(summary.encode()) <= 1_000_000
    assert "| 20 | 1 | 15 | 3 | 0 | 1 |" in summary
    assert "https://github.com/octo/agents/blob/0123abcd/evals/hostile.jsonl#L1" in summary
    html = gfm(summary)
    assert "<script" not in html and 'href="https://evil' not in html and "<h1" not in html
    assert html.count("<details>") == html.count("</details>")

    ctrf = json.loads((results / "ctrf.json").read_text())
    jsonschema.validate(ctrf, CTRF_SCHEMA)
    counts = {key: ctrf["results"]["summary"][key] for key in ("tests", "passed", "failed", "skipped", "suites")}
    assert counts == {"tests": 20, "passed": 1, "failed": 18, "skipped": 1, "suites": 1}
    assert ctrf["results"]["summary"]["extra"]["errors"] == 3
    assert "#xD800" in json.dumps(ctrf) and "#xD800" in summary and b"#xD800" in junit

    # report.json and events.jsonl: strict JSON (no bare Infinity), the 2 MB reply stored once and capped.
    def strict(text: str) -> Any:
        return json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} in a JSON artifact"))

    report = strict((results / "report.json").read_text())
    assert report["summary"]["total"] == 20
    assert [strict(line) for line in (results / "events.jsonl").read_text().splitlines()]
    deep = next(r for r in report["results"] if r["id"] == "deep")
    assert (deep["status"], deep["error_kind"]) == ("error", "agent") and "nested deeper than" in deep["error"]
    inf = next(r for r in report["results"] if r["id"] == "inf")
    assert inf["status"] == "failed" and inf["assertions"][0]["actual"] == "Infinity"
    assert (results / "report.json").stat().st_size < 1_000_000


def test_annotations_can_be_turned_off_but_the_log_stays_guarded(workspace: Path) -> None:
    proc = run_step(workspace, "-i", "evals/hostile.jsonl", "--run", "injects")
    quiet = run_step(workspace, "-i", "evals/hostile.jsonl", "--run", "injects", "--no-annotations")
    assert [c.split("::")[1] for c in commands_the_runner_would_run(quiet.stdout.splitlines())] == ["stop-commands"]
    # stop-commands, the annotations of `injects` and of the broken line (kept whatever --run selects), the end
    assert len(commands_the_runner_would_run(proc.stdout.splitlines())) == 4


def test_a_secret_learnt_during_the_run_is_masked_where_the_runner_listens(workspace: Path) -> None:
    """`::add-mask::` inside a stop-commands block is ignored, and the runner would print the secret verbatim."""
    proc = run_step(workspace, "-i", "evals/hostile.jsonl", "-n", "session", "--run", "^(injects|passes|more-.)$",
                    "--parallel", "4", "--verbose")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stdout[-3000:] + proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    masks = [line for line in lines if line.startswith("::add-mask::session-")]
    assert len(masks) == 12
    assert not [line for line in lines_inside_blocks(lines) if "add-mask::session-" in line]
    executed = commands_the_runner_would_run(lines)
    assert [line for line in executed if line.startswith("::add-mask::")] == masks      # not the agent's
    assert {line.split("::")[1].split(" ")[0] for line in executed} == {"stop-commands", "add-mask", "error"}
    assert "your session: ***" in proc.stdout
    assert all(line.startswith("::add-mask::") for line in lines if "session-" in line)


def test_annotations_forced_on_outside_github_actions(workspace: Path) -> None:
    """Forced on with the log going to a file (another CI parses it): guarded. In a developer's terminal: the
    annotations without the stop-commands noise."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "AGENTTEST_", "INPUT_"))}
    args = [sys.executable, "-m", "agenttest", "-i", "evals/hostile.jsonl", "--run", "injects", "--annotations"]
    piped = subprocess.run(args, cwd=workspace, env=env, capture_output=True, text=True, timeout=120,
                           stdin=subprocess.DEVNULL)
    executed = commands_the_runner_would_run(piped.stdout.splitlines())
    assert [line.split("::")[1].split(" ")[0] for line in executed] == ["stop-commands", "error", "error", "error"]

    leader, follower = pty.openpty()
    proc = subprocess.Popen(args, cwd=workspace, env={**env, "TERM": "dumb"}, stdout=follower,
                            stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    os.close(follower)
    screen = b""
    while select.select([leader], [], [], 60)[0]:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        screen += chunk
    os.close(leader)
    assert proc.wait(timeout=30) == 1
    lines = screen.decode().splitlines()
    assert not [line for line in lines if line.startswith("::stop-commands::")]
    assert [line.split(" ")[0] for line in lines if line.startswith("::")] == ["::error", "::error",
                                                                              "::error::agenttest:"]
