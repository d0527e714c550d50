"""The statistics of decisions under noise: intervals, exact tests, false-discovery control, the stopping rule of
adaptive runs and a judge's agreement with labels (docs/calibrate.md) — pure functions, exact where a verdict hangs
on them.

The comparison with a baseline, the stability analysis and `calibrate` call these; reporters only render what they
return. No scipy: the exact tests are sums of binomial coefficients, computed in fractions, so that a p-value that
equals alpha (3/3 → 0/3 gives exactly 1/20) is not decided by a rounding error.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeVar

if TYPE_CHECKING:       # fractions and the standard statistics (with decimal) are loaded by the functions that use
    from fractions import Fraction  # them: a run of one run a case, without a baseline, calls none (issue #27)

CONFIDENCE = 0.95       # of every interval, unless a caller asks for another
ALPHA = 0.05            # --alpha: the significance level of the regression test
FIRST_RUNS = 3          # --runs auto: every case runs this many times before its runs may stop
MOST_RUNS = 10          # --runs auto without :MAX

P = TypeVar("P", float, "Fraction")
K = TypeVar("K", bound=Hashable)
StopReason = Literal["agreed", "interval", "curtailed", "limit"]


# -- intervals ---------------------------------------------------------------------------------------------------

def wilson_interval(successes: int, trials: int, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """The Wilson score interval of the proportion `successes / trials` (Wilson 1927; Newcombe 1998's method 3,
    without continuity correction): unlike the normal approximation it stays inside [0, 1] and keeps its coverage
    at small `trials` and near 0 or 1 — the cases of an eval. No trials: nothing is known, (0, 1)."""
    _check_counts(successes, trials, allow_empty=True)
    if trials == 0:
        return 0.0, 1.0
    return _wilson(successes / trials, trials, confidence)


def _wilson(rate: float, trials: float, confidence: float) -> tuple[float, float]:
    """Wilson's interval of a rate observed over `trials` (not necessarily whole: an effective number of runs)."""
    z = _z(confidence)
    spread = z * z / trials
    centre = (rate + spread / 2) / (1 + spread)
    half = z * math.sqrt(rate * (1 - rate) / trials + spread / (4 * trials)) / (1 + spread)
    # At 0 and at 1 the bound is exactly 0 or 1; in floating point it can miss by an ulp.
    low = 0.0 if rate == 0 else max(0.0, centre - half)
    high = 1.0 if rate == 1 else min(1.0, centre + half)
    return low, high


@dataclass(frozen=True)
class Proportion:
    """`successes` of `trials` — a case's passes of its runs, a judge's agreements with its labels — and what is
    known of the rate behind it."""

    successes: int
    trials: int

    def __post_init__(self) -> None:
        _check_counts(self.successes, self.trials, allow_empty=True)

    @property
    def rate(self) -> float | None:
        """successes / trials; None with no trials (a rate of nothing is no 0)."""
        return self.successes / self.trials if self.trials else None

    def interval(self, confidence: float = CONFIDENCE) -> tuple[float, float]:
        """Its Wilson interval (`wilson_interval`)."""
        return wilson_interval(self.successes, self.trials, confidence)

    def __str__(self) -> str:
        return f"{self.successes}/{self.trials}"


# -- exact tests -------------------------------------------------------------------------------------------------

def fisher_one_sided(baseline: Proportion, current: Proportion) -> float:
    """The one-sided p-value of Fisher's exact test that `current`'s pass rate is lower than `baseline`'s: the
    chance, with both sides' runs and the total of passes fixed, that the current side passes this few times or
    fewer if both had the same pass rate. 5/5 → 0/5: 1/252 ≈ 0.004; 5/5 → 4/5: 0.5."""
    return float(_fisher_exact(baseline, current))


def _fisher_exact(baseline: Proportion, current: Proportion) -> Fraction:
    """`fisher_one_sided`, exactly: the lower tail of the hypergeometric distribution of the current side's
    passes, among `baseline.trials + current.trials` runs of which `baseline.successes + current.successes`
    passed."""
    from fractions import Fraction

    for side in (baseline, current):
        _check_counts(side.successes, side.trials)
    runs = baseline.trials + current.trials
    passes = baseline.successes + current.successes
    fewest = max(0, passes - baseline.trials)
    ways = sum(math.comb(passes, k) * math.comb(runs - passes, current.trials - k)
               for k in range(fewest, current.successes + 1))
    return Fraction(ways, math.comb(runs, current.trials))


