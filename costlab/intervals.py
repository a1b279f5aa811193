"""A finding's value with its uncertainty, what that uncertainty lets a verdict say, and at what risk.

Two sampling units exist in costlab (docs/uncertainty.md):

- **repeats**: the whole measurement run again as a job of its own (`{rep}`), one value per repeat.
  Few values (3-10) from an unknown, often skewed or bimodal distribution, so the interval is the
  distribution-free one for the **median** from order statistics (the ranks scipy.stats.quantile_test
  gives): [x(r), x(n+1-r)] covers the median with probability 1 - 2 P(Binomial(n, 1/2) <= r - 1) for any
  continuous distribution, and that exact coverage is what the interval states (5 repeats: [min, max] at
  93.75 %; 10: (x(2), x(9)) at 97.85 %). A repeat that failed or gave NaN/inf is left out and counted
  ("4 of 5 repeats"), never replaced.
- **samples within one run** (docsize's queries of a run): a BCa bootstrap of the **mean**
  (scipy.stats.bootstrap, seeded). Samples that are all equal have no bootstrap: they say the rule of
  three's bound instead (at most 1 - 0.05^(1/n) of such samples differ, at 95 %).

A verdict from an interval and a tolerance band [low, high] (an equivalence test):
- the whole interval inside the band: reproduced; wholly outside: not reproduced;
- straddling an edge: inconclusive, with the repeats (or samples) that would decide it with an 80 %
  chance (`repeats_to_decide`: from a robust spread and the distance to the edge, with a floor and a cap).

Each decided verdict has a **risk**: the chance it is wrong when the truth sits on the band's edge,
(1 - c) / 2 for an interval of coverage c (`Interval.risk`).
One run has no interval and its risk is not known.

Two runs compared (compare.with, `compare_runs`): the ratio of the other run to this one (Hodges-Lehmann:
the median of the pairwise ratios, the same ranks as the Mann-Whitney test) with its distribution-free
interval (Moses), held to the finding's own tolerance as a band of ratios: "same within tolerance",
"changed" or "cannot tell"; the p-value of any difference, where shown, is an exact permutation test
(ties included) and is adjusted over a table's rows together (Benjamini-Hochberg).
"""
from __future__ import annotations

import dataclasses
import math
import warnings
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal, Sequence

import numpy as np

DEFAULT_CONFIDENCE = 0.95
# Below this many samples a bootstrap interval under-covers badly; repeats use order statistics.
MIN_BOOTSTRAP_SAMPLES = 10
BOOTSTRAP_RESAMPLES = 2000
# the exact Mann-Whitney distribution up to this many values a run (its cost grows fast); beyond, the normal
EXACT_UP_TO = 50
# a permutation test enumerates every split of two runs' values up to this many splits; beyond, it samples
PERMUTATIONS_EXACT_UP_TO = 5000
PERMUTATION_RESAMPLES = 9999
# the chance of deciding a straddle that a suggested count of repeats (or samples) aims at
POWER = 0.8
# the distance to the edge a suggestion counts on: the measured one less this many standard errors
MARGIN_ERRORS = 0.5
# the most repeats a suggestion names (the schema's maximum) and samples (docsize's queries' maximum)
MAX_SUGGESTED = {"repeats": 50, "queries": 100_000}
MAX_SUGGESTED_OTHER = 100_000
ONE_RUN_RISK = "one run: risk not known"

Outcome = Literal["inside", "outside", "straddles", "point"]


