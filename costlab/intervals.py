"""A finding's value with its uncertainty, and what that uncertainty lets a verdict say.

Two sampling units exist in costlab (issue #36, docs/uncertainty.md):

- **repeats**: the whole measurement run again as a job of its own (`{rep}`), one value per repeat.
  Few values (3-10) from an unknown, often skewed or bimodal distribution, so the interval is the
  distribution-free one for the **median** from order statistics (scipy.stats.quantile_test): its
  coverage holds for any continuous distribution. Where the requested confidence cannot be had from
  so few repeats (3 repeats: at most 75 %; 5: 93.75 %), the interval is [min, max] and says the
  confidence it really has, never the requested one.
- **samples within one run** (docsize's 30 queries of a run): a BCa bootstrap of the **mean**
  (scipy.stats.bootstrap, seeded), the statistic the article published.

One value with no sampling unit inside it has no interval: its verdict stays a point verdict and
says "one run: no interval".

A verdict from an interval and a tolerance band [low, high]:
- the whole interval inside the band: reproduced;
- the whole interval outside it: not reproduced;
- straddling an edge: inconclusive, with the number of repeats likely to decide it: the interval's
  half-width shrinks as sqrt(n / k), so k repeats decide once that half-width is below the
  distance from the estimate to the edge it crosses.

Two runs **differ** only where a test at the stated error rate says so: the two-sided Mann-Whitney
test over the values each run's value came from, its repeats or its queries (scipy.stats.mannwhitneyu,
exact up to EXACT_UP_TO values a run); `difference` gives its p-value and words for compare.with.
`intervals_differ` (two intervals that do not overlap) is for intervals whose values were not kept.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Literal, Sequence

import numpy as np

DEFAULT_CONFIDENCE = 0.95
# Below this many samples a bootstrap interval under-covers badly; repeats use order statistics.
MIN_BOOTSTRAP_SAMPLES = 10
BOOTSTRAP_RESAMPLES = 2000
# the exact Mann-Whitney test up to this many values a run (its cost grows fast); beyond, the normal one
EXACT_UP_TO = 50

Outcome = Literal["inside", "outside", "straddles", "point"]


@dataclass(frozen=True)
class Interval:
    """A value and, where a sampling unit exists, its interval at the confidence it really has."""

    estimate: float
    low: float | None
    high: float | None
    confidence: float | None   # the coverage the interval has (not merely the one asked for)
    samples: int               # how many repeats (or samples) it came from
    unit: str                  # "repeats" | "queries" | ...
    statistic: str             # "median" | "mean"
    method: str | None = None  # how it was drawn: "BCa bootstrap", "percentile bootstrap", "all equal"
    # the values it came from (each repeat's, or each sample's), where kept: what compare.with tests
    values: tuple[float, ...] = ()

    @property
    def has_interval(self) -> bool:
        return self.low is not None and self.high is not None

    def scaled(self, factor: float) -> Interval:
        """The same interval of `factor` x the value (a unit conversion, a fixed divisor)."""
        def times(value: float | None) -> float | None:
            return None if value is None else value * factor
        low, high = sorted((times(self.low), times(self.high))) if self.has_interval else (None, None)
        return dataclasses.replace(self, estimate=self.estimate * factor, low=low, high=high,
                                   values=tuple(value * factor for value in self.values))

    @property
    def same_in_all_repeats(self) -> bool:
        """Several repeats that all gave one value: the interval [x, x] is that observation, not a guess."""
        return self.unit == "repeats" and self.samples > 1 and self.low == self.high == self.estimate

    def describe(self) -> str:
        """One line for the page and findings.csv: the interval, its confidence and where it came from."""
        if not self.has_interval:
            if self.unit != "repeats" and 1 < self.samples < MIN_BOOTSTRAP_SAMPLES:
                return f"no interval: {self.samples} {self.unit} are too few for a bootstrap"
            return "one run: no interval"
        if self.same_in_all_repeats:
            return f"{_g(self.low)} to {_g(self.high)}: the same in all {self.samples} repeats"
        method = self.method or (
            "order statistics" if self.unit == "repeats" and self.samples < MIN_BOOTSTRAP_SAMPLES
            else "all equal" if self.low == self.high == self.estimate and self.unit != "repeats"
            else "BCa bootstrap")
        return (f"{_g(self.low)} to {_g(self.high)} at {self.confidence:.1%} ({self.statistic} of "
                f"{self.samples} {self.unit}, {method})")


def _g(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:,.0f}" if abs(value) >= 1e4 else f"{value:.4g}"


def _finite(values: Sequence[float], what: str) -> np.ndarray:
    data = np.asarray(values, dtype=float)
    if data.ndim != 1 or data.size == 0:
        raise ValueError(f"{what}: need at least one value, got {list(values)!r}")
    if not np.all(np.isfinite(data)):
        raise ValueError(f"{what}: values must be finite, got {list(values)!r}")
    return data


def min_max_coverage(n: int) -> float:
    """P(min <= median <= max) for n draws of any continuous distribution: 1 - 2 * 0.5**n."""
    # the median lies outside [min, max] only when all n draws fall on one side of it
    return 1.0 - 2.0 * 0.5 ** n if n >= 1 else 0.0


def over_repeats(values: Sequence[float], confidence: float = DEFAULT_CONFIDENCE,
                 unit: str = "repeats") -> Interval:
    """The median of the repeats with its distribution-free interval (no interval for one repeat)."""
    from scipy import stats  # here, not at the top: every verdict table imports this module, few intervals

    data = _finite(values, "over_repeats")
    estimate = float(np.median(data))
    n = data.size
    kept = tuple(float(v) for v in data)
    if n == 1:
        return Interval(estimate, None, None, None, 1, unit, "median", values=kept)
    if n >= MIN_BOOTSTRAP_SAMPLES or min_max_coverage(n) >= confidence:
        ci = stats.quantile_test(data, q=estimate, p=0.5).confidence_interval(confidence_level=confidence)
        if math.isfinite(ci.low) and math.isfinite(ci.high):
            # the order-statistic interval covers with at least `confidence` (binomial, conservative)
            return Interval(estimate, float(ci.low), float(ci.high), confidence, n, unit, "median",
                            "order statistics", kept)
    # too few repeats for the confidence asked: the widest such interval, with the coverage it has
    return Interval(estimate, float(data.min()), float(data.max()), min_max_coverage(n), n, unit, "median",
                    "order statistics", kept)


STATISTICS = {"mean": np.mean, "median": np.median}


def _bootstrap(samples: tuple[np.ndarray, ...], statistic, confidence: float,
               seed: int) -> tuple[float, float, str]:
    """A seeded BCa bootstrap interval of `statistic(*samples, axis=)` (each sample resampled on its own);
    the percentile interval where BCa fails (very skewed data); (nan, nan) where both fail; and the method."""
    import warnings

    from scipy import stats

    for method in ("BCa", "percentile"):
        # BCa on degenerate data (a bimodal median) warns and gives nan: the percentile interval follows
        with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", stats.DegenerateDataWarning)
            result = stats.bootstrap(samples, statistic, confidence_level=confidence,
                                     n_resamples=BOOTSTRAP_RESAMPLES, method=method, vectorized=True,
                                     paired=False, rng=np.random.default_rng(seed))
        low, high = float(result.confidence_interval.low), float(result.confidence_interval.high)
        if math.isfinite(low) and math.isfinite(high):
            return low, high, f"{method} bootstrap"
    return math.nan, math.nan, "no bootstrap"


def over_samples(values: Sequence[float], confidence: float = DEFAULT_CONFIDENCE, seed: int = 0,
                 unit: str = "queries", statistic: Literal["mean", "median"] = "mean") -> Interval:
    """The mean (or median) of one run's samples (e.g. its queries) with a seeded BCa bootstrap interval."""
    data = _finite(values, "over_samples")
    estimate = float(STATISTICS[statistic](data))
    n = data.size
    kept = tuple(float(v) for v in data)
    if n < MIN_BOOTSTRAP_SAMPLES:   # a bootstrap of so few under-covers: no interval rather than a wrong one
        return Interval(estimate, None, None, None, n, unit, statistic, values=kept)
    if np.ptp(data) == 0:   # every sample equal: the bootstrap distribution is degenerate
        return Interval(estimate, estimate, estimate, confidence, n, unit, statistic, "all equal", kept)
    low, high, method = _bootstrap((data,), STATISTICS[statistic], confidence, seed)
    if not (math.isfinite(low) and math.isfinite(high)):
        return Interval(estimate, None, None, None, n, unit, statistic, values=kept)
    return Interval(estimate, min(low, estimate), max(high, estimate), confidence, n, unit, statistic, method,
                    kept)


