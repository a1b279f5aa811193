"""appversions on the engine lab: each version's collection and indexes stored by WiredTiger.

Grown as mongod grew it (`grown_by: upserts`): the engine job writes its events.parquet chunk by
chunk and each version reads it back through the load step's own chunked reader and batching
(costlab.appversions.load.load_batches: each load worker's keys, `appversions.batch_size`
statements to a batch, built by statements.py, the loader's raw BSON), then applies every
statement as mongod applies it (costlab.engine.update: the document found through the `_id` or the
unique `{key, date}` index, upserted or updated by mongod's update rules, written through mongod's
record-store update rule). Neither the stream nor the collection is held in Python: the documents
live in WiredTiger. Each version gets a fresh WiredTiger home, a record store with the version's
block compressor (snappy; zstd for appV6R4) and its indexes (_id, plus appV1-appV3's unique
{key, date}); after the final checkpoint the table and index files' sizes are the storage and index
sizes (collStats storageSize / totalIndexSize).

`grown_by: final_documents` inserts each version's final documents once instead, built here from
the events directly (version_documents: one per (key, day) for appV1-appV4, per (key, bucket) for
appV5/appV6; their BSON sizes are checked against the server-free model in the tests).

The compressor wanted is recorded beside the one used: without the compressor extensions the
nearest built-in one is used (lz4 for snappy, zlib for zstd) and the rows say so.
"""
from __future__ import annotations

import dataclasses
import math
import shutil
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Callable, Iterator

import bson
import numpy as np
import polars as pl

from costlab.appversions.events import (
    DEFAULT_START,
    event_file_rows,
    iter_event_chunks,
    read_events,
    users_for,
    write_events,
)
from costlab.appversions.load import PUBLISHED_BATCH_SIZE, load_batches
from costlab.appversions.params import EngineParams, EngineVersionParams
from costlab.appversions.registry import PUBLISHED_NAMES
from costlab.appversions.user_events import OWN_EVENTS_REASON
from costlab.appversions.variant_findings import engine_variant_rows
from costlab.appversions.versions import AppVersion, get_version, prepared_columns
from costlab.appversions.window import AUTHORS_EVENTS_PER_YEAR, AUTHORS_WORKERS
from costlab.engine.connection import Engine, EngineSettings
from costlab.engine.deployment import Deployment
from costlab.engine.provenance import SERVER_KIND, engine_provenance
from costlab.engine.replset import ReplicaSetSettings, replica_set_settings, timestamp_of
from costlab.engine.runs import engine_home
from costlab.engine.spread import read_spreads, scale_key, undecided_reason
from costlab.engine.update import ObjectIds, apply_statement
from costlab.engine.wt import compressor_or_nearest, wiredtiger_version
from costlab.finding import interval_verdict, judged, verdict_table
from costlab.inputs import read_csv, read_json
from costlab.intervals import over_repeats
from costlab.io import write_csv
from costlab.jobs import RunFacts
from costlab.progress import progress
from costlab.published import Tolerances, read_tolerances, tolerances_or_published
from costlab.repeats import ENGINE_REPEATS, medians_over_repeats, repeat_values
from costlab.server.provenance import write_json_atomic
from costlab.verdicts import Rule, Verdict

NEAREST = {"snappy": ("lz4", "zlib", "none"), "zstd": ("zlib", "lz4", "none")}
BATCH = 250   # documents per transaction while loading


def wanted_compressor(version: AppVersion) -> str:
    config = (
        version.create_collection_options.get("storageEngine", {})
        .get("wiredTiger", {})
        .get("configString", "")
    )
    for part in config.split(","):
        if part.startswith("block_compressor="):
            return part.split("=", 1)[1]
    return "snappy"   # mongod's default collection block compressor


def version_documents(version: AppVersion, events: pl.DataFrame) -> Iterator[tuple[dict, dict]]:
    """(document, index key fields) per document the version holds after upserting `events`: the
    layout's engine-lab document after all its events."""
    prepared = prepared_columns(version, events).with_row_index("row")
    for rows, build in version.layout.engine_groups(version, prepared):
        yield build(len(rows))


def _index_fields(version: AppVersion) -> dict[str, tuple[str, ...]]:
    return {"_".join(keys): keys for keys in version.index_keys}


GROWN_BY = ("upserts", "final_documents")
CHUNK_ROWS = 1_000_000             # events read (and generated) at a time, as the loader reads them
CHECKPOINT_EVERY_EVENTS = 60_000   # mongod checkpoints every 60 s; at the article's top Bulk Upsert rate
                                   # (1,000 events/s, appversions_loadtest_method.csv) that is 60,000 events


