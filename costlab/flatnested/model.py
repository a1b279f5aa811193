"""Server-free BSON sizes of every shape: what collStats `size` reports on a real mongod."""
from __future__ import annotations

import bson
import polars as pl

from costlab.flatnested.generate import documents_for
from costlab.flatnested.shapes import Shape

SIZE_COLUMNS = ["shape", "layout", "fields", "groups", "documents", "data_bytes", "avg_doc_bytes"]


def bson_sizes(documents: list[dict]) -> list[int]:
    return [len(bson.encode(doc)) for doc in documents]


def size_table(values: pl.DataFrame, shapes: list[Shape]) -> pl.DataFrame:
    """One row per shape: document count and total/average BSON bytes."""
    rows = []
    for shape in shapes:
        sizes = bson_sizes(documents_for(values, shape))
        rows.append({"shape": shape.name, "layout": shape.layout, "fields": shape.fields, "groups": shape.groups,
                     "documents": len(sizes), "data_bytes": sum(sizes), "avg_doc_bytes": sum(sizes) / len(sizes)})
    return pl.DataFrame(rows, schema={"shape": pl.String, "layout": pl.String, "fields": pl.Int64,
                                      "groups": pl.Int64, "documents": pl.Int64, "data_bytes": pl.Int64,
                                      "avg_doc_bytes": pl.Float64})
