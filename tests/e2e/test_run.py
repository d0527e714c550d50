"""The CLI end to end: suites in, verdicts, exit codes and artifacts out."""

from __future__ import annotations

import json
import re
import signal
import ssl
import sys
from pathlib import Path

import pytest
import trustme

from fakes.processes import assert_dies
from fakes.server import ScriptedServer, json_reply

from .conftest import ECHO_AGENT, Project, finished_cases, interrupt_cli, run_cli

REPO = Path(__file__).resolve().parents[2]


def test_version_and_default_command(project: Project) -> None:
    version = project.run("--version")
    assert version.code == 0 and "agenttest, version" in version.stdout
    project.suite("t.jsonl", {"id": "a", "input": "hi", "assert": {"type": "contains", "value": "echo: hi"}})
    explicit = project.run("run", "-i", "t.jsonl")
    implicit = project.run("-i", "t.jsonl")
    assert explicit.code == implicit.code == 0
    assert implicit.report["summary"]["passed"] == 1


def test_example_suite_shows_every_outcome(tmp_path: Path) -> None:
    run = run_cli("-i", "examples/expense/tests/expense.jsonl", "--output-dir", str(tmp_path), "--no-cache", cwd=REPO)
    report = json.loads((tmp_path / "report.json").read_text())
    assert run.code == 1, run.stdout + run.stderr
    summary = report["summary"]
    assert (summary["total"], summary["passed"], summary["failed"], summary["skipped"]) == (9, 7, 1, 1)
    assert summary["agent_id"] == "assistants.expense"
    statuses = {r["id"]: r["status"] for r in report["results"]}
    assert statuses["submits-without-asking"] == "failed"
    assert statuses["receipt-photo"] == "skipped"
    failing = next(r for r in report["results"] if r["status"] == "failed")
    assert failing["error"] == "expected the expense to be created straight away"
    assert [a["passed"] for a in failing["assertions"]] == [False, True]
    assert failing["file"] == "examples/expense/tests/expense.jsonl" and failing["line"] == 10
    types = {a["type"] for r in report["results"] for a in r["assertions"]}
    assert types >= {"contains", "not_contains", "regex", "json_path", "type", "json_schema", "equals",
                     "tool_called", "tool_result", "tool_sequence", "latency", "script", "agent"}
    assert "► [greeting] Hello! PASSED" in run.stdout
    assert "└─ expected the expense to be created straight away" in run.stdout
    assert "❌ TESTS FAILED" in run.stdout


def test_results_and_artifacts(project: Project) -> None:
    project.suite("suite.jsonl",
                  {"id": "pass", "name": "passes", "input": "hi", "assert": {"type": "contains", "value": "hi"}},
                  {"id": "fail", "input": "hi", "assert": [{"type": "contains", "value": "nope"},
                                                           {"type": "contains", "value": "hi"}]},
                  {"id": "err", "input": "boom"},
                  {"id": "skip", "input": "x", "skip": True})
    run = project.run("-i", "suite.jsonl")
    assert run.code == 1
    report = run.report
    assert [r["id"] for r in report["results"]] == ["pass", "fail", "err", "skip"]
    assert report["summary"] | {"duration_ms": 0} == report["summary"] | {
        "total": 4, "passed": 1, "failed": 1, "errors": 1, "skipped": 1, "timeouts": 0, "duration_ms": 0}
    assert report["summary"]["pass_rate"] == round(100 / 3, 2)
    fail = run.result("fail")
    assert fail["error"] == "output does not contain 'nope'"
    assert [a["passed"] for a in fail["assertions"]] == [False, True]
    assert run.result("err")["error"] == "agent error: agent raised RuntimeError at echo_agent.py:10: agent exploded"
    assert run.result("err")["error_kind"] == "agent"
    assert run.result("pass")["usage"] == {"prompt_tokens": 3, "completion_tokens": 2}
    # three calls were made (the one that raised included); the skipped case made none
    assert report["summary"]["usage"]["target"]["calls"] == 3
    assert "Tokens:    target: 3 calls, " in run.stdout
    assert run.result("pass")["line"] == 1 and run.result("skip")["line"] == 4
    assert report["metadata"]["version"] and report["interrupted"] is False
    events = run.events
    assert events[0]["type"] == "start" and events[0]["total_cases"] == 4
    assert sorted(e["id"] for e in events if e["type"] == "result") == ["err", "fail", "pass", "skip"]
    assert events[-1]["type"] == "summary" and events[-1]["failed"] == 1


def test_invalid_lines_are_errors_and_the_rest_still_run(project: Project) -> None:
    project.suite("suite.jsonl",
                  {"id": "ok", "input": "hi"},
                  "{not json",
                  {"id": "typo", "input": "hi", "asert": {"type": "contains", "value": "x"}},
                  {"id": "ok2", "input": "hi", "assert": {"type": "contains", "value": "hi"}})
    run = project.run("-i", "suite.jsonl")
    assert run.code == 1
    results = run.report["results"]
    assert [r["status"] for r in results] == ["passed", "error", "error", "passed"]
    bad_json, typo = results[1], results[2]
    assert bad_json["line"] == 2 and bad_json["error_kind"] == "invalid"
    assert bad_json["error"].startswith("invalid test case:")
    assert typo["id"] == "typo" and typo["line"] == 3
    assert "did you mean 'assert'" in typo["error"]
    assert "suite.jsonl:2" in run.stdout
    assert "Traceback" not in run.stdout + run.stderr


