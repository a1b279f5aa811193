"""Load one shape into the server, then time the query for a field no document has.

Load and measure are separate jobs: the load job writes the server's data directory and, LAST,
its dataset.json marker; the measure job restarts a server on that directory, checks the
marker against the collection, warms the WiredTiger cache and times `runs` queries.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

import polars as pl

from costlab.flatnested.generate import MAX_FIELDS, documents_for
from costlab.flatnested.model import bson_sizes
from costlab.flatnested.params import LoadParams, MeasureParams
from costlab.flatnested.shapes import parse_shape
from costlab.inputs import read_json, read_parquet
from costlab.io import atomic_path
from costlab.jobs import RunFacts
from costlab.measure import counter_delta, plan_summary, snapshot
from costlab.measure.storage import checkpointed_coll_stats
from costlab.progress import progress
from costlab.repeats import SERVER_REPEATS
from costlab.server import measuring_job
from costlab.server.provenance import server_description

DATABASE = "costlab_flatnested"
PROFILE = "standalone"
MARKER = "dataset.json"
INSERT_BATCH = 1000
# No generated document has this field, so the filter must look at every field of every document.
ABSENT_FILTER = {"field_no_document_has": "value no document has"}
LATENCY = "opLatencies.reads.latency"   # microseconds, cumulative
READ_OPS = "opLatencies.reads.ops"

RAW_SCHEMA = {"shape": pl.String, "layout": pl.String, "fields": pl.Int64, "groups": pl.Int64,
              "documents": pl.Int64, "run": pl.Int64, "client_ms": pl.Float64, "server_ms": pl.Float64,
              "server_read_ops": pl.Int64, "docs_returned": pl.Int64, "docs_examined": pl.Int64,
              "server_data_bytes": pl.Int64, "server_storage_bytes": pl.Int64,
              "storage_engine": pl.String, "server_version": pl.String, "server_kind": pl.String,
              # the job's repeat (flatnested.repeats, 1-based); `run` is a query's position in it
              "repeat": pl.Int64}


def load_dataset(params: LoadParams, run: RunFacts, values_path: str | Path, shape_name: str,
                 data_dir: str | Path, provenance_path: str | Path) -> dict:
    """Insert the shape's documents into costlab_flatnested.<shape>; write data_dir/dataset.json last."""
    shape = parse_shape(shape_name, MAX_FIELDS)
    values = read_parquet(values_path)
    documents = documents_for(values, shape)
    data_dir = Path(data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    with measuring_job(run, PROFILE, provenance_path, data_dir=data_dir, job=f"load_{shape.name}",
                       study="flatnested", dataset=shape.name, loads=True, data=params.data) as server:
        database = server.database
        collection = server.client[database][shape.name]
        collection.drop()  # external deployments keep old data: start from nothing
        for start in progress(
            range(0, len(documents), INSERT_BATCH), desc=f"load {shape.name}", unit="batch"
        ):
            collection.insert_many(documents[start:start + INSERT_BATCH], ordered=True)
        # After a checkpoint: storageSize is the file size, which grows only when pages reach disk.
        stats, compressor, checkpoint = checkpointed_coll_stats(server.client[database], shape.name)
        description = server_description(server.client)
        load_id = server.load_id
    record = {
        "shape": shape.name,
        "layout": shape.layout,
        "fields": shape.fields,
        "groups": shape.groups,
        "database": database,
        "load_id": load_id,
        "collection": shape.name,
        "documents": int(stats["count"]),
        "server_data_bytes": int(stats["size"]),
        "server_storage_bytes": int(stats.get("storageSize", 0)),
        "model_data_bytes": sum(bson_sizes(documents)),
        "storage_engine": description["storage_engine"],
        "server_kind": description["server_kind"],
        "block_compressor": compressor,
        "checkpoint": checkpoint,
    }
    if record["documents"] != len(documents):
        raise RuntimeError(f"loaded {record['documents']} documents into {database}.{shape.name}, "
                           f"expected {len(documents)}")
    with atomic_path(data_dir / MARKER) as tmp:  # the marker last: a half-loaded dir never looks complete
        tmp.write_text(json.dumps(record, indent=2) + "\n")
    return record


def read_marker(data_dir: str | Path) -> dict:
    path = Path(data_dir) / MARKER
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: the data directory was not loaded completely; "
                                f"rerun the flatnested load rule")
    return read_json(path)


