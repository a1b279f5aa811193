"""arraygrowth's engine lab against mongod on the same work (`results/arraygrowth/engine_vs_mongod.csv`).

For every run the server part made (profile, workload, N), the engine lab runs the same writes: the same
documents (driver-like _ids), the same namespace (costlab.arraygrowth.workloads.collection_name), the
same order, with the per-write rules of the mongod that was measured (its version from the job's
provenance: costlab.engine.replset.MONGOD_RULES) and the retryable writes a driver sends to a replica set.
Three quantities a run: journal bytes, cursor insert calls and cursor modify calls per write.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable

import polars as pl

from costlab.arraygrowth.engine import run_workload
from costlab.arraygrowth.tables import per_op, read_raw
from costlab.engine.replset import mongod_rules, replica_set_settings
from costlab.engine.runs import engine_settings
from costlab.engine.vs_mongod import (
    Band,
    comparison,
    engine_rules_for,
    server_replica_sets,
    server_versions,
    write_table,
)

STUDY = "arraygrowth"
# quantity -> (unit, the server's per-op column, the engine row's counter, its band)
QUANTITIES: dict[str, tuple[str, str, str, Band]] = {
    "journal bytes per write": (
        "B/write", "log_bytes_per_op", "log_bytes",
        Band(0.95, 1.05, "WiredTiger pads each log record to 128 bytes: on a replica set's 512-640 B a write "
                         "one unit more or less is 20-25 %, on a standalone insert's 128 B all of it; 5 % "
                         "tells units apart and holds the odd record of WiredTiger's own")),
    "cursor insert calls per write": (
        "calls/write", "cursor_insert_per_op", "insert_calls",
        Band(0.98, 1.02, "whole counts a write (record, index entry, oplog entry, session record, "
                         "truncate point); 2 % holds the first writes' one-off calls")),
    "cursor modify calls per write": (
        "calls/write", "cursor_modify_per_op", "modify_calls",
        Band(0.9, 1.1, "on the replica set the history store's reverse deltas follow eviction's timing "
                       "(a forced eviction of the job document's update chain); 10 %")),
}


def engine_run(profile: str, workload: str, n: int, rules: str, engine_config: dict,
               writes_per_second: int, workdir=None) -> dict:
    """The engine lab's run of the same work under `rules` (MONGOD_RULES' key)."""

    settings, _ = engine_settings(engine_config)
    replica_set = replica_set_settings(engine_config, writes_per_second, **mongod_rules(rules))
    return run_workload(profile, workload, n, settings, workdir,
                        bool(engine_config.get("retryable_writes", True)), replica_set)


def compare_runs(server_rows: pl.DataFrame, versions: dict[str, str], engine_config: dict,
                 writes_per_second: int, workdir=None, replica_sets: dict[str, bool] | None = None
                 ) -> pl.DataFrame:
    """The comparison table for the server's runs (raw rows: job, profile, workload, n, operations and the
    counters); a run whose counters the server did not report (a stand-in) is left out."""
    measured = per_op(server_rows).drop_nulls(["log_bytes", "cursor_insert_calls", "cursor_modify_calls"])
    rows = []
    for run in measured.sort("profile", "workload", "n").iter_rows(named=True):
        version = versions.get(run["job"])
        replica_set = (replica_sets or {}).get(run["job"], run["profile"] != "standalone")
        rules = engine_rules_for(version)
        # the same work as the server did: an external standalone asked for a replica-set profile ran as one
        topology = run["profile"] if replica_set or run["profile"] == "standalone" else "standalone"
        lab = engine_run(topology, run["workload"], int(run["n"]), rules, engine_config,
                         writes_per_second, workdir)
        for quantity, (unit, column, counter, band) in QUANTITIES.items():
            rows.append({"study": STUDY, "quantity": quantity, "profile": run["profile"],
                         "workload": run["workload"], "n": int(run["n"]), "unit": unit,
                         "engine": lab[counter] / lab["n"], "mongod": run[column], "band": band,
                         "mongod_version": version, "engine_rules": rules})
    return comparison(rows)


def write_comparison(raw_paths: Iterable[str | Path], provenance_paths: Iterable[str | Path],
                     engine_config: dict, writes_per_second: int, out_csv: str | Path,
                     figure_paths: Iterable[str | Path] = ()) -> pl.DataFrame:
    """The rule's work: read the server's runs, run the lab on the same work, write the table (and figure)."""
    provenance_paths = list(provenance_paths)
    frame = compare_runs(read_raw(raw_paths), server_versions(provenance_paths), engine_config,
                         writes_per_second, engine_config.get("workdir"),
                         server_replica_sets(provenance_paths))
    return write_table(frame, out_csv, figure_paths)