def _grow_by_upserts(
    collection,
    engine: Engine,
    version: AppVersion,
    events_path: Path,
    checkpoint_every: int,
    batch_size: int,
    workers: int,
    chunk_rows: int,
    on_batch: Callable | None = None,
) -> tuple[int, int, int]:
    """The version's Bulk Upsert stream as the load step sends it: the events file read chunk by
    chunk (costlab.appversions.load.load_batches: each load worker's keys, `batch_size` statements to a
    batch, built by statements.py), each statement applied as its own transaction the way mongod
    applies an unordered bulk write's statements (costlab.engine.update: find through the index,
    upsert or update through mongod's update rule). A checkpoint every `checkpoint_every` statements
    stands for mongod's 60-second one. Returns (documents, final data bytes, checkpoints taken)."""

    new_id, seen, checkpoints, inserted = ObjectIds(), 0, 0, 0
    for worker, statements in load_batches(version, events_path, workers, batch_size, chunk_rows):
        if on_batch is not None:
            on_batch(worker, statements)
        for statement in statements:
            if apply_statement(collection, statement.raw, new_id) == "insert":
                inserted += 1
            seen += 1
            if checkpoint_every and seen % checkpoint_every == 0:
                engine.checkpoint()
                checkpoints += 1
    return inserted, _data_bytes(collection), checkpoints


def _data_bytes(collection) -> int:
    """The record store's BSON bytes (collStats size), read back from the table."""
    cursor = collection.deployment.engine.session.open_cursor(collection.records.uri)
    total = 0
    try:
        while cursor.next() == 0:
            total += len(cursor.get_value())
    finally:
        cursor.close()
    return total


def _insert_final_documents(collection, version: AppVersion, events: pl.DataFrame) -> tuple[int, int, int]:
    """The version's final documents inserted once, BATCH to a transaction (no history of updates)."""
    documents = data_bytes = 0
    batch_docs, batch_keys = [], []
    for doc, keys in version_documents(version, events):
        encoded = bson.encode(doc)
        batch_docs.append(encoded)
        batch_keys.append(keys)
        documents += 1
        data_bytes += len(encoded)
        if len(batch_docs) == BATCH:
            collection.insert_batch(batch_keys, batch_docs)
            batch_docs, batch_keys = [], []
    if batch_docs:
        collection.insert_batch(batch_keys, batch_docs)
    return documents, data_bytes, 0