def measure_dataset(params: MeasureParams, run: RunFacts, data_dir: str | Path, shape_name: str,
                    provenance_path: str | Path, rep: int = 1) -> pl.DataFrame:
    """`params.runs` timed queries for an absent field on one shape, repeat `rep` of its job: one row per
    query. One job measures one shape (its own data directory), so there is no other variant in it to
    interleave with: its repeats are what re-measures it (docs/uncertainty.md)."""
    runs, warmup_runs = params.runs, params.warmup_runs
    if runs < 1 or warmup_runs < 0:
        raise ValueError(
            f"flatnested runs must be >= 1 and warmup_runs >= 0, got {runs!r} and {warmup_runs!r}"
        )
    shape = parse_shape(shape_name, MAX_FIELDS)
    marker = read_marker(data_dir)
    if marker["shape"] != shape.name:
        raise ValueError(f"{data_dir} holds shape {marker['shape']!r}, not {shape.name!r}")
    with measuring_job(run, PROFILE, provenance_path, data_dir=data_dir,
                       job=f"measure_{shape.name}{SERVER_REPEATS.wildcard(rep)}",
                       extra={"runs": runs, "warmup_runs": warmup_runs, "filter": ABSENT_FILTER,
                              "repeat": int(rep)},
                       study="flatnested", dataset=shape.name, data=params.data) as server:
        database = server.database
        collection = server.client[database][shape.name]
        count = collection.estimated_document_count()
        if count != marker["documents"]:
            raise RuntimeError(f"{database}.{shape.name} holds {count} documents but {data_dir}/{MARKER} "
                               f"says {marker['documents']}: the deployment changed since the load; rerun it")
        description = server_description(server.client)
        # The article ran on the in-memory engine; here every document is read into the WiredTiger
        # cache first so the timed runs do not include disk reads.
        for _ in range(warmup_runs):
            list(collection.find(ABSENT_FILTER))
        rows = []
        for run in progress(range(runs), desc=f"query {shape.name}", unit="run"):
            before = snapshot(server.client, [LATENCY, READ_OPS])
            started = time.perf_counter_ns()
            returned = len(list(collection.find(ABSENT_FILTER)))
            client_ns = time.perf_counter_ns() - started
            delta = counter_delta(before, snapshot(server.client, [LATENCY, READ_OPS]))
            rows.append({"run": run, "client_ms": client_ns / 1e6, "docs_returned": returned,
                         "server_ms": None if delta[LATENCY] is None else delta[LATENCY] / 1000,
                         "server_read_ops": None if delta[READ_OPS] is None else int(delta[READ_OPS])})
        stats, _, _ = checkpointed_coll_stats(server.client[database], shape.name)
        plan = plan_summary(server.client[database].command(
            "explain", {"find": shape.name, "filter": ABSENT_FILTER}, verbosity="executionStats"))
    frame = pl.DataFrame(rows, schema={k: RAW_SCHEMA[k] for k in ("run", "client_ms", "docs_returned",
                                                                  "server_ms", "server_read_ops")})
    return frame.with_columns(
        pl.lit(shape.name).alias("shape"),
        pl.lit(shape.layout).alias("layout"),
        pl.lit(shape.fields, dtype=pl.Int64).alias("fields"),
        pl.lit(shape.groups, dtype=pl.Int64).alias("groups"),
        pl.lit(count, dtype=pl.Int64).alias("documents"),
        pl.lit(plan["docs_examined"], dtype=pl.Int64).alias("docs_examined"),
        # collStats as the server reports it (on the stand-in storageSize is just size)
        pl.lit(stats.get("size"), dtype=pl.Int64).alias("server_data_bytes"),
        pl.lit(stats.get("storageSize"), dtype=pl.Int64).alias("server_storage_bytes"),
        pl.lit(description["storage_engine"], dtype=pl.String).alias("storage_engine"),
        pl.lit(description["version"], dtype=pl.String).alias("server_version"),
        pl.lit(description["server_kind"], dtype=pl.String).alias("server_kind"),
        pl.lit(int(rep), dtype=pl.Int64).alias("repeat"),
    ).select(list(RAW_SCHEMA))
