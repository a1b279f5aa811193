"""Server-free numbers: document and data sizes of every dataset, and whether each fits a cache.

Computed from the generator's templates (every order's exact BSON length) without generating
the documents, so `snakemake results/docsize/model/collections.csv` answers in a second.
"""
from __future__ import annotations

from pathlib import Path

import polars as pl

from costlab.docsize.datasets import Dataset, datasets
from costlab.docsize.generate import document_lengths
from costlab.finding import AT_THIS_SCALE, conform_table
from costlab.verdicts import NOT_MEASURED, Verdict

SMALL_CACHE_BYTES = 256 * 1024 * 1024
MIB = 1024 * 1024
GIB = 1024 * MIB

# The collections.csv contract (design.md).
COLLECTIONS_COLUMNS = ["size_kb", "documents", "avg_doc_bytes", "data_bytes"]


def default_cache_bytes(memory_bytes: int) -> int:
    """WiredTiger's default cache: the larger of 50% of (RAM - 1 GB) and 256 MB (MongoDB docs)."""
    return int(max(0.5 * (memory_bytes - GIB), SMALL_CACHE_BYTES))


def _collection_rows(ds: Dataset, study_config: dict) -> list[dict]:
    docs = int(study_config["docs_per_collection"])
    seed, customers = int(study_config["seed"]), int(study_config["customers"])
    rows = []
    for collection, layout in ((ds.collection, ds.layout), (ds.history_collection, ds.history_layout)):
        if collection is None:
            continue
        lengths = document_lengths(ds.size_kb, docs, seed, layout=layout, customers=customers)
        rows.append({"dataset": ds.name, "variant": ds.variant, "collection": collection, "layout": layout,
                     "size_kb": ds.size_kb, "documents": docs, "avg_doc_bytes": float(lengths.mean()),
                     "data_bytes": int(lengths.sum())})
    return rows


def collections_model(study_config: dict) -> pl.DataFrame:
    """The contract table: one row per base collection (size_kb, documents, avg_doc_bytes, data_bytes)."""
    rows = [
        row
        for ds in datasets(study_config)
        if ds.variant == "base"
        for row in _collection_rows(ds, study_config)
    ]
    return pl.DataFrame(rows).select(COLLECTIONS_COLUMNS)


def datasets_model(study_config: dict, published_collections: str | Path, memory_bytes: int) -> pl.DataFrame:
    """Every collection of every dataset, beside the published mean size and the two caches."""
    rows = [row for ds in datasets(study_config) for row in _collection_rows(ds, study_config)]
    frame = pl.DataFrame(rows)
    published = pl.read_csv(published_collections, comment_prefix="#").select(
        pl.col("size_kb").cast(pl.Int64), pl.col("mean_document_bytes").alias("published_avg_doc_bytes"))
    frame = frame.with_columns(pl.col("size_kb").cast(pl.Int64)).join(published, on="size_kb", how="left")
    # Only the published layout is comparable with the published mean size.
    frame = frame.with_columns(
        pl.when(pl.col("layout").is_in(["history_last", "history_first"]))
        .then(pl.col("published_avg_doc_bytes")).otherwise(None).alias("published_avg_doc_bytes"))
    default_cache = default_cache_bytes(memory_bytes)
    return frame.with_columns(
        ((pl.col("avg_doc_bytes") / pl.col("published_avg_doc_bytes") - 1) * 100)
        .round(2)
        .alias("avg_doc_diff_pct"),
        pl.lit(SMALL_CACHE_BYTES).alias("small_cache_bytes"),
        (pl.col("data_bytes") <= SMALL_CACHE_BYTES).alias("fits_small_cache"),
        pl.lit(default_cache).alias("default_cache_bytes_this_host"),
        (pl.col("data_bytes") <= default_cache).alias("fits_default_cache_this_host"),
    )


