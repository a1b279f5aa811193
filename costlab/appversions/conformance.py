"""Conformance at end times with a time of day: where the 14 versions disagree with each other.

The authors' load test asks for reports at ends uniform in milliseconds. Events sit at 00:00 UTC,
so a window [start, end) with a time of day counts (start day, end day] in the versions that compare
dates (appV1-V3, appV5R0-R4) and [start day, end day) in those that compare YYYYMMDD ids or item
names (appV4, appV6R0-R4): the article's own versions answer differently for the same request
(versions.DayRule). The correctness job records each loaded version's replies at such ends
(correctness.midday_reports); this turns them into findings:

- per version: its replies count what its day rule says (costlab builds the version the authors' way);
- across versions: the versions of one rule agree with each other, and the two rules part where the
  end's or the start's day holds events of the key.

Results, not timings: a stand-in's replies are as good as mongod's here.
"""
from __future__ import annotations

import polars as pl

from costlab.appversions.events import STATUSES
from costlab.finding import Finding, judged
from costlab.published import Tolerances, tolerances_or_published
from costlab.verdicts import Verdict

RULE_NAMES = {
    "dates": "dates: (start day, end day]",
    "day_ids": "day ids or item names: [start day, end day)",
}
_SAMPLE = ["key", "end"]


def _kind(frame: pl.DataFrame) -> str:
    kinds = sorted(set(frame["server_kind"].to_list())) if "server_kind" in frame.columns else []
    return "/".join(kinds) or "not reported"


def _answers(frame: pl.DataFrame) -> pl.DataFrame:
    """Per (version, key, end): the five windows' counts as one comparable string."""
    return frame.sort("window_years").group_by("version", "day_rule", *_SAMPLE, maintain_order=True).agg(
        answer=pl.concat_str([pl.col(s).cast(pl.Utf8) for s in STATUSES], separator=",").str.join(";"))


def _versions(names: list[str]) -> str:
    return ", ".join(names) or "no version loaded"


def midday_findings(midday: pl.DataFrame, tolerances: Tolerances | None = None) -> list[Finding]:
    """Findings (published_vs_reproduced rows) from the loaded versions' Get Reports at end times
    with a time of day (correctness.MIDDAY_SCHEMA rows of every loaded version, + server_kind), judged by
    appversions_tolerances.csv's midday_as_day_rule and midday_disagree (or `tolerances`)."""
    if midday.height == 0:
        return []
    tol = tolerances_or_published(tolerances, "appversions")
    as_rule, disagree = tol["midday_as_day_rule"].holds(), tol["midday_disagree"].holds()
    rows = []
    for (version,), mine in midday.group_by("version", maintain_order=True):
        rule = mine["day_rule"][0]
        share = float(mine["as_day_rule"].cast(pl.Float64).mean())
        rows.append(
            judged(
                f"{version}: Get Reports at end times with a time of day count {RULE_NAMES[rule]}, "
                "as the authors' version does",
                "midday reports as the version's day rule",
                "share",
                1.0,
                share,
                as_rule,
                server_kind=_kind(mine),
            )
        )

    answers = _answers(midday)
    by_rule = {rule: sorted(set(group["version"].to_list()))
               for (rule,), group in answers.group_by("day_rule", maintain_order=True)}
    samples = answers.select(_SAMPLE).unique().height
    kind = _kind(midday)
    finding = ("the versions disagree at end times with a time of day: "
               f"{_versions(by_rule.get('day_ids', []))} ({RULE_NAMES['day_ids']}) against "
               f"{_versions(by_rule.get('dates', []))} ({RULE_NAMES['dates']})")
    if len(by_rule) < 2:
        only = _versions(sorted(set(midday["version"].to_list())))
        rows.append(
            Finding(
                finding,
                "share of midday samples where the versions disagree",
                "share",
                None,
                None,
                Verdict.NOT_COMPARABLE,
                f"only {only} loaded, all of one day rule",
                str(disagree),
                kind,
            )
        )
        return rows
    # Within one rule every version gives one answer per sample; across the rules, how often they part.
    per_rule = answers.group_by("day_rule", *_SAMPLE).agg(pl.col("answer").n_unique().alias("answers"),
                                                         pl.col("answer").first())
    agree_within = bool((per_rule["answers"] == 1).all())
    parted = per_rule.group_by(_SAMPLE).agg(pl.col("answer").n_unique().alias("rules"))
    share = float((parted["rules"] > 1).cast(pl.Float64).mean()) if samples else None
    as_rules = bool(midday["as_day_rule"].all())
    row = judged(finding, "share of midday samples where the versions disagree", "share", None, share,
                 lambda value: agree_within and as_rules and disagree(value), server_kind=kind,
                 tolerance=f"{disagree}, and the versions of one day rule agree on every sample")
    if agree_within and as_rules and share is not None and not share:
        row = row.but(Verdict.NOT_COMPARABLE, "no sampled end or start day held an event of the key")
    rows.append(row)
    return rows
