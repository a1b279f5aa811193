"""Your elements' absolute costs beside their compare_to: the report's "Your schema" (costlab.yourschema).

Per element declared in `arraygrowth.elements` and per profile: the journal bytes per write at the largest N
both ran (engine/elements.csv beside engine/log_bytes.csv, the article's workloads, or another element), the
largest document, and the growth exponent k of journal bytes ~ N^k; each beside its compare_to (default: the
article's $push) as a ratio with the ratio's interval over the engine lab's repeats.
"""
from __future__ import annotations

from pathlib import Path

import polars as pl

from costlab.arraygrowth.elements import DECLARED
from costlab.arraygrowth.fit import FitError, fit_power_law
from costlab.repeats import repeat_values
from costlab.yourschema import EXACT, ONE_RUN, CostRow, Point, SchemaFigure, YourSchema, ratio_over_repeats

ENGINE = "engine lab"


def compare_pairs(section: dict) -> dict[str, str]:
    return DECLARED.compare_pairs(section)


def _runs(study_dir: Path) -> pl.DataFrame | None:
    """Every run of the engine lab: (profile, workload, n, log_bytes, log_bytes_repeats, max_doc_bytes)."""
    engine = study_dir / "engine"
    parts = []
    for path, name in ((engine / "log_bytes.csv", "workload"), (engine / "elements.csv", "element")):
        if not path.is_file():
            continue
        frame = pl.read_csv(path, infer_schema_length=10000)
        if frame.height == 0 or not {"profile", name, "n", "log_bytes"} <= set(frame.columns):
            continue
        parts.append(frame.select(
            "profile", pl.col(name).cast(pl.Utf8).alias("workload"), pl.col("n").cast(pl.Int64),
            pl.col("log_bytes").cast(pl.Float64),
            (pl.col("log_bytes_repeats").cast(pl.Utf8) if "log_bytes_repeats" in frame.columns
             else pl.lit(None, pl.Utf8)).alias("log_bytes_repeats"),
            (pl.col("max_doc_bytes").cast(pl.Float64) if "max_doc_bytes" in frame.columns
             else pl.lit(None, pl.Float64)).alias("max_doc_bytes")))
    return pl.concat(parts) if parts else None


def _exponent(runs: pl.DataFrame) -> float | None:
    try:
        return fit_power_law(runs["n"].to_list(), runs["log_bytes"].to_list(), "log bytes").exponent
    except FitError:
        return None


def your_schema(study_dir: Path, config: dict) -> YourSchema | None:
    pairs = compare_pairs(config.get("arraygrowth") or {})
    runs = _runs(study_dir)
    if not pairs or runs is None:
        return None if not pairs else YourSchema("arraygrowth", "engine lab: not run yet", ())

    rows: list[CostRow] = []
    for name, other in pairs.items():
        for profile in dict.fromkeys(runs["profile"].to_list()):
            mine = runs.filter((pl.col("profile") == profile) & (pl.col("workload") == name)).sort("n")
            theirs = runs.filter((pl.col("profile") == profile) & (pl.col("workload") == other)).sort("n")
            if mine.height == 0:
                continue
            common = sorted(set(mine["n"].to_list()) & set(theirs["n"].to_list()))
            n = common[-1] if common else int(mine["n"].max())
            a_row = mine.filter(pl.col("n") == n).row(0, named=True)
            b_row = theirs.filter(pl.col("n") == n).row(0, named=True) if common else {}
            a = a_row["log_bytes"] / n
            b = b_row["log_bytes"] / n if b_row else None
            interval = (
                ratio_over_repeats(repeat_values(a_row, "log_bytes"), repeat_values(b_row, "log_bytes"))
                if b_row
                else ONE_RUN
            )
            rows.append(CostRow(name, other, f"journal bytes per write, {profile}, N = {n:,}", ENGINE,
                                "B/write", a, b, interval))
            if a_row.get("max_doc_bytes") is not None:
                rows.append(CostRow(name, other, f"largest document, {profile}, N = {n:,}", ENGINE, "B",
                                    a_row["max_doc_bytes"], (b_row or {}).get("max_doc_bytes"), EXACT))
            ka, kb = _exponent(mine), _exponent(theirs) if theirs.height else None
            rows.append(
                CostRow(
                    name,
                    other,
                    f"growth exponent k of journal bytes ~ N^k, {profile}",
                    ENGINE,
                    "k",
                    ka,
                    kb,
                    f"a fit over N = {', '.join(f'{v:,}' for v in mine['n'].to_list())}",
                )
            )
    points = [Point(r["workload"], r["n"], r["log_bytes"] / r["n"], r["workload"] in pairs, r["profile"])
              for r in runs.iter_rows(named=True) if r["log_bytes"] is not None and r["n"]]
    figure = SchemaFigure(
        "Journal bytes per write: your elements beside the article's workloads (engine lab)",
        "WiredTiger engine lab; your elements in colour", "N (writes)", "journal bytes per write", "Q",
        tuple(points), facet_title="profile", scales=("log", "log"))
    ns = sorted(set(runs["n"].to_list()))
    return YourSchema("arraygrowth", f"engine lab at N = {', '.join(f'{v:,}' for v in ns)}", tuple(rows),
                      figure)
