"""Published vs engine lab for arraygrowth: the mongod path's findings (same thresholds) on the engine
lab's rows, then the journal bytes per write; every threshold from arraygrowth_tolerances.csv."""
from __future__ import annotations

import polars as pl

from costlab.arraygrowth.tables import fits_by_pair, published_findings
from costlab.engine.provenance import SERVER_KIND
from costlab.engine.verdicts import engine_frame, engine_row
from costlab.finding import Finding
from costlab.published import Tolerances, tolerances_or_published


def arraygrowth_verdicts(log_bytes: pl.DataFrame, published: pl.DataFrame,
                         published_calls: pl.DataFrame, tolerances: Tolerances | None = None) -> pl.DataFrame:
    """The mongod path's findings (same thresholds) on engine rows, then the per-write byte counts;
    tolerances: arraygrowth_tolerances.csv's rows (read from resources/published when None)."""
    return engine_frame(arraygrowth_findings(log_bytes, published, published_calls, tolerances))


def arraygrowth_findings(log_bytes: pl.DataFrame, published: pl.DataFrame, published_calls: pl.DataFrame,
                         tolerances: Tolerances | None = None) -> list[Finding]:
    """arraygrowth_verdicts' rows, as Findings (each with its rule: a repeat's rows merge by it)."""
    tol = tolerances_or_published(tolerances, "arraygrowth")

    raw = log_bytes.with_columns(
        pl.col("n").alias("operations"), pl.col("modify_calls").alias("cursor_modify_calls"),
        pl.col("insert_calls").alias("cursor_insert_calls"), pl.lit(SERVER_KIND).alias("server_kind"))
    rows = []
    for row in published_findings(raw, fits_by_pair(raw), published, published_calls, tol):
        row = row.with_(server_kind=SERVER_KIND)
        if row.finding.startswith("on a replica set $push is stored as WiredTiger modify"):
            row = row.with_(
                note="the collection's deltas plus the history store's reverse deltas: with commit "
                "timestamps and the oldest timestamp 300 s behind, each document version a page's "
                "reconciliation moves out is stored as a delta to the next (docs/engine-lab.md)"
            )
        if "WiredTiger insert calls per write" in row.finding and row.reproduced is not None:
            row = row.with_(
                note="every table mongod writes: the record, its _id index entry and on a replica set the "
                "oplog entry, the oplog truncate point and the session record (costlab.engine.replset)"
            )
        rows.append(row)

    def measured(profile: str, workload: str, n: int = 10_000) -> tuple[float | None, int | None]:
        rows_ = log_bytes.filter((pl.col("profile") == profile) & (pl.col("workload") == workload))
        if rows_.height == 0:
            return None, None
        exact = rows_.filter(pl.col("n") == n)
        row = (exact if exact.height else rows_.sort("n").tail(1)).row(0, named=True)
        return row["log_bytes"] / row["n"], row["n"]

    replica = published.filter(pl.col("experiment") == "replica")
    for profile, workload in (("standalone", "insert"), ("replset-1", "insert"), ("replset-1", "push")):
        pub_column = replica.filter((pl.col("profile") == profile) & (pl.col("workload") == workload))[
            "bytes_per_op"
        ]
        pub = float(pub_column[0]) if len(pub_column) else None
        value, n = measured(profile, workload)
        note = None
        if profile == "replset-1":
            note = (
                "two log records per write, each padded to 128 bytes: the oplog entry with a retryable "
                "write's session fields (384 B) and the oplog truncate point mongod overwrites before "
                "each journal flush (128 B; docs/engine-lab.md)"
            )
        rows.append(
            engine_row(
                f"journal bytes per write, {profile} {workload} (WiredTiger log records are padded to "
                "128 bytes)",
                f"log bytes per write ({profile}, {workload}, published N=10000, engine N={n})",
                "bytes/op",
                pub,
                value,
                tol["engine_log_bytes"].holds(pub),
                note,
            )
        )
    quad = published.filter((pl.col("experiment") == "quadratic") & (pl.col("n") == 10_000))
    value, n = measured("standalone", "push")
    if value is not None and n == 10_000:   # an absolute count is compared at the published N only
        pub = float(quad["log_bytes"][0])
        rows.append(
            engine_row(
                "standalone $push ×10,000: journal bytes",
                f"log bytes (standalone, $push, N={n})",
                "bytes",
                pub,
                value * n,
                tol["engine_log_bytes"].holds(pub),
                "journal compressor: see journal_compressor in log_bytes.csv (mongod: snappy)",
            )
        )
    return rows
