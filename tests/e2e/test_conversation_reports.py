"""How a conversation written as steps reads in every report (SPEC §5, §9): why it ended and at which turn, in the
console tree, the job summary's and the HTML report's chat view (the turn marked) and JUnit."""

from __future__ import annotations

from pathlib import Path

import pytest

from e2e.conftest import Project
from e2e.test_conversation_steps import NO_DELETE, SEED_STATIC, contains, never, run, shop_project


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return shop_project(tmp_path)


def test_a_failing_guard_in_the_console_the_summary_the_html_report_and_junit(
        project: Project) -> None:
    project.suite("s.jsonl", {"id": "refund", "name": "Refunds without closing the account",
                              "turns": [{"input": "I want a refund", "assert": contains("echo")},
                                        {"input": "refund order 42 and close my account"}, {"input": "thanks"}],
                              "checkpoints": [{"id": "asked", "assert": contains("refund")}],
                              "guards": [NO_DELETE, {"id": "no_canary", "assert": never("CANARY")}]})
    result = run(project, None, "-i", "s.jsonl", "-o", "report.html")
    assert result.code == 1
    lines = result.stdout.splitlines()
    start = lines.index("► [refund] Refunds without closing the account")
    assert lines[start + 1:start + 5] == [
        '  ├─ Turn 1: "I want a refund" → "echo: I want a refund"',
        "  │  └─ ✓ checkpoint: asked",
        '  └─ Turn 2: "refund order 42 and close my account" → "<think>the user is CANARY-77</think>R..."',
        "     └─ ✗ guard no_delete broken: negated: tool 'delete_account' was called"]
    assert lines[start + 5].startswith("  FAILED (") and lines[start + 5].endswith(") - 2 turns, 1/1 checkpoints")
    assert lines[start + 6] == "  └─ guard no_delete broken at turn 2: negated: tool 'delete_account' was called"
    summary = (project.root / "agenttest-results" / "summary.md").read_text()
    assert ("**Conversation** — 2 turns, 1 of 1 checkpoints reached · ended: guard no\\_delete broken at turn 2"
            in summary)
    assert "🛡️ **Guards:** ✗ no\\_delete broken at turn 2 · ✓ no\\_canary held (1 reply)" in summary
    assert "**Turn 2** · case ❌" in summary and "**Turn 1** · case\n" in summary
    assert "❌ guard no\\_delete broken: negated: tool 'delete\\_account' was called" in summary
    html = (project.root / "report.html").read_text()
    assert "<p><strong>Ended:</strong> guard no_delete broken at turn 2</p>" in html
    assert '<div class="turn failed-turn" id="case-0-turn-2">' in html and '<div class="turn" id="case-0-turn-1">' \
        in html
    assert "<p class=\"error\">❌ guard no_delete broken: negated: tool &#x27;delete_account&#x27; was called</p>" \
        in html
    assert "&lt;think&gt;" in html and "<think>" not in html
    junit = (project.root / "agenttest-results" / "junit.xml").read_text()
    assert 'type="guard"' in junit and "Ended: guard no_delete broken at turn 2" in junit
    assert "  ✗ guard no_delete broken: negated: tool 'delete_account' was called" in junit
    assert "── ended: guard no_delete broken at turn 2" in junit




def test_a_static_conversation_and_its_ending_in_every_report(project: Project) -> None:
    project.suite("s.jsonl", SEED_STATIC, {"id": "short", "turns": [{"input": "a"}], "checkpoints": [
        {"id": "zed", "assert": contains("zed")}], "final": contains("echo")})
    result = run(project, None, "-i", "s.jsonl", "-v")
    lines = result.stdout.splitlines()
    start = lines.index("► [T001] Expense Reimbursement - Happy Path")
    assert lines[start + 1:start + 7] == [
        '  ├─ Turn 1: "I want to submit an expense" → "What type of expense would you like to submit?"',
        "  │  └─ ✓ contains: output contains 'type of expense'",
        '  ├─ Turn 2: "Business travel to Beijing, $3500" → "[expense__create_expense]"',
        "  │  └─ ✓ tool_called: tool 'create_expense' was called",
        '  └─ Turn 3: "Yes, confirm" → "Expense submitted. Reference: EXP-2025-001"',
        "     └─ ✓ contains: output contains 'submitted'"]
    assert lines[start + 7].endswith(") - 3 turns")
    summary = (project.root / "agenttest-results" / "summary.md").read_text()
    assert "**Conversation** — 1 turn, 0 of 1 checkpoints reached · ended: turns completed" in summary
    junit = (project.root / "agenttest-results" / "junit.xml").read_text()
    assert 'message="turns completed without reaching: zed" type="checkpoint"' in junit


def test_a_turn_given_as_content_parts_shows_its_text_in_the_console(project: Project) -> None:
    parts = {"role": "user", "content": [{"type": "text", "text": "I want a refund"}]}
    project.suite("s.jsonl", {"id": "parts", "turns": [{"input": parts}, {"input": "thanks"}]})
    result = run(project, None, "-i", "s.jsonl")
    lines = result.stdout.splitlines()
    start = lines.index("► [parts] I want a refund")
    assert lines[start + 1].startswith('  └─ Turn 1: "I want a refund"'), lines   # (the shop fails on parts)