def ratio_over_samples(numerator: Sequence[float], denominator: Sequence[float],
                       confidence: float = DEFAULT_CONFIDENCE, seed: int = 0, unit: str = "queries",
                       statistic: Literal["mean", "median"] = "median") -> Interval:
    """statistic(numerator) / statistic(denominator) of two sets of one run's samples (e.g. two query
    shapes' queries), with a seeded BCa bootstrap interval resampling each set on its own. No interval with
    fewer than MIN_BOOTSTRAP_SAMPLES in either set, or where resampled denominators reach 0; zero width where
    every sample of each set is equal."""
    num = _finite(numerator, "ratio_over_samples numerator")
    den = _finite(denominator, "ratio_over_samples denominator")
    stat = STATISTICS[statistic]
    bottom = float(stat(den))
    estimate = float(stat(num)) / bottom if bottom else math.nan
    n = min(num.size, den.size)
    name = f"ratio of {statistic}s"
    if not math.isfinite(estimate):
        raise ValueError(f"ratio_over_samples: the denominator's {statistic} is 0")
    if n < MIN_BOOTSTRAP_SAMPLES:
        return Interval(estimate, None, None, None, n, unit, name)
    if np.ptp(num) == 0 and np.ptp(den) == 0:
        return Interval(estimate, estimate, estimate, confidence, n, unit, name, "all equal")

    def ratio(x, y, axis=-1):
        return stat(x, axis=axis) / stat(y, axis=axis)

    low, high, method = _bootstrap((num, den), ratio, confidence, seed)
    if not (math.isfinite(low) and math.isfinite(high)):
        return Interval(estimate, None, None, None, n, unit, name)
    return Interval(estimate, min(low, estimate), max(high, estimate), confidence, n, unit, name, method)


