"""The docsize study on the engine lab: bytes a window query reads into a cold or small cache.

Per document size: one fresh WiredTiger home opened like mongod (standalone), the orders
collection (costlab.docsize.generate, the same bytes the mongod path loads) with its
{createdAt: 1, total: 1} index, then the study's three runs with the per-shape block protocol
(costlab.docsize.protocol.plan_blocks, seeded as the mongod path seeds it):

    same_window      the large cache holding the whole collection, the same window for every query
                     (after the article's 5 warm-ups)
    random_windows   the large cache, a random window per query
    small_cache      the article's protocol: one start on the loaded data with the small cache, the
                     random warm-ups (50) once, then whole, projection and covered in that order,
                     30 measured queries each, the cache carried from shape to shape (warm-ups
                     before every shape instead read 0.36-0.41x the article's projection at 1 and
                     4 KB; warm-ups once 1.08-1.13x: docs/engine-lab.md)
    small_cache_cold_per_shape
                     a variant not in the article: every shape's block from a cold cache (the
                     connection closed and reopened) after its own warm-ups, which isolates the shapes

Shapes: whole = index range scan + FETCH (each record by mongod's seekExact: the record cursor
stays on its page until the next record, so eviction cannot take a page between two of its
documents; resetting it after every record made 16 KB queries read pages 2-6 times); projection = the same
FETCH (mongod reads the whole
document, then its PROJECTION_SIMPLE steps over the fields to createdAt and total: only those two
are decoded here too); covered = the index alone. Per query the engine's
statistics give bytes and pages read into the cache and block-manager bytes read.
The small cache keeps the article's cache-to-data ratio at the engine's smaller scale.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Callable, Iterator

import bson
import polars as pl
from bson import ObjectId

from costlab.docsize import document_data
from costlab.docsize import documents as user_documents
from costlab.docsize.ceilings import large_cache_mb
from costlab.docsize.engine_verdicts import docsize_verdicts
from costlab.docsize.generate import EPOCH_MS, generate_bson_batches, order_fields
from costlab.docsize.params import EngineParams
from costlab.docsize.protocol import SHAPES, plan_blocks
from costlab.engine import stats
from costlab.engine.bsonbytes import pick_fields
from costlab.engine.connection import Engine, EngineSettings
from costlab.engine.deployment import Deployment
from costlab.engine.provenance import SERVER_KIND, engine_provenance
from costlab.engine.runs import engine_home, engine_settings
from costlab.engine.wt import wiredtiger_version
from costlab.finding import samples_text
from costlab.inputs import read_csv
from costlab.intervals import over_repeats, over_samples
from costlab.io import write_csv
from costlab.jobs import RunFacts
from costlab.progress import progress
from costlab.published import read_tolerances
from costlab.repeats import ENGINE_REPEATS
from costlab.server.provenance import write_json_atomic

PUBLISHED_DOCS = 50_000
PUBLISHED_SMALL_CACHE_MB = 256
INDEX_NAME = "createdAt_1_total_1"
INSERT_BATCH = 64   # documents per transaction while loading (mongod batches an insertMany similarly)
EPOCH = datetime.fromtimestamp(EPOCH_MS / 1000, tz=timezone.utc)
RUN_NAMES = ("same_window", "random_windows", "small_cache")   # the order of docsize.names.RUNS
COLD_PER_SHAPE = "small_cache_cold_per_shape"   # the variant: same windows as small_cache
COLD_STARTS = ("none", "once", "per_shape")
PROJECTED = ("createdAt", "total")


@dataclass(frozen=True)
class EngineRun:
    name: str
    windows: str        # same | random
    cache_mb: int
    cold_start: str     # none: warmed with the whole collection | once: one cold start | per_shape
    warmups: int
    warmups_in: str = "first"   # the warm-ups before the first shape only | before each (protocol.WARMUPS_IN)

    @property
    def seed_index(self) -> int:
        """The variant draws the small-cache run's windows, so only the cold starts differ."""
        return RUN_NAMES.index("small_cache" if self.name == COLD_PER_SHAPE else self.name)


def small_cache_mb(docs_per_collection: int, configured: int | None) -> int:
    """The configured small cache, or 256 MB scaled by docs / 50,000 (at least 1 MB)."""
    if configured is not None:
        return int(configured)
    return max(1, round(PUBLISHED_SMALL_CACHE_MB * docs_per_collection / PUBLISHED_DOCS))


