"""One verdict row: the `Finding` type, its column schema, and the one way to make a verdict table of them.

Every study's verdict tables (tables/published_vs_reproduced.csv, engine/published_vs_engine.csv,
model/published_vs_model.csv) are `verdict_table(findings)` or, for a table built with polars
expressions, `conform_table(frame)`; both give COLUMNS in that order and refuse a `verdict` that is not
a costlab.verdicts.Verdict member or a `kind` that is not a Kind member. costlab.report.findings reads
these tables into results/findings.csv (docs/report.md says its columns).
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

import polars as pl

from costlab.intervals import ONE_RUN_RISK, Interval, risk_text
from costlab.intervals import judge as judge_band
from costlab.verdicts import NOT_MEASURED, Kind, Verdict, is_missing, judge, tolerance_text, verdict_text

COLUMNS = ["finding", "metric", "unit", "published", "reproduced", "interval", "risk", "ratio", "tolerance",
           "verdict", "reason", "kind", "server_kind", "note", "samples", "band_low", "band_high"]
SCHEMA = {c: pl.Utf8 for c in COLUMNS} | {
    "published": pl.Float64,
    "reproduced": pl.Float64,
    "ratio": pl.Float64,
    "band_low": pl.Float64,
    "band_high": pl.Float64,
}
NO_BAND_RISK = "not known: a point rule, no band"   # a value with an interval judged by a rule with no band
# the verdicts a risk belongs to: decided ones
DECIDED = (Verdict.REPRODUCED, Verdict.NOT_REPRODUCED)
# the reason of every NOT_COMPARABLE row measured on the stand-in (its numbers are not MongoDB's)
STAND_IN = "stand-in"
AT_THIS_SCALE = (
    "at this scale"  # a reason's start: the published figure belongs to another scale than this run's
)
NOT_JUDGED = "none: not judged (see the verdict)"   # the tolerance of a published number no rule judges
# the reason of every measured row of a user's variant (Kind.USER_VARIANT): nothing published to judge it by
USER_VARIANT_REASON = "your variant: no published number to judge it by"


@dataclass(frozen=True)
class Finding:
    """A published finding (or one of costlab's variants) judged on one kind of evidence."""
    finding: str
    metric: str | None
    unit: str | None
    published: float | None
    reproduced: float | None
    verdict: Verdict
    reason: str | None = None
    tolerance: str | None = None
    server_kind: str | None = None
    note: str | None = None
    kind: Kind = Kind.PUBLISHED
    # the value's interval in words ("a to b at 95.0% (mean of 30 queries, BCa bootstrap)"), "one run: no
    # interval", or None where the row's value is not a measurement (costlab.intervals, docs/uncertainty.md)
    interval: str | None = None
    # the values the interval came from, SAMPLES_SEPARATOR-separated (each repeat's, or each query's), where
    # kept: compare.with tests two runs' by costlab.intervals.difference; None for one value or none kept
    samples: str | None = None
    # a decided verdict's risk: the chance it is wrong when the truth sits on the band's edge ("3.1%", from
    # the interval's coverage), or ONE_RUN_RISK; None for a verdict not decided or a value not measured
    risk: str | None = None
    # the rule that judged the value (`judged` sets it; never written): the same row measured again, e.g. in
    # another repeat, is judged by it again (costlab.repeats.over_repeat_findings)
    rule: Callable[[float], bool] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        try:
            object.__setattr__(self, "verdict", Verdict(self.verdict))
        except ValueError:
            raise ValueError(f"finding {self.finding!r}: verdict {self.verdict!r} is not one of "
                             f"{', '.join(v.value for v in Verdict)}") from None
        try:
            object.__setattr__(self, "kind", Kind(self.kind))
        except ValueError:
            raise ValueError(f"finding {self.finding!r}: kind {self.kind!r} is not one of "
                             f"{', '.join(k.value for k in Kind)}") from None

    @property
    def ratio(self) -> float | None:
        if is_missing(self.reproduced) or self.published in (None, 0):
            return None
        return self.reproduced / self.published

    @property
    def text(self) -> str:
        """The verdict in words: 'not comparable (stand-in)'."""
        return verdict_text(self.verdict, self.reason)

    def but(self, verdict: Verdict, reason: str | None = None) -> Finding:
        """The same row with another verdict (stand-in, scale, a substituted compressor) and its reason."""
        return dataclasses.replace(self, verdict=verdict, reason=reason)

    def with_(self, **changes) -> Finding:
        return dataclasses.replace(self, **changes)

    def row(self) -> dict:
        return {
            "finding": self.finding,
            "metric": self.metric,
            "unit": self.unit,
            "published": self.published,
            "reproduced": self.reproduced,
            "interval": self.interval,
            # a decided verdict's only (a row made not comparable after its interval judged it has none); a
            # measured value judged with no interval: one run, its risk not known
            "risk": None if self.verdict not in DECIDED else self.risk if self.risk is not None
            else ONE_RUN_RISK if self.interval is not None else None,
            "ratio": self.ratio,
            "tolerance": self.tolerance,
            "verdict": self.verdict.value,
            "reason": self.reason,
            "kind": self.kind.value,
            "server_kind": self.server_kind,
            "note": self.note,
            "samples": self.samples,
            # the band of values the rule passes (compare.with holds a change between runs to it)
            "band_low": _band(self.rule, 0),
            "band_high": _band(self.rule, 1),
        }


def _band(rule: Callable[[float], bool] | None, side: int) -> float | None:
    band = getattr(rule, "band", None)
    if band is None or band[side] is None or not math.isfinite(band[side]):
        return None
    return float(band[side])


def judged(
    finding: str,
    metric: str | None,
    unit: str | None,
    published: float | None,
    reproduced: float | None,
    rule: Callable[[float], bool],
    *,
    server_kind: str | None,
    tolerance: str | None = None,
    note: str | None = None,
    kind: Kind = Kind.PUBLISHED,
    missing: str = NOT_MEASURED,
) -> Finding:
    """A row judged by `rule` (a costlab.verdicts.Rule, whose words are the tolerance unless `tolerance` is
    given). No reproduced value is NOT_RUN with `missing` as its reason (costlab.verdicts.judge)."""
    verdict, reason = judge(reproduced, rule)
    return Finding(finding, metric, unit, published, None if is_missing(reproduced) else reproduced, verdict,
                   missing if verdict is Verdict.NOT_RUN else reason,
                   tolerance if tolerance is not None else tolerance_text(rule), server_kind, note, kind,
                   rule=rule)


def verdict_table(findings: Iterable[Finding], rounded: bool = False) -> pl.DataFrame:
    """The findings as a verdict table (COLUMNS). rounded: published and reproduced to 4 significant figures,
    the ratio to 3 (the engine lab's and arraygrowth's tables)."""
    frame = pl.DataFrame([f.row() for f in findings], schema=SCHEMA)
    if rounded:
        frame = frame.with_columns(
            pl.col("published").round_sig_figs(4),
            pl.col("reproduced").round_sig_figs(4),
            pl.col("ratio").round_sig_figs(3),
        )
    return frame


def conform_table(frame: pl.DataFrame, kind: Kind = Kind.PUBLISHED) -> pl.DataFrame:
    """A verdict table built with expressions, in COLUMNS (reason, note absent: empty; kind absent: `kind`);
    ValueError naming any verdict or kind that is not a member. Published and reproduced keep their type
    (uniqueidx's are the operations' outcomes in words)."""
    required = ["finding", "metric", "unit", "published", "reproduced", "ratio", "tolerance", "verdict",
                "server_kind"]
    absent = [c for c in required if c not in frame.columns]
    if absent:
        raise ValueError(
            f"a verdict table lacks column(s) {', '.join(absent)}; expected {', '.join(COLUMNS)}"
        )
    filled = frame.with_columns(
        *[pl.lit(None, pl.Utf8).alias(c) for c in ("reason", "note", "interval", "risk", "samples")
          if c not in frame.columns],
        *[pl.lit(None, pl.Float64).alias(c) for c in ("band_low", "band_high") if c not in frame.columns],
        *([pl.lit(kind.value).alias("kind")] if "kind" not in frame.columns else []))
    for column, enum in (("verdict", Verdict), ("kind", Kind)):
        bad = sorted(
            set(filled[column].cast(pl.Utf8).fill_null("(empty)").to_list()) - {m.value for m in enum}
        )
        if bad:
            raise ValueError(f"verdict table column {column!r} holds {', '.join(map(repr, bad))}; "
                             f"allowed: {', '.join(m.value for m in enum)}")
    return filled.select(COLUMNS)


SAMPLES_SEPARATOR = "; "


def samples_text(values: Sequence[float]) -> str | None:
    """A verdict row's `samples`: the values (repr, exact) joined; None for fewer than two (none to test)."""
    return SAMPLES_SEPARATOR.join(repr(float(v)) for v in values) if len(values) > 1 else None


def read_samples(text: object) -> list[float]:
    """A verdict row's `samples` back as floats ([] where none were kept: an older run, or one value)."""
    if text is None or not str(text).strip():
        return []
    return [float(v) for v in str(text).split(SAMPLES_SEPARATOR.strip()) if v.strip()]


def interval_verdict(point: Finding, interval: Interval, rule) -> Finding:
    """`point` (a row judged on its value alone) judged by its value's interval against the rule's band
    instead (docs/uncertainty.md): the whole interval inside is REPRODUCED, wholly outside NOT_REPRODUCED,
    straddling an edge INCONCLUSIVE with the samples that would decide it with an 80 % chance; a decided
    verdict carries its risk (Interval.risk). With no interval (one run, samples all equal), a rule with no
    band or no value, the point verdict stands, its risk not known; the row carries the interval in words
    either way."""
    point = point.with_(interval=interval.describe(), samples=samples_text(interval.values),
                        rule=point.rule or rule)
    band = getattr(rule, "band", None)
    if band is None or not interval.has_interval or point.verdict is Verdict.NOT_RUN:
        if point.verdict not in DECIDED:
            return point
        if interval.has_interval:   # a point rule (no band) judged the value: its risk cannot be said
            return point.with_(risk=NO_BAND_RISK)
        return point.with_(risk=f"not known: all {interval.samples} {interval.unit} equal"
                           if interval.differ_at_most is not None else ONE_RUN_RISK)
    outcome = judge_band(interval, *band)
    risk = risk_text(interval.risk)
    # a value that came out the same in every repeat: an observation, said in the verdict's words
    same = f"the same in all {interval.samples} repeats" if interval.same_in_all_repeats else None
    if outcome.outcome == "inside":
        return point.but(Verdict.REPRODUCED, same).with_(risk=risk)
    if outcome.outcome == "outside":
        return point.but(Verdict.NOT_REPRODUCED, same).with_(risk=risk)
    return point.but(Verdict.INCONCLUSIVE, "the interval straddles the tolerance band; "
                     + outcome.suggestion(interval.unit)).with_(risk=None)