def measure_version(version_name: str, events_path: str | Path, home: Path, cache_mb: int = 512,
                    grown_by: str = "upserts", checkpoint_every: int = CHECKPOINT_EVERY_EVENTS,
                    batch_size: int = PUBLISHED_BATCH_SIZE, workers: int = 4, chunk_rows: int = CHUNK_ROWS,
                    on_batch: Callable | None = None, replica_set: ReplicaSetSettings | None = None) -> dict:
    """One version's collection in a fresh engine, grown by its Bulk Upsert stream read from
    `events_path` (an events.parquet, as the load step reads it: `batch_size`, `workers`), or its
    final documents inserted once (`grown_by: final_documents`, the events read whole); sizes after
    the final checkpoint (closing the connection takes it). `on_batch(worker, statements)` sees
    every batch before it is applied.

    `replica_set`: on the replica set the article ran (its statements committed with timestamps at
    the modelled load rate, the oldest timestamp trailing stable by the history window, checkpoints
    at stable: costlab.engine.replset; the oplog and the other tables mongod writes per write are
    not written, their files are not the collection's); None = a standalone (no timestamps)."""

    if grown_by not in GROWN_BY:
        raise ValueError(f"engine.appversions.grown_by {grown_by!r}; allowed: {', '.join(GROWN_BY)}")
    version = get_version(version_name)
    wanted = wanted_compressor(version)
    used, note = compressor_or_nearest(wanted, NEAREST.get(wanted, ("lz4", "zlib", "none")))
    if home.exists():
        shutil.rmtree(home)
    if replica_set is not None:
        # timestamps only: the oplog's $v:2 update diffs are not modelled (costlab.engine.update), and the
        # growth loop takes the checkpoints (checkpoint_every)
        replica_set = dataclasses.replace(replica_set, side_tables=False, checkpoint_seconds=None)
    # the journal does not change a table's file; it is off to save time
    engine = Engine(
        home,
        EngineSettings(
            cache_mb=cache_mb,
            journal_compressor=compressor_or_nearest("snappy")[0],
            block_compressor=used,
            journal=False,
        ),
    )
    ns = f"costlab_appversions.{version.collection_name}"
    events = event_file_rows(events_path)
    try:
        deployment = (Deployment(engine, "replset-1", used, retryable_writes=False, replica_set=replica_set)
                      if replica_set is not None else Deployment(engine, "standalone", used))
        collection = deployment.collection(ns, _index_fields(version))
        if grown_by == "upserts":
            documents, data_bytes, checkpoints = _grow_by_upserts(
                collection, engine, version, Path(events_path), checkpoint_every, batch_size, workers,
                chunk_rows, on_batch)
        else:
            documents, data_bytes, checkpoints = _insert_final_documents(collection, version,
                                                                         read_events(events_path))
        deployment.flush_pending()
        table_files = {
            "records": collection.records.uri,
            **{n: ix.uri for n, ix in collection.indexes.items()},
        }
    finally:
        engine.close()  # closing checkpoints: the files hold everything
    sizes = {
        name: (home / (uri.split(":", 1)[1] + ".wt")).stat().st_size for name, uri in table_files.items()
    }
    index_bytes = sum(v for k, v in sizes.items() if k != "records")
    return {"version": version_name, "events": events, "documents": documents, "data_bytes": data_bytes,
            "avg_doc_bytes": data_bytes / documents if documents else None, "storage_bytes": sizes["records"],
            "indexes": len(sizes) - 1, "index_bytes": index_bytes, "grown_by": grown_by,
            "checkpoints": checkpoints + 1, "block_compressor_wanted": wanted, "block_compressor": used,
            "compressor_note": note, "topology": "replset" if replica_set is not None else "standalone",
            "history_window_seconds": replica_set.history_window_seconds if replica_set is not None else None,
            "time_windows": _time_windows_kept(deployment)}


def _time_windows_kept(deployment: Deployment) -> str:
    """Which cells kept their time window: 'none' (a standalone, or the oldest timestamp kept at
    stable), 'all' (the oldest never passed the first commit) or 'partial'."""
    settings = deployment.settings
    if settings is None or settings.window_writes == 0:
        return "none"
    if deployment.oldest is None or deployment.oldest < timestamp_of(0, settings):
        return "all"
    return "partial"


def write_engine_events(events_per_year: int, seed: int, window: str, path: Path) -> int:
    """The engine lab's events.parquet (integer-coded, chunk by chunk, as the model step writes it)."""

    return write_events(
        iter_event_chunks(events_per_year, seed, window=window, chunk_events=CHUNK_ROWS), path
    )


def storage_table(rows: list[dict], published: pl.DataFrame, wt_version: str) -> pl.DataFrame:
    """Per version: engine sizes per event beside the published ones (GiB / 500 M events)."""
    frame = pl.DataFrame(rows)
    pub = published.select(
        "version",
        (pl.col("storage_size_gib") * 2**30 / pl.col("events")).alias("published_storage_bytes_per_event"),
        (pl.col("index_size_gib") * 2**30 / pl.col("events")).alias("published_index_bytes_per_event"),
        (pl.col("storage_size_gib") / pl.col("data_size_gib")).alias("published_storage_over_data"))
    for column in ("storage_bytes_no_time_windows", "storage_bytes_all_time_windows"):
        if column not in frame.columns:   # a standalone run (or rows written before the bracket)
            frame = frame.with_columns(pl.lit(None, pl.Int64).alias(column))
    return frame.with_columns(
        (pl.col("storage_bytes") / pl.col("events")).alias("storage_bytes_per_event"),
        (pl.col("index_bytes") / pl.col("events")).alias("index_bytes_per_event"),
        (pl.col("storage_bytes") / pl.col("data_bytes")).alias("storage_over_data"),
        *[(pl.col(f"storage_bytes_{edge}") / pl.col("data_bytes")).alias(f"storage_over_data_{edge}")
          for edge in ("no_time_windows", "all_time_windows")],
    ).join(pub, on="version", how="left").with_columns(
        pl.lit(wt_version).alias("wt_version"), pl.lit(SERVER_KIND).alias("server_kind"))


# each repeat's value kept beside the median of these columns ("; "-separated, in repeat order): the
# verdicts' intervals over the repeats are drawn from them
REPEATED = ("storage_over_data", "storage_bytes", "index_bytes")   # index_bytes: the figure's dots