def engine_runs(engine_docsize: dict, sizes_kb: list[int]) -> list[EngineRun]:
    docs = int(engine_docsize["docs_per_collection"])
    small = small_cache_mb(docs, engine_docsize.get("small_cache_mb"))
    large = large_cache_mb(docs, sizes_kb, engine_docsize.get("default_cache_mb"))
    warmups = int(engine_docsize["warmups"])
    runs = [EngineRun("same_window", "same", large, "none", int(engine_docsize["same_window_warmups"])),
            EngineRun("random_windows", "random", large, "none", warmups),
            EngineRun("small_cache", "random", small, "once", warmups)]
    if engine_docsize.get("cold_per_shape_variant", True):
        runs.append(EngineRun(COLD_PER_SHAPE, "random", small, "per_shape", warmups, warmups_in="each"))
    return runs


def check_engine_docsize(engine_docsize: dict) -> None:
    docs, window = int(engine_docsize["docs_per_collection"]), int(engine_docsize["window_minutes"])
    if window > docs:
        raise ValueError(f"engine.docsize.window_minutes ({window}) must not exceed "
                         f"engine.docsize.docs_per_collection ({docs})")


@dataclass(frozen=True)
class Subject:
    """What one engine collection holds and how a window query reads it: the article's orders of one size, or
    a user's document (costlab.docsize.documents) measured the same way."""
    collection: str                     # its namespace
    projected: tuple[str, ...]          # the fields the projection returns and the index holds, in order
    batches: Callable[[], Iterator[tuple[list[dict], list[bytes]]]]   # (index key dicts, encoded documents)
    key_of: Callable[[int], object]     # the window key's value of the document at this position

    @property
    def index_name(self) -> str:
        return "_".join(f"{field}_1" for field in self.projected)


def _order_time(position: int) -> datetime:
    return EPOCH + timedelta(minutes=position)


def orders_subject(size_kb: int, documents: int, seed: int, customers: int | None) -> Subject:
    """The article's orders of one size, {createdAt: 1, total: 1} (the bytes the mongod path loads)."""
    def batches():
        fields = order_fields(documents, seed, customers)
        created = fields.created_at_ms.tolist()
        totals = fields.total.tolist()
        ids = fields.ids
        position = 0
        for batch in generate_bson_batches(size_kb, documents, seed, customers=customers):
            keys = [{"_id": ObjectId(ids[position + k].tobytes()),
                     "createdAt": EPOCH + timedelta(milliseconds=created[position + k] - EPOCH_MS),
                     "total": totals[position + k]} for k in range(len(batch))]
            position += len(batch)
            yield keys, batch

    return Subject(f"costlab_docsize.orders_{size_kb}k", PROJECTED, batches, _order_time)


def load_subject(engine: Engine, subject: Subject, block_compressor: str):
    """The subject's documents, inserted INSERT_BATCH at a time, then checkpointed; returns the collection."""
    collection = Deployment(engine, "standalone", block_compressor).collection(
        subject.collection, {subject.index_name: subject.projected})
    for keys, batch in subject.batches():
        for begin in range(0, len(batch), INSERT_BATCH):
            collection.insert_batch(keys[begin:begin + INSERT_BATCH], batch[begin:begin + INSERT_BATCH])
    engine.checkpoint()
    return collection


def load_collection(engine: Engine, size_kb: int, documents: int, seed: int, customers: int | None,
                    block_compressor: str):
    """The orders of one size, inserted in batches, then checkpointed; returns the collection."""
    return load_subject(engine, orders_subject(size_kb, documents, seed, customers), block_compressor)


def _bounds(window_start: int, window_end: int, key_of=_order_time) -> tuple[tuple, tuple]:
    return (key_of(window_start),), (key_of(window_end),)