def benjamini_hochberg(p_values: Sequence[P]) -> list[P]:
    """The Benjamini–Hochberg adjusted p-values (Benjamini & Hochberg 1995), in the order given: a hypothesis is
    rejected at false-discovery rate q when its adjusted value is ≤ q. Step-up: the i-th smallest of m p-values is
    scaled by m / i, and each adjusted value is the smallest scaled one at its rank or above, so the adjusted
    values keep the p-values' order and never fall below them. Fractions in, fractions out."""
    from fractions import Fraction

    count = len(p_values)
    order = sorted(range(count), key=lambda index: p_values[index])
    adjusted: list[P] = list(p_values)
    smallest: P | None = None
    for rank in range(count, 0, -1):
        index = order[rank - 1]
        scaled = p_values[index] * Fraction(count, rank)     # a float times m/i as one factor, as scipy does
        smallest = scaled if smallest is None or scaled < smallest else smallest
        adjusted[index] = smallest
    return adjusted


# -- regressions -------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class DropTest:
    """The test of one case whose pass rate dropped from `baseline` to `current`.

    `p_value` is Fisher's one-sided exact test; `adjusted` the Benjamini–Hochberg value over the drops tested
    together (None when the drop was too small to test, and so not among them); `regression` whether the drop
    survives chance at alpha. `too_small_to_test`: no outcome with the same runs on each side and the same passes
    in all could have been significant (`smallest_p_value` above alpha) — one failure in ten runs, a single run
    a side, a baseline that seldom passed: chance alone explains it, however the passes had fallen."""

    baseline: Proportion
    current: Proportion
    p_value: float
    adjusted: float | None
    regression: bool
    too_small_to_test: bool

    @property
    def evidence(self) -> str:
        """The drop as the comparison shows it: `5/5 → 4/5, p = 0.50`."""
        return f"{self.baseline} → {self.current}, p = {format_p_value(self.p_value)}"


def drop_tests(pairs: Mapping[K, tuple[Proportion, Proportion]], alpha: float = ALPHA) -> dict[K, DropTest]:
    """Which drops are regressions at `alpha`, given each case's (baseline, current) passes of its runs.

    Only the cases whose pass rate dropped are tested; the others are not in the result (a case that passed every
    run on both sides is never a regression, whatever the counts). Each drop gets Fisher's one-sided exact test,
    and the false-discovery rate over the drops is held at `alpha` by Benjamini–Hochberg — not a Bonferroni over
    every case, which would make a collapse undetectable in a large suite at a few runs. A drop too small to test
    (`smallest_p_value` above alpha) can never be a regression and is left out of the correction, as Tarone (1990)
    and Gilbert (2005) do for discrete tests: it would only dilute the others. Fisher's test conditions on the
    margins, and so does that choice, so the false-discovery rate still holds."""
    exact_alpha = _exact(alpha, "alpha")
    dropped = {key: (baseline, current) for key, (baseline, current) in pairs.items()
               if _rate(current) < _rate(baseline)}
    exact = {key: _fisher_exact(*sides) for key, sides in dropped.items()}
    testable = [key for key, sides in dropped.items() if _smallest_p_value(*sides) <= exact_alpha]
    adjusted = dict(zip(testable, benjamini_hochberg([exact[key] for key in testable]), strict=True))
    return {key: DropTest(baseline=baseline, current=current, p_value=float(exact[key]),
                          adjusted=float(adjusted[key]) if key in adjusted else None,
                          regression=key in adjusted and adjusted[key] <= exact_alpha,
                          too_small_to_test=key not in adjusted)
            for key, (baseline, current) in dropped.items()}


def is_regression(baseline: Proportion, current: Proportion, alpha: float = ALPHA) -> bool:
    """Whether one case's drop is a regression at `alpha` on its own (`drop_tests` of that case alone)."""
    test = drop_tests({0: (baseline, current)}, alpha).get(0)
    return test is not None and test.regression


