"""What a verdict is, and the tolerance rules that decide it (standard library only: the console summary
reads it too).

Every verdict row (a study's published_vs_*.csv, results/findings.csv) holds one `Verdict` member in its
`verdict` column and, beside it, the `reason` in words ("stand-in", "at this scale: ..."); the row's `kind`
says whether it judges a published finding or one of costlab's own variants. The report, the summary and
compare count members, never wording. The row type itself is costlab.finding.Finding.

Adding a verdict (#36's `inconclusive`) is one member here plus the rule that gives it; the counting, the
page's chips and findings.csv follow the enum's order.
"""
from __future__ import annotations

import math
from enum import StrEnum


class Verdict(StrEnum):
    """What a row says about its published finding."""
    REPRODUCED = "reproduced"              # measured, and the finding's rule holds
    NOT_REPRODUCED = "not reproduced"  # measured, and the rule does not hold
    INCONCLUSIVE = "inconclusive"  # measured: its interval straddles the rule's band (docs/uncertainty.md)
    NOT_COMPARABLE = (
        "not comparable"  # measured, but on something the finding is not about (the reason says what)
    )
    NOT_RUN = "not run"                    # no value: the part did not run, or this run did not measure it


class Kind(StrEnum):
    """What a row judges: a published finding is counted; costlab's variants beyond the article and a
    user's variants are shown apart and never counted among the published findings."""
    PUBLISHED = "published"
    COSTLAB_VARIANT = "costlab variant"
    USER_VARIANT = "user variant"


VERDICT_CLASSES = tuple(v.value for v in Verdict)   # counting order (the page's chips, the summary)
OTHER = (
    "other"  # a cell holding no member: an edited table's "edited after the run", an older costlab's wording
)
COUNTED_KINDS = (Kind.PUBLISHED.value,)

# The one rule for a missing value: no reproduced value is "not run" (nothing measured it), never
# "not reproduced" (which would count an absent measurement as evidence against the article) nor
# "not comparable" (which is for a value measured on something the finding is not about).
NOT_MEASURED = "not measured in this run"


def verdict_class(verdict: str | None) -> str:
    """The Verdict member's value a verdict cell holds, or OTHER (read, never inferred from wording)."""
    text = (verdict.value if isinstance(verdict, Verdict) else verdict or "").strip()
    return text if text in VERDICT_CLASSES else OTHER


def counted(kind: str | None) -> bool:
    """Whether a row of this kind is counted among the published findings (a missing kind: published)."""
    return (kind or Kind.PUBLISHED.value) in COUNTED_KINDS


def is_missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def judge(reproduced, rule) -> tuple[Verdict, str | None]:
    """(verdict, reason) of a value under its rule; a missing value is NOT_RUN (NOT_MEASURED)."""
    if is_missing(reproduced):
        return Verdict.NOT_RUN, NOT_MEASURED
    return (Verdict.REPRODUCED if rule(reproduced) else Verdict.NOT_REPRODUCED), None


def verdict_text(verdict: str | None, reason: str | None = None) -> str:
    """The words a reader sees: 'not comparable (stand-in)', 'reproduced'."""
    text = str(verdict or "no verdict")
    return f"{text} ({reason})" if reason else text


class Rule:
    """A verdict's test on the reproduced value that also says itself: str(rule) is the tolerance shown beside
    the verdict (results/findings.csv, the report).

    `band` is the same test as the closed interval of values that pass, [low, high] (±inf for a one-sided
    rule), so an interval around the value can be judged against it (costlab.intervals.judge); None
    where no band exists (a ratio to a published 0 or a missing published value).
    """

    def __init__(self, test, text: str, band: tuple[float, float] | None = None) -> None:
        self.test, self.text, self.band = test, text, band

    def __call__(self, value: float) -> bool:
        return bool(self.test(value))

    def __str__(self) -> str:
        return self.text


def _g(value: float) -> str:
    return f"{value:g}"


def between(low: float, high: float, what: str = "value") -> Rule:
    return Rule(lambda v: low <= v <= high, f"{what} in [{_g(low)}, {_g(high)}]", (low, high))


def at_least(low: float, what: str = "value") -> Rule:
    return Rule(lambda v: v >= low, f"{what} ≥ {_g(low)}", (low, math.inf))


def at_most(high: float, what: str = "value") -> Rule:
    return Rule(lambda v: v <= high, f"{what} ≤ {_g(high)}", (-math.inf, high))


def above(low: float, what: str = "value") -> Rule:
    # a strict bound's band is the next float up: an interval reaching exactly `low` does not pass
    return Rule(lambda v: v > low, f"{what} > {_g(low)}", (math.nextafter(low, math.inf), math.inf))


def below(high: float, what: str = "value") -> Rule:
    return Rule(lambda v: v < high, f"{what} < {_g(high)}", (-math.inf, math.nextafter(high, -math.inf)))


def relative_within(published: float | None, fraction: float) -> Rule:
    """|this run / published - 1| <= fraction (a published 0 holds only an exact 0)."""
    def test(v: float) -> bool:
        if published is None:
            return False
        return v == published if published == 0 else abs(v / published - 1) <= fraction
    band = (
        None
        if published is None
        else (
            (0.0, 0.0)
            if published == 0
            else tuple(sorted((published * (1 - fraction), published * (1 + fraction))))
        )
    )
    return Rule(test, f"within ±{_g(fraction * 100)} % of published", band)


def absolute_within(published: float | None, distance: float, unit: str = "") -> Rule:
    """|this run - published| <= distance (for values near 0, where a ratio says nothing)."""
    return Rule(lambda v: published is not None and abs(v - published) <= distance,
                f"|this run - published| ≤ {_g(distance)}{' ' + unit if unit else ''}",
                None if published is None else (published - distance, published + distance))


def ratio_within(published: float | None, low: float, high: float) -> Rule:
    """this run / published in [low, high] (an absolute count)."""
    band = None if published in (None, 0) else tuple(sorted((published * low, published * high)))
    return Rule(lambda v: published not in (None, 0) and low <= v / published <= high,
                f"this run / published in [{_g(low)}, {_g(high)}]", band)


def tolerance_text(rule) -> str | None:
    """The rule's own words, or None for a bare function (which cannot say what it tests)."""
    return str(rule) if isinstance(rule, Rule) else None