def test_parallel_keeps_input_order_and_prints_each_case_together(project: Project) -> None:
    cases = [{"id": f"c{i}", "input": f"sleep {0.3 - i * 0.1:.1f}"} for i in range(3)]
    project.suite("suite.jsonl", *cases)
    run = project.run("-i", "suite.jsonl", "--parallel", "3", "-v")
    assert run.code == 0
    assert [r["id"] for r in run.report["results"]] == ["c0", "c1", "c2"]
    lines = run.stdout.splitlines()
    for case_id in ("c0", "c1", "c2"):
        start = next(i for i, line in enumerate(lines) if line.startswith(f"► [{case_id}]"))
        assert lines[start + 1].startswith("  └─ Output: echo: sleep")
    order = [line.split("]")[0][3:] for line in lines if line.startswith("► [")]
    assert order == ["c2", "c1", "c0"]  # printed as they finish


def test_timeout_is_enforced_inside_the_call(project: Project) -> None:
    # Neither call ever returns by itself: that each run ends at all is the timeout cutting them short.
    project.write("blocking_agent.py", """
        import threading
        def respond(request):
            threading.Event().wait()  # a sync agent stuck in a call that cannot be cancelled
        """)
    project.write("agenttest.yaml", """
        agents:
          echo: {provider: python, callable: echo_agent:respond}
          blocking: {provider: python, callable: blocking_agent:respond}
        """)
    project.suite("suite.jsonl", {"id": "slow", "input": "sleep 100000", "timeout": "200ms"},
                  {"id": "fast", "input": "hi"})
    run = project.run("-i", "suite.jsonl", "--timeout", "1m", "-n", "echo")
    assert run.code == 1
    assert run.result("slow")["status"] == "timeout"
    assert run.result("slow")["error"] == "timeout after 200ms"
    assert run.report["summary"]["timeouts"] == 1
    blocked = project.run("-i", "suite.jsonl", "--timeout", "300ms", "-n", "blocking")   # the stuck calls abandoned
    assert [r["status"] for r in blocked.report["results"]] == ["timeout", "timeout"]
    assert blocked.result("fast")["error"] == "timeout after 300ms"


def test_exec_agent_round_trip_and_process_group_killed_on_timeout(tmp_path: Path) -> None:
    project = Project(tmp_path)
    pid_file = tmp_path / "child.pid"
    project.write("agenttest.yaml", f"""
        agents:
          cmd:
            provider: exec
            command: [{sys.executable}, agent.py]
        defaults:
          name: cmd
        """)
    project.write("agent.py", f"""
        import json, subprocess, sys, time
        request = json.load(sys.stdin)
        text = request["messages"][-1]["content"]
        if text == "hang":
            child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
            open({str(pid_file)!r}, "w").write(str(child.pid))
            time.sleep(60)
        if text == "fail":
            sys.stderr.write("no such expense")
            sys.exit(3)
        if text == "plain":
            print("just text")
        else:
            print(json.dumps({{"content": "got " + text, "tool_calls": [{{"id": "1", "name": "lookup",
                              "arguments": "{{\\"q\\": 1}}"}}]}}))
        """)
    project.suite("suite.jsonl",
                  {"id": "json", "input": "hi", "assert": [{"type": "equals", "value": "got hi"},
                                                           {"type": "tool_called",
                                                            "value": {"name": "lookup", "arguments": {"q": 1}}}]},
                  {"id": "plain", "input": "plain", "expected": "just text"},
                  {"id": "fail", "input": "fail"},
                  {"id": "hang", "input": "hang", "timeout": "5s"})    # time for the agent to start its child
    run = project.run("-i", "suite.jsonl")
    statuses = {r["id"]: r["status"] for r in run.report["results"]}
    assert statuses == {"json": "passed", "plain": "passed", "fail": "error", "hang": "timeout"}, run.stdout
    assert "exited with code 3: no such expense" in run.result("fail")["error"]
    assert_dies(int(pid_file.read_text()))


def test_fail_fast_with_parallel_stops_scheduling(project: Project) -> None:
    cases = [{"id": "bad", "input": "hi", "assert": {"type": "contains", "value": "nope"}}]
    cases += [{"id": f"later{i}", "input": "sleep 0.05"} for i in range(6)]
    project.suite("suite.jsonl", *cases)
    calls = project.root / "calls.txt"
    run = project.run("-i", "suite.jsonl", "--parallel", "2", "--fail-fast", env={"AGENT_CALLS_FILE": str(calls)})
    assert run.code == 1
    statuses = [r["status"] for r in run.report["results"]]
    assert statuses[0] == "failed"
    assert statuses.count("skipped") >= 4
    skipped = [r for r in run.report["results"] if r["status"] == "skipped"]
    assert all(r["error"] == "not run: --fail-fast stopped the run after bad failed" for r in skipped)
    assert len(calls.read_text().split()) <= 3
    assert run.report["summary"]["total"] == 7


def test_run_filter_by_regex_and_tag(project: Project) -> None:
    project.suite("suite.jsonl", {"id": "login-ok", "input": "a"}, {"id": "login-bad", "input": "b"},
                  {"id": "other", "input": "c", "tags": ["smoke"]})
    by_id = project.run("-i", "suite.jsonl", "--run", "^login")
    assert [r["id"] for r in by_id.report["results"]] == ["login-ok", "login-bad"]
    by_tag = project.run("-i", "suite.jsonl", "--run", "tag:smoke")
    assert [r["id"] for r in by_tag.report["results"]] == ["other"]
    none = project.run("-i", "suite.jsonl", "--run", "nothing-matches")
    assert none.code == 2 and "no test cases match --run 'nothing-matches'" in none.stderr


