"""User code in a real run: a blocking sync script is bounded by its case's timeout without holding up the cases beside
it, and an agent, hook or script calling sys.exit costs its case, never the run or its artifacts."""

from __future__ import annotations

from .conftest import Project

CHECKS = """
    import sys, time

    def slow(output):
        time.sleep(2)
        return True

    def exits(output):
        sys.exit("x")
    """


def test_a_blocking_sync_script_times_out_its_case_without_delaying_a_parallel_one(project: Project) -> None:
    project.write("checks.py", CHECKS)
    project.suite("suite.jsonl",
                  {"id": "slow-script", "input": "hi", "timeout": "300ms",
                   "assert": {"type": "script", "script": "checks.slow"}},
                  {"id": "beside-it", "input": "sleep 0.5", "assert": {"type": "contains", "value": "echo"}})
    run = project.run("-i", "suite.jsonl", "--parallel", "2")
    slow, beside = run.result("slow-script"), run.result("beside-it")
    assert slow["status"] == "timeout", run.stdout
    assert slow["error"] == "timeout after 300ms (in assertions)"
    assert slow["duration_ms"] < 1500
    assert beside["status"] == "passed"
    assert beside["duration_ms"] < 1500, "the parallel case waited for the blocking script"
    assert run.report["summary"]["duration_ms"] < 1900


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
        "agent-exits": ("error", "agent error: agent raised RuntimeError: called sys.exit('x')"),
        "before-exits": ("error", "before hook: hook env_test.Before failed: RuntimeError: called sys.exit('x')"),
        "after-exits": ("error", "after hook: hook env_test.After failed: RuntimeError: called sys.exit(3)"),
        "script-exits": ("failed", "script execution failed: checks.exits raised RuntimeError: called sys.exit('x')"),
        "still-runs": ("passed", None),
    }
    assert [event["type"] for event in run.events].count("result") == 5
    assert (run.cwd / "junit.xml").read_text().count("<testcase ") == 5
