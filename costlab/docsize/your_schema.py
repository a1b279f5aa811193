"""Your documents' absolute costs beside their compare_to: the report's "Your schema" (costlab.yourschema).

Per document declared in `docsize.documents` and per size: its BSON size, and the mean bytes read into the
cache per query of each shape in the small-cache run (the article's bytes-read table), from
engine/documents/cache_reads_<name>.csv, each beside its compare_to's (the article's orders of the same size,
engine/cache_reads.csv, or another declared document) as a ratio with the ratio's interval over the two runs'
queries (costlab.intervals.ratio_over_samples), and the value's own interval that cache_reads already has.
"""
from __future__ import annotations

from pathlib import Path

import polars as pl

from costlab.docsize.document_findings import MEASURE, RUN
from costlab.docsize.documents import DECLARED, ORDERS
from costlab.docsize.generate import target_doc_bytes
from costlab.docsize.protocol import SHAPES
from costlab.finding import read_samples
from costlab.yourschema import EXACT, CostRow, Point, SchemaFigure, YourSchema, ratio_over_queries

ENGINE = "engine lab"
COMPARED_READ_NOTHING = "the compared read 0 B per query: no ratio"


def compare_pairs(section: dict) -> dict[str, str]:
    return DECLARED.compare_pairs(section)


def _cells(path: Path) -> dict[tuple[int, str], dict]:
    if not path.is_file():
        return {}
    frame = pl.read_csv(path, infer_schema_length=10000)
    if not {"run", "size_kb", "shape"} <= set(frame.columns):
        return {}
    return {
        (int(r["size_kb"]), str(r["shape"])): r
        for r in frame.filter(pl.col("run") == RUN).iter_rows(named=True)
    }


def _mean(row: dict | None) -> float | None:
    value = None if row is None else row.get(MEASURE)
    return None if value is None or value != value else float(value)


def _value_interval(row: dict) -> str | None:
    low, high = row.get("bytes_read_into_cache_mean_low"), row.get("bytes_read_into_cache_mean_high")
    if low is None or high is None:
        return None
    confidence = row.get("interval_confidence")
    return f"{low:,.0f} to {high:,.0f}" + (f" ({confidence:.0%})" if confidence else "")


def your_schema(study_dir: Path, config: dict) -> YourSchema | None:
    pairs = compare_pairs(config.get("docsize") or {})
    if not pairs:
        return None

    engine = study_dir / "engine"
    orders = _cells(engine / "cache_reads.csv")
    documents = {name: _cells(engine / "documents" / f"cache_reads_{name}.csv") for name in pairs}
    rows: list[CostRow] = []
    points: list[Point] = []
    for (size_kb, shape), row in sorted(orders.items(), key=lambda c: (c[0][0], SHAPES.index(c[0][1]))):
        if _mean(row) is not None:
            points.append(Point("orders (the article's)", size_kb, _mean(row), False, shape))
    for name, other in pairs.items():
        mine = documents[name]
        theirs = orders if other == ORDERS else documents.get(other, {})
        for size_kb in sorted({s for s, _ in mine}):
            label = next((r.get("size") for (s, _), r in mine.items() if s == size_kb and r.get("size")),
                         f"{size_kb}k")
            first = next(r for (s, _), r in mine.items() if s == size_kb)
            other_doc = (float(target_doc_bytes(size_kb)) if other == ORDERS else
                         next((float(r["avg_doc_bytes"]) for (s, _), r in theirs.items()
                               if s == size_kb and r.get("avg_doc_bytes") is not None), None))
            mine_doc = first.get("avg_doc_bytes")
            where = f"{size_kb} KB" if label != "sample" else "as the sample is"
            rows.append(CostRow(name, other, f"document size, {where}", ENGINE, "B",
                                None if mine_doc is None else float(mine_doc), other_doc, EXACT))
            for shape in SHAPES:
                cell = mine.get((size_kb, shape))
                if cell is None:
                    continue
                compared = theirs.get((size_kb, shape))
                a, b = _mean(cell), _mean(compared)
                if a is not None:
                    points.append(Point(name, size_kb, a, True, shape))
                if b == 0:
                    interval = COMPARED_READ_NOTHING
                elif a is None or b is None:
                    interval = "not measured"
                else:
                    interval = ratio_over_queries(
                        read_samples(cell.get("bytes_read_into_cache_samples")),
                        read_samples((compared or {}).get("bytes_read_into_cache_samples")),
                    )
                rows.append(
                    CostRow(
                        name,
                        other,
                        f"bytes read per {shape} query, {where}",
                        ENGINE,
                        "B/query",
                        a,
                        b,
                        interval,
                        _value_interval(cell),
                    )
                )
    cache = next((r.get("cache_mb") for table in documents.values() for r in table.values()), None)
    queries = next((r.get("queries") for table in documents.values() for r in table.values()), None)
    scale = (
        f"engine lab, the article's small-cache run ({cache} MB cache, mean of {queries} queries a shape)"
        if cache
        else "engine lab, the article's small-cache run"
    )
    figure = SchemaFigure(
        "Bytes read into the cache per query: your documents beside the article's orders (engine lab)",
        "small-cache run, mean per query; your documents in colour", "document size (KB)",
        "bytes read per query", "Q", tuple(points), facet_title="shape", scales=("log2", "symlog"),
    ) if any(p.yours for p in points) else None
    return YourSchema("docsize", scale, tuple(rows), figure)
