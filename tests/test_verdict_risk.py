"""Verdicts you can trust (issue 45): each decided verdict states its risk, a failed repeat is counted not
replaced, "the same in all N" comes from the values, all-equal queries get the rule of three, a suggested
count of repeats decides with 80 % power, and compare.with judges the ratio of two runs against the
finding's tolerance (costlab/intervals.py, costlab/finding.py).

The simulations are seeded and vectorised (costlab.intervals.over_repeats_many, checked against
over_repeats below). Expected rates are worked out by hand: a distribution-free interval (x(r), x(n+1-r))
of the median misses on one side with probability P(Binomial(n, 1/2) <= r - 1): 0.5^n for [min, max]
(n <= 5), 11 / 1024 for (x(2), x(9)) at n = 10.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from costlab.finding import interval_verdict, judged
from costlab.intervals import (
    ONE_RUN_RISK,
    compare_runs,
    judge,
    median_rank,
    over_repeats,
    over_repeats_many,
    over_samples,
    tie_exact_pvalue,
)
from costlab.repeats import over_repeat_findings
from costlab.verdicts import Verdict, between

TRIALS = 4000
BAND = (0.9, 1.1)
SD = 0.1 / 3   # normal noise of a third of the tolerance (the review)


def _slack(rate: float, trials: int) -> float:
    """Three binomial standard errors of `rate` over `trials`."""
    return 3 * math.sqrt(rate * (1 - rate) / trials)


def test_the_vectorised_intervals_are_over_repeats_and_its_ranks_are_quantile_tests():
    rng = np.random.default_rng(40)
    for n in (2, 3, 5, 6, 10, 17):
        rows = rng.normal(1.0, SD, (20, n))
        est, low, high, risk = over_repeats_many(rows)
        for i, row in enumerate(rows):
            one = over_repeats(row)
            assert (one.estimate, one.low, one.high) == (est[i], low[i], high[i])
            assert one.risk == pytest.approx(risk)
    # n = 10: quantile_test's 95 % interval of the median is (x(2), x(9)); n = 5 cannot reach 95 %: [min, max]
    assert (median_rank(10), median_rank(5)) == (2, 1)
    ci = stats.quantile_test(np.arange(1.0, 11.0), q=5.5, p=0.5).confidence_interval(0.95)
    assert (ci.low, ci.high) == (2.0, 9.0)


@pytest.mark.parametrize("n, stated", [(3, 0.125), (5, 0.03125), (10, 11 / 1024)])
def test_the_stated_risk_is_the_wrong_verdict_rate_at_the_bands_edge(n, stated):
    """The truth on the upper edge 1.1: 'reproduced' (interval wholly below it) and 'not reproduced'
    (wholly above) are each wrong, each at the stated risk, within binomial error over 4,000 trials."""
    rng = np.random.default_rng(41 + n)
    _, low, high, risk = over_repeats_many(rng.normal(1.1, SD, (TRIALS, n)))
    assert risk == pytest.approx(stated)
    assert over_repeats(rng.normal(1.1, SD, n)).risk == pytest.approx(stated)
    reproduced = np.mean((low >= BAND[0]) & (high <= BAND[1]))
    not_reproduced = np.mean((high < BAND[0]) | (low > BAND[1]))
    assert abs(reproduced - stated) <= _slack(stated, TRIALS)
    assert abs(not_reproduced - stated) <= _slack(stated, TRIALS)


def test_one_run_says_its_risk_is_not_known_and_is_wrong_half_the_time_at_the_edge():
    rng = np.random.default_rng(45)
    values = rng.normal(1.1, SD, TRIALS)
    inside = np.mean((values >= BAND[0]) & (values <= BAND[1]))
    assert abs(inside - 0.5) <= _slack(0.5, TRIALS)   # a point verdict at the edge: a coin
    rule = between(*BAND)
    row = interval_verdict(judged("f", "m", "ratio", 1.0, 1.05, rule, server_kind="engine"),
                           over_repeats([1.05]), rule)
    assert (row.verdict, row.risk) == (Verdict.REPRODUCED, ONE_RUN_RISK)
    assert row.row()["risk"] == "one run: risk not known"


def test_the_stated_risk_of_queries_is_their_wrong_verdict_rate_at_the_edge():
    """30 queries a run, their mean's 95 % BCa interval: 2.5 % a side, measured over 1,000 runs whose true
    mean is the band's upper edge."""
    rng = np.random.default_rng(46)
    trials = 1000
    intervals = [over_samples(rng.normal(1.1, SD, 30), seed=i) for i in range(trials)]
    assert all(i.risk == pytest.approx(0.025) for i in intervals)
    reproduced = np.mean([judge(i, *BAND).outcome == "inside" for i in intervals])
    assert abs(reproduced - 0.025) <= _slack(0.025, trials)