def run_shape(collection, shape: str, window_start: int, window_end: int,
              subject: Subject | None = None) -> list:
    """One query: rows of the projected fields ((createdAt, total) for the orders) for projection/covered, raw
    documents for whole."""
    projected, index_name, key_of = ((subject.projected, subject.index_name, subject.key_of) if subject
                                     else (PROJECTED, INDEX_NAME, _order_time))
    index = collection.indexes[index_name]
    lower, upper = _bounds(window_start, window_end, key_of)
    if shape == "covered":
        return index.covered(lower, upper)
    documents = index.fetch(collection.records, lower, upper)
    if shape == "whole":
        return documents
    if shape == "projection":
        # mongod's FETCH has read the whole document; the projection picks the projected fields from it
        return [_project(d, projected) for d in documents]
    raise ValueError(f"unknown shape {shape!r}; allowed: {', '.join(SHAPES)}")


def _project(document: bytes, projected: tuple[str, ...] = PROJECTED) -> list:
    return pick_fields(document, projected)


def _same_value(value):
    """A projected value as the three shapes must agree on it: dates in UTC, numbers as floats (the index
    does not keep an integral double's type bits)."""
    if isinstance(value, datetime):
        return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return value


def check_identical(collection, window_start: int, window_end: int, subject: Subject | None = None) -> int:
    """The three shapes return the same rows of the projected fields for one window, or raise."""
    projected = subject.projected if subject else PROJECTED
    results = {}
    for shape in SHAPES:
        rows = run_shape(collection, shape, window_start, window_end, subject)
        if shape == "whole":
            rows = [_project(d, projected) for d in rows]
        results[shape] = [tuple(_same_value(v) for v in r) for r in rows]
    expected = window_end - window_start
    for shape, rows in results.items():
        if rows != results["whole"] or len(rows) != expected:
            raise AssertionError(
                f"engine docsize: shape {shape!r} returned {len(rows)} rows for window "
                f"[{window_start}, {window_end}), unlike whole documents ({expected} expected)"
            )
    return expected


def warm_cache(collection) -> None:
    """Read the whole collection and its index: the large-cache runs start with everything in the
    cache, as the article's 15.7 GB cache held all four collections."""
    for table in (collection.records, *collection.indexes.values()):
        cursor = table.cursor
        while cursor.next() == 0:
            cursor.get_value()
        cursor.reset()


def run_repeats(run: EngineRun, engine_docsize: dict) -> int:
    """How many times a run's protocol runs: engine.docsize.repeats for the small-cache runs (each from a cold
    start), once for the large cache (warmed whole: a repeat would measure the same)."""
    return ENGINE_REPEATS.count_in(engine_docsize, "docsize") if run.cold_start != "none" else 1


def _run_plan(engine: Engine, collection, plan, run: EngineRun, size_kb: int, subject: Subject | None,
              rep: int) -> list[dict]:
    """Every query of one plan, its cache statistics' deltas as rows."""
    rows = []
    for block in plan.blocks:
        if block.cold_cache:
            engine.reopen()
            collection.reopen_cursors()
        for query in block.queries:
            cold = query.cold_start or (run.cold_start == "once" and block.index == 0 and query.query == 0)
            before = stats.snapshot(engine.session, flush_log=False)
            t0 = time.perf_counter()
            result = run_shape(collection, query.shape, query.window_start, query.window_end, subject)
            seconds = time.perf_counter() - t0
            delta = stats.delta(before, stats.snapshot(engine.session, flush_log=False))
            rows.append({
                "size_kb": size_kb, "run": run.name, "repeat": rep, "cache_mb": run.cache_mb,
                "windows": run.windows, "block_order": plan.block_order_label,
                **query.as_row(), "cold_start": cold, "n_returned": len(result),
                "bytes_read_into_cache": delta["bytes_read_into_cache"],
                "pages_read_into_cache": delta["pages_read_into_cache"],
                "block_bytes_read": delta["block_bytes_read"], "seconds": seconds})
    return rows


