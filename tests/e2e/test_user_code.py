"""User code in a real run: a blocking sync script is bounded by its case's timeout without holding up the cases beside
it, and an agent, hook or script calling sys.exit costs its case, never the run or its artifacts."""

from __future__ import annotations

from .conftest import Project

CHECKS = """
    import sys, threading

    def blocks(output):
        threading.Event().wait()

    def exits(output):
        sys.exit("x")
    """


def test_a_blocking_sync_script_times_out_its_case_without_delaying_a_parallel_one(project: Project) -> None:
    project.write("checks.py", CHECKS)
    project.suite("suite.jsonl",
                  {"id": "slow-script", "input": "hi", "timeout": "300ms",
                   "assert": {"type": "script", "script": "checks.blocks"}},
                  {"id": "beside-it", "input": "sleep 0.5", "assert": {"type": "contains", "value": "echo"}})
    # The script never returns: that the run ends, the case beside it passed, shows that neither waited for it.
    run = project.run("-i", "suite.jsonl", "--parallel", "2")
    slow, beside = run.result("slow-script"), run.result("beside-it")
    assert slow["status"] == "timeout", run.stdout
    assert slow["error"] == "timeout after 300ms (in assertions)"
    assert beside["status"] == "passed"


def test_sys_exit_in_an_agent_a_hook_or_a_script_costs_only_its_case(project: Project) -> None:
    project.write("agenttest.yaml", """
        version: 1
        defaults:
          name: exiting
        agents:
          exiting:
            provider: python
            callable: exiting_agent:respond
        """)
    project.write("exiting_agent.py", """
        import sys

        def respond(request):
            if request["messages"][-1]["content"] == "exit":
                sys.exit("x")
            return "fine"
        """)
    project.write("checks.py", CHECKS)
    project.write("env_test.py", """
        import sys

        def Before(ctx, case):
            sys.exit("x")

        async def After(ctx, case, result):
            raise SystemExit(3)
        """)
    project.suite("suite.jsonl",
                  {"id": "agent-exits", "input": "exit"},
                  {"id": "before-exits", "input": "hi", "before": "env_test.Before"},
                  {"id": "after-exits", "input": "hi", "expected": "fine", "after": "env_test.After"},
                  {"id": "script-exits", "input": "hi", "assert": {"type": "script", "script": "checks.exits"}},
                  {"id": "still-runs", "input": "hi", "expected": "fine"})
    run = project.run("-i", "suite.jsonl", "--parallel", "1", "--junit", "junit.xml")
    assert run.code == 1, run.stdout + run.stderr
    assert "Traceback" not in run.stderr
    outcomes = {r["id"]: (r["status"], r.get("error")) for r in run.report["results"]}
    assert outcomes == {
        "agent-exits": ("error", "agent error: agent raised RuntimeError at exiting_agent.py:5: called sys.exit('x')"),
        "before-exits": ("error", "before hook: hook env_test.Before failed: RuntimeError at env_test.py:4: "
                                  "called sys.exit('x')"),
        "after-exits": ("error", "after hook: hook env_test.After failed: RuntimeError at env_test.py:7: "
                                 "called sys.exit(3)"),
        "script-exits": ("failed", "script execution failed: checks.exits raised RuntimeError at checks.py:7: "
                                   "called sys.exit('x')"),
        "still-runs": ("passed", None),
    }
    assert [event["type"] for event in run.events].count("result") == 5
    assert (run.cwd / "junit.xml").read_text().count("<testcase ") == 5