def over_repeats_table(per_repeat: pl.DataFrame) -> pl.DataFrame:
    """storage_table's rows, one per (version, rep), as one row per version (costlab.repeats.
    medians_over_repeats: each numeric column the median over the version's repeats, `repeats`, `seeds` and
    `<column>_repeats` for REPEATED), with the median's interval over the repeats of storage_over_data
    (`storage_over_data_low`, `_high`, `interval_confidence`: costlab.intervals.over_repeats; empty for one
    repeat, which has none)."""

    table = medians_over_repeats(per_repeat, ["version"], REPEATED, {"seed": "seeds"})
    intervals = [over_repeats(repeat_values(row, "storage_over_data")) for row in table.iter_rows(named=True)]
    return table.with_columns(
        pl.Series("storage_over_data_low", [i.low for i in intervals], pl.Float64),
        pl.Series("storage_over_data_high", [i.high for i in intervals], pl.Float64),
        pl.Series("interval_confidence", [i.confidence for i in intervals], pl.Float64),
    )


def verdicts(table: pl.DataFrame, tolerances: Tolerances | None = None,
             spreads: dict | None = None, own_events: bool = False) -> pl.DataFrame:
    """Compression (storage / data) per version, and appV6R4's zstd against appV6R3's snappy, judged by
    appversions_tolerances.csv's engine_compression and engine_zstd_over_snappy (or `tolerances`): each
    value's interval over its repeats against the rule's band (costlab.finding.interval_verdict: reproduced,
    not reproduced or inconclusive; one repeat keeps the point verdict and says "one run: no interval").
    appV1-appV4's time-window bracket on the replica set is a point rule (no band): its verdict stays the
    point one, with the interval in words. A one-run value at a scale whose kept identical runs disagree
    about its verdict (`spreads`: costlab.engine.spread) is inconclusive, "this scale is too small to
    decide". On your own events (`own_events`, appversions.events) no published number judges them: each
    row is `not comparable`, its value kept."""

    tol = tolerances_or_published(tolerances, "appversions")
    zstd_rule = tol["engine_zstd_over_snappy"].holds()
    rows = []
    for r in table.iter_rows(named=True):
        if r["version"] not in PUBLISHED_NAMES:
            continue   # a version of one's own has no published number: variant_findings.py's rows
        substituted = r["block_compressor"] != r["block_compressor_wanted"]
        compression = tol["engine_compression"].holds(r["published_storage_over_data"])
        note = r["compressor_note"]
        bracket = (r.get("storage_over_data_no_time_windows"), r.get("storage_over_data_all_time_windows"))
        if None not in bracket and r["published_storage_over_data"] is not None:
            compression, why = bracket_rule(r["published_storage_over_data"], bracket,
                                            tol["engine_compression_bracket"], r["storage_over_data"],
                                            slice_words(r))
            note = "; ".join(filter(None, (why, note)))
        row = judged(f"{r['version']}: storage size / data size with its block compressor",
                     f"storageSize / size, {r['version']} ({r['block_compressor_wanted']}"
                     + (f"; {r['block_compressor']} used)" if substituted else ")"), "ratio",
                     r["published_storage_over_data"], r["storage_over_data"], compression,
                     server_kind=SERVER_KIND, note=note)
        values = repeat_values(r, "storage_over_data")
        if values:
            row = interval_verdict(row, over_repeats(values), compression)
        if None not in bracket and r["published_storage_over_data"] is not None:
            # the bracket has no band for the interval to be judged against: its verdict is the point one
            row = row.but(row.verdict, BRACKET_POINT_RULE)
        if len(values) <= 1:
            row = _unsupported(row, spreads, r, r["version"], "storage_over_data", compression)
        if substituted:
            row = row.but(
                Verdict.NOT_COMPARABLE,
                f"{r['block_compressor_wanted']} not available here; {r['block_compressor']} measured",
            )
        rows.append(row)
    by_version = {r["version"]: r for r in table.iter_rows(named=True)}
    if "appV6R3" in by_version and "appV6R4" in by_version:
        r3, r4 = by_version["appV6R3"], by_version["appV6R4"]
        published = (r4["published_storage_bytes_per_event"] / r3["published_storage_bytes_per_event"]
                     if r3["published_storage_bytes_per_event"] else None)
        # repeat r of both versions grew from the same events (one seed per repeat): a ratio per repeat
        pairs = list(zip(repeat_values(r4, "storage_bytes"), repeat_values(r3, "storage_bytes"), strict=True))
        ratios = [a / b for a, b in pairs]
        row = judged(
            "zstd stores appV6R4 in less space than snappy stores appV6R3 (same documents)",
            "storage size appV6R4 / appV6R3",
            "ratio",
            published,
            over_repeats(ratios).estimate if len(ratios) > 1 else r4["storage_bytes"] / r3["storage_bytes"],
            zstd_rule,
            server_kind=SERVER_KIND,
            note=f"compared here: {r4['block_compressor']} / {r3['block_compressor']}",
        )
        row = interval_verdict(row, over_repeats(ratios), zstd_rule)
        if len(ratios) <= 1:
            row = _unsupported(row, spreads, r4, ZSTD_PAIR, "storage_bytes_ratio", zstd_rule)
        if (r3["block_compressor"], r4["block_compressor"]) != ("snappy", "zstd"):
            row = row.but(
                Verdict.NOT_COMPARABLE,
                f"snappy and zstd not available here; {r4['block_compressor']} / "
                f"{r3['block_compressor']} measured",
            )
        rows.append(row)
    if own_events:
        rows = [row.but(Verdict.NOT_COMPARABLE, OWN_EVENTS_REASON) for row in rows]
    return verdict_table(rows + engine_variant_rows(table), rounded=True)


