"""The measurements: three query shapes, each its own block of windows, three runs, everything recorded.

The protocol (costlab/docsize/protocol.py): one block per shape with its own seeded windows,
warm-ups then timed queries. The warm runs make every query of every block in one randomised interleaved
order (RMIT: every warm-up, then every timed query; job_order); the small-cache run starts once from a
cold cache (the server is restarted on the same data directory after the plans are read; an external
deployment cannot be, and the rows say so), warms up once and then runs the three shapes back to back,
as the article did, in the article's order in every repeat (docsize.repeats: each repeat is the whole
protocol again from a cold start, with its own windows; another order would measure another quantity,
the projection reading less after the whole documents than before them). Each raw row records its repeat,
its block, the block order, its position in the
block and in the job's order, and its window.

Per query: client wall time (find + iterating the cursor + decoding into dicts, the way an
application pays it), server time from the opLatencies.reads delta, bytes read into the
WiredTiger cache, keys and documents examined (serverStatus metrics.queryExecutor deltas) and
the bytes returned. A counter the server does not report stays None (null), never 0.
The plan (explain, executionStats) is taken once per shape and dataset before the warm-ups,
because explain executes the query and would warm the cache between timed queries.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Callable

import bson
import numpy as np
import polars as pl
from pymongo import ASCENDING
from pymongo.collection import Collection

from costlab.docsize.datasets import DATABASE, Dataset, check_study_config, parse_dataset
from costlab.docsize.generate import EPOCH_MS, MINUTE_MS, order_fields
from costlab.docsize.load import CUSTOMER_INDEX_NAME, WINDOW_INDEX_NAME, collection_stats, read_marker
from costlab.docsize.names import RUNS, RunSpec
from costlab.docsize.params import MeasureParams
from costlab.docsize.protocol import (
    Block,
    Plan,
    PlannedQuery,
    blockwise,
    interleave,
    plan_blocks,
    window_starts,
)
from costlab.jobs import RunFacts
from costlab.measure import counter_delta, get_path, plan_summary, snapshot
from costlab.progress import progress
from costlab.repeats import SERVER_REPEATS
from costlab.server import measuring_job
from costlab.server.provenance import server_kind as kind_of_server

SHAPES = ("whole", "projection", "covered")
PROJECTIONS: dict[str, dict | None] = {
    "whole": None,
    "projection": {"createdAt": 1, "total": 1},        # returns _id too: a projection includes it
    "covered": {"_id": 0, "createdAt": 1, "total": 1},  # answerable from {createdAt: 1, total: 1} alone
}
SORT = [("createdAt", ASCENDING)]
FAMILIES = ("window", "customer")  # customer: the spread variant's "all orders of one customer"

COUNTERS = {
    "server_latency_us": "opLatencies.reads.latency",
    "server_read_ops": "opLatencies.reads.ops",
    "bytes_read_into_cache": "wiredTiger.cache.bytes read into cache",
    "keys_examined": "metrics.queryExecutor.scanned",
    "docs_examined": "metrics.queryExecutor.scannedObjects",
}
CACHE_MAX_PATH = "wiredTiger.cache.maximum bytes configured"

RAW_SCHEMA = {
    "run": pl.Utf8, "run_label": pl.Utf8, "profile": pl.Utf8, "dataset": pl.Utf8, "variant": pl.Utf8,
    "size_kb": pl.Int64, "family": pl.Utf8, "shape": pl.Utf8, "rep": pl.Int64, "query_param": pl.Int64,
    "n_returned": pl.Int64, "client_ms": pl.Float64, "server_ms": pl.Float64, "server_read_ops": pl.Float64,
    "bytes_read_into_cache": pl.Float64, "keys_examined": pl.Float64, "docs_examined": pl.Float64,
    "bytes_returned": pl.Int64, "plan": pl.Utf8, "plan_keys_examined": pl.Float64,
    "plan_docs_examined": pl.Float64, "covered_plan": pl.Boolean, "server_kind": pl.Utf8,
    # the protocol: block (0 = first), the run's block order, position in the block (warm-ups
    # included), the window [start, end) in orders (null for the customer family), cache state
    "block": pl.Int64, "block_order": pl.Utf8, "block_query": pl.Int64, "window_start": pl.Int64,
    "window_end": pl.Int64, "cache_reset": pl.Utf8,
    # the job's repeat (docsize.repeats, 1-based; `rep` above is a query's position in its phase) and the
    # query's position in the job's order (warm-ups counted: job_order)
    "repeat": pl.Int64, "job_query": pl.Int64,
}
# cache_reset values: a warm run needs none; a cold block records how its cache was emptied or why not.
CACHE_NOT_REQUIRED = "not required"
CACHE_NOT_RESET_NO_CONTROL = "not reset: no control over the server"
CACHE_KEPT = "kept from the run's cold start (the shapes back to back)"
COLLECTION_SCHEMA = {
    "run": pl.Utf8, "profile": pl.Utf8, "dataset": pl.Utf8, "variant": pl.Utf8, "size_kb": pl.Int64,
    "collection": pl.Utf8, "documents": pl.Int64, "size_bytes": pl.Float64, "avg_obj_bytes": pl.Float64,
    "storage_bytes": pl.Float64, "index_bytes": pl.Float64, "total_index_bytes": pl.Float64,
    "cache_max_bytes": pl.Float64, "server_kind": pl.Utf8,
}


@dataclass(frozen=True)
class QuerySpec:
    """What a window query reads: the projected fields (the index's, in order; the first is the window's key)
    and the key's value at an order's position (None: the orders' createdAt, one a minute). ORDERS_SPEC is
    the article's; a user's document (costlab.docsize.documents) has its own."""
    projected: tuple[str, ...] = ("createdAt", "total")
    key_of: Callable[[int], object] | None = None

    @property
    def sort(self) -> list:
        return [(self.projected[0], ASCENDING)]

    @property
    def index_name(self) -> str:
        return "_".join(f"{field}_1" for field in self.projected)

    def projection(self, shape: str) -> dict | None:
        if self is ORDERS_SPEC:
            return PROJECTIONS[shape]
        fields = {field: 1 for field in self.projected}
        return {"whole": None, "projection": fields, "covered": {"_id": 0, **fields}}[shape]

    def window(self, start: int, window: int) -> dict:
        if self.key_of is None:
            return window_filter(start, window)
        key = self.projected[0]
        return {key: {"$gte": self.key_of(int(start)), "$lt": self.key_of(int(start) + int(window))}}


ORDERS_SPEC = QuerySpec()


class ResultsMismatch(AssertionError):
    """The three query shapes did not return the same dates and totals: no timing is meaningful."""


def get_run(name: str) -> RunSpec:
    try:
        return RUNS[name]
    except KeyError:
        raise ValueError(f"unknown docsize run {name!r}; allowed: {', '.join(RUNS)}") from None


def _date(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc)


def window_filter(start_minute: int, window_minutes: int) -> dict:
    """createdAt in [order start_minute, order start_minute + window): exactly window orders."""
    start = EPOCH_MS + int(start_minute) * MINUTE_MS
    return {"createdAt": {"$gte": _date(start), "$lt": _date(start + int(window_minutes) * MINUTE_MS)}}


def query_filter(family: str, param: int, window_minutes: int, spec: QuerySpec = ORDERS_SPEC) -> dict:
    if family == "window":
        return spec.window(param, window_minutes)
    if family == "customer":
        return {"customerId": int(param)}
    raise ValueError(f"unknown query family {family!r}; allowed: {', '.join(FAMILIES)}")


def find(collection: Collection, shape: str, filter_: dict, spec: QuerySpec = ORDERS_SPEC) -> list[dict]:
    """One query of this shape, all results decoded (what the timing covers)."""
    return list(collection.find(filter_, spec.projection(shape)).sort(spec.sort))


def check_identical(collection: Collection, filter_: dict, expected: int | None = None,
                    spec: QuerySpec = ORDERS_SPEC) -> int:
    """Run all three shapes; raise ResultsMismatch unless they return the same rows of the projected fields
    ((createdAt, total) for the orders)."""
    results = {shape: [tuple(d.get(f) for f in spec.projected)
                       for d in find(collection, shape, filter_, spec)] for shape in SHAPES}
    reference = results["whole"]
    if expected is not None and len(reference) != expected:
        raise ResultsMismatch(f"{collection.name}: whole-document query returned {len(reference)} orders "
                              f"for {filter_}, expected {expected}")
    if not reference:
        raise ResultsMismatch(f"{collection.name}: query {filter_} matched nothing; nothing to compare")
    for shape in ("projection", "covered"):
        rows = results[shape]
        if rows != reference:
            if len(rows) != len(reference):
                detail = f"{len(rows)} rows against {len(reference)}"
            else:
                i = next(i for i, (a, b) in enumerate(zip(rows, reference)) if a != b)
                detail = f"row {i}: {rows[i]} against {reference[i]}"
            raise ResultsMismatch(f"{collection.name}: shape {shape!r} differs from whole documents "
                                  f"for {filter_}: {detail}")
    return len(reference)


def explain_shape(collection: Collection, shape: str, filter_: dict, spec: QuerySpec = ORDERS_SPEC) -> dict:
    command = {"find": collection.name, "filter": filter_, "sort": dict(spec.sort)}
    if spec.projection(shape) is not None:
        command["projection"] = spec.projection(shape)
    explain = collection.database.command("explain", command, verbosity="executionStats")
    return plan_summary(explain)


def row_from_counters(delta: dict, docs: list[dict], client_s: float) -> dict:
    """One timing row from serverStatus counter deltas (None stays None) and the decoded results."""
    latency_us = delta.get(COUNTERS["server_latency_us"])
    row = {name: delta.get(path) for name, path in COUNTERS.items() if name != "server_latency_us"}
    row |= {
        "n_returned": len(docs),
        "client_ms": client_s * 1000,
        "server_ms": None if latency_us is None else latency_us / 1000,  # opLatencies are microseconds
        "bytes_returned": sum(len(bson.encode(d)) for d in docs),
    }
    return row


def timed_query(client, collection: Collection, shape: str, filter_: dict,
                spec: QuerySpec = ORDERS_SPEC) -> dict:
    """Client time around find+decode; counter deltas from serverStatus snapshots taken outside it."""
    before = snapshot(client, COUNTERS.values())
    started = time.perf_counter()
    docs = find(collection, shape, filter_, spec)
    client_s = time.perf_counter() - started
    after = snapshot(client, COUNTERS.values())
    return row_from_counters(counter_delta(before, after), docs, client_s)


def families_for(dataset: Dataset, study_config: dict) -> list[str]:
    spread = bool((study_config.get("variants") or {}).get("spread_customer", False))
    return ["window", "customer"] if spread and dataset.variant == "base" else ["window"]


def family_extent(family: str, study_config: dict) -> tuple[int, int]:
    """(positions, window) the protocol draws from: orders and window length, or customers and 1.

    The customer family plans over customer positions 0..customers-1 (customer id = position + 1).
    """
    if family == "window":
        return int(study_config["docs_per_collection"]), int(study_config["window_minutes"])
    return int(study_config["customers"]), 1


def family_plan(family: str, run: RunSpec, warmups: int, queries: int, study_config: dict,
                rep: int = 1) -> Plan:
    """The run's blocks for one query family (protocol.plan_blocks), seeded by study seed, run and family, and
    for repeat 2 on by the repeat too (each repeat its own windows; repeat 1 the windows a run always had).

    The seed does not depend on the dataset: every size and variant is queried on the same windows. A run
    that starts cold once (the article's small-cache run) keeps the shapes' order in every repeat, so a
    repeat repeats its protocol; one that starts cold per shape draws a permutation per later repeat. The
    warm-ups stay whole-document ones.
    """
    documents, window = family_extent(family, study_config)
    blocked = in_blocks(run)
    return plan_blocks(
        documents=documents,
        window=window,
        windows=run.windows,
        warmups=warmups,
        queries=queries,
        seed=[int(study_config["seed"]), list(RUNS).index(run.name), FAMILIES.index(family)]
        + ([int(rep)] if rep > 1 else []),
        cold_cache=run.cold_start == "per_shape",
        shapes=SHAPES,
        order="shuffled" if blocked and run.cold_start == "per_shape" and rep > 1 else "given",
        warmups_in=run.warmups_in,
        warmup_shape=SHAPES[0] if run.warmups_in == "first" else None,
    )


def in_blocks(run: RunSpec) -> bool:
    """Whether a run's shapes must run as blocks: a run that starts from a cold cache (once, the article's
    small-cache run, or per shape) measures what each shape reads after the ones before it, so its blocks
    stay whole (the article's order in every repeat of a run cold once); a warm run's queries are interleaved
    (RMIT)."""
    return run.cold_start != "none"


ORDER_INTERLEAVED = "interleaved (RMIT)"   # the block_order of a run whose queries are interleaved


@dataclass(frozen=True)
class Step:
    """One query of a job's order: its family, block and planned query."""
    family: str
    block: Block
    query: PlannedQuery
    plan: Plan

    @property
    def label(self) -> str:
        return f"{self.family}:{self.query.shape}:{self.query.phase}"


def job_order(dataset: Dataset, run_name: str, study_config: dict, rep: int = 1) -> list[Step]:
    """Every query one measuring job makes (warm-ups included), in the order it makes them.

    A warm run's queries of every family and shape in one randomised interleaved order (protocol.interleave,
    seeded by (docsize seed, run, rep)); a cold-start run's blocks whole (in_blocks). Deterministic: the
    provenance records it and a test recomputes it.
    """
    run = get_run(run_name)
    settings = study_config["runs"][run_name]
    warmups, queries = int(settings["warmups"]), int(settings["queries"])
    families = families_for(dataset, study_config)
    plans = [family_plan(family, run, warmups, queries, study_config, rep) for family in families]
    if in_blocks(run):
        pairs = blockwise(plans)
    else:
        pairs = interleave(plans, [int(study_config["seed"]), list(RUNS).index(run.name), int(rep)])
    blocks = {(i, b.index): b for i, plan in enumerate(plans) for b in plan.blocks}
    return [Step(families[i], blocks[(i, q.block)], q, plans[i]) for i, q in pairs]


def order_record(run_name: str, steps: list[Step], rep: int) -> dict:
    """What the provenance says of a job's order: how it was made and every query's family:shape:phase."""
    blocked = in_blocks(get_run(run_name))
    return {
        "repeat": int(rep),
        "mode": (("blocks (a cold start per shape: the blocks' order drawn per repeat)"
                  if get_run(run_name).cold_start == "per_shape"
                  else "blocks (one cold start: the article's order in every repeat)")
                 if blocked else ORDER_INTERLEAVED),
        "block_order": {s.family: s.plan.block_order_label for s in steps} if blocked else None,
        "queries": [s.label for s in steps],
    }


def _param(family: str, window_start: int) -> int:
    """What query_filter takes: the window's first minute, or the customer id."""
    return int(window_start) if family == "window" else int(window_start) + 1


# orders per customer of the last study config _expected saw: computed once per config, not once per query
_ORDERS_PER_CUSTOMER: dict[tuple, np.ndarray] = {}


def _expected(family: str, param: int, study_config: dict) -> int:
    if family == "window":
        return int(study_config["window_minutes"])
    key = (
        int(study_config["docs_per_collection"]),
        int(study_config["seed"]),
        int(study_config["customers"]),
    )
    if key not in _ORDERS_PER_CUSTOMER:
        fields = order_fields(*key)
        _ORDERS_PER_CUSTOMER.clear()
        _ORDERS_PER_CUSTOMER[key] = np.bincount(fields.customer_id, minlength=key[2] + 1)
    return int(_ORDERS_PER_CUSTOMER[key][param])


def measure_dataset(client, dataset: Dataset, run_name: str, study_config: dict,
                    database: str = DATABASE, reset_cache: Callable[[], tuple[object, str]] | None = None,
                    spec: QuerySpec = ORDERS_SPEC, rep: int = 1) -> tuple[pl.DataFrame, pl.DataFrame]:
    """All queries of one run on one dataset, repeat `rep`: (raw rows, per-collection stats). `spec`: what the
    queries read (a user's document: its projected fields and window key). The queries run in job_order's
    order (a warm run's interleaved, a cold-start run's in blocks); each row records its repeat and its
    position in that order (`job_query`, warm-ups counted).

    reset_cache empties the server's cache before a block that must start cold (the small-cache
    run) and returns (the client to use from then on, what it did); None means nobody can, and
    the rows record that the cache was not reset.
    """
    run = get_run(run_name)
    status = client.admin.command("serverStatus")
    kind = kind_of_server(status)
    collection = client[database][dataset.collection]
    if collection.estimated_document_count() != int(study_config["docs_per_collection"]):
        raise RuntimeError(f"{database}.{dataset.collection} holds {collection.estimated_document_count()} "
                           f"orders, config asks {study_config['docs_per_collection']}; reload the dataset")
    window = int(study_config["window_minutes"])
    rows: list[dict] = []
    plans: dict[str, dict] = {}
    # The plans and the identical-results check read before the first query (a cold block restarts after
    # them).
    for family in families_for(dataset, study_config):
        reference = _param(
            family, window_starts("same", 1, *family_extent(family, study_config), rng=None)[0]
        )
        check_identical(
            collection, query_filter(family, reference, window, spec),
            _expected(family, reference, study_config), spec,
        )
        plans[family] = {
            shape: explain_shape(collection, shape, query_filter(family, reference, window, spec), spec)
            for shape in SHAPES
        }
    blocked = in_blocks(run)
    cache_resets: dict[tuple[str, int], str] = {}
    steps = job_order(dataset, run_name, study_config, rep)
    desc = f"{run_name} {dataset.name}" + (f" repeat {rep}" if rep > 1 else "")
    for position, step in enumerate(progress(steps, desc=desc, unit="query")):
        family, block, planned, shape = step.family, step.block, step.query, step.query.shape
        key = (family, block.index)
        if key not in cache_resets:
            cache_reset = CACHE_KEPT if run.cold_start == "once" else CACHE_NOT_REQUIRED
            if blocked and (block.cold_cache or (run.cold_start == "once" and block.index == 0)):
                if reset_cache is None:
                    cache_reset = CACHE_NOT_RESET_NO_CONTROL
                else:
                    client, cache_reset = reset_cache()
                    collection = client[database][dataset.collection]
            cache_resets[key] = cache_reset
        param = _param(family, planned.window_start)
        if planned.phase == "warmup":
            find(collection, shape, query_filter(family, param, window, spec), spec)
            continue
        plan_row = plans[family][shape]
        row = timed_query(client, collection, shape, query_filter(family, param, window, spec), spec)
        expected = _expected(family, param, study_config)
        if row["n_returned"] != expected:
            raise ResultsMismatch(
                f"{dataset.collection}: {shape} returned {row['n_returned']} orders "
                f"for {family} {param}, expected {expected}"
            )
        in_window = family == "window"
        rows.append(
            row
            | {
                "run": run.name,
                "run_label": run.label,
                "profile": run.profile,
                "dataset": dataset.name,
                "variant": dataset.variant,
                "size_kb": dataset.size_kb,
                "family": family,
                "shape": shape,
                "rep": planned.rep,
                "query_param": param,
                "plan": plan_row["plan"],
                "plan_keys_examined": plan_row["keys_examined"],
                "plan_docs_examined": plan_row["docs_examined"],
                "covered_plan": plan_row["covered"],
                "server_kind": kind,
                "block": block.index,
                "block_order": step.plan.block_order_label if blocked else ORDER_INTERLEAVED,
                "block_query": planned.query,
                "window_start": planned.window_start if in_window else None,
                "window_end": planned.window_end if in_window else None,
                "cache_reset": cache_resets[key],
                "repeat": int(rep),
                "job_query": position,
            }
        )
    raw = pl.DataFrame(rows, schema=RAW_SCHEMA) if rows else pl.DataFrame(schema=RAW_SCHEMA)
    collections = collections_frame(client, dataset, run, kind, database, spec.index_name)
    return raw.select(list(RAW_SCHEMA)), collections


def collections_frame(
    client, dataset: Dataset, run: RunSpec, kind: str, database: str = DATABASE,
    index_name: str = WINDOW_INDEX_NAME,
) -> pl.DataFrame:
    """size / storageSize / index size per collection and the configured cache (None when not reported)."""
    cache_max = get_path(client.admin.command("serverStatus"), CACHE_MAX_PATH)
    db = client[database]
    rows = []
    for name in filter(None, (dataset.collection, dataset.history_collection)):
        stats = collection_stats(db, name)
        index_bytes = stats["index_sizes"].get(index_name)
        rows.append(
            {
                "run": run.name,
                "profile": run.profile,
                "dataset": dataset.name,
                "variant": dataset.variant,
                "size_kb": dataset.size_kb,
                "collection": name,
                "documents": stats["documents"],
                "size_bytes": stats["size_bytes"],
                "avg_obj_bytes": stats["avg_obj_bytes"],
                "storage_bytes": stats["storage_bytes"],
                "index_bytes": index_bytes,
                "total_index_bytes": stats["total_index_bytes"],
                "cache_max_bytes": cache_max,
                "server_kind": kind,
            }
        )
    return pl.DataFrame(rows, schema=COLLECTION_SCHEMA)


__all__ = [
    "RUNS",
    "SHAPES",
    "PROJECTIONS",
    "RunSpec",
    "ResultsMismatch",
    "check_identical",
    "measure_dataset",
    "timed_query",
    "window_filter",
    "query_filter",
    "explain_shape",
    "get_run",
    "CUSTOMER_INDEX_NAME",
]


def measure_job(params: MeasureParams, run_facts: RunFacts, run_name: str, dataset_name: str, data_dir: str,
                provenance_path: str, rep: int = 1) -> tuple[pl.DataFrame, pl.DataFrame]:
    """One measuring job, repeat `rep`: a server of the run's profile on the loaded data dir, all queries in
    job_order's order, provenance (with that order: `extra.order`)."""

    study_config = params.section()
    check_study_config(study_config)
    run = get_run(run_name)
    dataset = parse_dataset(dataset_name)
    read_marker(data_dir, dataset, study_config)
    extra = {"dataset": dataset_name, "run": run_name, "run_label": run.label, "repeat": int(rep),
             "order": order_record(run_name, job_order(dataset, run_name, study_config, rep), rep)}
    with measuring_job(run_facts, run.profile, provenance_path, data_dir=data_dir,
                       job=f"{run_name}__{dataset_name}{SERVER_REPEATS.wildcard(rep)}", extra=extra,
                       study="docsize", dataset=dataset_name, data=params.data) as server:
        raw, collections = measure_dataset(
            server.client,
            dataset,
            run_name,
            study_config,
            database=server.database,
            reset_cache=lambda: cold_cache(server),
            rep=rep,
        )
        # Provenance is written when the job ends; it says how many cold starts the run made.
        extra["cache_restarts"] = server.restarts
        return raw, collections


def cold_cache(server) -> tuple[object, str]:
    """Empty the server's WiredTiger cache by restarting it on the same data; say if it could not be."""
    if server.restart():
        # Only the WiredTiger cache starts empty: dropping the host's file cache needs root.
        return server.client, f"restarted ({server.backend} backend; the OS file cache is not dropped)"
    return server.client, f"not reset: {server.backend} backend (the deployment is not restarted)"
