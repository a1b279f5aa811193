"""The engine lab against a real mongod on the same work: `results/<study>/engine_vs_mongod.csv`.

Each study measures a quantity twice, with the same documents, statements, order and N: in the engine
lab (following the per-write rules of the mongod it is compared with: costlab.engine.replset.MONGOD_RULES)
and on mongod. This module holds what every study's comparison shares: the table (one row a quantity:
the lab's value, mongod's, their ratio, the band it is held to), the share within the band, the console
line and the figure (one dot a quantity, the identity line, the band). It imports no study.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import altair as alt
import polars as pl

from costlab.engine.replset import MONGOD_RULES
from costlab.inputs import read_csv
from costlab.io import write_csv
from costlab.report.charts import save_chart
from costlab.server.provenance import read_provenance
from costlab.targets import VS_MONGOD_FILE

COLUMNS = ["study", "quantity", "profile", "workload", "n", "unit", "engine", "mongod", "ratio",
           "tolerance_low", "tolerance_high", "within", "mongod_version", "engine_rules", "why"]
SCHEMA = {"study": pl.Utf8, "quantity": pl.Utf8, "profile": pl.Utf8, "workload": pl.Utf8, "n": pl.Int64,
          "unit": pl.Utf8, "engine": pl.Float64, "mongod": pl.Float64, "ratio": pl.Float64,
          "tolerance_low": pl.Float64, "tolerance_high": pl.Float64, "within": pl.Boolean,
          "mongod_version": pl.Utf8, "engine_rules": pl.Utf8, "why": pl.Utf8}
FILE_NAME = VS_MONGOD_FILE


@dataclass(frozen=True)
class Band:
    """engine / mongod must lie in [low, high], or (`absolute`, for quantities near 0 where a ratio says
    nothing) the two differ by at most `absolute` units; `why` says where the band comes from."""
    low: float
    high: float
    why: str
    absolute: float | None = None

    def holds(self, engine: float, mongod: float) -> bool:
        ratio = 1.0 if engine == mongod == 0 else (engine / mongod if mongod else None)
        in_ratio = ratio is not None and self.low <= ratio <= self.high
        return in_ratio or (self.absolute is not None and abs(engine - mongod) <= self.absolute)

    def __post_init__(self) -> None:
        if not 0 < self.low <= 1 <= self.high:
            raise ValueError(f"a band must hold 1 (low <= 1 <= high, low > 0), got [{self.low}, {self.high}]")


def engine_rules_for(version: str | None) -> str:
    """The lab's rules (MONGOD_RULES' key) for a mongod version string: 6.x -> "6.0", 8.x and later -> "8.x".
    Other versions are refused: the lab knows no rule set for them."""

    match = re.match(r"(\d+)\.", version or "")
    major = int(match.group(1)) if match else None
    rules = "6.0" if major == 6 else "8.x" if major is not None and major >= 8 else None
    if rules is None or rules not in MONGOD_RULES:
        raise ValueError(f"no engine-lab rules for mongod {version!r}; the lab follows: "
                         f"{', '.join(MONGOD_RULES)} (6.x and 8.x or later)")
    return rules


def servers(provenance_paths: Iterable[str | Path]) -> dict[str, dict]:
    """job -> the server record its provenance holds (version, replica_set, ...)."""

    found = {}
    for path in provenance_paths:
        record = read_provenance(path)
        found[record.get("job") or Path(path).stem] = record.get("server") or {}
    return found


def server_versions(provenance_paths: Iterable[str | Path]) -> dict[str, str]:
    """job -> the mongod version its provenance records."""
    return {job: server.get("version") for job, server in servers(provenance_paths).items()}


def server_replica_sets(provenance_paths: Iterable[str | Path]) -> dict[str, bool]:
    """job -> whether its server was a replica set (an external standalone may serve a replica-set one)."""
    return {job: bool(server.get("replica_set")) for job, server in servers(provenance_paths).items()}


def comparison(rows: list[dict]) -> pl.DataFrame:
    """The table from rows of study, quantity, profile, workload, n, unit, engine, mongod, band (a Band),
    mongod_version, engine_rules: the ratio engine / mongod and whether it is within the band. A quantity
    mongod measured as 0 has a ratio only when the lab's is 0 too (1.0); otherwise none, and is outside."""
    out = []
    for row in rows:
        band: Band = row["band"]
        engine, mongod = float(row["engine"]), float(row["mongod"])
        ratio = 1.0 if engine == mongod == 0 else (engine / mongod if mongod else None)
        out.append({k: row.get(k) for k in COLUMNS if k in row and k != "band"}
                   | {"engine": engine, "mongod": mongod, "ratio": ratio, "tolerance_low": band.low,
                      "tolerance_high": band.high, "why": band.why, "within": band.holds(engine, mongod)})
    return pl.DataFrame(out, schema=SCHEMA).select(COLUMNS)