def test_a_cases_definition_is_the_same_whatever_the_run_selects(project: Project) -> None:
    """A whole run works each case's definition digest out as the suite is read; one that selects (--run, --shard)
    works it out as each chosen case runs. Baselines compare them across such runs: they must agree."""
    project.suite("suite.jsonl", *[{"id": f"c{i}", "input": f"hi {i}", "tags": ["t"] if i % 2 else [],
                                    "assert": [{"type": "contains", "value": "echo"}]} for i in range(4)])

    def definitions(*args: str) -> dict[str, str]:
        return {r["id"]: r["definition"] for r in project.run("-i", "suite.jsonl", *args).report["results"]}

    whole = definitions()
    assert len(whole) == 4 and len(set(whole.values())) == 4
    assert definitions("--run", "^c[12]$") == {key: whole[key] for key in ("c1", "c2")}
    assert {**definitions("--shard", "1/2"), **definitions("--shard", "2/2")} == whole


def test_a_line_that_is_no_case_is_reported_whatever_run_selects(project: Project) -> None:
    """`--run greets` (the command `init` suggests) on a suite with a broken line: the line has no id to match, so
    it is reported as the error it is rather than left out without a word, as pytest shows a collection error
    whatever `-k` says."""
    (project.root / "suite.jsonl").write_text('{"id": "greets", "input": "hi"}\n{"id": "other", "input": \n')
    run = project.run("-i", "suite.jsonl", "--run", "greets")
    assert run.code == 1, run.stdout + run.stderr
    assert [(r["id"], r["status"], r.get("error_kind"), r["line"]) for r in run.report["results"]] == [
        ("greets", "passed", None, 1), ("suite.jsonl:2", "error", "invalid", 2)]
    none = project.run("-i", "suite.jsonl", "--run", "nothing-matches")
    assert none.code == 2 and "no test cases match --run 'nothing-matches'" in none.stderr


def test_dry_run_prints_cases_and_calls_no_agent(project: Project) -> None:
    cases = [{"id": "a", "input": "hi", "assert": {"type": "contains", "value": "x"}}, {"id": "b", "input": "yo"}]
    project.suite("suite.jsonl", *cases)
    calls = project.root / "calls.txt"
    run = project.run("-i", "suite.jsonl", "--dry-run", "-o", "cases.jsonl", env={"AGENT_CALLS_FILE": str(calls)})
    assert run.code == 0
    assert [json.loads(line) for line in run.stdout.splitlines()] == cases
    assert [json.loads(line) for line in (project.root / "cases.jsonl").read_text().splitlines()] == cases
    assert not calls.exists()


def test_a_directory_input_skips_the_output_directory(project: Project) -> None:
    project.suite("tests/a.jsonl", {"id": "a", "input": "hi"})
    first = project.run("-i", ".")
    second = project.run("-i", ".")
    assert first.code == second.code == 0
    assert [r["id"] for r in second.report["results"]] == ["a"]


def test_direct_message_with_name(project: Project) -> None:
    run = project.run("-n", "echo", "-i", "How are you?")
    assert run.code == 0
    lines = run.stdout.splitlines()
    output = lines.index("  └─ Output: echo: How are you?")
    assert lines[output + 1] == ("  └─ nothing was checked: a direct message has no assertion (to test the reply, "
                                 "write the case in a suite file with an `assert`)")
    assert "  ○ 1 case passed without checking anything (no assertion)" in lines
    assert run.report["results"][0]["output"] == "echo: How are you?"
    project.suite("suite.jsonl", {"id": "bare", "input": "hi"},
                  {"id": "checked", "input": "hi", "assert": {"type": "contains", "value": "hi"}})
    lines = project.run("-i", "suite.jsonl", "--parallel", "1").stdout.splitlines()
    bare = next(i for i, line in enumerate(lines) if line.startswith("► [bare]"))
    assert lines[bare + 1] == "  └─ nothing was checked: the case has no assertion and no `expected`"
    assert lines[bare + 2].startswith("► [checked] hi PASSED")


