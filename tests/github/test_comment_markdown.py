"""The comment's Markdown as GitHub renders it (cmarkgfm, as the summary's tests do): the verdict and counts, the
regressions first with their evidence, failing cases linked to their JSONL lines at the head commit, flaky cases,
tokens and cost per role, the run and its artifacts; agent text inert; never over GitHub's limit, details shortened
first and the counts always kept."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from agenttest.github.baseline import Baseline
from agenttest.github.comment import BYTE_LIMIT, COMMENT_LIMIT, MARKER_ROOM, RunStamp, marker
from agenttest.github.comment_markdown import CommentLinks, render_comment
from agenttest.github.links import SourceLinks
from agenttest.results import CaseResult
from agenttest.usage import Usage
from report.conftest import hostile_result, make_report, mixed_results
from report.test_escape import gfm
from report.test_markdown import COUNTS_ROW

HEAD = "f00dfeed" * 5           # the pull request's head commit: where the suite lines are linked
RUN = "https://github.com/octo/agents/actions/runs/77"
FOUND = Baseline({}, "run 12 of ci.yml on main (abc1234)", "https://github.com/octo/agents/actions/runs/12", 12,
                 "abc1234def", "main")


@pytest.fixture
def links(tmp_path: Path) -> CommentLinks:
    (tmp_path / ".git").mkdir()
    source = SourceLinks.from_environment(tmp_path, {"GITHUB_SERVER_URL": "https://github.com",
                                                     "GITHUB_REPOSITORY": "octo/agents", "GITHUB_SHA": HEAD})
    return CommentLinks(source, run=RUN, artifacts=f"{RUN}/artifacts/11")


def flaky() -> CaseResult:
    stability = {"id": "wobbly", "file": "suites/b.jsonl", "line": 7, "runs": 3, "passed": 2, "failed": 1,
                 "pass_rate": 66.67, "stability_class": "unstable", "stability_label": "unstable", "flaky": True,
                 "counted_as": "passed", "infra_errors": 0, "avg_duration_ms": 12.0, "min_duration_ms": 10,
                 "max_duration_ms": 14, "std_deviation_ms": 1.6, "not_run": 0}
    runs = [{"run": 1, "status": "passed", "duration_ms": 10}, {"run": 2, "status": "failed", "duration_ms": 14},
            {"run": 3, "status": "passed", "duration_ms": 12}]
    return CaseResult(id="wobbly", status="passed", input="hi", output="hello", duration_ms=12,
                      file="suites/b.jsonl", line=7, stability=stability, runs=runs)


def pr_report(results: list[CaseResult] | None = None) -> dict[str, Any]:
    """A run of a pull request against a baseline: `fail` regressed, `pass` was fixed, `boom` still fails,
    `retired` was removed, the others are new; `wobbly` is flaky."""
    report = make_report(results if results is not None else [*mixed_results(), flaky()])
    report.runs = 3
    report.usage = Usage({"target": {"calls": 6, "prompt_tokens": 1200, "completion_tokens": 34},
                          "judge": {"calls": 2, "prompt_tokens": 300, "completion_tokens": 20}})
    report.spending = {"cost": {"total_usd": 0.0123, "target": 0.01, "judge": 0.0023}}
    report.baseline = {"summary": {"total": 4, "passed": 3},
                       "results": [{"id": "fail", "status": "passed", "file": "suites/a.jsonl", "line": 2},
                                   {"id": "pass", "status": "failed", "file": "suites/a.jsonl", "line": 1},
                                   {"id": "boom", "status": "error", "file": "suites/a.jsonl", "line": 4},
                                   {"id": "retired", "status": "passed", "file": "suites/a.jsonl", "line": 9}]}
    report.baseline_path = "auto"
    return report.data


def test_the_comment_says_what_a_reviewer_needs(links: CommentLinks) -> None:
    text = render_comment(pr_report(), links, FOUND)
    html = gfm(text)
    assert text.startswith("## ❌ agenttest: 1 failed, 1 error, 1 timed out — 3 of 7 passed, 1 skipped\n")
    assert COUNTS_ROW.search(text).groups() == ("7", "3", "1", "1", "1", "1")
    assert "**Tokens** target: 6 calls, 1,234 tokens · judge: 2 calls, 320 tokens · **Cost** \\$0.0123 " \
           "(target \\$0.0100 · judge \\$0.0023)" in text
    assert '<a href="https://github.com/octo/agents/actions/runs/12">run 12</a> on <code>main</code> at ' \
           "<code>abc1234</code>" in html
    blob = f"https://github.com/octo/agents/blob/{HEAD}/suites"
    regression = (f'<li><a href="{blob}/a.jsonl#L2">fail</a> — passed in the baseline, now ❌ failed: expected '
                  "hello · <strong>evidence:</strong> passed, now failed; not rechecked</li>")
    assert regression in html
    order = [text.index(part) for part in ("### 🔻 1 regression", "### Compared with the baseline",
                                           "### Failures", "### 🎲 1 flaky case", "<details>", "Workflow run")]
    assert order == sorted(order)
    assert "| 🔺 Fixes | 1 | `pass` |" in text and "| ➖ Removed | 1 | `retired` |" in text
    assert "| ❌ Still failing | 1 | `boom` |" in text
    for case, line in (("fail", 2), ("boom", 4)):
        assert f'<a href="{blob}/a.jsonl#L{line}">{case}</a>' in html
    assert f'<a href="{blob}/b.jsonl#L1">slow</a>' in html
    assert f'<li><a href="{blob}/b.jsonl#L7">wobbly</a> — 2 of 3 runs passed (66.67%)</li>' in html
    assert f'<a href="{RUN}">Workflow run</a> · <a href="{RUN}/artifacts/11">Artifacts</a> · agenttest 0.1.0' in html
    assert html.count("<details>") == html.count("</details>") == 3
    posted = gfm(f"{marker('default', RunStamp(77, 1, '2027-01-15T08:00:00Z'))}\n{text}")
    assert posted.startswith("<!-- agenttest:comment key=default run=77.1 at=2027-01-15T08:00:00Z -->\n<h2>")


def test_the_evidence_of_a_regression_run_several_times() -> None:
    results = [CaseResult(id="fail", status="failed", error="2 of 3 runs failed", file="suites/a.jsonl", line=2,
                          runs=[{"run": 1, "status": "failed"}, {"run": 2, "status": "passed"},
                                {"run": 3, "status": "failed"}],
                          stability={"runs": 3, "passed": 1, "pass_rate": 33.3, "stability_class": "highly_unstable",
                                     "stability_label": "highly unstable", "flaky": True})]
    text = render_comment(pr_report(results), CommentLinks(SourceLinks(Path("/r"), Path("/r"))))
    assert ("- fail — passed in the baseline, now ❌ failed: 2 of 3 runs failed (Runs: 1 of 3 passed (33%, highly "
            "unstable, flaky): ✗ ✓ ✗)") in text


def test_without_a_baseline_the_comment_says_why(links: CommentLinks) -> None:
    report = make_report(mixed_results()).data
    why = Baseline(None, "no baseline: no successful run of ci.yml on main triggered by a push in octo/agents yet")
    html = gfm(render_comment(report, links, why))
    assert ("<p>ℹ️ <strong>No comparison with the base branch:</strong> no baseline: no successful run of ci.yml "
            "on main triggered by a push in octo/agents yet</p>") in html
    assert "regression" not in html and "Compared with" not in html


def test_a_green_run_is_short(links: CommentLinks) -> None:
    report = make_report([CaseResult(id="ok", status="passed", file="suites/a.jsonl", line=1)]).data
    text = render_comment(report, links)
    assert text.startswith("## ✅ agenttest: the one case passed\n")
    assert "Failures" not in text and "<details>" not in text and "flaky" not in text


def test_agent_text_cannot_change_the_page(links: CommentLinks) -> None:
    html = gfm(render_comment(pr_report([hostile_result(), *mixed_results()]), links, FOUND))
    for live in ("<script", "<img", "evil.example\"", "<h1", "<strong>name", "<b>name"):
        assert live not in html
    assert html.count("<details>") == html.count("</details>") == 4
    anchors = re.findall(r'<a href="([^"]+)"', html)
    assert {a.split("/blob/")[0] for a in anchors if "/blob/" in a} == {"https://github.com/octo/agents"}
    assert all(a.startswith("https://github.com/octo/agents/") for a in anchors)
    outside_code = re.sub(r"<pre.*?</pre>|<code>.*?</code>", "", html, flags=re.S)
    assert "@octocat" not in outside_code


def test_details_go_first_to_fit_the_limit(links: CommentLinks) -> None:
    """Each step down is taken only when the one before does not fit: fewer details, none, fewer rows."""
    big = "é" * 3000
    results = [CaseResult(id=f"c{i}", status="failed", input=big, output=big, error="bad", file="suites/a.jsonl",
                          line=i) for i in range(1, 41)]
    report = pr_report(results)
    full = render_comment(report, links, limit=10**9, byte_limit=10**9)
    assert full.count("<details>") == 10 and "40 failing cases, the first 10 in full here" in full
    fewer = render_comment(report, links, limit=len(full) - 1)
    assert fewer.count("<details>") == 3 and "the first 3 in full" in fewer
    table_only = render_comment(report, links, limit=len(fewer) - 1)
    assert "<details>" not in table_only and table_only.count("| ❌ failed |") == 40
    assert "40 failing cases, no details here" in table_only
    few_rows = render_comment(report, links, limit=len(table_only) - 1)
    assert few_rows.count("| ❌ failed |") == 10 and "…and 30 more failing cases" in few_rows
    bytes_bound = render_comment(report, links, byte_limit=len(fewer.encode()) - 1)
    assert bytes_bound == table_only        # the UTF-8 size is a limit of its own
    for text in (fewer, table_only, few_rows):
        assert COUNTS_ROW.search(text).groups() == ("40", "0", "40", "0", "0", "0")


def test_ten_thousand_failures_with_huge_outputs_fit_a_comment(links: CommentLinks) -> None:
    huge = "z" * 100_000
    results = [CaseResult(id=f"case-{i}", status="failed", input=huge, output=huge, error="bad " + huge,
                          file="suites/a.jsonl", line=i + 1) for i in range(10_000)]
    text = render_comment(pr_report(results), links, FOUND)
    assert len(text) + MARKER_ROOM <= COMMENT_LIMIT and len(text.encode()) + MARKER_ROOM <= BYTE_LIMIT
    assert COUNTS_ROW.search(text).groups() == ("10000", "0", "10000", "0", "0", "0")
    assert "…and 9900 more failing cases" in text and "10000 failing cases, no details here" in text
    gfm(text)


def test_ids_too_long_for_any_table_are_cut_after_the_counts(links: CommentLinks) -> None:
    """Even the shortest rendering does not fit when every id is 3,000 characters: the text is cut at a line,
    after the verdict and the counts, saying so."""
    results = [CaseResult(id=f"{i}-" + "🙂" * 3000, status="failed", error="bad", file="suites/a.jsonl", line=i)
               for i in range(60)]
    text = render_comment(pr_report(results), links)
    assert len(text) <= COMMENT_LIMIT - MARKER_ROOM and len(text.encode()) <= BYTE_LIMIT - MARKER_ROOM
    assert COUNTS_ROW.search(text).groups() == ("60", "0", "60", "0", "0", "0")
    assert text.endswith("\n\n…cut to fit GitHub's comment limit: see the job summary and `report.json`.\n")


def test_evidence_fixes_noise_and_intervals_when_the_comparison_gives_them(links: CommentLinks) -> None:
    """The comparison of issue 22's statistics: `evidence` on regressions and noise entries, a `noise` group after
    the fixes, and a pass-rate interval on a flaky case — each shown when there, and agent-free text escaped."""
    report = pr_report()
    comparison = report["comparison"]
    comparison["regressions"][0]["evidence"] = "5/5 → 0/5, p = 0.004"
    comparison["fixes"][0]["evidence"] = "failed, then passed on recheck 1"
    comparison["noise"] = [{"id": "slow", "file": "suites/b.jsonl", "line": 1, "status": "passed",
                            "evidence": "3/5 → 2/5, p = 1.0 <b>not</b>"}]
    report["stability_results"][0]["pass_rate_interval"] = [20.76, 93.86]      # percent, as report.json keeps it
    text = render_comment(report, links, FOUND)
    html = gfm(text)
    blob = f"https://github.com/octo/agents/blob/{HEAD}/suites"
    assert (f'<li><a href="{blob}/a.jsonl#L2">fail</a> — passed in the baseline, now ❌ failed: expected hello · '
            "<strong>evidence:</strong> 5/5 → 0/5, p = 0.004</li>") in html
    assert f'<li><a href="{blob}/a.jsonl#L1">pass</a> — failed, then passed on recheck 1</li>' in html
    assert (f'<li><a href="{blob}/b.jsonl#L1">slow</a> — 3/5 → 2/5, p = 1.0 &lt;b&gt;not&lt;/b&gt;</li>') in html
    assert "<b>not" not in html
    assert f'<li><a href="{blob}/b.jsonl#L7">wobbly</a> — 2 of 3 runs passed (66.67%, 95% CI 20–94%)</li>' \
        in html
    order = [text.index(part) for part in ("### 🔻 1 regression", "### 🔺 1 fix", "### 〰️ 1 change within noise",
                                           "### Compared with the baseline")]
    assert order == sorted(order)
    older = pr_report()     # a report from before evidence, noise and intervals: none of it given, none shown
    for group in older["comparison"].values():
        for entry in group if isinstance(group, list) else []:
            if isinstance(entry, dict):
                entry.pop("evidence", None)
    older["comparison"].pop("noise", None)
    without = render_comment(older, links, FOUND)
    assert "evidence" not in without and "noise" not in without and "interval" not in without
    assert "- [pass](" in without and "failed in the baseline, passes now" in without