def measure_size(size_kb: int, study: dict, engine_docsize: dict, settings: EngineSettings, home: Path,
                 subject: Subject | None = None, only: tuple[str, ...] | None = None
                 ) -> tuple[list[dict], dict]:
    """Every run's planned queries on one size (the orders', or `subject`'s documents measured as that
    size's), or the runs named in `only`; returns (per-query rows, collection facts)."""
    documents = int(engine_docsize["docs_per_collection"])
    window = int(engine_docsize["window_minutes"])
    customers = min(int(study.get("customers", 50)), documents)
    subject = subject or orders_subject(size_kb, documents, int(study["seed"]), customers)
    runs = engine_runs(engine_docsize, [size_kb, *study["sizes_kb"]])
    # Loading is not measured: it runs with the journal off (half the time here); every run
    # reopens the connection with the journal on, as mongod runs.
    engine = Engine(
        home,
        EngineSettings(
            cache_mb=runs[0].cache_mb,
            journal_compressor=settings.journal_compressor,
            block_compressor=settings.block_compressor,
            journal=False,
        ),
    )
    rows: list[dict] = []
    try:
        started = time.perf_counter()
        collection = load_subject(engine, subject, settings.block_compressor)
        load_seconds = time.perf_counter() - started
        middle = (documents - window) // 2
        check_identical(collection, middle, middle + window, subject)
        facts = {"size_kb": size_kb, "documents": documents, "load_seconds": load_seconds,
                 "avg_doc_bytes": len(collection.records.read(1))}
        for run in (r for r in runs if only is None or r.name in only):
            # a restart on the loaded data: the cache starts empty (the article's second server)
            engine.reopen(
                EngineSettings(
                    cache_mb=run.cache_mb,
                    journal_compressor=settings.journal_compressor,
                    block_compressor=settings.block_compressor,
                )
            )
            collection.reopen_cursors()
            if run.cold_start == "none":
                warm_cache(collection)
            for rep in range(1, run_repeats(run, engine_docsize) + 1):
                if rep > 1:   # the whole protocol again, from a cold start
                    engine.reopen()
                    collection.reopen_cursors()
                # repeat r's windows are the server's repeat r's (costlab.docsize.run.family_plan)
                plan = plan_blocks(documents=documents, window=window, windows=run.windows,
                                   warmups=run.warmups, queries=int(engine_docsize["queries"]),
                                   seed=[int(study["seed"]), run.seed_index, 0] + ([rep] if rep > 1 else []),
                                   cold_cache=run.cold_start == "per_shape", shapes=SHAPES,
                                   warmups_in=run.warmups_in)
                rows += _run_plan(engine, collection, plan, run, size_kb, subject, rep)
        facts["cache_mb_small"] = runs[2].cache_mb
        facts["cache_mb_large"] = runs[0].cache_mb
    finally:
        engine.close()
    return rows, facts


QUERY_COLUMNS = ["size_kb", "run", "repeat", "cache_mb", "windows", "block_order", "block", "shape", "query",
                 "phase", "rep", "window_start", "window_end", "cold_start", "n_returned",
                 "bytes_read_into_cache",
                 "pages_read_into_cache", "block_bytes_read", "seconds"]


CELL_KEYS = ["size_kb", "run", "cache_mb", "windows", "shape"]


def mean_intervals(measured: pl.DataFrame) -> pl.DataFrame:
    """Per (size, run, shape): the interval of the mean bytes read per query (the article's value is such a
    mean). One repeat: the BCa bootstrap interval over the run's queries (its queries the sampling unit:
    costlab.intervals). Several (engine.docsize.repeats, each the whole protocol from a cold start): the
    median of the repeats' means with its order-statistic interval, the repeat the sampling unit (the queries
    of one repeat share its cache's history)."""

    rows = []
    for keys, group in measured.group_by(CELL_KEYS, maintain_order=True):
        repeats = group["repeat"].n_unique() if "repeat" in group.columns else 1
        if repeats > 1:
            means = (group.group_by("repeat").agg(pl.col("bytes_read_into_cache").cast(pl.Float64).mean())
                     .sort("repeat")["bytes_read_into_cache"].to_list())
            interval = over_repeats(means)
        else:
            interval = over_samples(group["bytes_read_into_cache"].cast(pl.Float64).to_numpy(),
                                    unit="queries")
        rows.append({**dict(zip(CELL_KEYS, keys, strict=True)),
                     "repeats": repeats,
                     # the value a cell is judged by: its queries' mean, or the median of its repeats' means
                     "bytes_read_into_cache_value": interval.estimate,
                     "bytes_read_into_cache_mean_low": interval.low,
                     "bytes_read_into_cache_mean_high": interval.high,
                     "interval_confidence": interval.confidence,
                     # each query's bytes (each repeat's mean), in order: compare.with tests cells by them
                     "bytes_read_into_cache_samples": samples_text(interval.values)})
    schema = {key: measured.schema[key] for key in CELL_KEYS}
    interval_columns = ("bytes_read_into_cache_value", "bytes_read_into_cache_mean_low",
                        "bytes_read_into_cache_mean_high", "interval_confidence")
    return pl.DataFrame(rows, schema={**schema, "repeats": pl.Int64,
                                      **{column: pl.Float64 for column in interval_columns},
                                      "bytes_read_into_cache_samples": pl.Utf8})


