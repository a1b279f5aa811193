"""Your schema: the absolute costs of the user's own variants, each beside what it is compared to.

A study that takes variants of the user's (appversions.variants, docsize.documents, arraygrowth.elements)
declares `Study.your_schema`: a function of its results folder and the run's config that gives a
`YourSchema` (None: the config declares none) — rows of absolute costs, each with its `compare_to`'s value,
the ratio and the ratio's interval in words — and one figure's points drawing the user's variants beside
the published ones. The report opens with them, right after "What ran" (costlab.report.views).

Shared (no study imported here); standard library only at import.
"""
from __future__ import annotations

import importlib
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from costlab.intervals import MIN_BOOTSTRAP_SAMPLES, over_repeats, ratio_over_samples

EXACT = "exact: counted, no sampling"
ONE_RUN = "one run: no interval"


@dataclass(frozen=True)
class CostRow:
    """One absolute cost of a variant beside the same cost of its compare_to."""
    variant: str
    compare_to: str
    measure: str             # "storage per event"
    evidence: str            # "engine lab", "model", "mongod 6.0.5", ...
    unit: str                # "B/event", "B/year", "documents/event", "B/query"
    value: float | None
    compared: float | None
    interval: str            # the ratio's interval in words, or why there is none
    value_interval: str | None = None   # the variant's own value's interval, where it has one

    @property
    def ratio(self) -> float | None:
        if self.value is None or not self.compared or math.isnan(self.value) or math.isnan(self.compared):
            return None
        return self.value / self.compared


@dataclass(frozen=True)
class Point:
    series: str              # a published version / workload / the orders, or one of the user's
    x: float | str
    y: float
    yours: bool
    facet: str | None = None


@dataclass(frozen=True)
class SchemaFigure:
    title: str
    subtitle: str
    x_title: str
    y_title: str
    x_type: str              # Q | O
    points: tuple[Point, ...]
    facet_title: str | None = None
    scales: tuple[str, str] = ("linear", "linear")   # costlab.report.compare.SCALES


@dataclass(frozen=True)
class YourSchema:
    study: str
    scale: str               # one line: what was measured at what scale
    rows: tuple[CostRow, ...]
    figure: SchemaFigure | None = None
    notes: tuple[str, ...] = field(default=())


def interval_text(interval) -> str:
    """A costlab.intervals.Interval in a few words for a table cell: '0.9 to 1.1 (75%, 3 repeats)', or why
    it has none (its own words)."""
    if not interval.has_interval or interval.same_in_all_repeats:
        return interval.describe()
    return (f"{interval.low:.3g} to {interval.high:.3g} ({interval.confidence:.1%}, "
            f"{interval.samples} {interval.unit})")


def ratio_over_repeats(mine: Sequence[float], theirs: Sequence[float], what: str = "repeats") -> str:
    """The interval of variant / compared over paired repeats (the same events seed in repeat r of both),
    in words; one repeat has none."""

    if len(mine) <= 1 and len(theirs) <= 1:
        return ONE_RUN
    if len(mine) != len(theirs) or not all(theirs):
        return f"no interval: {len(mine)} against {len(theirs)} {what}"
    return interval_text(over_repeats([a / b for a, b in zip(mine, theirs)]))


def ratio_over_queries(mine: Sequence[float], theirs: Sequence[float]) -> str:
    """The interval of mean(mine) / mean(theirs) over two runs' queries (a seeded BCa bootstrap resampling
    each on its own: costlab.intervals.ratio_over_samples), in words."""

    if not mine or not theirs:
        return "no per-query values kept: no interval"
    try:
        interval = ratio_over_samples(mine, theirs, statistic="mean")
    except ValueError as err:
        return str(err)
    if not interval.has_interval and interval.method is None and interval.samples >= MIN_BOOTSTRAP_SAMPLES:
        return "no interval: resampled, the compared queries read 0 B"   # costlab.intervals' case
    return interval_text(interval)


def bytes_text(value: float | None) -> str:
    """1,234 B; 12.3 kB; 4.56 MB; 7.89 GB; 1.23 TB (SI units, as storage is sold)."""
    if value is None or value != value:
        return "—"
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(value) >= size:
            return f"{value / size:.3g} {unit}"
    return f"{value:,.0f} B" if abs(value) >= 100 else f"{value:.3g} B"


def load(spec: str) -> Callable[[Path, dict], YourSchema | None]:
    """A study's `your_schema` ("module:function", Study.your_schema) as the function it names."""

    module, _, name = spec.partition(":")
    return getattr(importlib.import_module(module), name)