@dataclass(frozen=True)
class Interval:
    """A value and, where a sampling unit exists, its interval at the confidence it really has."""

    estimate: float
    low: float | None
    high: float | None
    confidence: float | None   # the coverage the interval has (not merely the one asked for)
    samples: int               # how many repeats (or samples) gave a value (the failed ones not counted)
    unit: str                  # "repeats" | "queries" | ...
    statistic: str             # "median" | "mean"
    method: str | None = None  # how it was drawn: "BCa bootstrap", "percentile bootstrap", "all equal"
    # the values it came from (each repeat's, or each sample's), where kept: what compare.with tests
    values: tuple[float, ...] = ()
    failed: int = 0            # repeats (or samples) that failed or gave NaN/inf: left out, never replaced
    # samples that were all equal: the most of such samples that may differ (rule of three, 95 %)
    differ_at_most: float | None = None

    @property
    def has_interval(self) -> bool:
        return self.low is not None and self.high is not None

    @property
    def risk(self) -> float | None:
        """The chance a verdict decided by this interval is wrong when the truth sits on the band's edge: the
        interval misses on that side with probability (1 - c) / 2. None without an interval."""
        if not self.has_interval or self.confidence is None:
            return None
        return (1.0 - self.confidence) / 2.0

    def scaled(self, factor: float) -> Interval:
        """The same interval of `factor` x the value (a unit conversion, a fixed divisor)."""
        def times(value: float | None) -> float | None:
            return None if value is None else value * factor
        low, high = sorted((times(self.low), times(self.high))) if self.has_interval else (None, None)
        return dataclasses.replace(self, estimate=self.estimate * factor, low=low, high=high,
                                   values=tuple(value * factor for value in self.values))

    @property
    def same_in_all_repeats(self) -> bool:
        """Several repeats whose values are all equal (from the values, not the interval's ends)."""
        return (self.unit == "repeats" and self.samples > 1 and len(self.values) == self.samples
                and max(self.values) == min(self.values))

    def _count(self) -> str:
        """'5 repeats', or '4 of 5 repeats' where one failed."""
        return (f"{self.samples} of {self.samples + self.failed} {self.unit}" if self.failed
                else f"{self.samples} {self.unit}")

    def describe(self) -> str:
        """One line for the page and findings.csv: the interval, its confidence and where it came from."""
        if self.samples == 0:
            return f"no value: all {self.failed} {self.unit} failed"
        if self.differ_at_most is not None:
            return (f"{_g(self.estimate)} in all {self._count()}: at most {self.differ_at_most:.1%} of such "
                    f"{self.unit} differ (rule of three, 95%)")
        if not self.has_interval:
            if self.failed:
                return f"one value ({self._count()}): no interval"
            if self.unit != "repeats" and 1 < self.samples < MIN_BOOTSTRAP_SAMPLES:
                return f"no interval: {self.samples} {self.unit} are too few for a bootstrap"
            return "one run: no interval"
        if self.same_in_all_repeats:
            return f"{_g(self.low)} to {_g(self.high)}: the same in all {self._count()}"
        method = self.method or (
            "order statistics" if self.unit == "repeats" else "BCa bootstrap")
        return (f"{_g(self.low)} to {_g(self.high)} at {self.confidence:.1%} ({self.statistic} of "
                f"{self._count()}, {method})")


def _scipy_stats():
    """scipy.stats, imported where an interval or a test needs it, not by each module that imports this."""
    from scipy import stats  # noqa: PLC0415  scipy.stats: the slowest import costlab has; only its users pay

    return stats


def _g(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:,.0f}" if abs(value) >= 1e4 else f"{value:.4g}"


def risk_text(risk: float | None) -> str:
    """A decided verdict's risk in words: '3.1%' (the chance it is wrong at the band's edge)."""
    return ONE_RUN_RISK if risk is None else f"{risk:.1%}"


def _finite(values: Sequence[float], what: str) -> np.ndarray:
    data = np.asarray(values, dtype=float)
    if data.ndim != 1 or data.size == 0:
        raise ValueError(f"{what}: need at least one value, got {list(values)!r}")
    if not np.all(np.isfinite(data)):
        raise ValueError(f"{what}: values must be finite, got {list(values)!r}")
    return data