ZSTD_PAIR = "appV6R4/appV6R3"   # the spread file's name of the zstd-over-snappy ratio


def _unsupported(row, spreads: dict | None, measured: dict, version: str, column: str, rule):
    """`row` (judged on one run) as inconclusive where the kept runs at its scale disagree under `rule`."""

    if not spreads or row.verdict not in (Verdict.REPRODUCED, Verdict.NOT_REPRODUCED):
        return row
    reason = undecided_reason(spreads, scale_key(measured), version, column, rule,
                              "engine.appversions.events_per_year")
    return row.but(Verdict.INCONCLUSIVE, reason) if reason else row


def slice_words(row: dict) -> str | None:
    """What a per-day version's row grew, in words, or None for a scaled run."""
    days = row.get("slice_days")
    if not days:
        return None
    return (f"{int(days)} day{'s' if days > 1 else ''} of the article's own events ({int(row['events']):,} "
            f"statements over its {users_for(SLICE_EVENTS_PER_YEAR):,} users, {int(row['load_workers'])} "
            f"load workers, a {int(row['cache_mb']):,} MB cache)")


# the reason of appV1-appV4's rows on the replica set: judged by the bracket on the medians, not the interval
BRACKET_POINT_RULE = "bracket: point rule (the interval is shown; the bracket has no band to judge it by)"


def bracket_rule(published: float, edges: tuple[float, float], band, reproduced: float | None,
                 measured_on: str | None = None) -> tuple[Rule, str]:
    """appV1-appV4's rule and why: the published storage / data inside the bracket measured with no cell
    keeping its time window and with every cell keeping one, or within `band` (engine / published) of the
    nearer edge. The published run kept some: how many depends on its load rate, eviction and its 20
    workers' clocks, none of which the article reports, so no single value can be expected."""
    low, high = sorted(edges)
    nearer = low if published < low else high if published > high else None
    inside = nearer is None or band.holds(published)(nearer)
    rule = Rule(lambda _: inside,
                f"published in [{low:.3g}, {high:.3g}] (no cell keeps its time window, every cell keeps "
                f"one), or nearer edge / published in [{band.low:g}, {band.high:g}]")
    why = (f"a bracket: the article's replica set stored some cells with their time window (commits newer "
           f"than the oldest timestamp, 300 s behind stable) and some without; how many depends on its load "
           f"rate, eviction and its 20 workers' clocks, which it does not report. Measured with none: "
           f"{low:.3g}; with every cell keeping one: {high:.3g}")
    if reproduced is not None:
        why += f"; this run (the replica set at the load rate): {reproduced:.3g}"
    if measured_on:
        why += f"; measured on {measured_on}"
    return rule, why


# The article's WiredTiger cache (1.5 GB on its 4 GB database machine, Part 3's appV6R0 notes) against
# its 500 M events: the engine's cache is scaled by events / 500 M so the collection outgrows it as
# the article's did (a checkpoint then writes only the pages dirtied since the last one, and eviction
# writes pages between checkpoints), at least WiredTiger's 1 MB minimum cache_size.
ARTICLE_CACHE_MB = 1536
PUBLISHED_EVENTS = 500_000_000
MIN_CACHE_MB = 1