@dataclass(frozen=True)
class Judgement:
    """Where an interval lies against a tolerance band, and what would decide a straddle."""

    outcome: Outcome
    repeats_to_decide: int | None = None   # for "straddles": the repeats likely to decide it

    @property
    def holds(self) -> bool | None:
        """True: reproduced; False: not reproduced; None: inconclusive."""
        return {"inside": True, "outside": False}.get(self.outcome)


def judge(interval: Interval, band_low: float, band_high: float) -> Judgement:
    """The interval against the band [band_low, band_high] (either may be ±inf for a one-sided rule).

    With no interval (one run), outcome "point": the caller keeps its point verdict.
    """
    if band_low > band_high:
        raise ValueError(f"judge: empty band [{band_low}, {band_high}]")
    if not interval.has_interval:
        return Judgement("point")
    low, high = interval.low, interval.high
    if band_low <= low and high <= band_high:
        return Judgement("inside")
    if high < band_low or low > band_high:
        return Judgement("outside")
    return Judgement("straddles", repeats_to_decide(interval, band_low, band_high))


def repeats_to_decide(interval: Interval, band_low: float, band_high: float) -> int | None:
    """Repeats k at which the interval, shrinking as sqrt(n / k), would no longer cross the band's edge.

    None when the estimate sits on the edge itself (no number of repeats decides that).
    """
    est, n = interval.estimate, interval.samples
    needed = n + 1
    for edge in (band_low, band_high):
        if not (math.isfinite(edge) and interval.low <= edge <= interval.high):
            continue
        # the half-width on the side of the edge, against the distance from the estimate to it
        half = (interval.high - est) if edge >= est else (est - interval.low)
        distance = abs(edge - est)
        if distance == 0 or half <= 0:
            return None
        # strictly more than n * (half / distance)**2 (rounded: 0.2 / 0.1 is not exactly 2 in floats)
        needed = max(needed, math.floor(round(n * (half / distance) ** 2, 9)) + 1)
    return needed


