"""summary.md / -o report.md: status, counts, linked failures, escaped agent text, and the 1 MiB budget."""

from __future__ import annotations

import re
from pathlib import Path

from agenttest.github.links import SourceLinks
from agenttest.github.summary import SUMMARY_LIMIT, SummaryWriter
from agenttest.report.markdown import render_markdown
from agenttest.results import CaseResult

from .conftest import hostile_result, make_report, mixed_results
from .test_escape import gfm

COUNTS_ROW = re.compile(r"^\| (\d+) \| (\d+) \| (\d+) \| (\d+) \| (\d+) \| (\d+) \| [\d.]+% \|", re.M)


def test_status_counts_and_links(links: SourceLinks) -> None:
    text = render_markdown(make_report(mixed_results()).to_dict(), links=links)
    assert text.startswith("## ❌ agenttest: 1 failed, 1 error, 1 timed out — 2 of 6 passed, 1 skipped\n")
    assert COUNTS_ROW.search(text).groups() == ("6", "2", "1", "1", "1", "1")
    blob = "https://github.com/octo/repo/blob/abc123"
    assert f"| [fail]({blob}/suites/a.jsonl#L2) | ❌ failed | expected hello |" in text
    assert f"| [slow]({blob}/suites/b.jsonl#L1) | ⏱️ timeout | timeout after 2s |" in text
    html = gfm(text)
    assert html.count("<details>") == 4            # three failures and the passed list
    assert "<summary>❌ <code>fail</code> (failed)</summary>" in html
    assert text.count("expected hello") == 2        # once in the table of failures, once in the case's details
    assert "<td><code>hello</code></td>" in html and "<td><code>nope</code></td>" in html   # expected / actual
    assert "[later](https://github.com/octo/repo/blob/abc123/suites/b.jsonl#L2) (skipped: not built yet)" in text
    assert "user: hi\nassistant: hello\nuser: bye\nagent: goodbye" not in text  # passed cases: listed, not detailed


def test_all_passed_and_no_repository() -> None:
    results = [CaseResult(id="a", status="passed", file="x.jsonl", line=1)]
    text = render_markdown(make_report(results).to_dict(), links=SourceLinks(root=Path("/nowhere"), cwd=Path("/")))
    assert text.startswith("## ✅ agenttest: the one case passed\n")
    assert "### Failures" not in text and "](http" not in text


def test_interrupted_and_run_error() -> None:
    text = render_markdown(make_report(mixed_results()[:1], error="BeforeAll: db down", interrupted=True).to_dict())
    assert text.startswith("## ⚠️ agenttest: interrupted after 1 of 1 case\n")
    assert "**Run error:** BeforeAll: db down" in text and "**Interrupted:**" in text


def test_interrupted_counts_the_cases_that_ran() -> None:
    """Results hold every selected case: the ones the interrupt (or --fail-fast, or BeforeAll) kept from running
    are `skipped` and marked `ran: false`; a case skipped by its own `skip` did run, as far as counts go."""
    never_ran = [CaseResult(id=f"cut-{reason}", status="skipped", error=reason, file="suites/b.jsonl", line=9,
                            ran=False)
                 for reason in ("interrupted", "not run", "not run: --fail-fast stopped the run after fail failed")]
    results = [*mixed_results()[:3], mixed_results()[4], *never_ran]       # pass, fail, boom, later (skip:)
    text = render_markdown(make_report(results, interrupted=True).to_dict())
    assert text.startswith("## ⚠️ agenttest: interrupted after 4 of 7 cases, 4 skipped\n")


def test_hostile_output_cannot_change_the_page(links: SourceLinks) -> None:
    report = make_report([hostile_result(), *mixed_results()]).to_dict()
    html = gfm(render_markdown(report, links=links))
    for live in ("<script", "<img", "evil.example\"", "<h1", "<strong>name", "<b>name"):
        assert live not in html
    assert html.count("<details>") == html.count("</details>") == 5
    anchors = re.findall(r'<a href="([^"]+)"', html)
    assert anchors and all(a.startswith("https://github.com/octo/repo/blob/abc123/") for a in anchors)
    outside_code = re.sub(r"<pre.*?</pre>|<code>.*?</code>", "", html, flags=re.S)
    assert "@octocat" not in outside_code        # no mention (GitHub does not look inside code)


def test_stability_and_comparison_tables() -> None:
    report = make_report(mixed_results()).to_dict()
    report["summary"].update(runs_per_case=3, overall_pass_rate=83.33, overall_pass_rate_interval=[43.64, 97.0],
                             pass_at_k={"1": 0.67, "3": 0.9}, pass_hat_k={"1": 0.67, "3": 0.3}, stable_cases=1,
                             unstable_cases=1, flaky_cases=1)
    report["stability_results"] = [
        {"id": "steady", "runs": 3, "passed": 3, "pass_rate": 100.0, "pass_rate_interval": [43.85, 100.0],
         "stability_class": "stable", "flaky": False, "counted_as": "passed", "avg_duration_ms": 20},
        {"id": "a|b", "runs": 3, "passed": 2, "pass_rate": 66.67, "pass_rate_interval": [20.76, 93.86],
         "stability_class": "unstable", "flaky": True, "counted_as": "failed", "avg_duration_ms": 1500}]
    report["comparison"] = {"regressions": [{"id": "fail"}], "fixes": ["x"], "new": [], "removed": [],
                            "counts": {"regressions": 1, "fixes": 1}}
    text = render_markdown(report)
    assert "### Stability" in text and ("3 runs per case · overall pass rate 83.3% (95% CI 43–97%) · pass^1 0.67 · "
                                        "pass^3 0.30 · 1 flaky, 1 stable of 2") in text
    flaky = "| a\\|b | 3 | 2 | 66.67% | 20–94% | unstable | yes | failed | 1.5s |"
    steady = "| steady | 3 | 3 | 100.0% | 43–100% | stable |"
    assert flaky in text and steady in text and text.index(flaky) < text.index(steady)    # flaky cases first
    assert "pass@k: k=1 0.67 · k=3 0.9" in text
    assert "| 🔻 Regressions | 1 | `fail` |" in text and "| 🔺 Fixes | 1 | `x` |" in text
    assert text.index("### Compared with the baseline") < text.index("| Total |")   # at the top