def engine_cache_mb(events: int, configured: int | None) -> int:
    """The cache a version's engine runs with: `engine.appversions.cache_mb`, or (null) the article's
    cache : events ratio."""
    if configured is not None:
        return int(configured)
    return max(MIN_CACHE_MB, math.ceil(ARTICLE_CACHE_MB * events / PUBLISHED_EVENTS))


TOPOLOGIES = ("replset", "standalone")
# statements a second: the article's top Bulk Upsert rate (appversions_loadtest_method.csv)
DEFAULT_LOAD_RATE = 1000


def bracketed(version: AppVersion) -> bool:
    """A version judged by the time-window bracket on the replica set: one small document per key and
    day (appV1-appV4, a per-day layout), so a stored time window (9-10 B after snappy) is a large share
    of it, and how many cells kept one the article does not fix (docs/engine-lab.md)."""
    return version.layout.per_day


# The article's page composition for the per-day versions (appV1-appV4): their documents never outlive
# their day, so a day of the article's own events (its 833,334 users, 136,986 events a day, loaded by its
# 20 workers) gives the pages the article's collection held, at a 3,650th of its events. The slice starts
# on the article's first day; its cache is the article's 1.5 GB, which held a day's working set many
# times over. Only the final checkpoint is taken: a checkpoint within the slice leaves the blocks it
# replaces free in the file, which the article's later days reuse but a slice would count as storage
# (appV1: storage / data 0.30 with checkpoints every 60,000 statements against 0.16, docs/engine-lab.md).
SLICE_START = DEFAULT_START   # the article's first day, 2010-01-01
SLICE_EVENTS_PER_YEAR = AUTHORS_EVENTS_PER_YEAR   # the article's rate: its events a day and its users


def day_slice_days(version: AppVersion, settings: dict) -> int:
    """Days of the article's own events this version grows (engine.appversions.slice_days, for the
    per-day versions), or 0: the run scaled down to engine.appversions.events_per_year over ten years."""
    return int(settings.get("slice_days", 0)) if version.layout.per_day else 0


def write_slice_events(days: int, seed: int, path: Path, events_per_year: int = SLICE_EVENTS_PER_YEAR) -> int:
    """The first `days` days of the article's events (its rate, so its users) as an events.parquet."""

    return write_events(iter_event_chunks(events_per_year, seed, start=SLICE_START,
                                          end=SLICE_START + timedelta(days=days), chunk_events=CHUNK_ROWS),
                        path)


def scaled_history_window(window_seconds: int, load_rate: int, events: int) -> int:
    """The history window of a run scaled down from the article's, in writes: the article's window
    (`window_seconds` at `load_rate` statements a second) held that share of its 500 M statements, and
    the scaled run keeps the share (300 s x 1,000/s of 500 M = 0.06 %: 60 of 100,078 statements)."""
    return round(window_seconds * load_rate * events / PUBLISHED_EVENTS)


def version_replica_set(engine_config: dict, events: int, article_scale: bool,
                        batch_size: int = PUBLISHED_BATCH_SIZE) -> ReplicaSetSettings | None:
    """The deployment `engine.appversions.topology` asks: the replica set the article ran (its
    statements committed at `load_rate` a second, `batch_size` to an update command, which waits for
    one journal flush; `engine.replica_set`'s history window), or None for the standalone (no
    timestamps). A run of `events` scaled down from the article's (not
    `article_scale`) keeps the window's share of the article's statements (scaled_history_window)."""
    settings = engine_config["appversions"]
    topology = settings.get("topology", "standalone")
    if topology not in TOPOLOGIES:
        raise ValueError(f"engine.appversions.topology {topology!r}; allowed: {', '.join(TOPOLOGIES)}")
    if topology == "standalone":
        return None
    replica_set = replica_set_settings(engine_config, int(settings.get("load_rate") or DEFAULT_LOAD_RATE),
                                       side_tables=False, checkpoint_seconds=None,
                                       writes_per_command=int(batch_size))
    if article_scale or replica_set.history_window_seconds is None:
        return replica_set
    return dataclasses.replace(replica_set, history_window_writes=scaled_history_window(
        replica_set.history_window_seconds, replica_set.writes_per_second, events))


def bracket_runs(replica_set: ReplicaSetSettings, statements: int) -> int:
    """Runs a bracket needs beside the replica-set run: one when that run is itself an edge (its window
    keeps none, or spans every statement at the load rate), else two."""
    window = replica_set.window_writes
    return 1 if window is None or window == 0 or statements <= window else 2