def smallest_p_value(baseline: Proportion, current: Proportion) -> float:
    """The smallest p-value a drop from `baseline` to `current` could have had with the same margins — the runs of
    each side, and the passes of both together, on which Fisher's test conditions: the one where the current side
    got as few of the passes as it could. 5/5 → 4/5 (one failure in ten runs): 0.5; 5/5 → 0/5: 1/252."""
    return float(_smallest_p_value(baseline, current))


def _smallest_p_value(baseline: Proportion, current: Proportion) -> Fraction:
    passes = baseline.successes + current.successes
    fewest = max(0, passes - baseline.trials)
    return _fisher_exact(Proportion(passes - fewest, baseline.trials), Proportion(fewest, current.trials))


def too_small_to_test(baseline: Proportion, current: Proportion, alpha: float = ALPHA) -> bool:
    """Whether the drop from `baseline` to `current` could not show a regression at `alpha` however its passes had
    fallen (`smallest_p_value` above alpha): 1/1 → 0/1, 5/5 → 4/5, 1/5 → 0/5 (all 0.5 at best)."""
    return _smallest_p_value(baseline, current) > _exact(alpha, "alpha")


def runs_to_detect_collapse(alpha: float = ALPHA, dropped: int = 1, most: int = 1000) -> int:
    """How many runs each side needs for a case that collapsed — every run passed in the baseline, none now — to
    be a regression at `alpha` when it is one of `dropped` testable drops and the others are noise (its p-value
    1 / C(2n, n) must then reach alpha / dropped). At 0.05: 3 runs for a lone drop, 5 among 10, 7 among 50.
    ValueError when even `most` runs would not do."""
    from fractions import Fraction

    if dropped < 1:
        raise ValueError(f"dropped must be at least 1, got {dropped}")
    bar = _exact(alpha, "alpha") / dropped
    for runs in range(1, most + 1):
        if Fraction(1, math.comb(2 * runs, runs)) <= bar:
            return runs
    raise ValueError(f"more than {most} runs a side would be needed at alpha {alpha} among {dropped} drops")


def format_p_value(p_value: float) -> str:
    """A p-value as evidence shows it: two decimals, or two significant figures below 0.01 (`0.50`, `0.0040`)
    — never `0.00`."""
    return f"{p_value:.2f}" if p_value >= 0.01 else f"{p_value:#.2g}"


# -- adaptive runs -----------------------------------------------------------------------------------------------

def stopping_reason(passed: int, runs: int, bar: float, *, most: int = MOST_RUNS, first: int = FIRST_RUNS,
                    confidence: float = CONFIDENCE) -> StopReason | None:
    """Why a case under `--runs auto[:MOST]` needs no more runs, or None while it does.

    `bar` is the pass rate a case needs, from 0 to 1 (`--min-pass-rate` / 100); the verdict is `passed / runs ≥
    bar`. Every case runs `first` times; then it stops when its runs all agree (`agreed`), when the runs left up to
    `most` cannot change its verdict at `most` (`curtailed`), when the Wilson interval of its pass rate lies wholly
    on one side of the bar (`interval`), or at `most` (`limit`). Whenever it stops, the verdict of the runs made is
    the verdict it would have had."""
    from fractions import Fraction

    _check_counts(passed, runs, allow_empty=True)
    exact_bar = _exact(bar, "the pass-rate bar")
    if not 0 < exact_bar <= 1:
        raise ValueError(f"the pass-rate bar must be above 0 and at most 1, got {bar}")
    if first < 1 or most < 1:
        raise ValueError(f"first and most must be at least 1, got {first} and {most}")
    if runs < min(first, most):
        return None
    if runs >= most:
        return "limit"
    if passed in (0, runs):
        return "agreed"
    needed = exact_bar * most
    if passed >= needed or passed + (most - runs) < needed:
        return "curtailed"
    low, high = wilson_interval(passed, runs, confidence)
    if Fraction(low) >= exact_bar or Fraction(high) < exact_bar:
        return "interval"
    return None


