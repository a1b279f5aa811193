"""Server-free BSON sizes of every shape: what collStats `size` reports on a real mongod."""
from __future__ import annotations

import bson
import polars as pl

from costlab.finding import NOT_JUDGED, Finding, judged, verdict_table
from costlab.flatnested.generate import documents_for
from costlab.flatnested.shapes import Shape
from costlab.published import Tolerances, tolerances_or_published
from costlab.verdicts import Verdict

SIZE_COLUMNS = ["shape", "layout", "fields", "groups", "documents", "data_bytes", "avg_doc_bytes"]


def bson_sizes(documents: list[dict]) -> list[int]:
    return [len(bson.encode(doc)) for doc in documents]


def size_table(values: pl.DataFrame, shapes: list[Shape]) -> pl.DataFrame:
    """One row per shape: document count and total/average BSON bytes."""
    rows = []
    for shape in shapes:
        sizes = bson_sizes(documents_for(values, shape))
        rows.append(
            {
                "shape": shape.name,
                "layout": shape.layout,
                "fields": shape.fields,
                "groups": shape.groups,
                "documents": len(sizes),
                "data_bytes": sum(sizes),
                "avg_doc_bytes": sum(sizes) / len(sizes),
            }
        )
    return pl.DataFrame(rows, schema={"shape": pl.String, "layout": pl.String, "fields": pl.Int64,
                                      "groups": pl.Int64, "documents": pl.Int64, "data_bytes": pl.Int64,
                                      "avg_doc_bytes": pl.Float64})


MODEL_KIND = "model (no server)"


def published_vs_model(sizes: pl.DataFrame, sample_sizes: pl.DataFrame,
                       tolerances: Tolerances | None = None) -> pl.DataFrame:
    """Per flat/structured pair: the structured layout's BSON saving over flat vs the article's example.

    The article's figure is one example user document (resources/published/flatnested_sample_sizes.csv):
    it is judged by flatnested_tolerances.csv's size_saving (the direction: a saving above 0), as on a
    server run.
    """
    smaller = tolerances_or_published(tolerances, "flatnested")["size_saving"].holds()
    structured = sample_sizes.filter(pl.col("layout") == "structured").row(0, named=True)
    flat = sizes.filter(pl.col("layout") == "flat").select("fields", pl.col("shape").alias("flat_shape"),
                                                          pl.col("data_bytes").alias("flat_bytes"))
    pairs = sizes.filter(pl.col("layout") == "structured").select(
        "fields", pl.col("shape").alias("structured_shape"), pl.col("data_bytes").alias("structured_bytes"),
        "documents").join(flat, on="fields", how="inner").sort("fields")
    saving = (pl.col("flat_bytes") - pl.col("structured_bytes")) / pl.col("flat_bytes") * 100
    published = float(structured["saving_pct"])
    frame = pairs.select(
        pl.format("structured is smaller ({} vs {})", pl.col("flat_shape"), pl.col("structured_shape")).alias(
            "finding"
        ),
        pl.format(
            "BSON data size saving of structured over flat, {} generated documents (published: the "
            "article's example document)",
            pl.col("documents"),
        ).alias("metric"),
        saving.alias("reproduced"),
    )
    judged_rows = [
        judged(r["finding"], r["metric"], "%", published, r["reproduced"], smaller, server_kind=MODEL_KIND)
        for r in frame.iter_rows(named=True)
    ]
    return pl.concat(
        [verdict_table(judged_rows, rounded=True), example_document_row(sample_sizes, MODEL_KIND)]
    )


def example_document_row(sample_sizes: pl.DataFrame, server_kind: str) -> pl.DataFrame:
    """The article's example document sizes (403 / 307 B): a row that says why they are not judged."""
    sizes = dict(zip(sample_sizes["layout"], sample_sizes["document_bytes"]))
    return verdict_table(
        [
            Finding(
                "the article's example user document: "
                + ", ".join(f"{bytes_} B {layout}" for layout, bytes_ in sizes.items()),
                "BSON bytes of one example document",
                "B",
                None,
                None,
                Verdict.NOT_COMPARABLE,
                "that document is not generated here; its saving's direction is judged per pair",
                NOT_JUDGED,
                server_kind,
            )
        ]
    )