def _split_finite(values: Sequence[float | None], what: str) -> tuple[np.ndarray, int]:
    """The finite values (NaN, inf and None left out) and how many were left out."""
    data = np.array([math.nan if v is None else v for v in values], dtype=float)
    if data.ndim != 1 or data.size == 0:
        raise ValueError(f"{what}: need at least one value, got {list(values)!r}")
    finite = data[np.isfinite(data)]
    return finite, int(data.size - finite.size)


def min_max_coverage(n: int) -> float:
    """P(min <= median <= max) for n draws of any continuous distribution: 1 - 2 * 0.5**n."""
    # the median lies outside [min, max] only when all n draws fall on one side of it
    return 1.0 - 2.0 * 0.5 ** n if n >= 1 else 0.0


@lru_cache(maxsize=512)
def median_rank(n: int, confidence: float = DEFAULT_CONFIDENCE) -> int:
    """The 1-based rank r of the median's distribution-free interval (x(r), x(n+1-r)) over n repeats at
    `confidence`: the ranks scipy.stats.quantile_test's interval takes (on 0..n-1 its ends are ranks); 1
    ([min, max]) where so few repeats cannot reach the confidence."""
    stats = _scipy_stats()

    if n < 2:
        return 1
    ci = stats.quantile_test(np.arange(n, dtype=float), q=0.0, p=0.5).confidence_interval(
        confidence_level=confidence)
    return int(ci.low) + 1 if math.isfinite(ci.low) and math.isfinite(ci.high) else 1


def rank_coverage(n: int, r: int) -> float:
    """P(x(r) <= median <= x(n+1-r)) for n draws of any continuous distribution:
    1 - 2 P(Binomial(n, 1/2) <= r - 1)."""
    stats = _scipy_stats()

    return float(1.0 - 2.0 * stats.binom.cdf(r - 1, n, 0.5))


def over_repeats(values: Sequence[float | None], confidence: float = DEFAULT_CONFIDENCE,
                 unit: str = "repeats") -> Interval:
    """The median of the repeats with its distribution-free interval at the coverage it has (no interval for
    one value). A failed repeat (None, NaN, inf) is left out and counted, never replaced; none left: no
    value (estimate NaN, samples 0)."""
    data, failed = _split_finite(values, "over_repeats")
    n = data.size
    if n == 0:
        return Interval(math.nan, None, None, None, 0, unit, "median", failed=failed)
    estimate = float(np.median(data))
    kept = tuple(float(v) for v in data)
    if n == 1:
        return Interval(estimate, None, None, None, 1, unit, "median", values=kept, failed=failed)
    r = median_rank(n, confidence)
    ordered = np.sort(data)
    return Interval(estimate, float(ordered[r - 1]), float(ordered[n - r]), rank_coverage(n, r), n, unit,
                    "median", "order statistics", kept, failed)