def runs_before_stop(passed: int, runs: int, bar: float, *, most: int = MOST_RUNS, first: int = FIRST_RUNS,
                     confidence: float = CONFIDENCE) -> int:
    """How many more runs a case under `--runs auto[:MOST]` needs before `stopping_reason` could stop it — 0 when
    it already does. No outcome of fewer runs could stop it, so they can all run side by side, and the case makes
    exactly the runs it would have made one at a time: at 2 of 3 passed against a 50 % bar and a limit of 10, three
    (5 of 6 is the first outcome that decides anything)."""
    if stopping_reason(passed, runs, bar, most=most, first=first, confidence=confidence) is not None:
        return 0
    for more in range(1, max(most - runs, 1) + 1):
        if any(stopping_reason(passed + extra, runs + more, bar, most=most, first=first, confidence=confidence)
               for extra in range(more + 1)):
            return more
    return max(most - runs, 1)     # not reached: at `most` runs the rule stops every case


def clustered_interval(cases: Sequence[Proportion], confidence: float = CONFIDENCE) -> tuple[float, float]:
    """The interval of a suite's pass rate — the mean of its cases' pass rates — with cases as clusters of their
    runs, as Miller (2024, "Adding Error Bars to Evals", arXiv:2411.00640) recommends: the runs of one case
    are not independent draws, so counting them as such would read far more certain than the suite is.

    With C cases of pass rates p_c (cases without runs left out) and mean p̄, the clustered standard error is
    SE² = (1/C²) Σ_c (p_c − p̄)² — Miller's (1/n²) Σ_c (Σ_{i∈c} (s_i − s̄))², exactly, when every case made the
    same number of runs; with `--runs auto` each case keeps the weight of one. The interval is Wilson's at the
    effective number of runs n_eff = p̄(1 − p̄) / SE² (Kish's effective sample size: the independent runs that
    would give this standard error), so that it keeps Wilson's coverage near 0 and 1 rather than collapsing to a
    point: n_eff is at least C (each case telling one run's worth, which is what runs that always agree tell) and
    at most C² / Σ_c (1/K_c) (each of the K_c runs independent: the total of runs when the K_c are equal). A suite
    whose runs all passed (or all failed) is C runs' worth: 30 cases that passed every run, (0.886, 1)."""
    from fractions import Fraction

    counted = [case for case in cases if case.trials]
    if not counted:
        return 0.0, 1.0
    count = len(counted)
    mean, variance = _clustered(counted)
    most = Fraction(count * count) / sum(Fraction(1, case.trials) for case in counted)
    spread = mean * (1 - mean)
    if spread == 0:
        effective = Fraction(count)
    elif variance == 0:
        effective = most
    else:
        effective = min(max(spread / variance, Fraction(count)), most)
    return _wilson(float(mean), float(effective), confidence)


def clustered_standard_error(cases: Sequence[Proportion]) -> float:
    """The standard error of the mean of the cases' pass rates with cases as clusters (`clustered_interval`):
    sqrt((1/C²) Σ_c (p_c − p̄)²), over the cases with runs; 0 without any."""
    counted = [case for case in cases if case.trials]
    return math.sqrt(_clustered(counted)[1]) if counted else 0.0


def _clustered(cases: Sequence[Proportion]) -> tuple[Fraction, Fraction]:
    """The mean of the cases' pass rates and its clustered variance, exactly."""
    from fractions import Fraction

    rates = [Fraction(case.successes, case.trials) for case in cases]
    mean = sum(rates, Fraction(0)) / len(rates)
    return mean, sum(((rate - mean) ** 2 for rate in rates), Fraction(0)) / len(rates) ** 2