def test_output_file_by_extension(project: Project) -> None:
    project.suite("suite.jsonl", {"id": "a", "input": "hi"},
                  {"id": "b", "input": "<script>alert(1)</script>", "assert": {"type": "contains", "value": "nope"}})
    for name in ("out/report.json", "out/report.jsonl", "out/report.md", "out/report.html"):
        run = project.run("-i", "suite.jsonl", "-o", name)
        assert run.code == 1 and "Traceback" not in run.stderr, run.stderr
    for name in ("report.json", "report.jsonl"):    # anything but .md/.html is Yao's JSON report
        assert json.loads((project.root / "out" / name).read_text())["summary"]["passed"] == 1
    markdown = (project.root / "out" / "report.md").read_text()
    assert markdown.startswith("## ❌ agenttest: 1 failed") and "output does not contain 'nope'" in markdown
    html = (project.root / "out" / "report.html").read_text()
    assert html.lstrip().lower().startswith("<!doctype html>")
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_hooks_before_after_and_globals(project: Project) -> None:
    log = project.root / "hooks.log"
    project.write("env_test.py", f"""
        import json
        LOG = {str(log)!r}
        def _log(*parts):
            with open(LOG, "a") as handle:
                handle.write(json.dumps(parts) + "\\n")
        def BeforeAll(ctx, cases):
            _log("BeforeAll", [c["id"] for c in cases])
            return {{"data": {{"db": "ready"}}}}
        def AfterAll(ctx, results, data):
            _log("AfterAll", [r["status"] for r in results], data)
        def Before(ctx, case):
            _log("Before", case["id"], ctx["user_id"])
            return {{"data": {{"token": case["id"] + "-token"}}}}
        async def After(ctx, case, result, before_data):
            _log("After", case["id"], result["status"], before_data)
        def BrokenBefore(ctx, case):
            raise ValueError("database is down")
        """)
    project.suite("suite.jsonl",
                  {"id": "one", "input": "hi", "before": "env_test.Before", "after": "env_test.After"},
                  {"id": "two", "input": "hi", "assert": {"type": "contains", "value": "nope"},
                   "before": "env_test.Before", "after": "env_test.After", "user": "alice"},
                  {"id": "three", "input": "hi", "before": "env_test.BrokenBefore", "after": "env_test.After"},
                  {"id": "four", "input": "hi", "before": "missing_test.Before"})
    run = project.run("-i", "suite.jsonl", "--before", "env_test.BeforeAll", "--after", "env_test.AfterAll",
                      "--parallel", "1")
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    assert entries[0] == ["BeforeAll", ["one", "two", "three", "four"]]
    assert ["Before", "one", "test-user"] in entries and ["Before", "two", "alice"] in entries
    assert ["After", "one", "passed", {"token": "one-token"}] in entries
    assert ["After", "two", "failed", {"token": "two-token"}] in entries
    assert ["After", "three", "error", None] in entries
    assert entries[-1] == ["AfterAll", ["passed", "failed", "error", "error"], {"db": "ready"}]
    three, four = run.result("three"), run.result("four")
    assert three["error"] == ("before hook: hook env_test.BrokenBefore failed: ValueError at env_test.py:17: "
                               "database is down")
    assert three["error_kind"] == four["error_kind"] == "hook"
    assert "no missing_test.py found" in four["error"]
    assert run.code == 1


def test_before_all_failure_exits_2_and_still_reports(project: Project) -> None:
    project.write("env_test.py", """
        def BeforeAll(ctx, cases):
            raise RuntimeError("no database")
        """)
    calls = project.root / "calls.txt"
    project.suite("suite.jsonl", {"id": "a", "input": "hi"})
    run = project.run("-i", "suite.jsonl", "--before", "env_test.BeforeAll", env={"AGENT_CALLS_FILE": str(calls)})
    assert run.code == 2
    failed = "BeforeAll: hook env_test.BeforeAll failed: RuntimeError at env_test.py:2: no database"
    assert f"  ✗ {failed}" in run.stdout.splitlines()
    assert run.report["error"] == failed
    assert run.report["results"][0]["status"] == "skipped"
    assert run.report["results"][0]["error"] == "not run: BeforeAll failed"
    assert not calls.exists()
    where = ['Traceback (most recent call last, user code only):', '  File "env_test.py", line 2, in BeforeAll',
             '    raise RuntimeError("no database")', 'RuntimeError: no database']
    assert run.report["trace"]["traceback"].splitlines() == where          # as a case's user code keeps it
    assert "Traceback" not in run.stdout
    verbose = project.run("-i", "suite.jsonl", "--before", "env_test.BeforeAll", "-v")
    assert [f"    │  {line}" for line in where] == [
        line for line in verbose.stdout.splitlines() if line.startswith("    │  ")]


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_signal_writes_partial_artifacts_and_exits_130(project: Project, signum: int) -> None:
    log = project.root / "after.log"
    project.write("env_test.py", f"""
        def After(ctx, case, result, data):
            open({str(log)!r}, "a").write(case["id"] + ":" + result["status"] + "\\n")
        """)
    started = project.root / "started.txt"
    project.suite("suite.jsonl", {"id": "quick", "input": "hi"},
                  *[{"id": f"slow{i}", "input": "sleep 100000", "after": "env_test.After"} for i in range(3)])
    # Signalled once quick has finished and slow0 and slow1 have started (two at a time: slow2 waits its turn).
    stopped = interrupt_cli("-i", "suite.jsonl", "--parallel", "2", cwd=project.root,
                            ready=lambda: started.exists() and {"slow0", "slow1"} <= set(started.read_text().split()),
                            signum=signum, env={"AGENT_STARTED_FILE": str(started)})
    stdout = stopped.stdout
    assert stopped.code == 130, stdout + stopped.stderr
    assert "  ⚠ INTERRUPTED: partial results" in stdout.splitlines() and "TESTS FAILED" not in stdout
    report = stopped.report
    assert report["interrupted"] is True
    statuses = {r["id"]: (r["status"], r.get("error")) for r in report["results"]}
    assert statuses["quick"] == ("passed", None)
    assert statuses["slow2"] == ("skipped", "interrupted")
    assert sorted(log.read_text().split()) == ["slow0:skipped", "slow1:skipped"]


def test_a_killed_run_keeps_every_case_that_finished(project: Project) -> None:
    """SPEC: events.jsonl is flushed as each case finishes, so a run killed outright (no chance to write anything
    at the end) keeps what finished — the console's lines of those cases too, written before events.jsonl's."""
    project.suite("suite.jsonl", {"id": "quick", "input": "hi"}, {"id": "second", "input": "there"},
                  {"id": "stuck", "input": "sleep 100000"})
    killed = interrupt_cli("-i", "suite.jsonl", "--parallel", "3", cwd=project.root,
                           ready=lambda: finished_cases(project.root) == {"quick", "second"}, signum=signal.SIGKILL)
    assert killed.code == -signal.SIGKILL
    lines = (project.root / "agenttest-results" / "events.jsonl").read_text().splitlines()
    events = [json.loads(line) for line in lines]        # every line whole
    assert [(event["type"], event.get("id")) for event in events] == [
        ("start", None), ("result", "quick"), ("result", "second")]
    assert "[quick]" in killed.stdout and "[second]" in killed.stdout and "[stuck]" not in killed.stdout
    assert killed.report_text is None      # nothing was written at the end


