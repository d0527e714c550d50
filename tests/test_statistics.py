"""The statistics of decisions under noise against published values and scipy (a test-only dependency), and the
properties every decision must keep whatever the counts."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy import stats

from agenttest.statistics import (
    Agreement,
    DropTest,
    Proportion,
    benjamini_hochberg,
    clustered_interval,
    clustered_standard_error,
    drop_tests,
    fisher_one_sided,
    format_p_value,
    is_regression,
    kappa_strength,
    runs_before_stop,
    runs_to_detect_collapse,
    smallest_p_value,
    stopping_reason,
    too_small_to_test,
    wilson_interval,
)

# No deadline: what these check is right answers, on machines that other work shares (speed is not asserted).
UNTIMED = settings(deadline=None)


@st.composite
def proportions(draw: st.DrawFn, most: int = 40, least: int = 1) -> Proportion:
    trials = draw(st.integers(least, most))
    return Proportion(draw(st.integers(0, trials)), trials)


# -- Wilson ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("successes", "trials", "low", "high"), [
    # Newcombe (1998), "Two-sided confidence intervals for the single proportion", Table I, method 3 (score).
    (81, 263, 0.2553, 0.3662), (15, 148, 0.0624, 0.1605), (0, 20, 0.0, 0.1611), (1, 29, 0.0061, 0.1718)])
def test_wilson_matches_newcombes_published_intervals(successes: int, trials: int, low: float, high: float) -> None:
    assert wilson_interval(successes, trials) == pytest.approx((low, high), abs=5e-5)


@UNTIMED
@given(proportions(), st.sampled_from([0.8, 0.9, 0.95, 0.99]))
def test_wilson_matches_scipy(side: Proportion, confidence: float) -> None:
    expected = stats.binomtest(side.successes, side.trials).proportion_ci(confidence, method="wilson")
    assert side.interval(confidence) == pytest.approx((expected.low, expected.high), abs=1e-12)


@UNTIMED
@given(proportions(most=1000))
def test_the_interval_holds_the_point_estimate_inside_zero_and_one(side: Proportion) -> None:
    low, high = side.interval()
    assert 0.0 <= low <= side.successes / side.trials <= high <= 1.0
    assert (low == 0.0) == (side.successes == 0) and (high == 1.0) == (side.successes == side.trials)


def test_no_trials_know_nothing_and_more_trials_know_more() -> None:
    assert wilson_interval(0, 0) == (0.0, 1.0) and Proportion(0, 0).rate is None
    widths = [high - low for low, high in (wilson_interval(n, n) for n in (3, 5, 10, 100))]
    assert widths == sorted(widths, reverse=True)
    with pytest.raises(ValueError, match="0 ≤ successes ≤ trials"):
        Proportion(4, 3)


# -- Fisher ------------------------------------------------------------------------------------------------------

def test_fisher_matches_the_lady_tasting_tea_and_the_specs_examples() -> None:
    # Fisher (1935): 8 cups, 4 with milk first; she names 3 of the 4 right: p = 17/70; all 4: 1/70.
    assert fisher_one_sided(Proportion(3, 4), Proportion(1, 4)) == pytest.approx(17 / 70, rel=1e-15)
    assert fisher_one_sided(Proportion(4, 4), Proportion(0, 4)) == pytest.approx(1 / 70, rel=1e-15)
    assert fisher_one_sided(Proportion(5, 5), Proportion(0, 5)) == pytest.approx(1 / 252, rel=1e-15)
    assert fisher_one_sided(Proportion(5, 5), Proportion(4, 5)) == 0.5
    assert fisher_one_sided(Proportion(3, 3), Proportion(0, 3)) == 0.05       # exactly 1/20
    assert fisher_one_sided(Proportion(2, 5), Proportion(4, 5)) == pytest.approx(246 / 252)   # a rise


@UNTIMED
@given(proportions(), proportions())
def test_fisher_matches_scipy(baseline: Proportion, current: Proportion) -> None:
    table = [[baseline.successes, baseline.trials - baseline.successes],
             [current.successes, current.trials - current.successes]]
    expected = stats.fisher_exact(table, alternative="greater").pvalue
    assert fisher_one_sided(baseline, current) == pytest.approx(expected, rel=1e-9)


@UNTIMED
@given(proportions(), proportions())
def test_fewer_current_passes_are_never_less_significant(baseline: Proportion, current: Proportion) -> None:
    assume(current.successes > 0)
    worse = Proportion(current.successes - 1, current.trials)
    assert fisher_one_sided(baseline, worse) <= fisher_one_sided(baseline, current) <= 1.0


# -- Benjamini–Hochberg ------------------------------------------------------------------------------------------

# Benjamini & Hochberg (1995), section 4: fifteen p-values; at q = 0.05 the four smallest are rejected.
PAPER = [0.0001, 0.0004, 0.0019, 0.0095, 0.0201, 0.0278, 0.0298, 0.0344, 0.0459, 0.3240, 0.4262, 0.5719, 0.6528,
         0.7590, 1.000]


def test_bh_rejects_the_four_of_the_papers_example() -> None:
    adjusted = benjamini_hochberg(PAPER)
    assert [q <= 0.05 for q in adjusted] == [True] * 4 + [False] * 11
    assert adjusted == pytest.approx(list(stats.false_discovery_control(PAPER, method="bh")), rel=1e-12)


p_value_lists = st.lists(st.floats(0.0, 1.0), max_size=60)


@UNTIMED
@given(p_value_lists)
def test_bh_matches_scipy(p_values: list[float]) -> None:
    assume(p_values)
    expected = stats.false_discovery_control(p_values, method="bh")
    assert benjamini_hochberg(p_values) == pytest.approx(list(expected), rel=1e-12, abs=1e-300)


@UNTIMED
@given(p_value_lists)
def test_bh_is_monotone_never_below_the_p_values_and_at_most_one(p_values: list[float]) -> None:
    adjusted = benjamini_hochberg(p_values)
    for p, q in zip(p_values, adjusted, strict=True):
        assert p <= q <= 1.0
    for i, j in ((i, j) for i in range(len(p_values)) for j in range(len(p_values)) if p_values[i] <= p_values[j]):
        assert adjusted[i] <= adjusted[j]


@UNTIMED
@given(p_value_lists, st.floats(0.0, 1.0))
def test_a_smaller_p_value_never_unrejects_another(p_values: list[float], lower: float) -> None:
    assume(p_values)
    before = benjamini_hochberg(p_values)
    after = benjamini_hochberg([min(p_values[0], lower), *p_values[1:]])
    assert all(q_after <= q_before for q_before, q_after in zip(before, after, strict=True))


def test_bh_keeps_fractions_exact() -> None:
    assert benjamini_hochberg([Fraction(1, 40), Fraction(1, 20)]) == [Fraction(1, 20), Fraction(1, 20)]


# -- regressions -------------------------------------------------------------------------------------------------

def test_a_collapse_is_a_regression_and_one_failure_in_five_is_noise() -> None:
    tests = drop_tests({"collapsed": (Proportion(5, 5), Proportion(0, 5)),
                        "wobbled": (Proportion(5, 5), Proportion(4, 5)),
                        "steady": (Proportion(5, 5), Proportion(5, 5)),
                        "better": (Proportion(2, 5), Proportion(4, 5))})
    assert set(tests) == {"collapsed", "wobbled"}          # only drops are tested
    assert tests["collapsed"].regression and not tests["wobbled"].regression
    assert tests["wobbled"].evidence == "5/5 → 4/5, p = 0.50"
    assert tests["collapsed"].evidence == "5/5 → 0/5, p = 0.0040"
    assert tests["wobbled"].too_small_to_test and tests["wobbled"].adjusted is None
    assert tests["collapsed"].adjusted == pytest.approx(1 / 252)        # the only testable drop


def test_single_runs_and_a_baseline_that_barely_passed_are_too_small_to_test() -> None:
    tests = drop_tests({"single": (Proportion(1, 1), Proportion(0, 1)),
                        "rare": (Proportion(1, 5), Proportion(0, 5)),
                        "collapsed": (Proportion(5, 5), Proportion(0, 5))})
    assert tests["single"].too_small_to_test and tests["single"].p_value == 0.5
    assert tests["rare"].too_small_to_test and not tests["rare"].regression
    assert tests["single"].adjusted is None
    # Untestable drops are left out of the correction: the collapse is adjusted as the only drop.
    assert tests["collapsed"].adjusted == pytest.approx(1 / 252) and tests["collapsed"].regression
    assert too_small_to_test(Proportion(1, 1), Proportion(0, 1))
    assert too_small_to_test(Proportion(5, 5), Proportion(4, 5))             # one failure in ten runs
    assert not too_small_to_test(Proportion(3, 3), Proportion(0, 3))         # 1/20, exactly alpha
    assert smallest_p_value(Proportion(1, 5), Proportion(0, 5)) == 0.5
    # The margins decide, not the order of the sides' passes: 4/5 → 2/5 could at best have been 5/5 → 1/5.
    assert smallest_p_value(Proportion(4, 5), Proportion(2, 5)) == pytest.approx(6 / 252)


def test_a_p_value_equal_to_alpha_is_significant_exactly() -> None:
    assert is_regression(Proportion(3, 3), Proportion(0, 3), alpha=0.05)         # p = 1/20 exactly
    assert not is_regression(Proportion(3, 3), Proportion(0, 3), alpha=0.049)
    assert is_regression(Proportion(5, 5), Proportion(1, 5))                    # p = 6/252 ≈ 0.024
    assert not is_regression(Proportion(5, 5), Proportion(3, 5))                # p = 56/252 ≈ 0.22


def test_a_collapse_in_a_large_suite_is_found_among_its_noisy_drops_at_five_runs() -> None:
    pairs = {f"steady-{i}": (Proportion(5, 5), Proportion(5, 5)) for i in range(359)}
    pairs |= {f"wobbled-{i}": (Proportion(5, 5), Proportion(4, 5)) for i in range(40)}
    pairs["collapsed"] = (Proportion(5, 5), Proportion(0, 5))
    tests = drop_tests(pairs)
    assert len(tests) == 41 and [key for key, test in tests.items() if test.regression] == ["collapsed"]
    # One failure in ten runs is too small to test: the forty wobbles do not dilute the collapse.
    assert all(test.too_small_to_test for key, test in tests.items() if key != "collapsed")
    assert tests["collapsed"].adjusted == pytest.approx(1 / 252)
    # A Bonferroni over the 400 cases would need p ≤ 0.05/400 = 0.000125 < 1/252: undetectable at 5 runs.
    assert 0.05 / 400 < 1 / 252


def test_among_many_testable_drops_a_collapse_needs_more_runs() -> None:
    # 3 passes → 2 could have been 5 → 0 with the same margins, so each such drop is testable (p = 0.5 each) and
    # shares the correction: the collapse is then the first of 21, and needs p ≤ 0.05/21.
    def drops(runs: int) -> dict[str, DropTest]:
        pairs = {f"wobbled-{i}": (Proportion(3, runs), Proportion(2, runs)) for i in range(20)}
        return drop_tests({**pairs, "collapsed": (Proportion(runs, runs), Proportion(0, runs))})

    at_five = drops(5)
    assert not at_five["wobbled-0"].too_small_to_test and at_five["wobbled-0"].p_value == 0.5
    assert not at_five["collapsed"].regression and at_five["collapsed"].adjusted == pytest.approx(21 / 252)
    runs = runs_to_detect_collapse(dropped=21)
    assert runs == 6 and [key for key, test in drops(runs).items() if test.regression] == ["collapsed"]


@UNTIMED
@given(st.integers(1, 50), st.integers(1, 50),
       st.dictionaries(st.text(min_size=1, max_size=3), st.tuples(proportions(), proportions()), max_size=30),
       st.sampled_from([0.001, 0.01, 0.05, 0.1, 0.5]))
def test_a_case_always_passing_on_both_sides_is_never_a_regression(
        baseline_runs: int, current_runs: int, others: dict[str, tuple[Proportion, Proportion]],
        alpha: float) -> None:
    pairs = {**others, "": (Proportion(baseline_runs, baseline_runs), Proportion(current_runs, current_runs))}
    tests = drop_tests(pairs, alpha)
    assert "" not in tests
    for test in tests.values():
        assert test.current.successes * test.baseline.trials < test.baseline.successes * test.current.trials
        if test.regression:
            assert test.p_value <= alpha and not test.too_small_to_test
        if test.too_small_to_test:
            assert not test.regression and test.adjusted is None
        assert smallest_p_value(test.baseline, test.current) <= test.p_value
        assert test.too_small_to_test == too_small_to_test(test.baseline, test.current, alpha)


@UNTIMED
@given(st.dictionaries(st.integers(0, 99), st.tuples(proportions(), proportions()), max_size=30))
def test_a_regression_stays_one_when_its_own_drop_deepens(pairs: dict[int, tuple[Proportion, Proportion]]) -> None:
    tests = drop_tests(pairs)
    for key, test in tests.items():
        if test.regression and test.current.successes > 0:
            deeper = {**pairs, key: (test.baseline, Proportion(test.current.successes - 1, test.current.trials))}
            assert drop_tests(deeper)[key].regression


def test_the_runs_a_side_needs_to_detect_a_collapse() -> None:
    assert [runs_to_detect_collapse(0.05, dropped) for dropped in (1, 10, 50)] == [3, 5, 7]
    assert runs_to_detect_collapse(0.01) == 5                   # 1/70 ≈ 0.014 > 0.01 ≥ 1/252
    for alpha, dropped in ((0.05, 1), (0.05, 10), (0.01, 1), (0.1, 20)):
        runs = runs_to_detect_collapse(alpha, dropped)
        assert 1 / math.comb(2 * runs, runs) <= alpha / dropped < 1 / math.comb(2 * runs - 2, runs - 1)


def test_p_values_are_shown_with_two_figures_never_as_zero() -> None:
    assert [format_p_value(p) for p in (0.5, 1.0, 0.05, 1 / 252, 0.00001234)] == [
        "0.50", "1.00", "0.05", "0.0040", "1.2e-05"]


# -- adaptive runs -----------------------------------------------------------------------------------------------

def test_runs_that_agree_stop_at_three_and_those_that_disagree_run_on() -> None:
    assert stopping_reason(3, 3, 1.0) == "agreed" and stopping_reason(0, 3, 0.8) == "agreed"
    assert stopping_reason(2, 2, 0.8) is None                   # the first three always run
    assert stopping_reason(2, 3, 1.0) == "curtailed"            # one failure: 100 % is out of reach
    assert stopping_reason(2, 3, 0.5) is None                   # 2/3 at a 50 % bar: nothing is known yet
    assert stopping_reason(5, 10, 0.5) == "limit"
    assert stopping_reason(1, 8, 0.5, most=20) == "interval"    # Wilson (0.02, 0.47) lies below 0.5
    assert stopping_reason(9, 10, 0.5, most=20) == "interval"   # Wilson (0.60, 0.98) lies above it


def test_curtailment_stops_when_the_runs_left_cannot_change_the_verdict() -> None:
    assert stopping_reason(8, 9, 0.8, most=10) == "curtailed"   # 8/10 at worst: passes
    assert stopping_reason(2, 5, 0.8, most=10) == "curtailed"   # 7/10 at best: fails
    assert stopping_reason(2, 4, 0.5, most=10) is None


@UNTIMED
@given(st.integers(1, 30), st.integers(1, 30), st.integers(1, 100), st.data())
def test_a_case_stops_by_its_limit_and_its_verdict_when_it_stops_is_the_final_one(
        most: int, first: int, percent: int, data: st.DataObject) -> None:
    bar = percent / 100
    outcomes = data.draw(st.lists(st.booleans(), min_size=most, max_size=most))
    runs = next(n for n in range(1, most + 1) if stopping_reason(sum(outcomes[:n]), n, bar, most=most, first=first))
    assert runs >= min(first, most)
    reason = stopping_reason(sum(outcomes[:runs]), runs, bar, most=most, first=first)
    passed = sum(outcomes[:runs])
    verdict = Fraction(passed, runs) >= Fraction(percent, 100)
    if reason == "curtailed":      # whatever the runs left would have done, the verdict at `most` is this one
        left = most - runs
        assert all((Fraction(passed + extra, most) >= Fraction(percent, 100)) == verdict for extra in range(left + 1))
    if reason == "interval":
        low, high = wilson_interval(passed, runs)
        assert verdict == (low >= bar) != (high < bar)


def test_the_stopping_rule_refuses_a_bar_outside_zero_to_one() -> None:
    with pytest.raises(ValueError, match="above 0 and at most 1"):
        stopping_reason(1, 3, 80)


@pytest.mark.parametrize(("passed", "runs", "bar", "most", "more"), [
    (3, 3, 0.5, 10, 0),         # agreed: no more
    (2, 3, 0.5, 10, 3),         # 3/4, 2/4, 4/5, 2/5 … decide nothing; 5/6 is curtailed (5 of 10 reached)
    (2, 3, 0.75, 10, 2),        # 3/4 and 2/4 decide nothing; 2/5 is curtailed (7 of 10 at best, below 7.5)
    (2, 3, 1.0, 10, 0),         # curtailed at once: one failure puts 100 % out of reach
    (2, 4, 0.5, 5, 1),          # the limit is the next run
])
def test_the_runs_before_a_case_can_stop_are_those_no_outcome_of_fewer_could_stop(
        passed: int, runs: int, bar: float, most: int, more: int) -> None:
    assert runs_before_stop(passed, runs, bar, most=most) == more


@UNTIMED
@given(st.integers(3, 20), st.integers(1, 100), st.data())
def test_running_the_runs_before_a_stop_side_by_side_makes_the_runs_one_at_a_time_would(
        most: int, percent: int, data: st.DataObject) -> None:
    bar = percent / 100
    outcomes = data.draw(st.lists(st.booleans(), min_size=most, max_size=most))
    one_at_a_time = next(n for n in range(1, most + 1) if stopping_reason(sum(outcomes[:n]), n, bar, most=most))
    runs = 3
    while (more := runs_before_stop(sum(outcomes[:runs]), runs, bar, most=most)):
        assert all(stopping_reason(sum(outcomes[:n]), n, bar, most=most) is None for n in range(runs, runs + more))
        runs += more
    assert runs == one_at_a_time


# -- the suite's pass rate ---------------------------------------------------------------------------------------

def test_the_clustered_interval_of_a_hand_computed_suite() -> None:
    # Four cases of three runs: 3/3, 3/3, 1/3, 0/3. Their mean p̄ = (1 + 1 + 1/3 + 0)/4 = 7/12; the squared
    # deviations (5/12)², (5/12)², (−3/12)², (−7/12)² sum to 108/144 = 3/4, so SE² = (3/4)/4² = 3/64. Miller's
    # run-level formula says the same: each case's deviations sum to 3·(p_c − p̄), and (1/12²)·9·(3/4) = 3/64.
    # n_eff = p̄(1 − p̄)/SE² = (35/144)/(3/64) = 140/27 ≈ 5.19 runs' worth of 12 (between C = 4 and 12).
    cases = [Proportion(3, 3), Proportion(3, 3), Proportion(1, 3), Proportion(0, 3)]
    assert clustered_standard_error(cases) == pytest.approx(math.sqrt(3 / 64), abs=1e-15)
    z, p, n = 1.959963984540054, 7 / 12, 140 / 27
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    assert (round(centre - half, 6), round(centre + half, 6)) == (0.224304, 0.871435)
    low, high = clustered_interval(cases)
    assert (low, high) == pytest.approx((0.224304, 0.871435), abs=1e-6)
    # Counted as twelve independent runs, 7 of 12 would read surer than the suite is: Wilson (0.320, 0.807).
    naive = wilson_interval(7, 12)
    assert naive[0] > low and naive[1] < high


def test_a_suite_whose_runs_all_agree_is_worth_one_run_a_case_and_one_whose_cases_are_alike_every_run() -> None:
    assert clustered_interval([Proportion(3, 3)] * 30) == wilson_interval(30, 30)
    assert clustered_interval([Proportion(10, 10)] * 30) == wilson_interval(30, 30)    # more runs tell no more
    assert clustered_interval([Proportion(0, 5)] * 7) == wilson_interval(0, 7)
    assert clustered_interval([Proportion(1, 2)] * 10) == pytest.approx(wilson_interval(10, 20))
    # Half of the cases always pass, half never: each case one run's worth, the same as 5 of 10 single runs.
    assert clustered_interval([Proportion(4, 4)] * 5 + [Proportion(0, 4)] * 5) == pytest.approx(wilson_interval(5, 10))
    assert clustered_interval([]) == (0.0, 1.0) and clustered_interval([Proportion(0, 0)]) == (0.0, 1.0)


@UNTIMED
@given(st.integers(1, 8), st.lists(st.integers(0, 8), min_size=1, max_size=30))
def test_with_equal_runs_the_standard_error_is_millers_over_the_runs(runs: int, passes: list[int]) -> None:
    cases = [Proportion(min(passed, runs), runs) for passed in passes]
    scores = [[1.0] * case.successes + [0.0] * (runs - case.successes) for case in cases]
    total = len(cases) * runs
    mean = sum(map(sum, scores)) / total
    miller = math.sqrt(sum(sum(s - mean for s in case) ** 2 for case in scores) / total ** 2)
    assert clustered_standard_error(cases) == pytest.approx(miller, abs=1e-12)
    low, high = clustered_interval(cases)
    assert 0 <= low <= mean <= high <= 1
    # Never surer than the runs counted as independent.
    independent = wilson_interval(sum(case.successes for case in cases), total)
    assert low <= independent[0] + 1e-12 and high >= independent[1] - 1e-12


# -- agreement ---------------------------------------------------------------------------------------------------

def _table(both_yes: int, first_yes: int, second_yes: int, both_no: int) -> Agreement:
    return Agreement.of([(True, True)] * both_yes + [(True, False)] * first_yes + [(False, True)] * second_yes
                        + [(False, False)] * both_no)


def test_kappa_matches_published_examples() -> None:
    # Wikipedia, "Cohen's kappa": 50 grant proposals, p_o = 0.7, p_e = 0.5, κ = 0.4; and the two tables with the
    # same agreement (60 %) but other marginals: κ = 0.1304 and 0.2593.
    assert _table(20, 5, 10, 15).kappa == pytest.approx(0.4)
    assert _table(45, 15, 25, 15).kappa == pytest.approx(0.1304, abs=5e-5)
    assert _table(25, 35, 5, 35).kappa == pytest.approx(0.2593, abs=5e-5)


def test_kappa_reads_in_landis_and_kochs_words() -> None:
    assert [kappa_strength(k) for k in (-0.1, 0.0, 0.2, 0.21, 0.4, 0.5, 0.6, 0.61, 0.8, 0.81, 1.0)] == [
        "none", "none", "slight", "fair", "fair", "moderate", "moderate", "substantial", "substantial",
        "almost perfect", "almost perfect"]


def test_a_judge_that_passes_everything_is_no_better_than_the_majority_label() -> None:
    always = _table(6, 0, 4, 0)
    assert str(always.accuracy) == "6/10" and always.majority_baseline == always.accuracy
    assert always.majority_label is True and always.kappa == 0.0
    assert always.true_positive_rate.rate == 1.0 and always.true_negative_rate.rate == 0.0
    assert _table(3, 0, 0, 0).kappa is None                 # one class only: κ is undefined
    assert Agreement().kappa is None and Agreement().accuracy.rate is None


@UNTIMED
@given(st.lists(st.tuples(st.booleans(), st.booleans()), max_size=200))
def test_kappa_is_at_most_one_and_one_only_for_perfect_agreement(pairs: list[tuple[bool, bool]]) -> None:
    agreement = Agreement.of(pairs)
    kappa = agreement.kappa
    assert agreement.total == len(pairs)
    if kappa is not None:
        assert -1.0 <= kappa <= 1.0
        assert (kappa == 1.0) == all(label == verdict for label, verdict in pairs)
        assume(len({label for label, _ in pairs}) == 2)
        assert agreement.accuracy.successes == sum(label == verdict for label, verdict in pairs)