# -- a judge against labels --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Agreement:
    """How a judge's verdicts agree with labels — the confusion matrix, with pass as the positive class — and the
    figures `calibrate` reports from it."""

    true_positives: int = 0       # labelled pass, judged pass
    false_negatives: int = 0      # labelled pass, judged fail
    false_positives: int = 0      # labelled fail, judged pass
    true_negatives: int = 0       # labelled fail, judged fail

    @classmethod
    def of(cls, pairs: Iterable[tuple[bool, bool]]) -> Agreement:
        """The agreement of (label, verdict) pairs."""
        counts = {(True, True): 0, (True, False): 0, (False, True): 0, (False, False): 0}
        for label, verdict in pairs:
            counts[bool(label), bool(verdict)] += 1
        return cls(counts[True, True], counts[True, False], counts[False, True], counts[False, False])

    @property
    def total(self) -> int:
        return self.true_positives + self.false_negatives + self.false_positives + self.true_negatives

    @property
    def accuracy(self) -> Proportion:
        """The verdicts that agree with their label."""
        return Proportion(self.true_positives + self.true_negatives, self.total)

    @property
    def true_positive_rate(self) -> Proportion:
        """Of the lines labelled pass, those the judge passed (its sensitivity)."""
        return Proportion(self.true_positives, self.true_positives + self.false_negatives)

    @property
    def true_negative_rate(self) -> Proportion:
        """Of the lines labelled fail, those the judge failed (its specificity): a judge that passes everything
        has a perfect true-positive rate and none of this."""
        return Proportion(self.true_negatives, self.true_negatives + self.false_positives)

    @property
    def majority_label(self) -> bool:
        """The more common label (pass on a tie): what a judge that always says the same would best say."""
        labelled_pass = self.true_positives + self.false_negatives
        return labelled_pass * 2 >= self.total

    @property
    def majority_baseline(self) -> Proportion:
        """The accuracy of always answering the majority label: the accuracy a judge must beat to know anything."""
        labelled_pass = self.true_positives + self.false_negatives
        return Proportion(labelled_pass if self.majority_label else self.total - labelled_pass, self.total)

    @property
    def kappa(self) -> float | None:
        """Cohen's κ (Cohen 1960): the agreement beyond what the label and verdict rates alone would give by
        chance, (p_o − p_e) / (1 − p_e) — 1 perfect, 0 no better than chance, below 0 worse. None when chance alone
        agrees fully (every label and every verdict the same class): κ is then undefined."""
        from fractions import Fraction

        total = self.total
        if total == 0:
            return None
        labelled_pass = Fraction(self.true_positives + self.false_negatives, total)
        judged_pass = Fraction(self.true_positives + self.false_positives, total)
        observed = Fraction(self.true_positives + self.true_negatives, total)
        chance = labelled_pass * judged_pass + (1 - labelled_pass) * (1 - judged_pass)
        if chance == 1:
            return None
        return float((observed - chance) / (1 - chance))


def kappa_strength(kappa: float) -> str:
    """A κ in words, after Landis & Koch (1977): `none` at or below 0 (no agreement beyond chance; their `poor`
    below it), then `slight` up to 0.20, `fair` to 0.40, `moderate` to 0.60, `substantial` to 0.80, and `almost
    perfect` — a convention, not a test, but the one readers know."""
    for bound, word in ((0.8, "almost perfect"), (0.6, "substantial"), (0.4, "moderate"), (0.2, "fair"),
                        (0.0, "slight")):
        if kappa > bound:
            return word
    return "none"


# -- helpers -----------------------------------------------------------------------------------------------------

def _z(confidence: float) -> float:
    from statistics import NormalDist

    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    return NormalDist().inv_cdf(0.5 + confidence / 2)


def _exact(value: float, name: str) -> Fraction:
    """A level as the user wrote it (`0.05` is 1/20, not the binary float just above it)."""
    from fractions import Fraction

    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
        raise ValueError(f"{name} must be a number, got {value!r}")
    exact = Fraction(repr(float(value)))
    if name == "alpha" and not 0 < exact < 1:
        raise ValueError(f"alpha must be between 0 and 1, got {value}")
    return exact


def _rate(side: Proportion) -> Fraction:
    from fractions import Fraction

    return Fraction(side.successes, side.trials)


def _check_counts(successes: int, trials: int, *, allow_empty: bool = False) -> None:
    if trials < (0 if allow_empty else 1) or not 0 <= successes <= trials:
        raise ValueError(f"expected 0 ≤ successes ≤ trials{'' if allow_empty else ' and trials ≥ 1'}, "
                         f"got {successes} of {trials}")