def repeat_seed(seed: int, rep: int) -> int:
    """The events seed of repeat `rep` (1-based) of a version's engine job: repeat 1 keeps
    `appversions.seed`, so `engine.appversions.repeats: 1` measures exactly what one run always did;
    every later repeat gets its own, drawn from (seed, rep) by numpy's SeedSequence (independent
    streams, the same on every machine)."""

    if int(rep) < 1:
        raise ValueError(f"repeat {rep!r}: repeats count from 1")
    if int(rep) == 1:
        return int(seed)
    return int(np.random.SeedSequence([int(seed), int(rep)]).generate_state(1)[0])


def run_version_job(params: EngineVersionParams, run: RunFacts, name: str, row_path: str | Path,
                    rep: int = 1, own_events: str | Path | None = None) -> dict:
    """One version's engine run, repeat `rep` (its own events file from repeat_seed(seed, rep) in a
    scratch home, as deterministic as the model step's): its storage row and its job's provenance in
    one JSON file, written last. `params` are the rule's (costlab.appversions.params.EngineVersionParams),
    `run` the run's facts. With your own events (`params.events_file`, appversions.events) every version and
    repeat grows `own_events` (the events job's events.parquet of them) instead: no day slice, no seed."""

    engine_config = params.engine
    settings = engine_config["appversions"]
    version = get_version(name)   # an unknown version: the error names the registered ones
    started, cpu_started = datetime.now(timezone.utc), time.process_time()
    mine = getattr(params, "events_file", None)
    if mine and own_events is None:
        raise ValueError(f"appversions.events is {mine!r}: the engine job needs the events job's file of "
                         "them")
    slice_days = 0 if mine else day_slice_days(version, settings)
    seed = repeat_seed(params.seed, rep)
    home_name = f"appversions-{name}-{ENGINE_REPEATS.wildcard(rep)}"
    with engine_home(engine_config.get("workdir"), home_name) as home:
        events_path = home / "events.parquet"
        if mine:
            events_path = Path(own_events)   # read as the load step reads it; nothing is written to it
            events = event_file_rows(events_path)
            cache_mb = engine_cache_mb(events, settings.get("cache_mb"))
            workers, checkpoint_every = int(params.load_workers), int(settings["checkpoint_every_events"])
        elif slice_days:
            events = write_slice_events(slice_days, seed, events_path, SLICE_EVENTS_PER_YEAR)
            cache_mb = settings.get("cache_mb") or ARTICLE_CACHE_MB
            workers, checkpoint_every = AUTHORS_WORKERS, 0
        else:
            events = write_engine_events(int(settings["events_per_year"]), seed, params.event_window,
                                         events_path)
            cache_mb = engine_cache_mb(events, settings.get("cache_mb"))
            workers, checkpoint_every = int(params.load_workers), int(settings["checkpoint_every_events"])
        replica_set = version_replica_set(engine_config, events, article_scale=bool(slice_days),
                                          batch_size=int(params.batch_size))
        with_bracket = replica_set is not None and bracketed(version)
        # a version job runs 6-35 s at the default: its bar counts the upserts applied (one per event)
        runs = 1 + (bracket_runs(replica_set, events) if with_bracket else 0)
        with progress(total=events * runs, desc=f"engine {name}", unit="event") as bar:
            def measure(label: str, deployment: ReplicaSetSettings | None) -> dict:
                return measure_version(name, events_path, home / label, cache_mb=cache_mb,
                                       grown_by=settings["grown_by"], checkpoint_every=checkpoint_every,
                                       batch_size=int(params.batch_size), workers=workers,
                                       on_batch=lambda worker, statements: bar.update(len(statements)),
                                       replica_set=deployment)
            row = measure("wt", replica_set)
            row |= {"storage_bytes_no_time_windows": None, "storage_bytes_all_time_windows": None}
            if with_bracket:
                # the bracket's two edges: the oldest timestamp at stable (no cell keeps its time window)
                # and never moving (every cell keeps it); the run above is one of them when its history
                # window dropped none or kept all
                edges = {row["time_windows"]: row}
                for kept, window in (("none", 0), ("all", None)):
                    if kept not in edges:
                        edges[kept] = measure(f"wt-{kept}", dataclasses.replace(
                            replica_set, history_window_seconds=window, history_window_writes=None))
                row["storage_bytes_no_time_windows"] = edges["none"]["storage_bytes"]
                row["storage_bytes_all_time_windows"] = edges["all"]["storage_bytes"]
    row["cache_mb"] = cache_mb
    row["load_rate"] = replica_set.writes_per_second if replica_set is not None else None
    row["history_window_writes"] = replica_set.history_window_writes if replica_set is not None else None
    row["slice_days"], row["load_workers"] = slice_days, workers
    row["rep"], row["seed"] = int(rep), seed
    ended = datetime.now(timezone.utc)
    record = {"row": row, "provenance": engine_provenance(
        "appversions_engine", run, started, ended,
        {"version": name, "rep": int(rep), "seed": seed, "events": events,
         "events_per_year": (None if mine else SLICE_EVENTS_PER_YEAR if slice_days
                             else settings["events_per_year"]),
         "events_file": mine,
         "slice_days": slice_days,
         "cache_mb": cache_mb, "topology": "replset" if replica_set is not None else "standalone",
         "replica_set": replica_set.describe() if replica_set is not None else None,
         "batch_size": params.batch_size, "load_workers": workers,
         # the process's CPU, WiredTiger's eviction threads included
         "cpu_s": round(time.process_time() - cpu_started, 2)}, engine_config=engine_config)}
    write_json_atomic(Path(row_path), record)
    return record


