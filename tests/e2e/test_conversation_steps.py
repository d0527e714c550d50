"""Conversations written as steps, through the real CLI (SPEC §5): fixed and simulated turns in one case, guards on
every reply, deadlines, final criteria; why each conversation ended, at which turn, and that nothing is sent after
a failure; what the simulator and the final judge are shown; the seed's static mode; awaiting input."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from e2e.conftest import Project, Run, helper_server
from fakes.helper_brain import HelperBrain
from fakes.openai_server import FakeOpenAI

CONFIG = """
    version: 1
    defaults:
      name: shop
    connectors:
      brain:
        base_url: ${BRAIN_URL}
        api_key: sk-brain-key-51e0
        model: brain-1
    agents:
      shop:
        provider: python
        callable: shop:respond
        input_tools: [open_form]
        price: {input: 0, output: 0}
      sim:
        builtin: simulator
        connector: brain
      judge:
        builtin: validator
        connector: brain
      rogue:
        provider: python
        callable: rogue:simulate
    """

# The agent under test: it notes every request it gets in $CALLS_FILE, then answers by the user's last words.
SHOP = '''
import asyncio, json, os

async def respond(request):
    with open(os.environ["CALLS_FILE"], "a") as handle:
        handle.write(json.dumps({"test": request["context"]["test_id"], "messages": request["messages"],
                                 "options": request["options"]}) + "\\n")
    text = request["messages"][-1]["content"]
    if text == "boom":
        raise RuntimeError("agent exploded")
    if text.startswith("sleep"):
        await asyncio.sleep(float(text.split()[1]))
    if "close my account" in text:
        call = {"id": "c1", "name": "delete_account", "arguments": {"user": "me"}}
        return {"content": "<think>the user is CANARY-77</think>Refunded, and your account is closed.",
                "tool_calls": [call], "tools": [{**call, "result": {"deleted": "SECRET-RESULT"}}]}
    if text == "I want to submit an expense":
        return {"content": "What type of expense would you like to submit?"}
    if text == "Business travel to Beijing, $3500":
        call = {"id": "c2", "name": "expense__create_expense", "arguments": {"amount": 3500}}
        return {"content": "", "tool_calls": [call], "tools": [{**call, "result": {"id": "EXP-2025-001"}}]}
    if text == "Yes, confirm":
        return {"content": "Expense submitted. Reference: EXP-2025-001"}
    if text == "declare":
        return {"content": "Noted.", "awaiting_input": True}
    if text == "form":
        return {"content": "Fill this in.", "tool_calls": [{"id": "c3", "name": "ui__open_form", "arguments": {}}]}
    if text == "approve":
        return {"content": "This needs a manager: what is the PO number?"}
    return {"content": f"echo: {text}"}
'''

# A simulator agent that breaks role as its goal says.
ROGUE = '''
import json

def simulate(request):
    asked = json.loads(request["messages"][-1]["content"])
    said = [m["content"] for m in asked["conversation"] if m["role"] == "assistant"]
    message = {"as-agent": "Assistant: Sure, I can help you with that refund.",
               "two-turns": "User: hi there\\nUser: and one more thing",
               "echo": said[-1] if said else "hi",
               "stop-at-once": ""}[asked["goal"]]
    return {"content": json.dumps({"message": message, "goal_achieved": asked["goal"] == "stop-at-once"})}
'''


@pytest.fixture
def brain() -> Iterator[tuple[HelperBrain, FakeOpenAI]]:
    with helper_server() as pair:
        yield pair


def shop_project(root: Path) -> Project:
    """A project whose agent under test is SHOP, with the helpers of CONFIG."""
    proj = Project(root)
    proj.write("agenttest.yaml", CONFIG)
    proj.write("shop.py", SHOP)
    proj.write("rogue.py", ROGUE)
    return proj


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return shop_project(tmp_path)


def run(project: Project, server: FakeOpenAI | None, *args: str) -> Run:
    return project.run(*args, env={"BRAIN_URL": server.base_url if server else "http://127.0.0.1:9",
                                   "CALLS_FILE": str(project.root / "calls.jsonl")})


def said_to(project: Project, case_id: str) -> list[list[str]]:
    """For each call the agent got in case `case_id`: the user messages of the conversation it was sent."""
    path = project.root / "calls.jsonl"
    calls = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    return [[m["content"] for m in call["messages"] if m["role"] == "user"] for call in calls
            if call["test"] == case_id]


def contains(text: str) -> dict[str, Any]:
    return {"type": "contains", "value": text}


def never(text: str) -> dict[str, Any]:
    return {"type": "contains", "value": text, "negate": True}


def scripted(*replies: str) -> dict[str, Any]:
    return {"use": "scripted", "replies": list(replies)}


def sim(*script: str, goal: str = "get help") -> dict[str, Any]:
    return {"use": "sim", "options": {"metadata": {"persona": "a customer", "goal": goal, "script": list(script)}}}


NO_DELETE = {"id": "no_delete", "description": "never deletes an account",
             "assert": {"type": "tool_called", "value": "delete_account", "negate": True}}


def test_every_way_a_conversation_ends_is_reported_with_the_turn_it_failed_at(
        project: Project, brain: tuple[HelperBrain, FakeOpenAI]) -> None:
    project.suite(
        "s.jsonl",
        {"id": "reached", "input": "hi", "simulator": scripted("more"), "checkpoints": [
            {"id": "greets", "assert": contains("hi")}]},
        {"id": "completed", "turns": [{"input": "a"}, {"input": "b"}], "checkpoints": [
            {"id": "b", "assert": contains("echo: b")}]},
        {"id": "incomplete", "turns": [{"input": "a"}], "checkpoints": [{"id": "zed", "assert": contains("zed")}]},
        {"id": "max-turns", "simulator": scripted("one", "two", "three"), "max_turns": 2,
         "checkpoints": [{"id": "zed", "assert": contains("zed")}]},
        {"id": "script-max", "simulator": scripted("b", "c", "d"), "max_turns": 3,
         "turns": [{"input": "a"}, {"simulate": {}}]},
        {"id": "goal", "input": "hi", "simulator": sim("hi", "bye"), "checkpoints": [
            {"id": "zed", "assert": contains("zed")}]},
        {"id": "exhausted", "simulator": scripted("one"), "checkpoints": [{"id": "zed", "assert": contains("zed")}]},
        {"id": "turn-failed", "turns": [{"input": "a", "assert": contains("nope")}, {"input": "b"}]},
        {"id": "guard", "turns": [{"input": "a"}, {"input": "refund and close my account"}, {"input": "c"}],
         "guards": [NO_DELETE]},
        {"id": "deadline", "turns": [{"input": "a"}, {"input": "b"}, {"input": "verified"}],
         "checkpoints": [{"id": "verified", "assert": contains("verified"), "by_turn": 2},
                         {"id": "late", "required": False, "assert": contains("zed"), "by_turn": 1}]},
        {"id": "final", "turns": [{"input": "a"}], "final": [contains("echo: a"), contains("polite")]},
        {"id": "boom", "turns": [{"input": "a"}, {"input": "boom"}, {"input": "c"}]},
        {"id": "slow", "timeout": "1s", "turns": [{"input": "a"}, {"input": "sleep 100"}, {"input": "c"}]},
    )
    result = run(project, brain[1], "-i", "s.jsonl")
    assert result.code == 1, result.stdout + result.stderr
    ended = {r["id"]: (r["status"], r["metadata"].get("termination"), r["metadata"].get("failed_at_turn"))
             for r in result.report["results"]}
    assert ended == {
        "reached": ("passed", "checkpoints_reached", None),
        "completed": ("passed", "turns_completed", None),
        "incomplete": ("failed", "turns_completed", None),
        "max-turns": ("failed", "max_turns", None),
        "script-max": ("failed", "max_turns", None),
        "goal": ("failed", "goal_achieved", None),
        "exhausted": ("failed", "replies_exhausted", None),
        "turn-failed": ("failed", "turn_failed", 1),
        "guard": ("failed", "guard_broken", 2),
        "deadline": ("failed", "deadline_missed", 2),
        "final": ("failed", "final_failed", None),
        "boom": ("error", "error", 2),
        "slow": ("timeout", "timeout", 2),
    }
    errors = {r["id"]: r.get("error") for r in result.report["results"]}
    assert errors["incomplete"] == "turns completed without reaching: zed"
    assert errors["max-turns"] == "max turns (2) exceeded without reaching: zed"
    assert errors["script-max"] == "max turns (3) exceeded before the turns were done"
    assert errors["turn-failed"] == "turn 1 failed: output does not contain 'nope'"
    assert errors["guard"] == "guard no_delete broken at turn 2: negated: tool 'delete_account' was called"
    assert errors["deadline"] == "checkpoint verified not reached by turn 2"
    assert errors["final"] == "final check failed: output does not contain 'polite'"
    assert errors["boom"].startswith("agent error at turn 2: agent raised RuntimeError")
    assert errors["slow"] == "timeout after 1s (at turn 2, waiting for the agent)"
    # Nothing is sent after the turn that failed the case.
    assert said_to(project, "turn-failed") == [["a"]]
    assert said_to(project, "guard") == [["a"], ["a", "refund and close my account"]]
    assert said_to(project, "deadline") == [["a"], ["a", "b"]]
    assert len(said_to(project, "boom")) == 2 and len(said_to(project, "max-turns")) == 2
    # The final verdicts are the case's assertions; the turn that failed says why.
    final = result.result("final")
    assert [(a["type"], a["passed"]) for a in final["assertions"]] == [("contains", True), ("contains", False)]
    turns = {r["id"]: r["metadata"]["turns"] for r in result.report["results"]}
    assert turns["guard"][-1]["failed"] == "guard no_delete broken: negated: tool 'delete_account' was called"
    assert turns["turn-failed"][0]["failed"] == "output does not contain 'nope'"
    assert turns["turn-failed"][0]["assertions"][0]["passed"] is False
    guards = result.result("guard")["metadata"]["guards"]["no_delete"]
    assert (guards["checked"], guards["broken_at_turn"], guards["description"]) == (2, 2, "never deletes an account")
    checkpoints = result.result("deadline")["metadata"]["checkpoints"]
    assert (checkpoints["verified"]["by_turn"], checkpoints["verified"]["deadline_missed"]) == (2, True)
    assert checkpoints["late"]["deadline_missed"] is True      # an optional checkpoint's deadline only marks it


def test_a_mixed_case_sends_scripted_then_simulated_then_scripted_turns(
        project: Project, brain: tuple[HelperBrain, FakeOpenAI]) -> None:
    helper, server = brain
    script = ["alpha", "bravo", "charlie", "delta"]
    project.suite(
        "s.jsonl",
        {"id": "stretch", "simulator": sim(*script),
         "turns": [{"input": "alpha", "assert": contains("echo: alpha"), "options": {"metadata": {"tone": "terse"}}},
                   {"simulate": {"max_turns": 2}}, {"input": "zulu"}]},
        {"id": "until", "simulator": sim(*script),
         "checkpoints": [{"id": "got-charlie", "assert": contains("charlie")}],
         "turns": [{"input": "alpha"}, {"simulate": {"max_turns": 5, "until": "got-charlie"}}, {"input": "zulu"}]},
        {"id": "done-early", "simulator": sim("alpha", "bravo"),
         "turns": [{"input": "alpha"}, {"simulate": {"max_turns": 5}}, {"input": "zulu"}]},
    )
    result = run(project, server, "-i", "s.jsonl")
    assert result.code == 0, result.stdout + result.stderr
    assert said_to(project, "stretch")[-1] == ["alpha", "bravo", "charlie", "zulu"]
    assert said_to(project, "until")[-1] == ["alpha", "bravo", "charlie", "zulu"]
    assert said_to(project, "done-early")[-1] == ["alpha", "bravo", "zulu"]
    turns = result.result("stretch")["metadata"]["turns"]
    assert [(t["input"], t["source"], t.get("step")) for t in turns] == [
        ("alpha", "case", 0), ("bravo", "simulator", None), ("charlie", "simulator", None), ("zulu", "case", 2)]
    meta = result.result("stretch")["metadata"]
    assert (meta["mode"], meta["simulator"], meta["termination"]) == ("dynamic", "sim", "turns_completed")
    # A fixed turn's options go with its own request only.
    path = project.root / "calls.jsonl"
    options = [json.loads(line)["options"] for line in path.read_text().splitlines()
               if json.loads(line)["test"] == "stretch"]
    assert [o.get("metadata") for o in options] == [{"tone": "terse"}, None, None, None]
    assert all(o["skip"] == {"history": True} for o in options)
    assert result.result("done-early")["metadata"]["ended"]["goal_achieved"] is True
    # The simulator is asked with the whole conversation so far, fixed turns included.
    asked = [json.loads(body["messages"][-1]["content"]) for body in helper.bodies["simulator"]]
    assert {a["turn_number"] for a in asked} >= {2, 3}


def test_the_final_judge_sees_the_whole_conversation_and_the_simulator_only_what_a_user_sees(
        project: Project, brain: tuple[HelperBrain, FakeOpenAI]) -> None:
    helper, server = brain
    project.suite("s.jsonl", {
        "id": "judged", "simulator": sim("refund and close my account", "ok then", goal="get a refund"),
        "turns": [{"input": "refund and close my account"}, {"simulate": {"max_turns": 1}}],
        "final": {"type": "agent", "use": "agents:judge", "value": "the reply says 'ok then'"}})
    result = run(project, server, "-i", "s.jsonl")
    assert result.code == 0, result.stdout + result.stderr
    [simulator_body] = helper.bodies["simulator"]
    seen = json.loads(simulator_body["messages"][-1]["content"])["conversation"]
    assert seen == [{"role": "user", "content": "refund and close my account"},
                    {"role": "assistant", "content": "Refunded, and your account is closed."}]
    [judge_body] = helper.bodies["judge"]
    asked = json.loads(judge_body["messages"][-1]["content"])
    assert (asked["input"], asked["output"]) == ("ok then", "echo: ok then")
    conversation = asked["conversation"]
    assert [m["role"] for m in conversation] == ["user", "assistant", "tool", "user", "assistant"]
    assert conversation[1]["tool_calls"][0]["name"] == "delete_account"
    assert "SECRET-RESULT" in conversation[2]["content"]
    assert result.result("judged")["assertions"][0]["details"]["judge"] == "judge"


@pytest.mark.parametrize(("goal", "why"), [
    ("as-agent", "it answered as the agent (a line of its message opens with 'Assistant':)"),
    ("two-turns", "it wrote more than one user turn in one message"),
    ("echo", "it repeated the agent's last reply as its own"),
    ("stop-at-once", "it said its goal was achieved before the agent had said anything"),
])
def test_a_simulator_that_breaks_role_is_a_simulator_error_not_an_agent_failure(
        project: Project, goal: str, why: str) -> None:
    opening = [] if goal == "stop-at-once" else [{"input": "I would like a refund for order 42"}]
    project.suite("s.jsonl", {"id": "rogue", "simulator": {"use": "rogue", "options": {"metadata": {"goal": goal}}},
                              "turns": [*opening, {"simulate": {"max_turns": 2}}]})
    result = run(project, None, "-i", "s.jsonl")
    case = result.result("rogue")
    turn = len(opening) + 1
    assert (case["status"], case["error_kind"]) == ("error", "simulator")
    assert case["error"] == f"simulator error at turn {turn}: simulator rogue: it broke role: {why}"
    assert (case["metadata"]["termination"], case["metadata"]["failed_at_turn"]) == ("error", turn)
    assert len(said_to(project, "rogue")) == len(opening)      # the rogue turn never reached the agent


# The seed's static-mode example (seed 000, "Multi-Turn: Static Mode"), as written.
SEED_STATIC = {
    "id": "T001", "name": "Expense Reimbursement - Happy Path", "mode": "static",
    "options": {"connector": "openai-gpt4", "skip": {"history": True}},
    "turns": [{"input": "I want to submit an expense",
               "assertions": [{"type": "contains", "value": "type of expense"}]},
              {"input": "Business travel to Beijing, $3500",
               "assertions": [{"type": "tool_called", "name": "create_expense"}]},
              {"input": "Yes, confirm", "assertions": [{"type": "contains", "value": "submitted"}]}]}


def test_the_seeds_static_mode_runs_as_written_and_stops_at_the_failing_turn(project: Project) -> None:
    broken = json.loads(json.dumps(SEED_STATIC))
    broken["id"] = "T002"
    broken["turns"][1]["assertions"] = [{"type": "tool_called", "name": "approve_expense"}]
    project.suite("s.jsonl", SEED_STATIC, broken)
    result = run(project, None, "-i", "s.jsonl")
    good, bad = result.result("T001"), result.result("T002")
    assert (good["status"], good["metadata"]["mode"], good["metadata"]["total_turns"]) == ("passed", "static", 3)
    assert [t["assertions"][0]["passed"] for t in good["metadata"]["turns"]] == [True, True, True]
    assert good["output"] == "Expense submitted. Reference: EXP-2025-001"
    assert (bad["status"], bad["metadata"]["termination"], bad["metadata"]["failed_at_turn"]) == (
        "failed", "turn_failed", 2)
    assert len(said_to(project, "T002")) == 2         # "Yes, confirm" was never sent


def test_awaiting_input_is_recorded_per_turn_and_on_missing_input_decides(project: Project) -> None:
    project.suite("s.jsonl",
                  {"id": "declared", "turns": [{"input": "declare"}]},
                  {"id": "tool", "turns": [{"input": "form"}]},
                  {"id": "question", "turns": [{"input": "hello"}, {"input": "approve"}]},
                  {"id": "done", "turns": [{"input": "hello"}]})
    ignored = run(project, None, "-i", "s.jsonl")
    assert ignored.code == 0, ignored.stdout
    reasons = {r["id"]: [(t["awaiting_input"], t.get("awaiting_reason")) for t in r["metadata"]["turns"]]
               for r in ignored.report["results"]}
    assert reasons == {"declared": [(True, "agent_declared")], "tool": [(True, "tool_requires_confirmation")],
                       "question": [(False, None), (True, "content_is_question")], "done": [(False, None)]}
    skipped = run(project, None, "-i", "s.jsonl", "--on-missing-input", "skip")
    assert skipped.code == 0
    assert {r["id"]: r["status"] for r in skipped.report["results"]} == {
        "declared": "skipped", "tool": "skipped", "question": "skipped", "done": "passed"}
    question = skipped.result("question")
    assert question["error"] == ('agent awaiting input after turn 2, no next turn defined: it asked "This needs a '
                                 'manager: what is the PO number?" (content_is_question); add a turn or a simulated '
                                 "stretch, or run with --interactive")
    assert question["metadata"]["termination"] == "turns_completed"
    failed = run(project, None, "-i", "s.jsonl", "--on-missing-input", "fail")
    assert failed.code == 1
    assert {r["id"]: r["status"] for r in failed.report["results"]} == {
        "declared": "failed", "tool": "failed", "question": "failed", "done": "passed"}


def test_cases_written_for_a_person_are_skipped_without_a_terminal_and_interactive_needs_one(
        project: Project) -> None:
    project.suite("s.jsonl", {"id": "by-hand", "input": "approve", "interactive": {"enabled": True}},
                  {"id": "plain", "input": "hello", "assert": contains("echo")})
    skipped = run(project, None, "-i", "s.jsonl", "--skip-interactive")
    assert skipped.code == 0, skipped.stdout
    by_hand = skipped.result("by-hand")
    assert (by_hand["status"], by_hand["error"]) == (
        "skipped", "interactive: written for a person at a terminal, and there is none (--skip-interactive)")
    assert skipped.result("plain")["status"] == "passed" and said_to(project, "by-hand") == []
    ran = run(project, None, "-i", "s.jsonl")        # without the flag it runs: one fixed turn
    assert ran.result("by-hand")["status"] == "passed" and ran.result("by-hand")["metadata"]["mode"] == "static"
    refused = run(project, None, "-i", "s.jsonl", "--interactive")
    assert ran.report_text is not None
    assert refused.code == 2 and refused.report_text is None     # no case ran: nothing written, the last run's removed
    assert refused.stderr.strip().endswith(
        "Error: --interactive: a person types the user's turns, and stdin is not a terminal; in CI give the "
        "conversation a simulator, scripted replies or fixed turns instead")


def test_record_replay_runs_the_helper_cache_and_budgets_work_with_steps(
        project: Project, brain: tuple[HelperBrain, FakeOpenAI]) -> None:
    helper, server = brain
    project.suite("s.jsonl", {
        "id": "mixed", "simulator": sim("alpha", "bravo", "charlie"), "guards": [NO_DELETE],
        "turns": [{"input": "alpha"}, {"simulate": {"max_turns": 1}}, {"input": "zulu"}],
        "final": {"type": "agent", "use": "agents:judge", "value": "the reply says 'zulu'"}})
    recorded = run(project, server, "-i", "s.jsonl", "--record", "cassettes")
    assert recorded.result("mixed")["status"] == "passed", recorded.stdout + recorded.stderr
    replayed = run(project, None, "-i", "s.jsonl", "--replay", "cassettes")       # no server: the cassettes answer
    assert replayed.result("mixed")["status"] == "passed", replayed.stdout + replayed.stderr
    assert said_to(project, "mixed")[-1] == ["alpha", "bravo", "zulu"]
    repeated = run(project, server, "-i", "s.jsonl", "--runs", "2", "--cache", "cache")
    assert (repeated.result("mixed")["stability"]["runs"], repeated.result("mixed")["stability"]["passed"]) == (2, 2)
    asked = helper.calls["simulator"]
    cached = run(project, server, "-i", "s.jsonl", "--cache", "cache")
    assert cached.result("mixed")["helper_usage"]["simulator"]["cached"] == 1 and helper.calls["simulator"] == asked
    budget = run(project, server, "-i", "s.jsonl", "--max-cost", "1")
    assert budget.code == 2 and "'sim'" in budget.stderr and "'judge'" in budget.stderr


def test_generators_may_write_conversations_as_steps(project: Project) -> None:
    project.write("gen.py", """
        def cases(target, params):
            return [{"id": "gen-steps", "turns": [{"input": "a", "assert": {"type": "contains", "value": "echo"}},
                                                  {"input": "b"}],
                     "guards": [{"id": "g", "assert": {"type": "not_contains", "value": "CANARY"}}],
                     "checkpoints": [{"id": "b", "assert": {"type": "contains", "value": "b"}, "by_turn": 2}]}]
        """)
    dry = run(project, None, "-i", "scripts:gen.cases", "--dry-run")
    assert dry.code == 0 and json.loads(dry.stdout)["turns"][1] == {"input": "b"}
    ran = run(project, None, "-i", "scripts:gen.cases")
    assert ran.code == 0, ran.stdout + ran.stderr
    assert ran.result("gen-steps")["metadata"]["termination"] == "turns_completed"


def test_validate_and_schema_know_the_steps(project: Project) -> None:
    project.suite("s.jsonl",
                  {"id": "ok", "turns": [{"input": "a"}, {"simulate": {"until": "b"}}], "simulator": sim("a"),
                   "checkpoints": [{"id": "b", "assert": contains("b"), "by_turn": 2}], "guards": [NO_DELETE],
                   "final": {"type": "agent", "use": "agents:judge", "value": "polite"}},
                  {"id": "bad", "turns": [{"simulate": {"until": "c"}}], "simulator": {"use": "simm"}},
                  {"id": "judge-typo", "turns": [{"input": "a"}], "final": {"type": "agent", "use": "agents:judg",
                                                                            "value": "x"}})
    checked = project.run("validate", "s.jsonl")
    assert checked.code == 2
    assert checked.stdout.splitlines()[:3] == [
        "s.jsonl:2: invalid test case: simulator.use: agent 'simm' is not defined in agenttest.yaml (did you mean "
        "'sim'?); turns[0].simulate.until: unknown checkpoint 'c' (the case has no checkpoints)",
        "s.jsonl:3: invalid test case: final.use: agent 'judg' is not defined in agenttest.yaml (did you mean "
        "'judge'?)",
        "1 valid, 2 invalid in 1 file"]
    schema = json.loads(project.run("schema").stdout)
    assert {"turns", "guards", "final", "interactive"} <= set(schema["properties"])
    assert "by_turn" in schema["$defs"]["CheckpointEntry"]["properties"]
    assert set(schema["$defs"]["TurnEntry"]["properties"]) == {"input", "assert", "assertions", "options", "simulate"}


def test_a_final_judge_that_fails_ends_the_conversation_as_an_error(project: Project) -> None:
    """docs/conversations.md: `termination: error` when the agent, the simulator or a judge failed — the final
    judge too, after the turns completed."""
    project.suite("s.jsonl", {"id": "f", "turns": [{"input": "hi"}],
                              "final": {"type": "agent", "use": "agents:rogue", "value": "polite"}})
    result = run(project, None, "-i", "s.jsonl").result("f")
    assert (result["status"], result["error_kind"]) == ("error", "judge"), result
    assert result["metadata"]["termination"] == "error"
