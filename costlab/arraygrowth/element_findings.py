"""A user's elements beside what they are compared to: rows of kind "user variant" (docs/variants.md).

Each element declared in `arraygrowth.elements` (costlab/arraygrowth/elements.py) carries `compare_to`
(default: the article's $push). Per profile and evidence, two rows: the element's journal bytes per write over
the compared workload's, at the largest N both ran, and the exponent k of its journal bytes ~ N^k over the
compared workload's (the growth law's slope on a log-log plot). No article published a number for a user's
element, so no row is judged: `not comparable` with the reason USER_VARIANT_REASON (the stand-in's rows:
`stand-in`, its serverStatus reports no journal bytes), or `not run` when either value is missing. They
are never counted among the published findings (costlab.verdicts.COUNTED_KINDS); the report shows them in
"Your variants", like the appversions variants (costlab/appversions/variant_findings.py).
"""
from __future__ import annotations

import polars as pl

from costlab.arraygrowth.fit import FitError, fit_power_law
from costlab.declarations.findings import beside, on_stand_in, server_kind_of
from costlab.finding import STAND_IN, Finding
from costlab.verdicts import is_missing


def _runs(frame: pl.DataFrame, profile: str, workload: str) -> pl.DataFrame:
    return frame.filter((pl.col("profile") == profile) & (pl.col("workload") == workload)).sort("n")


def _per_write(runs: pl.DataFrame, n: int | None) -> float | None:
    rows = runs.filter(pl.col("n") == n) if n is not None else runs.clear()
    if rows.height == 0 or is_missing(rows["log_bytes"][0]):
        return None
    return float(rows["log_bytes"][0]) / n


def _exponent(runs: pl.DataFrame) -> float | None:
    try:
        return fit_power_law(runs["n"].to_list(), runs["log_bytes"].to_list(), "log bytes").exponent
    except FitError:
        return None


def _text(value: float | None, unit: str) -> str:
    if value is None:
        return "—"
    return f"{value:,.0f}{unit}" if abs(value) >= 100 else f"{value:.4g}{unit}"


def element_rows(frame: pl.DataFrame, pairs: dict[str, str], evidence: str,
                 server_kind: str | None = None) -> list[Finding]:
    """`frame`: runs with profile, workload (a published workload or an element's name), n, log_bytes and,
    unless `server_kind` is given, server_kind; `pairs`: {element: what it is compared to}."""
    rows: list[Finding] = []
    profiles = list(dict.fromkeys(frame["profile"].to_list()))
    for name, other in pairs.items():
        for profile in profiles:
            mine, theirs = _runs(frame, profile, name), _runs(frame, profile, other)
            if mine.height == 0:
                continue
            kind = server_kind or server_kind_of([*mine["server_kind"].to_list(),
                                                  *theirs["server_kind"].to_list()])
            common = sorted(set(mine["n"].to_list()) & set(theirs["n"].to_list()))
            n = common[-1] if common else None
            a, b = _per_write(mine, n), _per_write(theirs, n)
            ka, kb = _exponent(mine), _exponent(theirs)
            # the stand-in reports no journal bytes: its rows are not comparable whatever was measured
            reason = STAND_IN if on_stand_in(kind) else None
            rows.append(beside(
                f"{name} beside {other}: journal bytes per write, {profile} ({evidence})",
                f"log bytes per write {name}/{other} ({profile}, N={n})", a, b, server_kind=kind,
                note=f"{name}: {_text(a, ' B/write')}; {other}: {_text(b, ' B/write')} (N={n})",
                reason=reason))
            rows.append(beside(
                f"{name} beside {other}: growth exponent k of journal bytes ~ N^k, {profile} ({evidence})",
                f"exponent k {name}/{other} ({profile})", ka, kb, server_kind=kind,
                note=(f"{name}: k={_text(ka, '')} over N={', '.join(map(str, mine['n'].to_list()))}; "
                      f"{other}: k={_text(kb, '')} over N={', '.join(map(str, theirs['n'].to_list()))}"),
                reason=reason))
    return rows


def engine_element_rows(log_bytes: pl.DataFrame, elements: pl.DataFrame,
                        pairs: dict[str, str]) -> list[Finding]:
    """The engine lab's rows: engine/log_bytes.csv (the article's workloads) and engine/elements.csv."""
    frame = pl.concat([
        log_bytes.select("profile", "workload", "n", pl.col("log_bytes").cast(pl.Float64)),
        elements.select("profile", pl.col("element").alias("workload"), "n",
                        pl.col("log_bytes").cast(pl.Float64)),
    ])
    return element_rows(frame, pairs, "engine lab", "engine")


def server_element_rows(raw: pl.DataFrame, pairs: dict[str, str]) -> list[Finding]:
    """A server's rows (raw runs of the article's workloads and of the elements listed in
    arraygrowth.workloads), each with its server's kind (mongod or the stand-in)."""
    frame = raw.select("profile", "workload", "n", pl.col("log_bytes").cast(pl.Float64), "server_kind")
    return element_rows(frame, pairs, "serverStatus")