def merge_engine_job(
    params: EngineParams,
    run: RunFacts,
    version_paths: list[str | Path],
    storage_path,
    verdicts_path,
    provenance_path,
    published_path,
    tolerances_path=None,
    spread_path=None,
) -> pl.DataFrame:
    """The per-version runs (run_version_job's files, in appversions.versions order) as the study's
    storage table, verdicts and one provenance holding each version job's own. The engine and load
    settings it records are its version jobs' (every one ran with the same: they are each one's params),
    so this job reads no config key its rule does not declare."""

    records = {}
    for path in version_paths:
        record = read_json(path, keys=("row", "provenance"))
        row = record["row"]
        records[(row["version"], int(row.get("rep", 1)))] = record   # rows written before repeats: rep 1
    wanted, repeats = list(params.versions), int(params.repeats)
    expected = [(name, rep) for name in wanted for rep in range(1, repeats + 1)]
    names = sorted({name for name, _ in records})
    if names != sorted(wanted):
        raise ValueError(f"appversions engine runs for {names}; appversions.versions is {wanted}")
    if sorted(records) != sorted(expected):
        missing = [f"{name} rep {rep}" for name, rep in expected if (name, rep) not in records]
        extra = [f"{name} rep {rep}" for name, rep in sorted(records) if (name, rep) not in expected]
        raise ValueError(f"engine.appversions.repeats {repeats} asks repeats 1-{repeats} of each version; "
                         f"missing: {', '.join(missing) or 'none'}; not asked: {', '.join(extra) or 'none'}")
    jobs = [records[key]["provenance"] for key in expected]
    started = min(datetime.fromisoformat(job["started_at"]) for job in jobs)
    ended = max(datetime.fromisoformat(job["ended_at"]) for job in jobs)
    first = jobs[0]["extra"]
    table = over_repeats_table(storage_table(
        [{**records[key]["row"], "rep": key[1]} for key in expected], read_csv(published_path),
        wiredtiger_version()))

    write_csv(verdicts(table, read_tolerances(tolerances_path) if tolerances_path else None,
                       read_spreads(spread_path) if spread_path else None,
                       own_events=bool(getattr(params, "events_file", None))), verdicts_path)
    provenance = engine_provenance(
        "appversions_engine", run, started, ended,
        {"events": sorted(set(table["events"].to_list())),
         "events_per_year": sorted({job["extra"]["events_per_year"] for job in jobs}), "repeats": repeats,
         "cache_mb": sorted(set(table["cache_mb"].to_list())), "batch_size": first["batch_size"],
         "load_workers": sorted({job["extra"]["load_workers"] for job in jobs}),
         "cpu_s": round(sum(job["extra"]["cpu_s"] for job in jobs), 2),
         "version_jobs": jobs})
    # the compressors the version jobs resolved from their engine params (this job has none)
    provenance["compressors"] = jobs[0]["compressors"]
    write_json_atomic(Path(provenance_path), provenance)
    write_csv(table, storage_path)   # last: its presence means the job completed
    return table


__all__ = ["version_documents", "measure_version", "write_engine_events", "storage_table", "verdicts",
           "engine_cache_mb", "repeat_seed", "over_repeats_table", "run_version_job", "merge_engine_job"]