def published_vs_model(datasets_table: pl.DataFrame, published_collections: str | Path,
                       published_documents: int | None = None) -> pl.DataFrame:
    """Per base collection: the generated mean BSON document size, then the data size, vs the article's
    collection table.

    Judged within the `tolerance_pct` beside each published size
    (resources/published/docsize_collections.csv);
    only the published layout (the order with its history) is compared. The data size (MB) is judged only
    when the collection holds the article's `published_documents` (docsize_facts.csv docs_per_collection);
    at another count the row says so.
    """
    base = _published_base(datasets_table, published_collections)
    same_count = pl.lit(published_documents is not None) & (pl.col("documents") == (published_documents or 0))
    mean_size = _judged_rows(
        base,
        pl.format("a {} KB order's mean BSON size is the article's", pl.col("size_kb")),
        pl.format(
            "mean document bytes, {} ({} generated documents)", pl.col("collection"), pl.col("documents")
        ),
        "published_avg_doc_bytes",
        "avg_doc_bytes",
    )
    data_size = _judged_rows(
        base,
        pl.format("a {} KB collection's data size is the article's", pl.col("size_kb")),
        pl.format(
            "data bytes (collStats size), {} ({} generated documents; published {} MB, MB = 10^6 B)",
            pl.col("collection"),
            pl.col("documents"),
            (pl.col("published_data_bytes") / 1e6),
        ),
        "published_data_bytes",
        "data_bytes",
        pl.when(~same_count).then(
            pl.format(
                f"{AT_THIS_SCALE}: {{}} documents here, the article's {{}}",
                pl.col("documents"),
                pl.lit(str(published_documents or "not given")),
            )
        ),
    )
    return pl.concat([mean_size, data_size])


def _published_base(datasets_table: pl.DataFrame, published_collections: str | Path) -> pl.DataFrame:
    """The base collections of the published layout beside their published data size and tolerance_pct."""
    published = pl.read_csv(published_collections, comment_prefix="#").select(
        pl.col("size_kb").cast(pl.Int64),
        (pl.col("data_mb") * 1e6).alias("published_data_bytes"),
        pl.col("tolerance_pct").cast(pl.Float64),
        pl.col("tolerance_pct").cast(pl.Utf8).alias("tolerance_text"),
    )
    return (
        datasets_table.filter((pl.col("variant") == "base") & pl.col("published_avg_doc_bytes").is_not_null())
        .with_columns(pl.col("size_kb").cast(pl.Int64))
        .join(published, on="size_kb", how="left")
        .sort("size_kb")
    )


def _judged_rows(base: pl.DataFrame, finding: pl.Expr, metric: pl.Expr, published: str, reproduced: str,
                 not_comparable: pl.Expr | None = None) -> pl.DataFrame:
    """reproduced vs published within each row's tolerance_pct (a missing value: not run,
    costlab.verdicts.judge);
    not_comparable: the reason of a "not comparable" verdict that comes first, where it is not null."""
    ratio = pl.col(reproduced) / pl.col(published)
    reason = pl.when(pl.col("tolerance_pct").is_null()).then(pl.lit("no tolerance published"))
    if not_comparable is not None:
        reason = pl.coalesce(pl.when(pl.col("tolerance_pct").is_not_null()).then(not_comparable), reason)
    within = (ratio - 1).abs() * 100 <= pl.col("tolerance_pct")
    missing = pl.col(reproduced).is_null()
    verdict = (pl.when(reason.is_not_null()).then(pl.lit(Verdict.NOT_COMPARABLE.value))
               .when(missing).then(pl.lit(Verdict.NOT_RUN.value))
               .when(within).then(pl.lit(Verdict.REPRODUCED.value)).otherwise(pl.lit(Verdict.NOT_REPRODUCED.value)))
    return conform_table(
        base.select(
            finding.alias("finding"),
            metric.alias("metric"),
            pl.lit("B").alias("unit"),
            pl.col(published).cast(pl.Float64).alias("published"),
            pl.col(reproduced).cast(pl.Float64).alias("reproduced"),
            ratio.round_sig_figs(4).alias("ratio"),
            pl.format("within ±{} %", pl.col("tolerance_text")).alias("tolerance"),
            verdict.alias("verdict"),
            pl.coalesce(reason, pl.when(missing).then(pl.lit(NOT_MEASURED))).alias("reason"),
            pl.lit("model (no server)").alias("server_kind"),
        )
    )