def test_a_latency_is_shown_in_milliseconds_as_its_message_says_it_in_every_report(project: Project) -> None:
    """The HTML table, the Markdown summary and JUnit's failure text show a latency as `3.6ms` (one decimal, as the
    message has it), never the float measured (`3.559314999961316`); report.json keeps the value measured."""
    project.suite("suite.jsonl",
                  {"id": "quick", "input": "hi", "assert": {"type": "latency", "value": 60000}},
                  {"id": "slow", "input": "sleep 0.05", "assert": {"type": "latency", "value": 1}})
    run = project.run("-i", "suite.jsonl", "-o", "report.html")
    assert run.code == 1, run.stdout + run.stderr
    shown = r"[0-9]+(?:\.[0-9])?ms"
    quick, slow = (run.result(case)["assertions"][0] for case in ("quick", "slow"))
    assert isinstance(quick["actual"], float) and slow["actual"] >= 50
    html = (project.root / "report.html").read_text()
    for verdict, limit in ((quick, "60000ms"), (slow, "1ms")):
        assert re.search(rf"<td>latency {shown} (?:is within|exceeds) {limit}</td><td><code>{limit}</code></td>"
                         rf"<td><code>{shown}</code></td></tr>", html), html
        assert repr(verdict["actual"]) not in html or re.fullmatch(r"[0-9]+\.[0-9]", repr(verdict["actual"]))
    summary = (project.root / "agenttest-results" / "summary.md").read_text()
    assert re.search(rf"\| `1ms` \| `{shown}` \|", summary), summary
    junit = (project.root / "agenttest-results" / "junit.xml").read_text()
    assert re.search(rf"✗ latency: latency {shown} exceeds 1ms \(expected 1ms; actual {shown}\)", junit), junit


def test_config_errors_name_the_file_and_key(project: Project) -> None:
    project.suite("suite.jsonl", {"id": "a", "input": "hi"})
    project.write("agenttest.yaml", """
        agents:
          echo:
            provider: python
            callabel: echo_agent:respond
        """)
    run = project.run("-i", "suite.jsonl", "-n", "echo")
    assert run.code == 2
    assert "agenttest.yaml:4: agents.echo.callabel: unknown key (did you mean 'callable'?)" in run.stderr
    project.write("agenttest.yaml", """
        agents:
          echo:
            provider: python
            callable: ${AGENT_MODULE}:respond
        """)
    run = project.run("-i", "suite.jsonl", "-n", "echo")
    assert run.code == 2
    assert "agents.echo.callable: environment variable AGENT_MODULE is not set" in run.stderr
    ok = project.run("-i", "suite.jsonl", "-n", "echo", env={"AGENT_MODULE": "echo_agent"})
    assert ok.code == 0
    assert "Traceback" not in run.stderr


def _bot_reading(project: Project, variable: str) -> None:
    """A project whose agent `bot` sends the environment variable `variable` in a header."""
    project.suite("suite.jsonl", {"id": "a", "input": "hi"})
    project.write("agenttest.yaml", f"""
        agents:
          bot:
            provider: http
            url: http://127.0.0.1:9/chat
            headers: {{Authorization: "Bearer ${{{variable}}}"}}
        """)


def test_a_misspelt_variable_is_named_with_the_variable_meant(project: Project) -> None:
    _bot_reading(project, "BOT_KYE")
    run = project.run("-i", "suite.jsonl", "-n", "bot", env={"BOT_KEY": "sk-typo-test-5521"})
    assert run.code == 2
    assert run.stderr.strip() == (
        f"Error: {project.root / 'agenttest.yaml'}: agents.bot.headers.Authorization: environment variable BOT_KYE "
        "is not set (did you mean 'BOT_KEY'?); agent bot needs it: set it in the environment first "
        "(export BOT_KYE=…)")
    assert "sk-typo-test-5521" not in run.stdout + run.stderr


def test_an_unset_variable_is_not_taken_for_a_typo_of_a_different_one(project: Project) -> None:
    """OPENAI_API_KEY unset beside OPENAI_BASE_URL set: two variables that share a prefix, not a misspelling (a
    new user was told "did you mean 'OPENAI_BASE_URL'?")."""
    _bot_reading(project, "ACMEAI_API_KEY")
    run = project.run("-i", "suite.jsonl", "-n", "bot", env={"ACMEAI_BASE_URL": "http://127.0.0.1:9/v1"})
    assert run.code == 2
    assert "environment variable ACMEAI_API_KEY is not set; agent bot needs it" in run.stderr, run.stderr


