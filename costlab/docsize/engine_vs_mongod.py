"""docsize's engine lab against mongod on the same work (`results/docsize/engine_vs_mongod.csv`).

The engine finding is the bytes a query reads into the small cache (the article's bytes-read table), per
size and shape. The mongod part is the server's small-cache run (each repeat: the whole protocol from a
cold start): each base dataset orders_<k>k, the same documents (costlab.docsize.generate, one seed), the
same windows (costlab.docsize.protocol, seeded by (seed, run, family)), warm-ups once, the shapes back to
back from one cold start, the profile's cache. The lab's numbers are the engine job's own run when it
measured that work (the same windows in the same order, the same cache), else the lab runs the server's
work again (its documents, windows, repeats and cache): one quantity a (size, shape, repeat), the mean
bytes read per measured query.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

import polars as pl

from costlab.docsize.engine import measure_size
from costlab.docsize.names import RUNS
from costlab.engine.runs import engine_home, engine_settings
from costlab.engine.vs_mongod import Band, comparison, server_versions, write_table
from costlab.inputs import read_csv, read_parquet

STUDY = "docsize"
RUN = "small_cache"  # the run the engine finding is about (costlab.docsize.names.RUNS)
QUANTITY = "bytes read into the cache per query"
UNIT = "B/query"
MIB = 1 << 20
BAND = Band(
    0.8,
    1.25,
    "what a query reads depends on what eviction left in the small cache: the same "
    "windows twice in the lab move a 16 KB 30-query mean by up to 17 % (docs/engine-lab.md, "
    "the 16 KB variance); 0.8-1.25, the bytes-read tolerance of docsize_tolerances.csv; or within "
    "16,384 B a query, one 16 KB index leaf: a covered query reads an index page or none, and "
    "which leaf a window starts on follows where the leaves split (mongod builds the index after "
    "the load, the lab inserts into it)",
    absolute=16_384.0,
)


CELL = ["size_kb", "shape", "repeat"]


def server_cells(raw: pl.DataFrame) -> pl.DataFrame:
    """The server's small-cache queries per (size, shape, repeat): the base datasets' window queries, in the
    order they ran; columns size_kb, shape, repeat, queries, mongod (mean bytes), windows (list of starts)."""
    rows = _with_repeat(raw).filter(
        (pl.col("run") == RUN) & (pl.col("variant") == "base") & (pl.col("family") == "window")
    )
    return _cells(rows, "mongod", order="job_query")


def engine_cells(queries: pl.DataFrame) -> pl.DataFrame:
    """The engine lab's small-cache queries per (size, shape, repeat) (engine/queries.csv's measured rows;
    repeat r has the server's repeat r's windows)."""
    rows = _with_repeat(queries).filter((pl.col("run") == RUN) & (pl.col("phase") == "measured"))
    return _cells(rows, "engine", order="query")


def _with_repeat(frame: pl.DataFrame) -> pl.DataFrame:
    """A frame from before repeats (no `repeat` column, or nulls) is repeat 1."""
    if "repeat" not in frame.columns:
        return frame.with_columns(pl.lit(1, pl.Int64).alias("repeat"))
    return frame.with_columns(pl.col("repeat").fill_null(1).cast(pl.Int64))


def _cells(rows: pl.DataFrame, name: str, order: str) -> pl.DataFrame:
    return (
        rows.sort(*CELL, order)
        .group_by(CELL, maintain_order=True)
        .agg(
            pl.len().alias("queries"),
            pl.col("bytes_read_into_cache").cast(pl.Float64).mean().alias(name),
            pl.col("window_start").alias("windows"),
        )
    )


def differences(
    server: pl.DataFrame, engine: pl.DataFrame, server_cache_mb: float | None, engine_cache_mb: float | None
) -> list[str]:
    """What makes the engine lab's run not the server's work (empty: the same work)."""
    found = []
    if server_cache_mb is None or engine_cache_mb is None or abs(server_cache_mb - engine_cache_mb) > 0.5:
        found.append(f"cache {engine_cache_mb} MB in the lab, {server_cache_mb} MB on mongod")
    mine = {tuple(r[k] for k in CELL): r["windows"] for r in engine.iter_rows(named=True)}
    for row in server.iter_rows(named=True):
        windows = mine.get(tuple(row[k] for k in CELL))
        if windows is None:
            found.append(f"{_label(row)}: not in the lab's run")
        elif list(windows) != list(row["windows"]):
            found.append(f"{_label(row)}: other windows")
    return found


def _label(row: dict) -> str:
    return f"{row['size_kb']} KB {row['shape']}" + (f" repeat {row['repeat']}" if row["repeat"] > 1 else "")


def lab_on_server_work(
    study: dict,
    runs: dict,
    cache_mb: int,
    engine_config: dict,
    sizes_kb: Iterable[int],
    workdir=None,
    repeats: int = 1,
) -> pl.DataFrame:
    """The engine lab's small-cache run on the server's work: its documents (docs_per_collection, seed,
    customers), windows (window_minutes, the small-cache run's warm-ups and queries, `repeats` repeats) and
    cache (`cache_mb`, what mongod reported). Returns per-query rows as engine/queries.csv has them."""

    settings, _ = engine_settings(engine_config)
    engine_docsize = {
        "docs_per_collection": int(study["docs_per_collection"]),
        "window_minutes": int(study["window_minutes"]),
        "warmups": int(runs[RUN]["warmups"]),
        "queries": int(runs[RUN]["queries"]),
        "same_window_warmups": 0,
        "small_cache_mb": int(cache_mb),
        "cold_per_shape_variant": False,
        "repeats": int(repeats),
    }
    sizes = [int(s) for s in sizes_kb]
    section = {"sizes_kb": sizes, "seed": int(study["seed"]), "customers": int(study["customers"])}
    rows: list[dict] = []
    for size_kb in sizes:
        with engine_home(workdir or engine_config.get("workdir"), f"docsize-vs-mongod-{size_kb}k") as home:
            size_rows, _ = measure_size(size_kb, section, engine_docsize, settings, home / "wt", only=(RUN,))
        rows += size_rows
    return pl.DataFrame(rows)


def compare(server: pl.DataFrame, engine: pl.DataFrame, version: str | None, profile: str) -> pl.DataFrame:
    """The comparison table: one row a (size, shape, repeat) the server measured, the lab's mean beside
    mongod's."""
    mine = {tuple(r[k] for k in CELL): r for r in engine.iter_rows(named=True)}
    rows = []
    for row in server.iter_rows(named=True):
        lab = mine[tuple(row[k] for k in CELL)]
        rows.append(
            {
                "study": STUDY,
                "quantity": QUANTITY,
                "profile": profile,
                "workload": _label(row),
                "n": int(row["queries"]),
                "unit": UNIT,
                "engine": lab["engine"],
                "mongod": row["mongod"],
                "band": BAND,
                "mongod_version": version,
                "engine_rules": "standalone",
            }
        )
    return comparison(rows)


def write_comparison(
    raw_paths: Iterable[str | Path],
    collstats_paths: Iterable[str | Path],
    provenance_paths: Iterable[str | Path],
    engine_queries: str | Path,
    study: dict,
    engine_config: dict,
    out_csv: str | Path,
    figure_paths: Iterable[str | Path] = (),
) -> tuple[pl.DataFrame, list[str]]:
    """The rule's work: the server's small-cache runs beside the engine lab's (its own run when that was the
    same work, else the lab again on the server's); returns (the table, what made the lab run again)."""

    raw = pl.concat([read_parquet(p) for p in raw_paths], how="diagonal_relaxed")
    collstats = pl.concat([read_parquet(p) for p in collstats_paths], how="diagonal_relaxed")
    # a server that does not report the bytes (a stand-in) leaves its cells out, never compared as 0
    server = server_cells(raw).filter(pl.col("mongod").is_not_null())
    if server.is_empty():
        return write_table(compare(server, server, None, RUNS[RUN].profile), out_csv, figure_paths), []
    caches = collstats.filter(pl.col("run") == RUN)["cache_max_bytes"].drop_nulls()
    server_cache_mb = float(caches[0]) / MIB if len(caches) else None
    queries = read_csv(engine_queries)
    engine_small = queries.filter(pl.col("run") == RUN)["cache_mb"]
    engine_cache_mb = float(engine_small[0]) if len(engine_small) else None
    engine = engine_cells(queries)
    why = differences(server, engine, server_cache_mb, engine_cache_mb)
    if why:
        if server_cache_mb is None:
            raise ValueError(
                "the server's small-cache run reported no cache size (cache_max_bytes): the lab "
                "cannot run its work"
            )
        engine = engine_cells(
            lab_on_server_work(
                study,
                study["runs"],
                round(server_cache_mb),
                engine_config,
                server["size_kb"].unique().sort().to_list(),
                repeats=int(server["repeat"].max()),
            )
        )
        still = differences(server, engine, server_cache_mb, round(server_cache_mb))
        if still:
            raise AssertionError(f"the lab's run of the server's work is not that work: {'; '.join(still)}")
    versions = {v for v in server_versions(provenance_paths).values() if v}
    frame = compare(server, engine, ", ".join(sorted(versions)) or None, RUNS[RUN].profile)
    return write_table(frame, out_csv, figure_paths), why


__all__ = [
    "BAND",
    "QUANTITY",
    "compare",
    "differences",
    "engine_cells",
    "lab_on_server_work",
    "server_cells",
    "write_comparison",
]