def test_a_nan_repeat_is_judged_as_four_of_five_never_replaced_by_repeat_one():
    """[1.2, nan, 1.0, 1.0, 1.0] against 0.9-1.1: repeat 1 alone (1.2) would say "not reproduced"; the four
    that gave a value have median 1.0 and [min, max] = [1.0, 1.2] (87.5 %), straddling 1.1: inconclusive."""
    rule = between(*BAND)
    per_repeat = [[judged("f", "m", "ratio", 1.0, value, rule, server_kind="engine")]
                  for value in (1.2, math.nan, 1.0, 1.0, 1.0)]
    row = over_repeat_findings(per_repeat)[0]
    assert row.reproduced == 1.0 and row.verdict is Verdict.INCONCLUSIVE
    assert row.interval == "1 to 1.2 at 87.5% (median of 4 of 5 repeats, order statistics)"
    # every repeat failed: not run, said so
    failed = over_repeat_findings([[judged("f", "m", "ratio", 1.0, None, rule, server_kind="engine")]] * 3)[0]
    assert failed.verdict is Verdict.NOT_RUN and failed.interval == "no value: all 3 repeats failed"


def test_the_same_in_all_ten_is_decided_from_the_values():
    """[1.0] * 8 + [1e9, -1e9]: the median's interval (x(2), x(9)) is [1, 1], but the repeats were not all
    the same: reproduced at its risk 11 / 1024 = 1.1 %, never "the same in all 10 repeats"."""
    rule = between(*BAND)
    per_repeat = [[judged("f", "m", "ratio", 1.0, value, rule, server_kind="engine")]
                  for value in [1.0] * 8 + [1e9, -1e9]]
    row = over_repeat_findings(per_repeat)[0]
    assert row.verdict is Verdict.REPRODUCED and row.reason is None
    assert "the same in all" not in row.interval and row.risk == "1.1%"
    same = over_repeat_findings([[judged("f", "m", "ratio", 1.0, 1.0, rule, server_kind="engine")]] * 10)[0]
    assert same.reason == "the same in all 10 repeats"


def test_an_outliers_suggestion_is_capped():
    """An outlier at 5 repeats made the old suggestion 6e20 repeats; the robust spread (MAD) ignores it and
    the count stays within the floor and the cap (50 repeats)."""
    interval = over_repeats([1.0, 1.01, 0.99, 1.02, 1e9])
    judgement = judge(interval, *BAND)
    assert judgement.outcome == "straddles"
    assert 6 <= judgement.repeats_to_decide <= 50
    # a value near the edge with a wide spread: capped, and the words say more than the cap
    near = judge(over_repeats([1.0, 1.2, 0.95]), *BAND)
    assert near.capped and near.repeats_to_decide == 50
    assert near.suggestion("repeats").startswith("more than 50 repeats")


@pytest.mark.parametrize("truth", [1.05, 1.16])
def test_rerunning_with_the_suggested_repeats_decides_at_least_80_percent(truth):
    """Runs of 5 repeats whose interval straddles the edge 1.1 (truth 1.5 and 2 noise SDs from it); each
    rerun with its suggested count of fresh repeats decides (wholly inside or outside) in >= 80 %."""
    rng = np.random.default_rng(47)
    suggested = []
    for row in rng.normal(truth, SD, (2000, 5)):
        judgement = judge(over_repeats(row), *BAND)
        if judgement.outcome == "straddles" and not judgement.capped:
            suggested.append(judgement.repeats_to_decide)
    suggested = np.array(suggested)
    assert suggested.size >= 100
    decided = 0
    for k in np.unique(suggested):
        _, low, high, _ = over_repeats_many(rng.normal(truth, SD, (int(np.sum(suggested == k)), int(k))))
        decided += np.sum((high < BAND[0]) | (low > BAND[1]) | ((low >= BAND[0]) & (high <= BAND[1])))
    assert decided / suggested.size >= 0.80


def test_a_tied_comparison_is_exact():
    """[0,0,1,1,2,2] v [1,2,2,3,3,3]: scipy's exact Mann-Whitney (not tie-corrected) gives 0.041; the exact
    permutation of the midranks over all C(12, 6) = 924 splits gives 50 / 924 = 0.054."""
    a, b = np.array([0, 0, 1, 1, 2, 2.0]), np.array([1, 2, 2, 3, 3, 3.0])
    assert tie_exact_pvalue(a, b) == pytest.approx(50 / 924)


