"""Decisions under noise (docs/decisions.md): of the cases that passed in the baseline and do not now, which are
regressions and which are noise, each with its evidence.

When both sides ran a case several times, the two pass counts decide: Fisher's one-sided exact test, with
Benjamini–Hochberg over every case whose pass rate dropped (`statistics.drop_tests`). When either side ran it once,
its rechecks decide (`--recheck N`, run by the engine and stored on the result as `recheck`): a regression only if
it failed every one. Pure functions of report.json dicts, so that a run, a shard and `agenttest merge` decide alike.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from ..hints import plural
from ..statistics import ALPHA, DropTest, Proportion, drop_tests, format_p_value

K = TypeVar("K", bound=Hashable)
FAILING = ("failed", "error", "timeout")
_DID = {"failed": "failed", "error": "errored", "timeout": "timed out"}


@dataclass(frozen=True)
class Decision:
    """Whether a case that passed in the baseline and does not now is a regression, and why: `evidence` in a few
    words (`5/5 → 0/5, p = 0.0040`; `failed, then passed on recheck 1`), and with a test its p-values."""

    regression: bool
    evidence: str
    p_value: float | None = None
    adjusted_p_value: float | None = None

    def fields(self) -> dict[str, Any]:
        """What a comparison entry carries of it."""
        out: dict[str, Any] = {"evidence": self.evidence}
        if self.p_value is not None:
            out["p_value"] = self.p_value
            out["adjusted_p_value"] = self.adjusted_p_value
        return out


def counted_runs(result: Mapping[str, Any]) -> Proportion | None:
    """A result's passes of its counted runs (`stability`: runs that failed outside the agent left out) when it
    ran several; None for a single run, or a stability row that is not one."""
    stability = result.get("stability")
    if not isinstance(stability, Mapping):
        return None
    runs, passed, infra = (stability.get(key, 0) for key in ("runs", "passed", "infra_errors"))
    if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in (runs, passed, infra)):
        return None
    counted = runs - infra
    return Proportion(passed, counted) if counted >= 2 and passed <= counted else None


def flipped(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """Whether the case passed in the baseline and does not now (failed, errored or timed out)."""
    return old.get("status") == "passed" and new.get("status") in FAILING


def several_runs(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """Whether both sides ran the case several times: then their pass counts decide, not rechecks."""
    return counted_runs(old) is not None and counted_runs(new) is not None


def needs_recheck(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """Whether the engine should recheck the case (`--recheck`): it flipped, and a side ran it once. An invalid
    case cannot run again."""
    return flipped(old, new) and not several_runs(old, new) and new.get("error_kind") != "invalid"


def decide(pairs: Mapping[K, tuple[Mapping[str, Any], Mapping[str, Any]]],
           alpha: float = ALPHA) -> dict[K, Decision]:
    """The decision on each case of `pairs` — every case compared, as (baseline result, current result) — that
    flipped. The cases run several times on both sides, flipped or not, are the family whose drops are tested
    together (`drop_tests`): a false-discovery correction over every drop, as docs/decisions.md says."""
    family = {key: (old_runs, new_runs) for key, (old, new) in pairs.items()
              for old_runs, new_runs in [(counted_runs(old), counted_runs(new))]
              if old_runs is not None and new_runs is not None}
    tests = drop_tests(family, alpha)
    tested = sum(1 for test in tests.values() if test.adjusted is not None)
    decisions: dict[K, Decision] = {}
    for key, (old, new) in pairs.items():
        if not flipped(old, new):
            continue
        if key in family:
            test = tests.get(key)
            decisions[key] = _tested(test, tested) if test is not None else _no_drop(*family[key])
        else:
            decisions[key] = recheck_decision(new)
    return decisions


def _tested(test: DropTest, tested: int) -> Decision:
    evidence = test.evidence
    if test.too_small_to_test:
        evidence += f", too small to test at {_runs_a_side(test.baseline, test.current)}"
    elif test.adjusted is not None and test.adjusted != test.p_value:
        evidence += f", {format_p_value(test.adjusted)} adjusted over {plural(tested, 'drop')}"
    return Decision(test.regression, evidence, test.p_value, test.adjusted)


def _no_drop(old: Proportion, new: Proportion) -> Decision:
    """A verdict that flipped while the pass rate did not drop (the bar, `--min-pass-rate`, was raised): no
    regression of the agent."""
    return Decision(False, f"{old} → {new}, the pass rate did not drop")


def _runs_a_side(old: Proportion, new: Proportion) -> str:
    if old.trials == new.trials:
        return f"{old.trials} runs a side"
    return f"{old.trials} runs then, {new.trials} now"


def recheck_decision(new: Mapping[str, Any]) -> Decision:
    """The decision on a case a side ran once, from its rechecks (`recheck` on the current result): noise when
    one passed; a regression when every one failed, when the run stopped them, or when there were none."""
    did = _DID.get(str(new.get("status")), str(new.get("status")))
    record = new.get("recheck")
    if not isinstance(record, Mapping):
        return Decision(True, f"passed, now {did}; not rechecked")
    runs = record.get("runs")
    runs = runs if isinstance(runs, int) and not isinstance(runs, bool) and runs >= 0 else 0
    stopped = record.get("stopped")
    if record.get("passed") is True and runs:
        return Decision(False, f"{did}, then passed on recheck {runs}")
    if isinstance(stopped, str) and stopped:
        if not runs:
            return Decision(True, f"{did}; not rechecked ({stopped})")
        return Decision(True, f"{did}, and failed {plural(runs, 'recheck')} before the rechecks stopped ({stopped})")
    if not runs:
        return Decision(True, f"passed, now {did}; not rechecked")
    return Decision(True, f"{did}, and failed {plural(runs, 'recheck')}")


def alpha_of(report: Mapping[str, Any]) -> float:
    """The `--alpha` a report was run with (`metadata.options.alpha`), or the default when it has none that is a
    level (a report from before the option, or an edited one)."""
    metadata = report.get("metadata")
    options = metadata.get("options") if isinstance(metadata, Mapping) else None
    alpha = options.get("alpha") if isinstance(options, Mapping) else None
    if isinstance(alpha, (int, float)) and not isinstance(alpha, bool) and math.isfinite(alpha) and 0 < alpha < 1:
        return float(alpha)
    return ALPHA
