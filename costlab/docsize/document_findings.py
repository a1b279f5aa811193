"""Your documents beside the article's orders: rows of kind "user variant" (docs/variants.md).

Each document declared in `docsize.documents` (costlab/docsize/documents.py) is measured by the engine lab
with the orders' protocol and settings (results/docsize/engine/documents/<name>_cache_reads.csv). Per size
and shape, one row: the mean bytes read into the cache per query in the small-cache run (the article's
bytes-read table: one cold start, the warm-ups once, then whole, projection and covered), the document's
over its `compare_to`'s (the article's orders of the same size, or another declared document) as a ratio.
No article published a number for a user's document, so no row is judged: its verdict is `not comparable`
with the reason costlab.finding.USER_VARIANT_REASON, or `not run` when either value is missing. They are
never counted among the published findings; the report shows them in "Your variants"
(results/docsize/engine/your_documents.csv, read into results/findings.csv like a verdict table).
"""
from __future__ import annotations

from typing import Callable, Iterator

import polars as pl

from costlab.declarations.findings import beside, measured
from costlab.docsize.documents import ORDERS
from costlab.docsize.generate import target_doc_bytes
from costlab.docsize.protocol import SHAPES
from costlab.finding import Finding, verdict_table
from costlab.inputs import read_csv
from costlab.io import write_csv
from costlab.verdicts import is_missing

RUN = "small_cache"      # the article's bytes-read table
MEASURE = "bytes_read_into_cache_mean"
COMPARED_READ_NOTHING = "the compared read 0 B per query: no ratio"


def _cells(table: pl.DataFrame) -> dict[tuple[int, str], dict]:
    """(size_kb, shape) -> the small-cache row of a cache_reads table."""
    rows = table.filter(pl.col("run") == RUN)
    return {(int(r["size_kb"]), r["shape"]): r for r in rows.iter_rows(named=True)}


def _value(row: dict | None) -> float | None:
    return measured(None if row is None else row.get(MEASURE))


def _docs(value) -> str:
    return "" if is_missing(value) else f", documents of {int(value):,} B"


def _bytes(value: float | None) -> str:
    return "—" if value is None else f"{value:,.0f} B/query"


def compared_cells(orders: pl.DataFrame, documents: dict[str, pl.DataFrame], compare_to: dict[str, str],
                   cells: Callable[[pl.DataFrame], dict]
                   ) -> Iterator[tuple[str, str, pl.DataFrame, dict, dict]]:
    """Per document: its name, its compare_to, its table, its cells and its compare_to's (ORDERS: `orders`;
    a compared document that has no table: none), each table's cells as `cells` reads them."""
    order_cells = cells(orders)
    for name, table in documents.items():
        other = compare_to.get(name, ORDERS)
        yield name, other, table, cells(table), (order_cells if other == ORDERS
                                                 else cells(documents.get(other, orders.clear())))


def document_rows(orders: pl.DataFrame, documents: dict[str, pl.DataFrame], compare_to: dict[str, str]
                  ) -> list[Finding]:
    """The rows of every document in `documents` (name -> its cache_reads table) beside its compare_to
    (ORDERS: `orders`, the docsize engine lab's cache_reads.csv)."""
    rows = []
    for name, other, _, mine_cells, theirs_cells in compared_cells(orders, documents, compare_to, _cells):
        for size_kb, shape in sorted(mine_cells, key=lambda cell: (cell[0], SHAPES.index(cell[1]))):
            row = mine_cells[(size_kb, shape)]
            label = row.get("size") or f"{size_kb}k"
            theirs = theirs_cells.get((size_kb, shape))
            a, b = _value(row), _value(theirs)
            other_words = (f"the article's orders of {size_kb} KB" if other == ORDERS
                           else f"{other} ({size_kb} KB)")
            mine_words = f"{name} ({label})" if label != "sample" else f"{name} (as the sample is)"
            mine_doc = row.get("avg_doc_bytes")
            # the orders' documents are exactly the article's mean of their size (costlab.docsize.generate)
            theirs_doc = target_doc_bytes(size_kb) if other == ORDERS else (theirs or {}).get("avg_doc_bytes")
            note = (f"{name}: {_bytes(a)}{_docs(mine_doc)}; {other}: {_bytes(b)}{_docs(theirs_doc)}; "
                    f"mean of {row.get('queries')} queries, small cache {row.get('cache_mb')} MB")
            read_nothing = a is not None and b is not None and not b
            rows.append(beside(
                f"{mine_words} beside {other_words}: bytes read per {shape} query, small cache (engine lab)",
                f"bytes_read_into_cache {name}/{other} {label} {shape}", a, b, server_kind="engine",
                note=note, reason=COMPARED_READ_NOTHING if read_nothing else None))
    return rows


def write_document_findings(params, orders_path, document_paths: list, out_path) -> pl.DataFrame:
    """results/docsize/engine/your_documents.csv from the orders' and each document's cache_reads.csv.
    `params`: costlab.docsize.params.DocumentFindingsParams (each document's compare_to)."""

    tables = {}
    for path in document_paths:
        table = read_csv(path)
        tables[str(table["document"][0])] = table
    frame = verdict_table(document_rows(read_csv(orders_path), tables, params.documents), rounded=True)
    write_csv(frame, out_path)
    return frame