def test_degrades_in_steps_and_keeps_the_counts() -> None:
    big = "é" * 3000
    results = [CaseResult(id=f"c{i}", status="failed", input=big, output=big, error="bad", file="s.jsonl", line=i)
               for i in range(1, 41)] + [CaseResult(id="ok", status="passed", file="s.jsonl", line=99)]
    report = make_report(results).to_dict()
    full = render_markdown(report)
    assert "Passed and skipped cases (1)" in full and full.count("<details>") == 41
    sizes = {}
    for limit in (len(full.encode()) - 1, 120_000, 8_000, 1_500):
        text = render_markdown(report, max_bytes=limit)
        sizes[limit] = len(text.encode())
        assert sizes[limit] <= limit
        assert COUNTS_ROW.search(text).groups() == ("41", "1", "40", "0", "0", "0")
    shortened = render_markdown(report, max_bytes=120_000)
    assert "Previews are shortened and the passed cases not listed" in shortened   # it says what it left out
    assert "Passed and skipped" not in shortened
    assert shortened.count("<details>") == 40
    table_only = render_markdown(report, max_bytes=8_000)
    assert "<details>" not in table_only and table_only.count("| ❌ failed |") == 40
    cut = render_markdown(report, max_bytes=1_500)
    shown = cut.count("| ❌ failed |")
    assert 0 < shown < 40 and f"**{40 - shown} more failing cases are not shown**" in cut


def test_ten_thousand_failures_with_huge_outputs_fit() -> None:
    huge = "z" * 100_000
    results = [CaseResult(id=f"case-{i}", status="failed", input=huge, output=huge, error="bad " + huge,
                          file="s.jsonl", line=i + 1) for i in range(10_000)]
    report = make_report(results).to_dict()
    text = render_markdown(report, max_bytes=SUMMARY_LIMIT)
    assert len(text.encode("utf-8")) <= 1_000_000
    assert COUNTS_ROW.search(text).groups() == ("10000", "0", "10000", "0", "0", "0")
    assert "more failing cases are not shown" in text


def test_summary_writer_appends_to_the_step_summary(tmp_path: Path, links: SourceLinks) -> None:
    step = tmp_path / "step_summary"
    step.write_text("# earlier step output\n")
    writer = SummaryWriter(tmp_path / "out" / "summary.md", links, step)
    writer.run_finished(make_report(mixed_results()))
    written = (tmp_path / "out" / "summary.md").read_text()
    assert step.read_text() == "# earlier step output\n\n" + written


def test_summary_writer_shares_the_limit_with_what_is_there(tmp_path: Path, links: SourceLinks) -> None:
    step = tmp_path / "step_summary"
    step.write_bytes(b"x" * 990_000 + b"\n")
    big = "y" * 5000
    results = [CaseResult(id=f"c{i}", status="failed", input=big, output=big, file="s.jsonl", line=i)
               for i in range(50)]
    SummaryWriter(tmp_path / "summary.md", links, step).run_finished(make_report(results))
    assert step.stat().st_size <= SUMMARY_LIMIT
    assert "| 50 | 0 | 50 |" in step.read_text()
    assert (tmp_path / "summary.md").stat().st_size > 100_000     # the file itself is not squeezed


def test_a_human_start_time_and_each_reason_once_per_place(links: SourceLinks) -> None:
    data = make_report(mixed_results()).to_dict()
    data["metadata"]["started_at"] = "2026-01-05T15:03:07.123456+01:00"
    text = render_markdown(data, links=links)
    assert "**Started** 2026-01-05 14:03:07 UTC" in text and "T15:03" not in text
    details = text[text.index("<details>"):]
    for reason in ("expected hello", "timeout after 2s"):
        assert text.count(reason) == 2, reason      # the failure table's row, then the case's details
        assert details.count(reason) == 1, reason


def test_a_run_whose_cases_were_all_skipped_is_no_green_run() -> None:
    results = [CaseResult(id="a", status="skipped", error="later", file="x.jsonl", line=1)]
    text = render_markdown(make_report(results).to_dict(), links=SourceLinks(root=Path("/nowhere"), cwd=Path("/")))
    assert text.startswith("## ⏭️ agenttest: no case ran, 1 skipped\n")
    assert "✅" not in text.splitlines()[0]
    assert "| n/a |" in text        # no pass rate, rather than 0.0%
