"""How a verdict's wording is counted (standard library only: the console summary reads it too).

Studies write verdicts as sentences ("reproduced", "not reproduced", "not comparable at this scale
(...)", "not comparable (stand-in)", "not run: no MongoDB server"); the report and the summary count
them by what they say about the finding.
"""
from __future__ import annotations

import math

VERDICT_CLASSES = ("reproduced", "not reproduced", "not comparable", "not run", "other")


def verdict_class(verdict: str | None) -> str:
    """reproduced | not reproduced | not comparable | not run | other, from a verdict's wording."""
    text = (verdict or "").strip().lower()
    if text.startswith(("not run", "not in this run", "not measured")):
        return "not run"
    if text.startswith("not comparable") or "stand-in" in text:
        return "not comparable"
    if text.startswith("not "):
        return "not reproduced"
    if text.startswith("reproduced"):
        return "reproduced"
    return "other"


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