def test_every_config_problem_is_reported_at_once_with_its_key_path(project: Project) -> None:
    project.suite("suite.jsonl", {"id": "a", "input": "hi"})
    project.write("agenttest.yaml", """
        version: 1
        defaults:
          name: echo
          job_sumary: false
          parallel: many
        agents:
          echo:
            provider: pyton
            callable: echo_agent:respond
          other:
            provider: python
            callabel: echo_agent:respond
          remote:
            provider: openai
            model: gpt-4o
            api_key: ${NOT_SET_ANYWHERE}
        connectors:
          main:
            base_url: 12
            model: gpt-4o
        """)
    run = project.run("-i", "suite.jsonl")
    assert run.code == 2 and "Traceback" not in run.stderr
    lines = run.stderr.splitlines()
    assert lines[0] == f"Error: {project.root / 'agenttest.yaml'}: 5 problems:"
    assert lines[1:] == [
        "  line 19: connectors.main.base_url: expected a string, got number",
        "  line 4: defaults.job_sumary: unknown run option (did you mean 'job_summary'?)",
        "  line 5: defaults.parallel: expected an integer, got string",
        "  line 8: agents.echo.provider: unknown provider 'pyton' (did you mean 'python'?; available: exec, http, "
        "openai, python)",
        "  line 12: agents.other.callabel: unknown key (did you mean 'callable'?)",
    ]


def test_a_misspelt_provider_or_builtin_is_an_unknown_key_like_any_other(project: Project) -> None:
    """`provder:` and `bultin:` are named as the misspelt keys they are (not "needs 'provider'"), and the rest of
    the entry is still checked; an entry with neither key nor anything like one still needs one."""
    project.suite("suite.jsonl", {"id": "a", "input": "hi"})
    project.write("agenttest.yaml", """
        defaults:
          name: echo
        agents:
          echo:
            provider: python
            callable: echo_agent:respond
          bot:
            provder: http
            ulr: http://127.0.0.1:9/chat
          judge:
            bultin: validator
            model: gpt-4o
          bare:
            url: http://127.0.0.1:9/chat
        """)
    run = project.run("-i", "suite.jsonl")
    assert run.code == 2 and "Traceback" not in run.stderr
    assert run.stderr.splitlines() == [
        f"Error: {project.root / 'agenttest.yaml'}: 4 problems:",
        "  line 8: agents.bot.provder: unknown key (did you mean 'provider'?)",
        "  line 9: agents.bot.ulr: unknown key (did you mean 'url'?)",
        "  line 11: agents.judge.bultin: unknown key (did you mean 'builtin'?)",
        "  line 13: agents.bare: needs 'provider' (exec, http, openai, python) or 'builtin'",
    ]
    project.write("agenttest.yaml", """
        agents:
          echo:
            provder: python
            callable: echo_agent:respond
        """)
    alone = project.run("validate", "-i", "suite.jsonl")
    assert alone.code == 2
    assert alone.stderr.strip() == (f"Error: {project.root / 'agenttest.yaml'}:3: agents.echo.provder: unknown "
                                    "key (did you mean 'provider'?)")


def test_missing_input_file_and_unknown_agent_exit_2(project: Project) -> None:
    missing = project.run("-i", "nope.jsonl")
    assert missing.code == 2 and "nope.jsonl" in missing.stderr
    project.suite("suite.jsonl", {"id": "a", "input": "hi"})
    unknown = project.run("-i", "suite.jsonl", "-n", "ecko")
    assert unknown.code == 2
    assert "agent 'ecko' is not defined" in unknown.stderr and "did you mean 'echo'" in unknown.stderr


@pytest.mark.parametrize(("typed", "hint"), [
    ("tests/agnets/", "(did you mean tests/agents/?)"),
    ("./basic", "(did you mean tests/agents/basic.jsonl?)"),
    ("tests/agents/*.josnl", "(did you mean tests/agents/basic.jsonl or tests/agents/?)"),
    ("tests\\agents\\basic", "(did you mean tests/agents/basic.jsonl or tests/agents/?)"),
])
@pytest.mark.parametrize("command", ["run", "validate", "action"])
def test_a_mistyped_path_never_passes_as_a_chat_message(project: Project, typed: str, hint: str,
                                                         command: str) -> None:
    """SPEC §2: a value with `/`, `\\`, a glob character or a suite ending is a path; missing, it is exit 2 with
    the nearest suites — never a message with no assertions that passes."""
    project.suite("tests/agents/basic.jsonl", {"id": "a", "input": "hi"})
    calls = project.root / "calls.txt"
    env = {"AGENT_CALLS_FILE": str(calls)}
    if command == "action":
        env.update(INPUT_INPUT=typed, GITHUB_WORKSPACE=str(project.root))
        run = project.run("action", env=env)
    else:
        run = project.run(*([command] if command == "validate" else []), "-i", typed, env=env)
    assert run.code == 2, run.stdout + run.stderr
    named = "input: " if command == "action" else "-i "           # the Action names its own input
    assert f"{named}{typed}: no such file or directory {hint}" in run.stdout + run.stderr   # the Action's ::error::
    assert not calls.exists() and "PASSED" not in run.stdout



def test_lone_surrogates_and_odd_characters_in_agent_output(project: Project) -> None:
    project.write("odd_agent.py", """
        def respond(request):
            return {"content": "bad \\ud800 half, nul \\x00, bell \\x07, emoji 🎉", "data": {"k\\udfff": "v"}}
        """)
    project.write("agenttest.yaml", """
        agents:
          odd: {provider: python, callable: odd_agent:respond}
        """)
    project.suite("suite.jsonl", {"id": "odd", "input": "hi", "assert": {"type": "contains", "value": "v"}})
    run = project.run("-i", "suite.jsonl", "-n", "odd", "-v")
    assert run.code == 0, run.stderr
    assert run.report["results"][0]["output"] == {"k\udfff": "v"}
    assert run.events[1]["output"] == {"k\udfff": "v"}
    mode = (project.root / "agenttest-results" / "report.json").stat().st_mode & 0o777
    assert mode & 0o044 == 0o044, oct(mode)   # readable by others, like any file the user writes


