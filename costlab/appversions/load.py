"""Load one app version's collection through its own Bulk Upsert, then read its collection stats.

Published method: every version got the same 500 million events through its Bulk Upsert
function, in unordered batches of 250. Here the events come from events.parquet (read chunk by chunk) and are
sent
by several worker processes. Each worker owns a disjoint set of keys (all of a user's events go
to one worker, in date order), so two workers never upsert the same document at the same time
(no duplicate-key races on upsert, and a bucket's items keep the order they had in the source).

A batch is one unordered `update` command of pre-encoded statements (statements.py: the same
statements `bulk_write(version.bulk_upsert_ops(...), ordered=False)` sends, built without a Python
object per event); every reply is checked, and the server's counts are summed across workers.
"""
from __future__ import annotations

import json
import multiprocessing as mp
import os
import time
from dataclasses import dataclass
from itertools import zip_longest
from pathlib import Path

import polars as pl
from pymongo import MongoClient

from costlab.appversions.events import event_file_rows, iter_event_file, with_keys
from costlab.appversions.params import LoadParams
from costlab.appversions.statements import UpsertCounts, iter_statement_batches, send_update_statements
from costlab.appversions.versions import get_version
from costlab.credentials import connection_uri
from costlab.io import write_parquet
from costlab.jobs import RunFacts
from costlab.measure.storage import checkpointed_coll_stats
from costlab.procs import die_with_parent
from costlab.progress import progress
from costlab.server import measuring_job
from costlab.server.connection import measurement_uri
from costlab.server.provenance import write_json_atomic

DATABASE = "costlab_appversions"
PUBLISHED_BATCH_SIZE = 250

# collStats fields -> our column names.
COLLSTATS_FIELDS = {"count": "documents", "size": "data_bytes", "avgObjSize": "avg_doc_bytes",
                    "storageSize": "storage_bytes", "nindexes": "indexes", "totalIndexSize": "index_bytes"}
COLLECTION_STATS_COLUMNS = ["version", "collection", "events", *COLLSTATS_FIELDS.values(),
                            "data_bytes_per_event", "index_bytes_per_event", "total_bytes_per_event",
                            "storage_bytes_per_event", "total_storage_bytes_per_event", "documents_per_event"]


def worker_of_user(users: pl.Expr, workers: int) -> pl.Expr:
    """Worker that owns a key, from its user index: the index modulo `workers` (vectorised).

    The same owner as the key's last 8 hex digits modulo `workers` (user indexes are < 2**32).
    """
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers!r}")
    return users.mod(workers).cast(pl.Int32)


def batches(events: pl.DataFrame, batch_size: int) -> list[pl.DataFrame]:
    """Consecutive slices of `batch_size` rows (the last may be shorter)."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size!r}")
    return [events.slice(offset, batch_size) for offset in range(0, events.height, batch_size)]


@dataclass
class _LoadJob:
    uri: str
    database: str
    collection: str
    version: str
    events_path: str
    worker: int
    workers: int
    batch_size: int
    chunk_rows: int = 1_000_000


# Shared counters of the worker processes: events sent, then the server's n, nModified, upserted.
_SENT, _APPLIED, _MODIFIED, _UPSERTED = range(4)


class WorkerRows:
    """The rows one load worker sends, chunk by chunk: the worker's own keys (worker_of_user), in
    file order, cut into whole batches; the rest (under a batch) waits for the next chunk."""

    def __init__(self, worker: int, workers: int, batch_size: int) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size!r}")
        worker_of_user(pl.lit(0), workers)   # checks workers
        self.worker, self.workers, self.batch_size = worker, workers, batch_size
        self.pending: pl.DataFrame | None = None

    def take(self, chunk: pl.DataFrame) -> pl.DataFrame:
        """This worker's rows of `chunk` (integer-coded) that fill whole batches, with what was pending."""
        mine = chunk.filter(worker_of_user(pl.col("user"), self.workers) == self.worker)
        if self.pending is not None:
            mine = pl.concat([self.pending, mine])
        full = mine.height - mine.height % self.batch_size
        self.pending = mine.slice(full)
        return mine.head(full)

    def rest(self) -> pl.DataFrame | None:
        """What is left after the last chunk (one short batch), or None."""
        rest, self.pending = self.pending, None
        return rest if rest is not None and rest.height else None