def runs_differ(a: Sequence[float], b: Sequence[float], alpha: float = 1 - DEFAULT_CONFIDENCE) -> bool | None:
    """Whether two runs' repeats differ at error rate alpha (exact two-sided Mann-Whitney).

    None when either run has a single repeat: one value each cannot show a difference.
    """
    return difference(a, b, alpha).differ


@dataclass(frozen=True)
class Difference:
    """Two runs' values of one finding tested against each other (runs_differ, with its p-value)."""

    differ: bool | None     # None: either run has a single value, nothing was tested
    pvalue: float | None
    sizes: tuple[int, int]
    unit: str = "repeats"

    def describe(self) -> str:
        """'differs: p = 0.008, 5 vs 5 repeats', 'no difference shown: p = 0.69, 5 vs 5 repeats' or
        'one run each: not tested'."""
        sizes = f"{self.sizes[0]} vs {self.sizes[1]} {self.unit}"
        if self.differ is None:
            return "one run each: not tested" if max(self.sizes) <= 1 else f"not tested: {sizes}"
        if self.pvalue is None:   # every value equal in both runs: no ranks to compare
            return f"no difference shown: all values equal, {sizes}"
        return f"{'differs' if self.differ else 'no difference shown'}: p = {self.pvalue:.2g}, {sizes}"


def difference(a: Sequence[float], b: Sequence[float], alpha: float = 1 - DEFAULT_CONFIDENCE,
               unit: str = "repeats") -> Difference:
    """The exact two-sided Mann-Whitney test of two runs' values (scipy.stats.mannwhitneyu) at error rate
    alpha; not tested (differ None) where either run has a single value."""
    from scipy import stats

    xa, xb = _finite(a, "runs_differ a"), _finite(b, "runs_differ b")
    if xa.size < 2 or xb.size < 2:
        return Difference(None, None, (int(xa.size), int(xb.size)), unit)
    if np.ptp(np.concatenate([xa, xb])) == 0:   # identical values throughout: not different
        return Difference(False, None, (int(xa.size), int(xb.size)), unit)
    # exact, as runs_differ_many (the A/A benchmark) tests; hundreds of queries a run: the normal one
    method = "exact" if max(xa.size, xb.size) <= EXACT_UP_TO else "asymptotic"
    pvalue = float(stats.mannwhitneyu(xa, xb, alternative="two-sided", method=method).pvalue)
    return Difference(pvalue < alpha, pvalue, (int(xa.size), int(xb.size)), unit)


def runs_differ_many(a: np.ndarray, b: np.ndarray, alpha: float = 1 - DEFAULT_CONFIDENCE) -> np.ndarray:
    """runs_differ for many pairs at once: rows of `a` against rows of `b` (the A/A benchmark's trials)."""
    from scipy import stats

    xa, xb = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    pvalue = stats.mannwhitneyu(xa, xb, alternative="two-sided", method="exact", axis=-1).pvalue
    # identical values throughout give no ranks to compare: not different
    constant = np.ptp(np.concatenate([xa, xb], axis=-1), axis=-1) == 0
    return (np.asarray(pvalue) < alpha) & ~constant


def intervals_differ(a: Interval, b: Interval) -> bool | None:
    """Two within-run intervals differ only when they do not overlap (None: either has none)."""
    if not (a.has_interval and b.has_interval):
        return None
    return a.high < b.low or b.high < a.low