def test_test_files_never_expand_environment_variables(project: Project) -> None:
    project.suite("suite.jsonl", {"id": "a", "input": "key=${SECRET_TOKEN}"})
    run = project.run("-i", "suite.jsonl", env={"SECRET_TOKEN": "hunter2-value"})
    assert run.result("a")["output"] == "echo: key=${SECRET_TOKEN}"
    assert "hunter2" not in (project.root / "agenttest-results" / "report.json").read_text()


def test_a_hook_function_its_module_does_not_define_is_invalid_for_validate_and_run(project: Project) -> None:
    """The module is beside the suite, the function is not in it: `validate` says so at the case's line (it had
    said the suite was valid); a module found nowhere near the suite may still be in the agent's `src/` when the case
    runs (Yao's layout), so it is left to the run."""
    project.write("env_test.py", """
        def Before(ctx, case):
            return {"data": 1}
        """)
    project.suite("suite.jsonl",
                  {"id": "fine", "input": "hi", "before": "env_test.Before"},
                  {"id": "misspelt", "input": "hi", "before": "env_test.Befor"},
                  {"id": "elsewhere", "input": "hi", "after": "other_test.After"})
    checked = project.run("validate", "suite.jsonl")
    assert checked.code == 2, checked.stdout + checked.stderr
    assert (f"suite.jsonl:2: invalid test case: before: hook 'Befor' is not defined in "
            f"{project.root / 'env_test.py'}") in checked.stdout
    assert "suite.jsonl:3" not in checked.stdout
    run = project.run("-i", "suite.jsonl")
    assert run.result("fine")["status"] == "passed"
    assert (run.result("misspelt")["status"], run.result("misspelt")["error_kind"]) == ("error", "invalid")
    assert run.result("elsewhere")["error_kind"] == "hook"


def test_the_case_timeout_covers_the_before_hook(project: Project) -> None:
    project.write("slow_test.py", """
        import threading
        def Before(ctx, case):
            threading.Event().wait()
        def After(ctx, case, result, data):
            open("after.txt", "w").write(result["status"] + " " + str(result["duration_ms"]))
        """)
    project.suite("suite.jsonl", {"id": "a", "input": "hi", "timeout": "300ms", "before": "slow_test.Before",
                                  "after": "slow_test.After"})
    run = project.run("-i", "suite.jsonl")                  # it ends at all: the hook never returns
    assert run.result("a")["status"] == "timeout"
    assert run.result("a")["error"] == "timeout after 300ms (in the before hook)"
    status, duration = (project.root / "after.txt").read_text().split()
    assert status == "timeout" and int(duration) >= 300     # After sees the finished result


def test_a_long_direct_message_is_a_message(project: Project) -> None:
    message = "word " * 80
    run = project.run("-n", "echo", "-i", message)
    assert run.code == 0, run.stderr
    assert run.report["results"][0]["output"] == f"echo: {message}"


def test_yaos_script_test_mode_is_refused_not_sent_as_a_message(project: Project) -> None:
    calls = project.root / "calls.txt"
    run = project.run("-n", "echo", "-i", "scripts.yao.craft.utils", env={"AGENT_CALLS_FILE": str(calls)})
    assert run.code == 2 and "PASSED" not in run.stdout, run.stdout
    assert "-i scripts.yao.craft.utils: this is Yao's script-test mode" in run.stderr
    assert not calls.exists()


@pytest.mark.parametrize("hook", ["BeforeAll", "AfterAll"])
def test_a_signal_during_a_global_hook_still_writes_the_artifacts(project: Project, hook: str) -> None:
    project.write("env_test.py", """
        import threading
        def BeforeAll(ctx, cases):
            open("hook-started", "w").close()
            threading.Event().wait()
        def AfterAll(ctx, results, data):
            BeforeAll(ctx, results)
        """)
    project.suite("suite.jsonl", {"id": "a", "input": "hi"})
    flag = "--before" if hook == "BeforeAll" else "--after"
    stopped = interrupt_cli("-i", "suite.jsonl", flag, f"env_test.{hook}", cwd=project.root,
                            ready=(project.root / "hook-started").exists)   # the hook never returns
    stdout = stopped.stdout
    assert stopped.code == 130, stdout + stopped.stderr
    assert "  ⚠ INTERRUPTED: partial results" in stdout.splitlines() and "TESTS FAILED" not in stdout
    report = stopped.report
    assert report["interrupted"] is True
    assert (project.root / "agenttest-results" / "junit.xml").exists()
    expected = "skipped" if hook == "BeforeAll" else "passed"
    assert report["results"][0]["status"] == expected


def test_attachments_stay_inside_the_project_whatever_the_working_directory(tmp_path: Path) -> None:
    project = Project(tmp_path / "proj")
    project.write("agenttest.yaml", "agents:\n  echo: {provider: python, callable: echo_agent:respond}\n")
    project.write("echo_agent.py", ECHO_AGENT)
    project.write("fixtures/note.txt", "inside")
    (tmp_path / "secret.txt").write_text("outside")
    part = {"role": "user", "content": [{"type": "text", "text": "read"}, {"type": "file", "source": ""}]}

    def case(case_id: str, source: str) -> dict:
        return {"id": case_id, "input": [{**part, "content": [part["content"][0], {"type": "file", "source": source}]}]}

    project.suite("tests/files.jsonl", case("inside", "file://../fixtures/note.txt"),
                  case("outside", "file://../../secret.txt"))
    run = run_cli("-i", "proj/tests/files.jsonl", "--config", "proj/agenttest.yaml", cwd=tmp_path)
    statuses = {r["id"]: (r["status"], r.get("error_kind")) for r in run.report["results"]}
    assert statuses == {"inside": ("passed", None), "outside": ("error", "invalid")}, run.stdout
    assert "is outside the repository" in run.result("outside")["error"]