def summarize(queries: pl.DataFrame, settings: EngineSettings, wt_version: str, journal_wanted: str,
              block_wanted: str, data_bytes: dict[int, int] | None = None) -> pl.DataFrame:
    """results/docsize/engine/cache_reads.csv: medians of the measured queries per (size, run, shape)."""
    measured = queries.filter(pl.col("phase") == "measured")
    table = (measured.group_by(CELL_KEYS, maintain_order=True)
             .agg(pl.len().alias("queries"),
                  pl.col("n_returned").median().alias("n_returned_median"),
                  pl.col("bytes_read_into_cache").median().alias("bytes_read_into_cache_median"),
                  pl.col("bytes_read_into_cache").mean().alias("bytes_read_into_cache_mean"),
                  # the per-query spread (the verdicts judge the mean by its interval over the queries)
                  pl.col("bytes_read_into_cache").std().fill_null(0.0).alias("bytes_read_into_cache_std"),
                  (pl.col("bytes_read_into_cache") == 0).mean().alias("zero_read_share"),
                  pl.col("pages_read_into_cache").median().alias("pages_read_median"),
                  pl.col("block_bytes_read").median().alias("block_bytes_read_median"),
                  pl.col("cold_start").any().alias("cold_blocks")))
    starts = (queries.group_by(["size_kb", "run", "shape"], maintain_order=True)
              .agg(pl.col("cold_start").sum().alias("cold_starts_in_block")))
    table = table.join(starts, on=["size_kb", "run", "shape"], how="left").join(
        mean_intervals(measured), on=CELL_KEYS, how="left")
    return table.with_columns(
        pl.lit(wt_version).alias("wt_version"),
        pl.lit(settings.block_compressor).alias("block_compressor"),
        pl.lit(block_wanted).alias("block_compressor_wanted"),
        pl.lit(settings.journal_compressor).alias("journal_compressor"),
        pl.lit(journal_wanted).alias("journal_compressor_wanted"),
        pl.lit(SERVER_KIND).alias("server_kind"),
    ).sort(["size_kb", "run", "shape"], maintain_order=True)


def run_engine_job(params: EngineParams, run: RunFacts, cache_reads_path, queries_path, provenance_path,
                   verdicts_path=None, published_queries=None, workdir=None,
                   tolerances_path=None) -> pl.DataFrame:
    """The docsize engine lab: every size's collection in WiredTiger, its queries' cache reads; `params` are
    the rule's (costlab.docsize.params.EngineParams), `run` the run's facts for the provenance."""

    engine_config, study = params.engine, params.section()
    engine_docsize = engine_config["docsize"]
    check_engine_docsize(engine_docsize)
    settings, resolved = engine_settings(engine_config)
    started = datetime.now(timezone.utc)
    rows, facts = [], []
    with progress(total=len(study["sizes_kb"]), desc="docsize engine lab", unit="size") as bar:
        for size_kb in study["sizes_kb"]:   # one step of the bar per document size
            bar.set_postfix_str(f"{size_kb} KB")
            with engine_home(workdir or engine_config.get("workdir"), f"docsize-{size_kb}k") as home:
                size_rows, size_facts = measure_size(
                    int(size_kb), study, engine_docsize, settings, home / "wt"
                )
            rows += size_rows
            facts.append(size_facts)
            bar.update()
    ended = datetime.now(timezone.utc)
    queries = pl.DataFrame(rows).select(QUERY_COLUMNS)
    table = summarize(queries, settings, wiredtiger_version(), resolved["journal_compressor_wanted"],
                      resolved["block_compressor_wanted"])
    write_csv(queries, queries_path)
    if verdicts_path is not None:
        tolerances = read_tolerances(tolerances_path) if tolerances_path else None
        write_csv(
            docsize_verdicts(
                table,
                read_csv(published_queries),
                int(engine_docsize["window_minutes"]),
                {f["size_kb"]: f["avg_doc_bytes"] for f in facts},
                tolerances,
                queries,
            ),
            verdicts_path,
        )
    write_json_atomic(
        provenance_path,
        engine_provenance(
            "docsize_engine",
            run,
            started,
            ended,
            {
                "collections": facts,
                "runs": [r.__dict__ for r in engine_runs(engine_docsize, list(study["sizes_kb"]))],
                "window_minutes": engine_docsize["window_minutes"],
            },
            engine_config=engine_config,
        ),
    )
    write_csv(table, cache_reads_path)   # last: its presence means the job completed
    return table