def share_within(frame: pl.DataFrame) -> tuple[int, int]:
    """(quantities within their band, quantities)."""
    return int(frame["within"].sum()), frame.height


def summary_line(frame: pl.DataFrame) -> str:
    """One line: the study, the share within tolerance, the mongod, and each quantity outside its band."""
    if frame.is_empty():
        return "engine lab vs mongod: nothing compared"
    within, total = share_within(frame)
    study = frame["study"][0]
    versions = ", ".join(sorted(set(frame["mongod_version"].drop_nulls())))
    line = f"{study}: engine lab within tolerance of mongod {versions} on {within} of {total} quantities"
    outside = frame.filter(~pl.col("within"))
    if outside.height:
        line += "; outside: " + "; ".join(
            f"{r['quantity']} ({r['profile']} {r['workload']} N={r['n']}: lab {r['engine']:.4g}, "
            f"mongod {r['mongod']:.4g})" for r in outside.iter_rows(named=True))
    return line


def read_comparison(path: str | Path) -> pl.DataFrame:
    return read_csv(path, schema_overrides=SCHEMA)


def figure(frame: pl.DataFrame, *paths: str | Path) -> None:
    """Engine lab against mongod, one dot a quantity (log-log), the identity line and each band's edges."""

    study = frame["study"][0] if frame.height else "?"
    points = frame.filter(pl.col("mongod") > 0, pl.col("engine") > 0).with_columns(
        pl.concat_str([pl.col("quantity"), pl.lit(" ("), pl.col("profile"), pl.lit(" "), pl.col("workload"),
                       pl.lit(")")]).alias("label"),
        pl.when(pl.col("within")).then(pl.lit("within the band")).otherwise(pl.lit("outside the band"))
        .alias("verdict"))
    lo = float(min(points["mongod"].min(), points["engine"].min())) * 0.7 if points.height else 0.1
    hi = float(max(points["mongod"].max(), points["engine"].max())) * 1.4 if points.height else 10.0
    low, high = (float(points["tolerance_low"].min()), float(points["tolerance_high"].max())) \
        if points.height else (1.0, 1.0)
    lines = pl.DataFrame({"x": [lo, hi] * 3, "y": [lo, hi, lo * low, hi * low, lo * high, hi * high],
                          "line": ["identity"] * 2 + ["widest band"] * 4,
                          "edge": ["identity"] * 2 + ["low"] * 2 + ["high"] * 2})
    scale = alt.Scale(type="log", domain=[lo, hi])
    base = alt.Chart(alt.Data(values=lines.to_dicts())).mark_line(strokeDash=[4, 3], color="#888").encode(
        x=alt.X("x:Q", scale=scale, title="mongod"), y=alt.Y("y:Q", scale=scale, title="engine lab"),
        detail="edge:N")
    dots = alt.Chart(alt.Data(values=points.to_dicts())).mark_point(filled=True, size=70).encode(
        x=alt.X("mongod:Q", scale=scale), y=alt.Y("engine:Q", scale=scale),
        color=alt.Color("verdict:N", scale=alt.Scale(domain=["within the band", "outside the band"],
                                                      range=["#1b7837", "#c51b7d"])),
        shape="unit:N", tooltip=["label:N", "n:Q", "engine:Q", "mongod:Q", "ratio:Q", "why:N"])
    versions = ", ".join(sorted(set(frame["mongod_version"].drop_nulls())))
    within, total = share_within(frame)
    chart = (base + dots).properties(
        width=420, height=360,
        title={"text": f"{study}: engine lab against mongod {versions} on the same work",
               "subtitle": f"{within} of {total} quantities within their band (dashed: identity and the "
                           f"widest band, {low:g}-{high:g})"})
    save_chart(chart, *paths)


def write_table(frame: pl.DataFrame, out_csv: str | Path,
                figure_paths: Iterable[str | Path] = ()) -> pl.DataFrame:
    """The comparison written (results/<study>/engine_vs_mongod.csv) and its figure drawn."""

    write_csv(frame, out_csv)
    figure_paths = list(figure_paths)
    if figure_paths:
        figure(frame, *figure_paths)
    return frame


__all__ = ["Band", "COLUMNS", "FILE_NAME", "comparison", "engine_rules_for", "figure", "read_comparison",
           "server_replica_sets", "server_versions", "servers", "share_within", "summary_line", "write_table"]