def over_repeats_many(values: np.ndarray, confidence: float = DEFAULT_CONFIDENCE
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """over_repeats for many runs at once (rows of `values`, finite; the simulations' trials): each row's
    median, interval low and high, and the risk they share ((1 - coverage) / 2; 0.5 for one repeat, which
    has no interval: its low and high are its value, the point verdict)."""
    data = np.sort(np.asarray(values, dtype=float), axis=-1)
    n = data.shape[-1]
    r = median_rank(n, confidence)
    risk = 0.5 if n == 1 else (1.0 - rank_coverage(n, r)) / 2.0
    return np.median(data, axis=-1), data[..., r - 1], data[..., n - r], risk


STATISTICS = {"mean": np.mean, "median": np.median}


def _bootstrap(samples: tuple[np.ndarray, ...], statistic, confidence: float,
               seed: int) -> tuple[float, float, str]:
    """A seeded BCa bootstrap interval of `statistic(*samples, axis=)` (each sample resampled on its own);
    the percentile interval where BCa fails (very skewed data); (nan, nan) where both fail; and the method."""

    stats = _scipy_stats()

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


def rule_of_three(n: int, confidence: float = DEFAULT_CONFIDENCE) -> float:
    """n samples that were all equal: the largest share of such samples that may differ at `confidence`
    (the share p with (1 - p)**n = 1 - confidence: 1 - 0.05**(1/n), about 3 / n)."""
    return 1.0 - (1.0 - confidence) ** (1.0 / n)


def over_samples(values: Sequence[float], confidence: float = DEFAULT_CONFIDENCE, seed: int = 0,
                 unit: str = "queries", statistic: Literal["mean", "median"] = "mean") -> Interval:
    """The mean (or median) of one run's samples (e.g. its queries) with a seeded BCa bootstrap interval.
    Samples that are all equal have none: they carry the rule of three's bound (`differ_at_most`)."""
    data, failed = _split_finite(values, "over_samples")
    n = data.size
    if n == 0:
        return Interval(math.nan, None, None, None, 0, unit, statistic, failed=failed)
    estimate = float(STATISTICS[statistic](data))
    kept = tuple(float(v) for v in data)
    if n > 1 and np.ptp(data) == 0:   # every sample equal: no bootstrap, an honest bound on the others
        return Interval(estimate, None, None, None, n, unit, statistic, "all equal", kept, failed,
                        rule_of_three(n, confidence))
    if n < MIN_BOOTSTRAP_SAMPLES:   # a bootstrap of so few under-covers: no interval rather than a wrong one
        return Interval(estimate, None, None, None, n, unit, statistic, values=kept, failed=failed)
    low, high, method = _bootstrap((data,), STATISTICS[statistic], confidence, seed)
    if not (math.isfinite(low) and math.isfinite(high)):
        return Interval(estimate, None, None, None, n, unit, statistic, values=kept, failed=failed)
    return Interval(estimate, min(low, estimate), max(high, estimate), confidence, n, unit, statistic, method,
                    kept, failed)


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
    if np.ptp(num) == 0 and np.ptp(den) == 0:   # no bootstrap: the rule of three's bound on the others
        return Interval(estimate, None, None, None, n, unit, name, "all equal",
                        differ_at_most=rule_of_three(n, confidence))

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
    # for "straddles": the repeats (or samples) that decide it with an 80 % chance (None: not known: the
    # value sits on the edge, or no values were kept to measure a spread); above the cap: `capped`
    repeats_to_decide: int | None = None
    capped: bool = False    # more than the cap (MAX_SUGGESTED) would be needed
    on_edge: bool = False   # the estimate sits on the band's edge: no count of repeats decides it

    @property
    def holds(self) -> bool | None:
        """True: reproduced; False: not reproduced; None: inconclusive."""
        return {"inside": True, "outside": False}.get(self.outcome)

    def suggestion(self, unit: str) -> str:
        """What would decide a straddle, in words."""
        if self.on_edge:
            return "the value sits on the band's edge: more samples cannot decide it"
        if self.repeats_to_decide is None:
            return f"its {unit}' values were not kept: no count that would decide it can be suggested"
        if self.capped:
            return (f"more than {self.repeats_to_decide:,} {unit} would be needed to decide it: the value "
                    f"sits close to the band's edge")
        return f"{self.repeats_to_decide:,} {unit} would decide it with an {POWER:.0%} chance"


def judge(interval: Interval, band_low: float, band_high: float) -> Judgement:
    """The interval against the band [band_low, band_high] (either may be ±inf for a one-sided rule).

    With no interval (one run, samples all equal), outcome "point": the caller keeps its point verdict.
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
    if interval.estimate in (band_low, band_high):
        return Judgement("straddles", on_edge=True)
    needed = repeats_to_decide(interval, band_low, band_high)
    cap = MAX_SUGGESTED.get(interval.unit, MAX_SUGGESTED_OTHER)
    if needed is not None and needed > cap:
        return Judgement("straddles", cap, capped=True)
    return Judgement("straddles", needed)


def robust_spread(values: Sequence[float]) -> float:
    """The values' spread, robust to an outlier: the median absolute deviation scaled to a normal's standard
    deviation (scipy.stats.median_abs_deviation); where more than half are equal (MAD 0), the interquartile
    range scaled likewise; 0 where that is 0 too."""
    stats = _scipy_stats()

    data = np.asarray(values, dtype=float)
    mad = float(stats.median_abs_deviation(data, scale="normal"))
    if mad > 0:
        return mad
    return float(stats.iqr(data, scale="normal"))


def _decide_chance_repeats(k: int, p: float, confidence: float) -> float:
    """The chance that k repeats' median interval lies wholly on one side of an edge when each repeat lands
    on that side with probability p: at least k + 1 - r of them do (r = median_rank(k))."""
    stats = _scipy_stats()

    r = median_rank(k, confidence)
    return float(stats.binom.sf(k - r, k, p))


def repeats_to_decide(interval: Interval, band_low: float, band_high: float,
                      confidence: float = DEFAULT_CONFIDENCE, power: float = POWER) -> int | None:
    """The repeats (or samples) that would decide a straddling interval with a `power` chance, from a robust
    spread of the values and the distance from the estimate to the edge it crosses, less one standard
    error of the estimate (the margin: the truth may sit nearer the edge than the estimate). At least n + 1
    (repeats: at least 5, samples: MIN_BOOTSTRAP_SAMPLES); the caller caps it (MAX_SUGGESTED). None where the
    estimate sits on the edge (nothing decides that) or no values were kept to measure a spread.

    Repeats (median, order statistics): the smallest k whose interval lies beyond the edge with chance
    `power`, each repeat landing on the estimate's side with p = Phi(distance / spread). Samples (a mean):
    k = ((z(1 - (1 - c) / 2) + z(power)) * sd / distance)**2.
    """
    stats = _scipy_stats()

    est, n = interval.estimate, interval.samples
    values = np.asarray(interval.values, dtype=float)
    if values.size < 2:
        return None
    repeats = interval.unit == "repeats"
    spread = robust_spread(values) if repeats else float(np.std(values, ddof=1))
    # a spread measured on few values is often too small: its upper 80 % bound (chi-square, n - 1 degrees)
    spread *= math.sqrt((n - 1) / stats.chi2.ppf(1 - POWER, n - 1))
    cap = MAX_SUGGESTED.get(interval.unit, MAX_SUGGESTED_OTHER)
    needed = max(n + 1, 5 if repeats else MIN_BOOTSTRAP_SAMPLES)
    for edge in (band_low, band_high):
        if not (math.isfinite(edge) and interval.low <= edge <= interval.high):
            continue
        distance = abs(edge - est)
        if distance == 0:
            return None
        if spread == 0:   # more than half the values equal (an outlier made the straddle): the floor
            continue
        standard_error = (1.2533 if repeats else 1.0) * spread / math.sqrt(n)   # the median's: sqrt(pi / 2) x
        margin = distance - MARGIN_ERRORS * standard_error
        if margin <= 0:
            return cap + 1   # the truth may sit on the edge: beyond any count worth suggesting
        if repeats:
            p = float(stats.norm.cdf(margin / spread))
            k = needed
            while k <= cap and _decide_chance_repeats(k, p, confidence) < power:
                k += 1
        else:
            z = stats.norm.ppf(1 - (1 - confidence) / 2) + stats.norm.ppf(power)
            k = math.ceil((z * spread / margin) ** 2)
        needed = max(needed, k)
    return needed


@dataclass(frozen=True)
class Comparison:
    """Two runs' values of one finding: the ratio of the other run to this one with its interval, judged
    against the finding's tolerance as a band of ratios (compare.with)."""

    outcome: Literal["same", "changed", "cannot tell", "not tested"]
    ratio: float | None
    low: float | None
    high: float | None
    coverage: float | None
    sizes: tuple[int, int]
    unit: str = "repeats"
    pvalue: float | None = None     # an exact (permutation) p-value of any difference, where tested
    band: tuple[float, float] | None = None
    scale: Literal["ratio", "difference"] = "ratio"

    def describe(self, adjusted: float | None = None, rows: int = 1) -> str:
        """'same within tolerance: ratio 1.03 (1.02 to 1.04 at 95.0%; tolerance 0.8 to 1.2), 1,000 vs 1,000
        queries of one run each'; `adjusted`: the p-value adjusted over `rows` rows (Benjamini-Hochberg)."""
        sizes = f"{self.sizes[0]:,} vs {self.sizes[1]:,} {self.unit}"
        if self.unit != "repeats":
            sizes += " of one run each (the run-to-run spread is not in it)"
        if self.outcome == "not tested":
            return "one run each: not tested" if max(self.sizes) <= 1 else f"not tested: {sizes}"
        words = {"same": "same within tolerance", "changed": "changed", "cannot tell": "cannot tell"}
        ratio = f"ratio {_g(self.ratio)}"
        if self.low is not None:
            ratio += f" ({_g(self.low)} to {_g(self.high)} at {self.coverage:.1%}"
            ratio += (f"; tolerance {_g(self.band[0])} to {_g(self.band[1])})" if self.band
                      else "; no tolerance band to hold it to)")
        text = f"{words[self.outcome]}: {ratio}, {sizes}"
        p = adjusted if adjusted is not None else self.pvalue
        if p is not None:
            text += f"; any difference p = {p:.2g}" + (f" (adjusted over {rows} rows)" if rows > 1 else "")
        return text


@lru_cache(maxsize=256)
def _mann_whitney_cdf(m: int, n: int) -> np.ndarray:
    """P(U <= u) for u = 0..m*n of the Mann-Whitney U of m against n values with no ties, from
    scipy.stats.mannwhitneyu's exact distribution (one row of m values per u, built to give that U)."""
    stats = _scipy_stats()

    y = np.arange(n, dtype=float)
    rows = []
    for u in range(m * n + 1):
        below = np.minimum(n, np.maximum(0, u - n * np.arange(m)))   # y values below each x: sum = u
        rows.append(below - 0.5)
    x = np.array(rows)
    return stats.mannwhitneyu(x, np.broadcast_to(y, (x.shape[0], n)), alternative="less", method="exact",
                              axis=-1).pvalue


def _moses_rank(m: int, n: int, confidence: float) -> tuple[int, float]:
    """The 1-based rank k of the Moses interval [D(k), D(mn+1-k)] of the m*n pairwise differences (or
    ratios) at `confidence`, and the coverage it has: 1 - 2 P(U <= k - 1); k = 1 with its coverage where so
    few values cannot reach the confidence. Exact up to EXACT_UP_TO values a run, else the normal one."""
    stats = _scipy_stats()

    alpha = (1 - confidence) / 2
    if max(m, n) <= EXACT_UP_TO:
        cdf = _mann_whitney_cdf(m, n)
        k = int(np.searchsorted(cdf, alpha, side="right"))   # P(U <= k - 1) <= alpha
        k = max(k, 1)
        return k, float(1 - 2 * cdf[k - 1])
    z = stats.norm.ppf(1 - alpha)
    k = max(1, int(math.floor(m * n / 2 - z * math.sqrt(m * n * (m + n + 1) / 12))))
    return k, confidence


def tie_exact_pvalue(a: np.ndarray, b: np.ndarray, seed: int = 0) -> float:
    """The two-sided p-value of any difference between two runs' values: a permutation test of their mean
    midranks (scipy.stats.permutation_test; every split enumerated up to PERMUTATIONS_EXACT_UP_TO, ties
    handled exactly), or the tie-corrected normal Mann-Whitney test beyond EXACT_UP_TO values a run."""
    stats = _scipy_stats()

    if max(a.size, b.size) > EXACT_UP_TO:
        return float(stats.mannwhitneyu(a, b, alternative="two-sided", method="asymptotic").pvalue)
    ranks = stats.rankdata(np.concatenate([a, b]))

    def mean_rank_difference(x, y, axis=-1):
        return np.mean(x, axis=axis) - np.mean(y, axis=axis)

    splits = math.comb(a.size + b.size, a.size)
    result = stats.permutation_test(
        (ranks[:a.size], ranks[a.size:]), mean_rank_difference, permutation_type="independent",
        n_resamples=math.inf if splits <= PERMUTATIONS_EXACT_UP_TO else PERMUTATION_RESAMPLES,
        vectorized=True, rng=np.random.default_rng(seed))
    return float(min(1.0, result.pvalue))


def compare_runs(this: Sequence[float], other: Sequence[float], band: tuple[float, float] | None,
                 unit: str = "repeats", reference: float | None = None,
                 confidence: float = DEFAULT_CONFIDENCE) -> Comparison:
    """Two runs' values of one finding (each repeat's, or each query's): the ratio other / this as the
    Hodges-Lehmann estimate (the median of the pairwise ratios) with its Moses interval at the coverage it
    has, judged against `band` (the finding's tolerance as ratios: its band over its published value):
    inside "same", wholly outside "changed", else "cannot tell" (no band: "cannot tell"). Values not all
    above 0: the pairwise differences, as a ratio to `reference` (this run's value). One value in either
    run: not tested. NaN/inf values are left out."""
    a, _ = _split_finite(this, "compare_runs this")
    b, _ = _split_finite(other, "compare_runs other")
    sizes = (int(a.size), int(b.size))
    if a.size < 2 or b.size < 2:
        return Comparison("not tested", None, None, None, None, sizes, unit, band=band)
    if np.all(a > 0) and np.all(b > 0):
        pairs, scale = (b[None, :] / a[:, None]).ravel(), "ratio"
        to_ratio = float
    else:
        ref = float(np.median(a)) if reference is None else float(reference)
        if ref == 0:
            return Comparison("cannot tell", None, None, None, None, sizes, unit,
                              tie_exact_pvalue(a, b), band, "difference")
        pairs, scale = (b[None, :] - a[:, None]).ravel(), "difference"

        def to_ratio(d: float) -> float:
            return 1.0 + float(d) / abs(ref)
    pairs = np.sort(pairs)
    k, coverage = _moses_rank(a.size, b.size, confidence)
    estimate = to_ratio(np.median(pairs))
    low, high = to_ratio(pairs[k - 1]), to_ratio(pairs[pairs.size - k])
    pvalue = None if np.ptp(np.concatenate([a, b])) == 0 else tie_exact_pvalue(a, b)
    if band is None:
        outcome = "cannot tell"
    elif band[0] <= low and high <= band[1]:
        outcome = "same"
    elif high < band[0] or low > band[1]:
        outcome = "changed"
    else:
        outcome = "cannot tell"
    return Comparison(outcome, estimate, low, high, coverage, sizes, unit, pvalue, band, scale)


def adjusted_pvalues(pvalues: Sequence[float | None]) -> list[float | None]:
    """Benjamini-Hochberg adjusted p-values (scipy.stats.false_discovery_control) of the rows that have one,
    together; None stays None."""
    stats = _scipy_stats()

    present = [i for i, p in enumerate(pvalues) if p is not None]
    out: list[float | None] = [None] * len(pvalues)
    if present:
        adjusted = stats.false_discovery_control([pvalues[i] for i in present], method="bh")
        for i, q in zip(present, np.atleast_1d(adjusted)):
            out[i] = float(q)
    return out


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
    stats = _scipy_stats()

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
    stats = _scipy_stats()

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
