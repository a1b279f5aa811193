"""Intervals and the verdicts they allow (costlab/intervals.py, issue #36).

Expected values are worked out by hand: the coverage of [min, max] for the median of n draws is
1 - 2 * 0.5**n; order statistics of 1..n; the repeats-to-decide formula k > n * (half / distance)**2.
The simulation tests draw from seeded, known distributions and check the error rates the module
promises against binomial error over 1,000 trials.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from costlab.intervals import (
    Interval,
    judge,
    min_max_coverage,
    over_repeats,
    over_samples,
    runs_differ,
    runs_differ_many,
)

TRIALS = 1000
ALPHA = 0.05
# three binomial standard errors of a 5 % rate over 1,000 trials: sqrt(0.05 * 0.95 / 1000) = 0.00689
BINOMIAL_SLACK = 3 * math.sqrt(ALPHA * (1 - ALPHA) / TRIALS)


def test_min_max_coverage_literals():
    assert min_max_coverage(3) == pytest.approx(0.75)      # 1 - 2/8
    assert min_max_coverage(5) == pytest.approx(0.9375)    # 1 - 2/32


def test_one_repeat_has_no_interval():
    interval = over_repeats([4.2])
    assert not interval.has_interval
    assert interval.describe() == "one run: no interval"
    assert judge(interval, 4.0, 5.0).outcome == "point"


def test_three_repeats_say_the_confidence_they_have():
    interval = over_repeats([3.0, 1.0, 2.0])
    assert (interval.estimate, interval.low, interval.high) == (2.0, 1.0, 3.0)
    assert interval.confidence == pytest.approx(0.75)   # not the 95 % asked for
    assert "75.0%" in interval.describe() and "median of 3 repeats" in interval.describe()


def test_ten_repeats_use_the_order_statistics_at_95_percent():
    # for n = 10 the distribution-free 95 % interval of the median is (x(2), x(9)):
    # P(Binomial(10, 0.5) in [2, 8]) = 1 - 2 * (1 + 10) / 1024 = 0.9785 >= 0.95, while (x(3), x(8)) gives
    # 0.891
    interval = over_repeats([float(v) for v in range(10, 0, -1)])
    assert (interval.low, interval.high) == (2.0, 9.0)
    assert interval.confidence == pytest.approx(1 - 2 * 11 / 1024)   # the coverage it has, 97.85 %
    assert interval.risk == pytest.approx(11 / 1024)   # wrong at the edge when 0 or 1 of 10 fall below it


def test_a_failed_repeat_is_left_out_and_counted_never_replaced():
    # [1.2, nan, 1.0, 1.0, 1.0]: 4 of 5 repeats, median 1.0, [min, max] = [1.0, 1.2] at 1 - 2 x 0.5^4 = 87.5 %
    interval = over_repeats([1.2, float("nan"), 1.0, 1.0, 1.0])
    assert (interval.estimate, interval.low, interval.high) == (1.0, 1.0, 1.2)
    assert (interval.samples, interval.failed, interval.confidence) == (4, 1, pytest.approx(0.875))
    assert interval.describe() == "1 to 1.2 at 87.5% (median of 4 of 5 repeats, order statistics)"
    assert over_repeats([float("inf"), None, 2.0]).describe() == "one value (1 of 3 repeats): no interval"
    assert over_repeats([float("nan")] * 3).describe() == "no value: all 3 repeats failed"


def test_judge_inside_outside_straddles():
    def interval(low, est, high, n=3):
        return Interval(est, low, high, 0.75, n, "repeats", "median")
    assert judge(interval(0.95, 1.0, 1.05), 0.9, 1.1).outcome == "inside"
    assert judge(interval(1.2, 1.3, 1.4), 0.9, 1.1).outcome == "outside"
    straddle = judge(interval(0.9, 1.0, 1.2), 0.8, 1.1)
    assert straddle.outcome == "straddles" and straddle.holds is None
    # no values kept: no spread to suggest a count from, and the words say so
    assert straddle.repeats_to_decide is None and "values were not kept" in straddle.suggestion("repeats")
    # the estimate on the edge: no number of repeats decides it
    on_edge = judge(interval(0.9, 1.1, 1.2), 0.8, 1.1)
    assert on_edge.on_edge and "sits on the band's edge" in on_edge.suggestion("repeats")


def test_bootstrap_over_queries_brackets_the_mean_and_is_seeded():
    rng = np.random.default_rng(7)
    # bimodal like docsize's 1 KB small-cache queries: half read nothing, half about 512 KB
    queries = np.where(rng.random(30) < 0.5, 0.0, rng.normal(512e3, 40e3, 30))
    first, again = over_samples(queries, seed=3), over_samples(queries, seed=3)
    assert first == again
    assert first.low < queries.mean() < first.high
    assert first.statistic == "mean" and first.samples == 30
    # nine queries are too few for a bootstrap that covers what it says: no interval, and the words say why
    few = over_samples(queries[:9])
    assert few.low is None and few.high is None and few.estimate == queries[:9].mean()
    assert few.describe() == "no interval: 9 queries are too few for a bootstrap"
    # thirty queries that all read nothing: no zero-width "95 %" interval, the rule of three's bound:
    # (1 - p)^30 = 0.05 -> p = 1 - 0.05^(1/30) = 0.0950
    zeros = over_samples([0.0] * 30)
    assert not zeros.has_interval and zeros.differ_at_most == pytest.approx(0.0950, abs=5e-5)
    assert zeros.describe() == "0 in all 30 queries: at most 9.5% of such queries differ (rule of three, 95%)"
    assert judge(zeros, 0.0, 1.0).outcome == "point"


def _simulate(draw, true_value, band, repeats, seed):
    """Verdict outcomes of TRIALS simulated runs of `repeats` draws each around true_value."""
    rng = np.random.default_rng(seed)
    outcomes = []
    for _ in range(TRIALS):
        outcomes.append(judge(over_repeats(draw(rng, true_value, repeats)), *band).outcome)
    return outcomes


def _normal(rng, centre, n):          # noise a third of a 10 % tolerance
    return rng.normal(centre, 0.1 / 3 * centre, n)


def _lognormal(rng, centre, n):       # skewed: median `centre`
    return centre * rng.lognormal(0.0, 0.03, n)


def _bimodal(rng, centre, n):         # two modes 4 % either side of the centre
    return centre * (1 + np.where(rng.random(n) < 0.5, -0.04, 0.04) + rng.normal(0, 0.005, n))



@pytest.mark.parametrize("draw", [_normal, _lognormal, _bimodal])
def test_identical_inputs_are_rarely_called_not_reproduced(draw):
    # the run's true median equals the published value (band: published +- 10 %), 5 repeats
    outcomes = _simulate(draw, 1.0, (0.9, 1.1), 5, seed=11)
    assert outcomes.count("outside") / TRIALS <= ALPHA + BINOMIAL_SLACK


@pytest.mark.parametrize("draw", [_normal, _lognormal, _bimodal])
def test_a_shift_of_twice_the_tolerance_is_detected_at_five_repeats(draw):
    # true value 1.2 against a band of 1.0 +- 10 %: twice the tolerance away
    outcomes = _simulate(draw, 1.2, (0.9, 1.1), 5, seed=12)
    assert outcomes.count("outside") / TRIALS >= 0.90


def test_intervals_cover_the_true_median_at_their_stated_confidence():
    rng = np.random.default_rng(13)
    missed = 0
    stated = None
    for _ in range(TRIALS):
        interval = over_repeats(_lognormal(rng, 1.0, 5))   # true median 1.0
        stated = interval.confidence
        missed += not (interval.low <= 1.0 <= interval.high)
    assert stated == pytest.approx(0.9375)
    assert missed / TRIALS <= (1 - stated) + 3 * math.sqrt(stated * (1 - stated) / TRIALS)


@pytest.mark.parametrize("draw", [_normal, _lognormal, _bimodal])
def test_identical_runs_are_rarely_called_different(draw):
    rng = np.random.default_rng(14)
    first, second = draw(rng, 1.0, (TRIALS, 5)), draw(rng, 1.0, (TRIALS, 5))   # 1,000 pairs of runs
    assert runs_differ_many(first, second).mean() <= ALPHA + BINOMIAL_SLACK


def test_runs_twice_the_tolerance_apart_are_called_different():
    rng = np.random.default_rng(15)
    assert runs_differ_many(_normal(rng, 1.0, (TRIALS, 5)), _normal(rng, 1.2, (TRIALS, 5))).mean() >= 0.90


def test_one_repeat_each_cannot_differ():
    assert runs_differ([1.0], [2.0]) is None
    # 3 repeats each: the exact test's smallest two-sided p is 2 / C(6, 3) = 0.1, never below 5 %
    assert runs_differ([1.0, 1.1, 1.2], [5.0, 5.1, 5.2]) is False
    # 5 each, wholly separated: p = 2 / C(10, 5) = 0.0079
    assert runs_differ([1, 2, 3, 4, 5], [11, 12, 13, 14, 15]) is True


def test_every_rule_says_its_band():
    from costlab import verdicts as rule

    assert rule.between(0.75, 1.33).band == (0.75, 1.33)
    assert rule.at_least(2).band == (2, math.inf) and rule.at_most(5).band == (-math.inf, 5)
    assert rule.above(1).band[0] > 1 and not rule.above(1)(1.0) and rule.below(1).band[1] < 1
    assert rule.relative_within(200.0, 0.1).band == pytest.approx((180.0, 220.0))     # 200 +- 10 %
    assert rule.relative_within(-200.0, 0.1).band == pytest.approx((-220.0, -180.0))  # sorted: negative
    assert rule.absolute_within(3.0, 2.0).band == (1.0, 5.0)
    assert rule.ratio_within(512.0, 0.9, 1.1).band == pytest.approx((460.8, 563.2))   # 512 x 0.9, 512 x 1.1
    assert rule.ratio_within(0, 0.9, 1.1).band is None and rule.relative_within(None, 0.1).band is None


def test_docsize_cells_carry_the_bootstrap_interval_of_their_query_mean():
    import polars as pl

    from costlab.docsize.engine import mean_intervals

    def cell(size_kb, shape, values):
        return pl.DataFrame({"size_kb": [size_kb] * len(values), "run": ["small_cache"] * len(values),
                             "cache_mb": [256] * len(values), "windows": ["random"] * len(values),
                             "shape": [shape] * len(values), "bytes_read_into_cache": values})
    # bimodal: 15 queries read nothing, 15 read 1,000 B -> mean 500; every query 64 B -> the point 64
    measured = pl.concat([cell(1, "whole", [0] * 15 + [1000] * 15), cell(1, "covered", [64] * 30)])
    rows = {r["shape"]: r for r in mean_intervals(measured).iter_rows(named=True)}
    whole = rows["whole"]
    assert 0 < whole["bytes_read_into_cache_mean_low"] < 500 < whole["bytes_read_into_cache_mean_high"] < 1000
    assert whole["interval_confidence"] == 0.95
    covered = rows["covered"]
    # every query 64 B: no bootstrap interval (the rule of three's bound instead)
    low, high = covered["bytes_read_into_cache_mean_low"], covered["bytes_read_into_cache_mean_high"]
    assert (low, high) == (None, None)


def test_a_difference_says_its_p_value_and_what_it_was_tested_on():
    from costlab.intervals import difference
    # 5 vs 5 all apart: two of the C(10, 5) = 252 rank splits are as extreme, p = 2 / 252 = 0.0079
    apart = difference([1.00, 1.01, 1.02, 1.03, 1.04], [1.30, 1.31, 1.32, 1.33, 1.34])
    assert apart.differ is True and apart.pvalue == pytest.approx(2 / 252)
    assert apart.describe() == "differs: p = 0.0079, 5 vs 5 repeats"
    assert difference([1.0], [2.0]).describe() == "one run each: not tested"
    one_side = difference([1.0, 1.1, 1.2, 1.3, 1.4], [2.0], unit="queries")
    assert one_side.describe() == "not tested: 5 vs 1 queries"
    same = difference([3.0, 3.0], [3.0, 3.0])
    assert same.describe() == "no difference shown: all values equal, 2 vs 2 repeats"


def test_a_scaled_interval_scales_the_values_it_came_from():
    """compare.with tests the kept values: a unit conversion (x 2 here) must convert them with the value."""
    interval = over_repeats([1.0, 2.0, 4.0]).scaled(2.0)
    assert interval.estimate == 4.0 and interval.values == (2.0, 4.0, 8.0)
