"""Measuring jobs: one server per job (costlab.server.measuring_job), a fresh collection per run,
serverStatus snapshots around each run's writes, one raw row per run.

A WiredTiger counter the server does not report (the SecantusDB stand-in has no `wiredTiger`
section) stays null in the rows - never 0 - and the tables/figures say "not reported by this
server". With the external backend the profile cannot be applied (nothing is restarted): the
rows record the requested profile, the options as the backend reports them, and the topology
the server actually answers with (`hello.setName`).
"""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Callable, Sequence

import polars as pl
from bson.raw_bson import RawBSONDocument
from pymongo import MongoClient
from pymongo.collection import Collection

from costlab.arraygrowth.elements import one_declaration
from costlab.arraygrowth.params import FallbackSweepParams, RunParams
from costlab.arraygrowth.workloads import (
    ARRAY_FIELD,
    DB_NAME,
    FALLBACK_VARIANTS,
    FallbackParams,
    WorkloadResult,
    collection_name,
    fallback_settings,
    get_workload,
    prepare_fallback,
    run_fallback_variant,
)
from costlab.io import write_parquet
from costlab.jobs import RunFacts
from costlab.measure import counter_delta, snapshot
from costlab.server import measuring_job
from costlab.server.provenance import server_kind

# raw column -> serverStatus dotted path (WiredTiger keys contain spaces, never dots)
COUNTERS: dict[str, str] = {
    "log_bytes": "wiredTiger.log.log bytes written",
    "cursor_insert_calls": "wiredTiger.cursor.cursor insert calls",
    "cursor_modify_calls": "wiredTiger.cursor.cursor modify calls",
    "cursor_update_calls": "wiredTiger.cursor.cursor update calls",
    "cursor_remove_calls": "wiredTiger.cursor.cursor remove calls",
}
NOT_REPORTED = "not reported by this server"

_CONTEXT_SCHEMA = {
    "topology": pl.Utf8,
    "server_kind": pl.Utf8,
    "backend": pl.Utf8,
    "profile_applied": pl.Utf8,
}
_MEASURE_SCHEMA = {"operations": pl.Int64, "wall_s": pl.Float64, **{c: pl.Int64 for c in COUNTERS},
                   "documents_after": pl.Int64, "elements_after": pl.Int64, "max_doc_bytes_after": pl.Int64}
GROWTH_SCHEMA = {
    "job": pl.Utf8,
    "profile": pl.Utf8,
    "workload": pl.Utf8,
    "n": pl.Int64,
    **_MEASURE_SCHEMA,
    **_CONTEXT_SCHEMA,
}
FALLBACK_SCHEMA = {
    "job": pl.Utf8,
    "profile": pl.Utf8,
    "variant": pl.Utf8,
    "updates": pl.Int64,
    **_MEASURE_SCHEMA,
    **_CONTEXT_SCHEMA,
}


def observed_topology(client: MongoClient) -> str:
    """What the server says it is, whatever profile was asked for."""
    set_name = client.admin.command("hello").get("setName")
    return f"replica set {set_name}" if set_name else "standalone"


def fresh_collection(client: MongoClient, name: str, database: str = DB_NAME) -> Collection:
    """Drop and create the collection so its creation is not inside any measured window."""
    db = client[database]
    db.drop_collection(name)
    return db.create_collection(name)


def stored_state(collection: Collection) -> dict[str, int]:
    """Documents, array elements and the largest stored BSON size, read back after a run."""
    raw = collection.with_options(codec_options=collection.codec_options.with_options(
        document_class=RawBSONDocument))
    documents = elements = max_bytes = 0
    for doc in raw.find({}):
        documents += 1
        max_bytes = max(max_bytes, len(doc.raw))
        array = doc.get(ARRAY_FIELD)
        elements += len(array) if array is not None else 0
    return {"documents_after": documents, "elements_after": elements, "max_doc_bytes_after": max_bytes}


def measure(client: MongoClient, collection: Collection, prepare: Callable[[Collection], object],
            run: Callable[[Collection, object], WorkloadResult]) -> dict:
    """prepare -> snapshot -> run (timed) -> snapshot -> read back and check what was stored."""
    prepared = prepare(collection)
    before = snapshot(client, COUNTERS.values())
    started = time.perf_counter()
    result = run(collection, prepared)
    wall_s = time.perf_counter() - started
    after = snapshot(client, COUNTERS.values())
    delta = counter_delta(before, after)
    state = stored_state(collection)
    if (state["documents_after"], state["elements_after"]) != (result.documents, result.elements):
        raise RuntimeError(f"{collection.name}: expected {result.documents} documents with {result.elements} "
                           f"array elements after the run, found {state['documents_after']} with "
                           f"{state['elements_after']}")
    counters = {
        column: None if delta[path] is None else int(delta[path]) for column, path in COUNTERS.items()
    }
    return {"operations": result.operations, "wall_s": wall_s, **counters, **state}


