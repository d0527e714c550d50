"""Figures computed once over results, which every artifact then shows: a case's verdict over its runs and its
stability (`stability`), the comparison with a baseline report (`comparison`), and the run's outcome and exit code
(`outcome`). Reporters only read what is computed here."""

from .comparison import baseline_results, case_key, compare, failures_under_regression, without_a_baseline
from .noise import needs_recheck, recheck_decision
from .outcome import conclusion, exit_code, no_case_ran, pass_rate_text, report_pass_rate, run_ok
from .stability import case_verdict, pass_at_k, stability_summary

__all__ = ["baseline_results", "case_key", "case_verdict", "compare", "conclusion", "exit_code",
           "failures_under_regression", "needs_recheck", "no_case_ran", "pass_at_k", "pass_rate_text",
           "recheck_decision", "report_pass_rate", "run_ok", "stability_summary", "without_a_baseline"]
