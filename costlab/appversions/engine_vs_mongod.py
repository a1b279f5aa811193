"""appversions' engine lab against mongod on the same work (`results/appversions/engine_vs_mongod.csv`).

The mongod part is each loaded version's load step: the events of results/appversions/events.parquet sent
through the version's Bulk Upsert by the load workers, `batch_size` statements a batch, on the load
profile's server, then a checkpoint (fsync) and collStats. The engine lab grows the same collection from the
same file through the same workers and batches (costlab.appversions.engine.measure_version), with the
server's cache, in the server's topology, a checkpoint every 60 s of the server's load (syncPeriodSecs) and
the final one, and reads its files' sizes. Four quantities a version: data bytes and documents per event
(what the statements built), storage bytes per data byte and index bytes per event (how WiredTiger wrote
them).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Iterable

import polars as pl

from costlab.engine.replset import replica_set_settings
from costlab.engine.runs import engine_home
from costlab.engine.vs_mongod import Band, comparison, write_table
from costlab.inputs import read_json, read_parquet
from costlab.server.profiles import get_profile
from costlab.server.provenance import read_provenance, write_json_atomic

STUDY = "appversions"
CHECKPOINT_SECONDS = 60  # mongod's storage.syncPeriodSecs default: a checkpoint a minute while loading
DEFAULT_CACHE_MB = 1536  # the load test profile's (standalone-2cpu-4gb) where a server's cache is not known
EXACT = "the same statements on the same documents build the same BSON: whole bytes and documents; 1 %"
# quantity -> (unit, its band)
QUANTITIES: dict[str, tuple[str, Band]] = {
    "data bytes per event": ("B/event", Band(0.99, 1.01, EXACT)),
    "documents per event": ("documents/event", Band(0.99, 1.01, EXACT)),
    "storage bytes per data byte": (
        "B/B",
        Band(
            0.9,
            1.1,
            "the same documents through the same compressor; what differs is when pages "
            "were reconciled (eviction and checkpoints follow the server's clock and cache "
            "pressure): 10 %",
        ),
    ),
    "index bytes per event": (
        "B/event",
        Band(
            0.9,
            1.1,
            "the same keys in the same order with mongod's index formats and prefix "
            "compression; page fill follows when pages were reconciled: 10 %",
        ),
    ),
}


def checkpoint_every(events: int, load_seconds: float | None) -> int:
    """Statements between the lab's checkpoints standing for mongod's one a minute during a load of `events`
    that took `load_seconds` (0: the load ended before the first, only the final checkpoint)."""
    if not load_seconds or load_seconds < CHECKPOINT_SECONDS or events < 1:
        return 0
    return max(1, math.floor(events * CHECKPOINT_SECONDS / load_seconds))


def server_cache_mb(record: dict) -> int:
    """The WiredTiger cache the load's server ran with (its provenance's applied options), in MB."""
    asked = (record.get("applied_options") or {}).get("wiredTigerCacheSizeGB")
    if isinstance(asked, (int, float)) and not isinstance(asked, bool):
        return max(1, round(float(asked) * 1024))

    try:
        profile = get_profile(record.get("profile") or "")
    except (KeyError, ValueError):
        return DEFAULT_CACHE_MB
    return round(profile.cache_size_gb * 1024) if profile.cache_size_gb else DEFAULT_CACHE_MB


def server_values(row: dict) -> dict[str, float | None]:
    """The load's collStats row as the four quantities."""
    events, data = row.get("events") or 0, row.get("data_bytes")
    return {
        "data bytes per event": data / events if events and data is not None else None,
        "documents per event": row["documents"] / events
        if events and row.get("documents") is not None
        else None,
        "storage bytes per data byte": row["storage_bytes"] / data
        if data and row.get("storage_bytes") is not None
        else None,
        "index bytes per event": row["index_bytes"] / events
        if events and row.get("index_bytes") is not None
        else None,
    }


def lab_values(row: dict) -> dict[str, float]:
    """The lab's measure_version row as the four quantities."""
    events = row["events"]
    return {
        "data bytes per event": row["data_bytes"] / events,
        "documents per event": row["documents"] / events,
        "storage bytes per data byte": row["storage_bytes"] / row["data_bytes"],
        "index bytes per event": row["index_bytes"] / events,
    }