def statement_batches(version, rows: pl.DataFrame | None, batch_size: int):
    """The update statements of `rows` (integer-coded events), `batch_size` to an update command:
    built by statements.py, vectorised for many rows at once, as the loader sends them."""

    if rows is None or rows.is_empty():
        return iter(())
    return iter_statement_batches(version, with_keys(rows), batch_size)


def worker_batches(version, events_path: str | Path, worker: int, workers: int, batch_size: int,
                   chunk_rows: int = 1_000_000):
    """Every statement batch load worker `worker` of `workers` sends, in its order. Integer-coded
    chunks of the events file (a 500-million-event file never sits in memory whole); keys become the
    article's strings only for the rows this worker sends, where the statements are built."""

    owner = WorkerRows(worker, workers, batch_size)
    for chunk in iter_event_file(events_path, chunk_rows):
        yield from statement_batches(version, owner.take(chunk), batch_size)
    yield from statement_batches(version, owner.rest(), batch_size)


def load_batches(
    version, events_path: str | Path, workers: int, batch_size: int, chunk_rows: int = 1_000_000
):
    """(worker, statements) of every batch the load step's `workers` send, the file read once: per
    chunk, the workers' batches taken in turn (the load's workers run at once; this is one order of
    the same batches). What the engine lab applies (costlab.appversions.engine)."""

    owners = [WorkerRows(w, workers, batch_size) for w in range(workers)]

    def interleaved(rows_of):
        streams = [statement_batches(version, rows_of(owner), batch_size) for owner in owners]
        for turn in zip_longest(*streams):
            for worker, batch in enumerate(turn):
                if batch is not None:
                    yield worker, batch

    for chunk in iter_event_file(events_path, chunk_rows):
        yield from interleaved(lambda owner, chunk=chunk: owner.take(chunk))
    yield from interleaved(lambda owner: owner.rest())


def _load_worker(job: _LoadJob, counters, parent_pid: int | None = None) -> None:
    if parent_pid is not None:
        die_with_parent(parent_pid)   # a load killed with -9 must not leave workers writing

    version = get_version(job.version)
    client = MongoClient(job.uri, maxPoolSize=1)
    try:
        collection = client[job.database][job.collection]
        for statements in worker_batches(version, job.events_path, job.worker, job.workers, job.batch_size,
                                         job.chunk_rows):
            counts = send_update_statements(collection, statements, job.version)
            with counters.get_lock():
                counters[_SENT] += counts.statements
                counters[_APPLIED] += counts.applied
                counters[_MODIFIED] += counts.modified
                counters[_UPSERTED] += counts.upserted
    finally:
        client.close()


def load_events(uri: str, database: str, collection: str, version: str, events_path: str | Path,
                batch_size: int = PUBLISHED_BATCH_SIZE, workers: int = 4, chunk_rows: int = 1_000_000
                ) -> UpsertCounts:
    """Send every event of events_path through the version's Bulk Upsert; return the server's counts.

    `applied` (the replies' n summed) is the number of events applied; `upserted` the documents
    created, `modified` the existing documents updated. The collection must already be prepared
    (options, indexes). Raises RuntimeError naming the version and the failed workers if any worker
    fails, e.g. on a write error in a reply (the partial collection is then not marked complete:
    the caller writes dataset.json only after this returns).
    """

    if workers < 1:
        raise ValueError(f"load workers must be >= 1, got {workers!r}")

    total = event_file_rows(events_path)
    ctx = mp.get_context("spawn")   # fresh interpreters: no client state inherited across fork
    counters = ctx.Array("q", 4)
    processes = [
        ctx.Process(
            target=_load_worker,
            name=f"load-{version}-{w}",
            daemon=True,
            args=(
                _LoadJob(
                    uri, database, collection, version, str(events_path), w, workers, batch_size, chunk_rows
                ),
                counters,
                os.getpid(),
            ),
        )
        for w in range(workers)
    ]
    bar = progress(total=total, desc=f"load {version}", unit="events")
    try:
        for process in processes:
            process.start()
        shown = 0
        while any(p.is_alive() for p in processes):
            time.sleep(0.25)
            if counters[_APPLIED] > shown:
                bar.update(counters[_APPLIED] - shown)
                shown = counters[_APPLIED]
        for process in processes:
            process.join()
    finally:
        bar.close()
        for process in processes:
            if process.is_alive():
                process.terminate()
                process.join(5)
    failed = [p.name for p in processes if p.exitcode != 0]
    if failed:
        raise RuntimeError(f"loading {version} failed in worker processes {', '.join(failed)} "
                           "(see their traceback above)")
    counts = UpsertCounts(
        statements=counters[_SENT],
        applied=counters[_APPLIED],
        modified=counters[_MODIFIED],
        upserted=counters[_UPSERTED],
    )
    if counts.statements != total or counts.applied != total:
        raise RuntimeError(f"loading {version}: {counts.statements} of {total} events sent, "
                           f"{counts.applied} applied")
    return counts