def document_subject(declaration, document: dict, size_kb: int | None, documents: int, seed: int,
                     customers: int | None, label: str) -> Subject:
    """A user's declared document (costlab.docsize.documents) at `size_kb` (None: as the sample is)."""

    return Subject(declaration.collection(label), declaration.projected,
                   lambda: document_data.batches(declaration, document, size_kb, documents, seed, customers),
                   lambda position: document_data.key_value(document, declaration.projected[0], position))


def run_document_engine_job(params, run: RunFacts, cache_reads_path, queries_path, provenance_path,
                            workdir=None) -> pl.DataFrame:
    """One declared document (docsize.documents) on the engine lab, with the orders' protocol and settings
    (engine.docsize): per size (each configured size when it grows, else the sample as it is) whole /
    projection / covered in every run. `params`: costlab.docsize.params.DocumentEngineParams."""

    engine_config, study = params.engine, params.section()
    engine_docsize = engine_config["docsize"]
    check_engine_docsize(engine_docsize)
    declaration = params.declaration()
    document = user_documents.read_sample(declaration.sample, declaration.name)
    settings, resolved = engine_settings(engine_config)
    documents = int(engine_docsize["docs_per_collection"])
    customers = min(int(study.get("customers", 50)), documents)
    labels = user_documents.size_labels(declaration, study["sizes_kb"])
    started = datetime.now(timezone.utc)
    rows, facts = [], []
    with progress(total=len(labels), desc=f"docsize engine lab: {declaration.name}", unit="size") as bar:
        for label in labels:
            bar.set_postfix_str(label)
            grown = int(label[:-1]) if declaration.grow else None
            size_kb = grown or document_data.nearest_size_kb(len(bson.encode(document)), study["sizes_kb"])
            subject = document_subject(declaration, document, grown, documents, int(study["seed"]), customers,
                                       label)
            with engine_home(workdir or engine_config.get("workdir"),
                             f"docsize-doc-{declaration.name}-{label}") as home:
                size_rows, size_facts = measure_size(size_kb, study, engine_docsize, settings, home / "wt",
                                                     subject)
            rows += [{**r, "size": label} for r in size_rows]
            facts.append({**size_facts, "size": label, "collection": subject.collection})
            bar.update()
    ended = datetime.now(timezone.utc)
    queries = pl.DataFrame(rows).select(["size", *QUERY_COLUMNS])
    table = summarize(queries.drop("size"), settings, wiredtiger_version(),
                      resolved["journal_compressor_wanted"], resolved["block_compressor_wanted"])
    doc_bytes = pl.DataFrame({"size_kb": [f["size_kb"] for f in facts], "size": [f["size"] for f in facts],
                              "avg_doc_bytes": [f["avg_doc_bytes"] for f in facts]})
    table = table.join(doc_bytes, on="size_kb", how="left").select(
        pl.lit(declaration.name).alias("document"), "size", "avg_doc_bytes",
        pl.lit(",".join(declaration.projected)).alias("projected"), pl.all().exclude("size", "avg_doc_bytes"))
    write_csv(queries, queries_path)
    write_json_atomic(
        provenance_path,
        engine_provenance(
            f"docsize_document_engine_{declaration.name}",
            run,
            started,
            ended,
            {"document": declaration.name, "sample": declaration.sample,
             "projected": list(declaration.projected), "grow": declaration.grow,
             "compare_to": declaration.compare_to, "collections": facts,
             "runs": [r.__dict__ for r in engine_runs(engine_docsize, list(study["sizes_kb"]))],
             "window_minutes": engine_docsize["window_minutes"]},
            engine_config=engine_config,
        ),
    )
    write_csv(table, cache_reads_path)   # last: its presence means the job completed
    return table