def _context(client: MongoClient, backend: str, applied: dict) -> dict:
    return {"topology": observed_topology(client),
            "server_kind": server_kind(client.admin.command("serverStatus")),
            "backend": backend, "profile_applied": json.dumps(applied, sort_keys=True, default=str)}


def growth_rows(client: MongoClient, profile: str, workload: str, ns: Sequence[int], backend: str = "unknown",
                applied: dict | None = None, job: str = "", database: str = DB_NAME,
                elements: dict | None = None) -> pl.DataFrame:
    """Run `workload` once per N, each on a fresh collection of `database`; one row per run. `elements`:
    the config's arraygrowth.elements, where a workload may be a user's element (docs/variants.md)."""
    prepare, run = get_workload(workload, elements)
    ns = _check_ns(ns)
    context = _context(client, backend, applied or {})
    rows = []
    for n in ns:
        collection = fresh_collection(client, collection_name(workload, n), database)
        measured = measure(client, collection, prepare, lambda coll, prepared, n=n: run(coll, n, prepared))
        rows.append({"job": job, "profile": profile, "workload": workload, "n": n, **measured, **context})
        collection.drop()  # keep the deployment small; the next run starts fresh anyway
    return pl.DataFrame(rows, schema=GROWTH_SCHEMA)


def fallback_rows(client: MongoClient, profile: str, params: FallbackParams,
                  variants: Sequence[str] = FALLBACK_VARIANTS, backend: str = "unknown",
                  applied: dict | None = None, job: str = "", database: str = DB_NAME) -> pl.DataFrame:
    """Run each fallback variant once on a fresh collection of `database`; one row per variant."""
    unknown = [v for v in variants if v not in FALLBACK_VARIANTS]
    if unknown:
        raise ValueError(f"unknown fallback variants {unknown}; allowed: {', '.join(FALLBACK_VARIANTS)}")
    context = _context(client, backend, applied or {})
    rows = []
    for variant in variants:
        collection = fresh_collection(client, f"fallback_{variant}", database)
        measured = measure(client, collection, lambda coll, v=variant: prepare_fallback(coll, v, params),
                           lambda coll, prepared, v=variant: run_fallback_variant(coll, v, params, prepared))
        rows.append(
            {
                "job": job,
                "profile": profile,
                "variant": variant,
                "updates": params.updates,
                **measured,
                **context,
            }
        )
        collection.drop()
    return pl.DataFrame(rows, schema=FALLBACK_SCHEMA)


def _check_ns(ns: Sequence[int]) -> list[int]:
    ns = list(ns)
    if not ns or any(isinstance(n, bool) or not isinstance(n, int) or n < 1 for n in ns):
        raise ValueError(f"arraygrowth.ns must be a non-empty list of positive integers, got {ns!r}")
    return sorted(set(ns))


def run_growth_job(params: RunParams, run: RunFacts, profile: str, workload: str, raw_path: str | Path,
                   provenance_path: str | Path) -> pl.DataFrame:
    """One measuring job: a server with `profile`, `workload` at every N (params.ns), raw rows to raw_path;
    `workload` is a user's element when params.element declares it (arraygrowth.elements)."""
    job = Path(provenance_path).stem
    ns = params.ns
    extra = {"study": "arraygrowth", "workload": workload, "ns": list(ns)}
    elements = None
    if params.element is not None:   # a user's element (arraygrowth.elements): what was measured, as declared

        elements = {workload: params.element}
        extra["element"] = one_declaration(workload, params.element).describe()
    with measuring_job(run, profile, provenance_path, job=job, extra=extra, study="arraygrowth") as server:
        frame = growth_rows(server.client, profile, workload, ns, server.backend, server.applied, job,
                            server.database, elements)
        write_parquet(frame, raw_path)
    return frame


def run_fallback_job(params: FallbackSweepParams, run: RunFacts, profile: str, raw_path: str | Path,
                     provenance_path: str | Path) -> pl.DataFrame:
    """One measuring job for the fallback sweep (config arraygrowth.fallback) on `profile`."""
    fallback, variants = fallback_settings(params.fallback)
    job = Path(provenance_path).stem
    with measuring_job(
        run,
        profile,
        provenance_path,
        job=job,
        extra={"study": "arraygrowth", "fallback": fallback.__dict__, "variants": list(variants)},
        study="arraygrowth",
    ) as server:
        frame = fallback_rows(server.client, profile, fallback, variants, server.backend, server.applied, job,
                              server.database)
        write_parquet(frame, raw_path)
    return frame