def test_user_code_that_raises_names_its_own_file_and_line_and_keeps_the_traceback(project: Project) -> None:
    """The innermost frame in the user's files (a helper module, not the json library nor agenttest) is named; -v
    prints the traceback of the user's frames only, secrets masked; report.json keeps it in trace.traceback."""
    project.write("agenttest.yaml", """
        version: 1
        defaults:
          name: parser
        connectors:
          llm: {type: openai, base_url: "http://127.0.0.1:9/v1", api_key: "${LLM_API_KEY}", model: m}
        agents:
          parser:
            provider: python
            callable: parser_agent:respond
        """)
    project.write("parser_agent.py", """
        import os
        from lib.parsing import parse

        def respond(request):
            text = request["messages"][-1]["content"]
            if text == "leak":
                raise PermissionError("key " + os.environ["LLM_API_KEY"] + " refused")
            return parse(text)
        """)
    project.write("lib/parsing.py", """
        import json

        def parse(text):
            return json.dumps(json.loads(text))
        """)
    project.write("env_test.py", """
        def Before(ctx, case):
            return setup(case["id"])

        def setup(case_id):
            raise LookupError(f"no fixture for {case_id}")
        """)
    project.write("checks.py", """
        def positive(output):
            return float(output) > 0
        """)
    project.suite("suite.jsonl",
                  {"id": "agent-raises", "input": "not json"},
                  {"id": "hook-raises", "input": "1", "before": "env_test.Before"},
                  {"id": "script-raises", "input": '"x"', "assert": {"type": "script", "script": "checks.positive"}},
                  {"id": "secret", "input": "leak"})
    run = project.run("-i", "suite.jsonl", "-v", env={"LLM_API_KEY": "sk-test-supersecret"})
    assert run.code == 1, run.stdout + run.stderr
    errors = {r["id"]: r["error"] for r in run.report["results"]}
    assert errors == {
        "agent-raises": "agent error: agent raised JSONDecodeError at lib/parsing.py:4: Expecting value: line 1 "
                        "column 1 (char 0)",
        "hook-raises": "before hook: hook env_test.Before failed: LookupError at env_test.py:5: "
                       "no fixture for hook-raises",
        "script-raises": "script execution failed: checks.positive raised ValueError at checks.py:2: could not "
                         "convert string to float: '\"x\"'",
        "secret": "agent error: agent raised PermissionError at parser_agent.py:7: key *** refused",
    }
    traceback = run.result("agent-raises")["trace"]["traceback"]
    assert traceback == "\n".join([
        "Traceback (most recent call last, user code only):",
        '  File "parser_agent.py", line 8, in respond',
        "    return parse(text)",
        '  File "lib/parsing.py", line 4, in parse',
        "    return json.dumps(json.loads(text))",
        "json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)"])
    assert 'File "env_test.py", line 2, in Before' in run.result("hook-raises")["trace"]["traceback"]
    assert 'File "checks.py", line 2, in positive' in run.result("script-raises")["trace"]["traceback"]
    assert run.result("secret")["trace"]["traceback"].endswith("PermissionError: key *** refused")
    lines = run.stdout.splitlines()
    assert "  │  " + '  File "lib/parsing.py", line 4, in parse' in lines
    assert "  │  LookupError: no fixture for hook-raises" in lines
    for case, last in (("agent-raises", "  │  json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)"),
                       ("hook-raises", "  │  LookupError: no fixture for hook-raises"),
                       ("script-raises", "  │  ValueError: could not convert string to float: '\"x\"'")):
        start = next(i for i, line in enumerate(lines) if line.startswith(f"► [{case}]"))
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("► [")), len(lines))
        block = lines[start:end]        # under its own case, not another's, nor before the cases
        assert "  │  Traceback (most recent call last, user code only):" in block and last in block, (case, block)
    assert lines.count("  │  Traceback (most recent call last, user code only):") == 4
    assert "sk-test-supersecret" not in run.stdout + run.stderr + (run.report_text or "")
    assert "agenttest/" not in run.report_text and "threads.py" not in run.stdout
    quiet = project.run("-i", "suite.jsonl", env={"LLM_API_KEY": "sk-test-supersecret"})
    assert "Traceback" not in quiet.stdout and quiet.result("agent-raises")["trace"]["traceback"] == traceback