def collection_stats(db, collection: str) -> dict:
    """collStats of one collection (bytes, unscaled) as our column names, read after a checkpoint.

    Also `block_compressor` (from the WiredTiger creation string, or "not reported") and
    `checkpoint` (whether the server took the checkpoint; see costlab.measure.storage).
    """

    raw, compressor, checkpoint = checkpointed_coll_stats(db, collection)
    return {**{ours: raw.get(theirs) for theirs, ours in COLLSTATS_FIELDS.items()},
            "block_compressor": compressor, "checkpoint": checkpoint}


def per_event_figures(stats: dict, events: int) -> dict:
    """The articles' Event Statistics: sizes divided by the number of events loaded.

    data/index/total bytes per event as in Parts 1-3 (total = data + index); storage (the
    compressed data size) per event and storage + index per event as in appV6R4's table.
    """
    if events < 1:
        raise ValueError(f"events must be >= 1 to divide by, got {events!r}")

    def per(value):
        return None if value is None else value / events

    data, index, storage = stats.get("data_bytes"), stats.get("index_bytes"), stats.get("storage_bytes")
    return {
        "data_bytes_per_event": per(data),
        "index_bytes_per_event": per(index),
        "total_bytes_per_event": None if data is None or index is None else (data + index) / events,
        "storage_bytes_per_event": per(storage),
        "total_storage_bytes_per_event": None
        if storage is None or index is None
        else (storage + index) / events,
        "documents_per_event": per(stats.get("documents")),
    }


def stats_row(version: str, collection: str, events: int, stats: dict) -> dict:
    return {"version": version, "collection": collection, "events": events, **stats,
            **per_event_figures(stats, events)}


def write_marker(data_dir: str | Path, record: dict) -> None:
    """dataset.json: written last, so a half-loaded data directory never looks complete."""

    write_json_atomic(Path(data_dir) / "dataset.json", record)


def read_marker(data_dir: str | Path) -> dict:
    path = Path(data_dir) / "dataset.json"
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: the data directory was not loaded completely; "
                                "rerun the load step (snakemake -R appversions_load)")
    return json.loads(path.read_text())


def worker_uri(server, server_config: dict) -> str:
    """The URI worker processes connect with.

    RunningServer.uri has its password removed (it is for provenance); an external deployment's
    workers need the configured URI itself. Local docker/binary servers have no credentials.
    """

    if server.backend == "external":
        return measurement_uri(connection_uri(server_config), server_config)
    return measurement_uri(server.uri, server_config)


def load_job(params: LoadParams, run: RunFacts, version_name: str, events_path: str | Path,
             data_dir: str | Path, collstats_path: str | Path, provenance_path: str | Path) -> dict:
    """The load step of one version: prepare, bulk upsert all events, collStats, marker last."""

    version = get_version(version_name)
    batch_size = params.data["batch_size"]
    extra = {"study": "appversions", "step": "load", "version": version_name,
             "batch_size": batch_size, "load_workers": params.load_workers}
    with measuring_job(run, params.profile, provenance_path, data_dir=data_dir,
                       job=f"appversions_load_{version_name}", extra=extra, study="appversions",
                       dataset=version_name, loads=True, data=params.data) as server:
        db = server.client[server.database]   # this run's database (costlab.namespaces)
        version.prepare_collection(db)
        started = time.monotonic()
        counts = load_events(
            worker_uri(server, run.server),
            server.database,
            version.collection_name,
            version_name,
            events_path,
            batch_size=batch_size,
            workers=params.load_workers,
        )
        events = counts.applied
        extra["load_seconds"] = round(time.monotonic() - started, 3)
        extra.update(events_applied=counts.applied, documents_upserted=counts.upserted,
                     documents_modified=counts.modified)
        row = stats_row(
            version_name, version.collection_name, events, collection_stats(db, version.collection_name)
        )
        write_parquet(pl.DataFrame([row]), collstats_path)
        write_marker(data_dir, {"database": server.database, "load_id": server.load_id, **row})
    return row