def lab_run(
    version: str,
    events_path: str | Path,
    cache_mb: int,
    every: int,
    batch_size: int,
    workers: int,
    replica_set: bool,
    engine_config: dict,
    workdir=None,
) -> dict:
    """The engine lab's growth of `version` from the server's events, as the server grew it."""
    from costlab.appversions.engine import measure_version  # noqa: PLC0415  heavy: multiprocessing (the load test's workers): a module that starts none stays without it

    topology = (
        replica_set_settings(
            engine_config,
            1000,
            side_tables=False,
            checkpoint_seconds=None,
            writes_per_command=int(batch_size),
        )
        if replica_set
        else None
    )
    with engine_home(workdir or engine_config.get("workdir"), f"appversions-vs-mongod-{version}") as home:
        return measure_version(
            version,
            events_path,
            home / "wt",
            cache_mb=cache_mb,
            grown_by="upserts",
            checkpoint_every=every,
            batch_size=batch_size,
            workers=workers,
            replica_set=topology,
        )


def version_row(
    collstats_path: str | Path,
    provenance_path: str | Path,
    events_path: str | Path,
    engine_config: dict,
    workdir=None,
) -> dict:
    """One loaded version: the server's load (its collStats row and provenance) and the lab's growth of the
    same version from the same events, as the server grew it: {"load", "record", "lab"}."""

    load = read_parquet(collstats_path).row(0, named=True)
    record = read_provenance(provenance_path)
    extra = record.get("extra") or {}
    server = record.get("server") or {}
    cache_mb = server_cache_mb(record)
    every = checkpoint_every(int(load["events"]), extra.get("load_seconds"))
    lab = lab_run(
        load["version"],
        events_path,
        cache_mb,
        every,
        int(extra.get("batch_size") or 250),
        int(extra.get("load_workers") or 4),
        bool(server.get("replica_set")),
        engine_config,
        workdir,
    )
    return {
        "load": load,
        "record": {k: record.get(k) for k in ("profile", "applied_options", "server", "extra")},
        "lab": lab | {"cache_mb": cache_mb, "checkpoint_every": every},
    }


def comparison_rows(version: dict) -> list[dict]:
    """version_row's result as the comparison's rows (a quantity the server did not report is left out)."""
    load, record, lab = version["load"], version["record"], version["lab"]
    server = record.get("server") or {}
    mongod, engine = server_values(load), lab_values(lab)
    return [
        {
            "study": STUDY,
            "quantity": quantity,
            "profile": record.get("profile"),
            "workload": load["version"],
            "n": int(load["events"]),
            "unit": unit,
            "engine": engine[quantity],
            "mongod": mongod[quantity],
            "band": band,
            "mongod_version": server.get("version"),
            "engine_rules": "replset" if server.get("replica_set") else "standalone",
        }
        for quantity, (unit, band) in QUANTITIES.items()
        if mongod[quantity] is not None
    ]


def write_version(
    collstats_path: str | Path,
    provenance_path: str | Path,
    events_path: str | Path,
    engine_config: dict,
    out_json: str | Path,
) -> dict:
    """The per-version job's work: version_row written as JSON (whole, or not at all)."""

    row = version_row(collstats_path, provenance_path, events_path, engine_config)
    write_json_atomic(Path(out_json), row)
    return row


def write_comparison(
    version_paths: Iterable[str | Path], out_csv: str | Path, figure_paths: Iterable[str | Path] = ()
) -> pl.DataFrame:
    """The merge: every version's rows as results/appversions/engine_vs_mongod.csv and its figure."""

    rows = [row for path in version_paths for row in comparison_rows(read_json(path))]
    frame = comparison(rows).sort("workload", "quantity") if rows else comparison(rows)
    return write_table(frame, out_csv, figure_paths)


__all__ = [
    "QUANTITIES",
    "checkpoint_every",
    "comparison_rows",
    "lab_run",
    "lab_values",
    "server_cache_mb",
    "server_values",
    "version_row",
    "write_comparison",
    "write_version",
]
