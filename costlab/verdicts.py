"""How a verdict's wording is counted (standard library only: the console summary reads it too).

Studies write verdicts as sentences ("reproduced", "not reproduced", "not comparable at this scale
(...)", "not comparable (stand-in)", "not run: no MongoDB server"); the report and the summary count
them by what they say about the finding.
"""
from __future__ import annotations

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
    the verdict (results/findings.csv, the report)."""

    def __init__(self, test, text: str) -> None:
        self.test, self.text = test, text

    def __call__(self, value: float) -> bool:
        return bool(self.test(value))

    def __str__(self) -> str:
        return self.text


def _g(value: float) -> str:
    return f"{value:g}"


def between(low: float, high: float, what: str = "value") -> Rule:
    return Rule(lambda v: low <= v <= high, f"{what} in [{_g(low)}, {_g(high)}]")


def at_least(low: float, what: str = "value") -> Rule:
    return Rule(lambda v: v >= low, f"{what} ≥ {_g(low)}")


def at_most(high: float, what: str = "value") -> Rule:
    return Rule(lambda v: v <= high, f"{what} ≤ {_g(high)}")


def above(low: float, what: str = "value") -> Rule:
    return Rule(lambda v: v > low, f"{what} > {_g(low)}")


def below(high: float, what: str = "value") -> Rule:
    return Rule(lambda v: v < high, f"{what} < {_g(high)}")


def relative_within(published: float | None, fraction: float) -> Rule:
    """|this run / published - 1| <= fraction (a published 0 holds only an exact 0)."""
    def test(v: float) -> bool:
        if published is None:
            return False
        return v == published if published == 0 else abs(v / published - 1) <= fraction
    return Rule(test, f"within ±{_g(fraction * 100)} % of published")


def absolute_within(published: float | None, distance: float, unit: str = "") -> Rule:
    """|this run - published| <= distance (for values near 0, where a ratio says nothing)."""
    return Rule(lambda v: published is not None and abs(v - published) <= distance,
                f"|this run - published| ≤ {_g(distance)}{' ' + unit if unit else ''}")


def ratio_within(published: float | None, low: float, high: float) -> Rule:
    """this run / published in [low, high] (an absolute count)."""
    return Rule(lambda v: published not in (None, 0) and low <= v / published <= high,
                f"this run / published in [{_g(low)}, {_g(high)}]")


def tolerance_text(rule) -> str | None:
    """The rule's own words, or None for a bare function (which cannot say what it tests)."""
    return str(rule) if isinstance(rule, Rule) else None