def test_cases_that_never_ran_are_counted_everywhere(project: Project) -> None:
    project.suite("suite.jsonl", {"id": "f1", "input": "hi", "assert": {"type": "contains", "value": "nope"}},
                  *[{"id": f"f{i}", "input": "hi"} for i in range(2, 6)])
    run = project.run("-i", "suite.jsonl", "--fail-fast", "--parallel", "1")
    assert run.code == 1
    assert sorted(e["id"] for e in run.events if e["type"] == "result") == ["f1", "f2", "f3", "f4", "f5"]
    assert [r.get("ran", True) for r in run.report["results"]] == [True, False, False, False, False]
    assert "  ○ 4 cases not run: --fail-fast stopped the run after f1 failed" in run.stdout.splitlines()
    assert "► [f2]" not in run.stdout


def test_an_unwritable_output_directory_stops_the_run_before_any_case(project: Project) -> None:
    project.suite("suite.jsonl", {"id": "a", "input": "hi"})
    calls = project.root / "calls.txt"
    (project.root / "blocker").write_text("a file, not a directory")
    run = project.run("-i", "suite.jsonl", "--output-dir", "blocker/out", env={"AGENT_CALLS_FILE": str(calls)})
    assert run.code == 2
    assert "cannot create the output directory" in run.stderr and "blocker/out" in run.stderr
    assert not calls.exists()


@pytest.mark.parametrize(("cwd", "suite", "agent_path"), [
    ("", "assistants/workers/keyword/tests/x.jsonl", "assistants/workers/keyword"),
    ("assistants", "workers/keyword/tests/x.jsonl", "workers/keyword"),
])
def test_the_agent_id_comes_from_an_assistants_path_however_spelled(tmp_path: Path, cwd: str, suite: str,
                                                                    agent_path: str) -> None:
    project = Project(tmp_path)
    project.write("agenttest.yaml", """
        agents:
          workers.keyword: {provider: python, callable: echo_agent:respond}
          other: {provider: python, callable: echo_agent:respond}
        """)
    project.write("echo_agent.py", ECHO_AGENT)
    project.suite("assistants/workers/keyword/tests/x.jsonl", {"id": "a", "input": "hi"})
    run = run_cli("-i", suite, "--config", str(tmp_path / "agenttest.yaml"), cwd=tmp_path / cwd)
    assert run.code == 0, run.stderr
    assert run.report["summary"]["agent_id"] == "workers.keyword"
    assert run.report["summary"]["agent_path"] == agent_path


def test_a_hanging_after_hook_is_bounded(project: Project) -> None:
    project.write("slow_test.py", """
        import threading
        def After(ctx, case, result, data):
            threading.Event().wait()
        """)
    project.suite("suite.jsonl", {"id": "a", "input": "hi", "timeout": "500ms", "after": "slow_test.After"})
    run = project.run("-i", "suite.jsonl")                  # it ends at all: the hook never returns
    assert (run.result("a")["status"], run.result("a")["error_kind"]) == ("error", "hook")
    assert run.result("a")["error"] == "after hook: timeout after 500ms"


@pytest.mark.parametrize(("args", "message"), [
    (("--replay", "cassettes"), "--replay cassettes: no such directory (record it first with --record)"),
    (("--record", "a", "--replay", "b"), "--record and --replay: a run either records its calls or replays them"),
    (("--shard", "3/2"), "--shard: shard 3 of 2 does not exist: K goes from 1 to N"),
    (("--shard", "half"), "--shard: expected K/N (e.g. 2/4), got 'half'"),
    (("--baseline", "old/report.json"), "--baseline"),
])
def test_scale_flags_are_checked_before_any_case_runs(project: Project, args: tuple[str, ...], message: str) -> None:
    project.suite("suite.jsonl", {"id": "a", "input": "hi"})
    run = project.run("-i", "suite.jsonl", *args)
    assert run.code == 2 and message in run.stderr


def test_an_https_agent_is_verified_with_the_certificates_in_effect(tmp_path: Path) -> None:
    """aiohttp is imported without loading any CA certificate (agents/network.py), yet an https agent is verified
    against the system's, or SSL_CERT_FILE's when it is set, and a certificate nobody vouches for fails the call."""
    ca = trustme.CA()
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1").configure_cert(context)
    bundle = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(bundle))
    project = Project(tmp_path)
    project.suite("s.jsonl", {"id": "a", "input": "hi", "assert": {"type": "contains", "value": "over tls"}})
    with ScriptedServer("/chat", json_reply({"content": "over tls"}), ssl_context=context) as server:
        project.write("agenttest.yaml", f"""
            version: 1
            defaults:
              name: remote
            agents:
              remote:
                provider: http
                url: {server.endpoint}
            """)
        trusted = project.run("-i", "s.jsonl", env={"SSL_CERT_FILE": str(bundle)})
        untrusted = project.run("-i", "s.jsonl", env={"SSL_CERT_FILE": str(tmp_path / "none.pem")})
    assert server.endpoint.startswith("https://127.0.0.1:")
    assert trusted.code == 0, trusted.stdout + trusted.stderr
    assert trusted.result("a")["output"] == "over tls"
    assert untrusted.code == 1
    assert untrusted.result("a")["error"].startswith(
        f"agent error: TLS certificate verification failed for {server.endpoint}: ")
    assert len(server.requests) == 1