def test_compare_needs_no_rejection_to_call_three_against_three_changed():
    """3 v 3, a 30 % change: the ratio's interval from all 9 pairwise ratios [min, max] has coverage
    1 - 2 / C(6, 3) = 0.9; all 9 ratios 1.275-1.32, wholly above the band 0.8-1.2: changed."""
    result = compare_runs([1.0, 1.01, 1.02], [1.3, 1.31, 1.32], (0.8, 1.2))
    assert result.outcome == "changed" and result.coverage == pytest.approx(0.9)
    assert (result.low, result.high) == (pytest.approx(1.3 / 1.02), pytest.approx(1.32 / 1.0))


def test_rigorous_repeats_at_least_five_times_wherever_it_repeats():
    """config/rigorous.yaml: every `repeats` it sets is >= 5 (a decided verdict's risk at most 3.1 %)."""
    from pathlib import Path

    import yaml

    def repeats(node, path=""):
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "repeats":
                    yield path + key, value
                else:
                    yield from repeats(value, f"{path}{key}.")

    config = yaml.safe_load((Path(__file__).resolve().parents[1] / "config" / "rigorous.yaml").read_text())
    found = dict(repeats(config))
    assert set(found) >= {"docsize.repeats", "flatnested.repeats", "appversions.repeats",
                          "engine.appversions.repeats", "engine.arraygrowth.repeats"}
    assert all(value >= 5 for value in found.values()), found


def test_the_summary_says_the_largest_risk_and_how_many_are_not_known():
    """findings.csv rows as the summary reads them: two decided at 3.1 % and 12.5 %, one on one run."""
    from costlab.summary import findings_texts

    rows = [{"study": "docsize", "evidence": "mongod 8.0.4", "verdict": "reproduced", "kind": "published",
             "risk": risk} for risk in ("3.1%", "12.5%", "one run: risk not known")]
    rows.append({"study": "docsize", "evidence": "mongod 8.0.4", "verdict": "inconclusive",
                 "kind": "published", "risk": ""})
    assert findings_texts(rows, "docsize") == [
        "mongod 8.0.4: 3 reproduced, 1 inconclusive; risk if the truth sat on the band's edge: up to 12.5%, "
        "1 not known (one run)"]


def test_verdict_tables_and_findings_csv_carry_the_risk_and_the_band():
    """A row decided by 5 repeats' [min, max] (risk 1 / 32 = 3.1 %) in a verdict table and findings.csv."""
    import polars as pl

    from costlab.finding import COLUMNS as TABLE_COLUMNS
    from costlab.finding import verdict_table
    from costlab.report.findings import COLUMNS as FINDINGS_COLUMNS

    rule = between(*BAND)
    per_repeat = [[judged("f", "m", "ratio", 1.0, v, rule, server_kind="engine")]
                  for v in (1.0, 1.01, 0.99, 1.02, 0.98)]
    table = verdict_table(over_repeat_findings(per_repeat))
    row = table.row(0, named=True)
    assert (row["verdict"], row["risk"]) == ("reproduced", "3.1%")
    assert (row["band_low"], row["band_high"]) == (0.9, 1.1)
    assert table.columns == TABLE_COLUMNS
    assert FINDINGS_COLUMNS[-1] == "risk" and FINDINGS_COLUMNS[:15] == [
        "study", "finding", "metric", "unit", "published", "this_run", "interval", "evidence", "ratio",
        "tolerance", "verdict", "reason", "kind", "note", "source"]   # the columns before risk, unchanged
    assert isinstance(table, pl.DataFrame)


def test_the_page_shows_a_decided_verdicts_risk_in_words():
    from costlab.report.views import finding_row_view

    base = {"study": "docsize", "finding": "f", "metric": "m", "unit": "ratio", "published": 1.0,
            "this_run": 1.0, "interval": "0.98 to 1.02 at 93.8% (median of 5 repeats, order statistics)",
            "evidence": "mongod 8.0.4", "ratio": 1.0, "tolerance": "ratio within 0.9-1.1",
            "verdict": "reproduced", "reason": None, "kind": "published", "note": None}
    shown = finding_row_view(base | {"risk": "3.1%"})["risk"]
    assert shown == "risk 3.1% if the truth sat on the band's edge"
    assert finding_row_view(base | {"risk": ONE_RUN_RISK})["risk"] == "one run: risk not known"
    assert finding_row_view(base | {"risk": None})["risk"] is None


def test_a_row_made_not_comparable_after_its_interval_judged_it_has_no_risk():
    rule = between(*BAND)
    per_repeat = [[judged("f", "m", "ratio", 1.0, v, rule, server_kind="engine")] for v in (1.0, 1.01, 0.99)]
    row = over_repeat_findings(per_repeat)[0]
    assert row.row()["risk"] == "12.5%"   # 3 repeats' [min, max]: (1 - 0.75) / 2
    assert row.but(Verdict.NOT_COMPARABLE, "stand-in").row()["risk"] is None
