"""Your documents (docsize.documents) on a server: the orders' load and measuring protocol, beside the orders.

Each declared document at each of its sizes is its own dataset, `doc_<name>_<size>` (one collection, its
documents from costlab.docsize.documents, one index on the projected fields), loaded on the standalone
profile and measured by costlab.docsize.run.measure_dataset with the document's QuerySpec in the study's
three runs, as the orders are. results/docsize/tables/your_documents.csv then holds one row per run, size,
shape and measure (client time, server time, bytes read into the cache: medians of the timed queries), the
document's over its compare_to's (the article's orders of the same size), of kind "user variant": never
judged, never counted (the stand-in's rows: reason `stand-in`, its timings are not MongoDB's).
"""
from __future__ import annotations

import json
from pathlib import Path

import polars as pl
from bson.raw_bson import RawBSONDocument

from costlab.docsize import document_data
from costlab.docsize import documents as user_documents
from costlab.docsize.datasets import DATABASE, Dataset
from costlab.docsize.document_findings import compared_cells
from costlab.docsize.documents import ORDERS, DocumentDeclaration
from costlab.docsize.load import collection_stats
from costlab.docsize.names import RUNS
from costlab.docsize.protocol import SHAPES
from costlab.docsize.run import QuerySpec, cold_cache, get_run, measure_dataset
from costlab.finding import NOT_JUDGED, STAND_IN, USER_VARIANT_REASON, Finding, verdict_table
from costlab.io import atomic_path, write_csv
from costlab.server import measuring_job
from costlab.verdicts import NOT_MEASURED, Kind, Verdict, is_missing

MARKER = "dataset.json"
# measure -> (its words, unit)
MEASURES = {"client_ms": ("client time", "ms"), "server_ms": ("server time", "ms"),
            "bytes_read_into_cache": ("bytes read into the cache", "B")}


def document_dataset(declaration: DocumentDeclaration, document: dict, label: str,
                     sizes_kb: list[int]) -> Dataset:
    return Dataset(user_documents.dataset_name(declaration.name, label),
                   document_data.measured_size_kb(declaration, document, label, sizes_kb), "document")


def query_spec(declaration: DocumentDeclaration, document: dict):
    key = declaration.projected[0]
    return QuerySpec(declaration.projected,
                     lambda position: document_data.key_value(document, key, position))


def load_document(client, declaration: DocumentDeclaration, document: dict, label: str, study_config: dict,
                  data_dir: str | Path, database: str = DATABASE, load_id: str | None = None) -> dict:
    """(Re)create the document's collection and its index on the projected fields; write the marker last."""

    data_dir = Path(data_dir)
    marker = data_dir / MARKER
    marker.unlink(missing_ok=True)
    dataset = document_dataset(declaration, document, label, study_config["sizes_kb"])
    db = client[database]
    db.drop_collection(dataset.collection)
    grown = None if label == "sample" else dataset.size_kb
    documents = int(study_config["docs_per_collection"])
    for _, batch in document_data.batches(declaration, document, grown, documents, int(study_config["seed"]),
                                           int(study_config["customers"]), batch_docs=512):
        db[dataset.collection].insert_many([RawBSONDocument(d) for d in batch], ordered=True)
    db[dataset.collection].create_index([(f, 1) for f in declaration.projected], name=declaration.index_name)
    record = {"dataset": dataset.name, "variant": "document", "document": declaration.name,
              "size": label, "size_kb": dataset.size_kb, "database": database, "load_id": load_id,
              "documents": documents, "seed": int(study_config["seed"]),
              "customers": int(study_config["customers"]),
              "collections": [collection_stats(db, dataset.collection)]}
    data_dir.mkdir(parents=True, exist_ok=True)
    with atomic_path(marker) as tmp:
        tmp.write_text(json.dumps(record, indent=2, default=str) + "\n")
    return record


def load_job(params, run, label: str, data_dir, provenance_path) -> dict:
    """The load step of one document at one size (params: costlab.docsize.params.DocumentServerParams)."""

    declaration = params.declaration()
    document = user_documents.read_sample(declaration.sample, declaration.name)
    name = user_documents.dataset_name(declaration.name, label)
    Path(data_dir).mkdir(parents=True, exist_ok=True)
    with measuring_job(run, "standalone", provenance_path, data_dir=data_dir, job=f"load_{name}",
                       extra={"dataset": name, "document": declaration.name}, study="docsize", dataset=name,
                       loads=True, data=params.data) as server:
        return load_document(server.client, declaration, document, label, params.section(), data_dir,
                             database=server.database, load_id=server.load_id)


def measure_job(params, run, run_name: str, label: str, data_dir, provenance_path) -> pl.DataFrame:
    """One run on one document's dataset, with the orders' protocol; its raw rows (costlab.docsize.run)."""

    declaration = params.declaration()
    document = user_documents.read_sample(declaration.sample, declaration.name)
    study_config = params.section()
    dataset = document_dataset(declaration, document, label, study_config["sizes_kb"])
    spec = query_spec(declaration, document)
    spec_run = get_run(run_name)
    extra = {"dataset": dataset.name, "document": declaration.name, "run": run_name,
             "run_label": spec_run.label}
    with measuring_job(run, spec_run.profile, provenance_path, data_dir=data_dir,
                       job=f"{run_name}__{dataset.name}",
                       extra=extra, study="docsize", dataset=dataset.name, data=params.data) as server:
        raw, _ = measure_dataset(server.client, dataset, run_name, study_config, database=server.database,
                                 reset_cache=lambda: cold_cache(server), spec=spec)
        extra["cache_restarts"] = server.restarts
    return raw.with_columns(pl.lit(declaration.name).alias("document"), pl.lit(label).alias("size"))


def _medians(raw: pl.DataFrame) -> dict[tuple, dict]:
    """(run, size_kb, shape) -> median of each measure over the timed queries, and the server kind."""
    cells = {}
    frame = raw.filter(pl.col("family") == "window") if "family" in raw.columns else raw
    for keys, group in frame.group_by(["run", "size_kb", "shape"], maintain_order=True):
        cells[tuple(keys)] = {m: group[m].drop_nulls().median() if group[m].drop_nulls().len() else None
                              for m in MEASURES} | {"server_kind": group["server_kind"][0],
                                                    "queries": group.height}
    return cells


def server_rows(orders: pl.DataFrame, documents: dict[str, pl.DataFrame], compare_to: dict[str, str]
                ) -> list[Finding]:
    """Per document, run, size, shape and measure: the document's median over its compare_to's."""

    rows = []
    for name, other, raw, mine_cells, theirs_cells in compared_cells(orders, documents, compare_to,
                                                                     _medians):
        labels = dict(zip(raw["size_kb"].to_list(), raw["size"].to_list()))
        for run_name in RUNS:
            for size_kb in sorted({k for r, k, _ in mine_cells if r == run_name}):
                for shape in SHAPES:
                    mine = mine_cells.get((run_name, size_kb, shape))
                    if mine is None:
                        continue
                    theirs = theirs_cells.get((run_name, size_kb, shape)) or {}
                    kind = "/".join(sorted({mine["server_kind"], theirs.get("server_kind")} - {None}))
                    label = labels.get(size_kb, f"{size_kb}k")
                    for measure, (words, unit) in MEASURES.items():
                        a, b = mine.get(measure), theirs.get(measure)
                        a = None if is_missing(a) else float(a)
                        b = None if is_missing(b) else float(b)
                        if a is None and b is None:
                            continue   # a counter neither server reports (the stand-in: server time, cache)
                        ratio = a / b if a is not None and b else None
                        if ratio is None:
                            verdict, reason = Verdict.NOT_RUN, NOT_MEASURED
                        else:
                            verdict = Verdict.NOT_COMPARABLE
                            reason = STAND_IN if "stand-in" in kind else USER_VARIANT_REASON
                        other_words = (f"the article's orders of {size_kb} KB" if other == ORDERS
                                       else f"{other} ({size_kb} KB)")
                        note = (f"{name}: {'—' if a is None else f'{a:.4g}'} {unit}; {other}: "
                                f"{'—' if b is None else f'{b:.4g}'} {unit}; medians of {mine['queries']} "
                                f"queries, {RUNS[run_name].label}")
                        rows.append(Finding(
                            f"{name} ({label}) beside {other_words}: {words} per {shape} query, "
                            f"{RUNS[run_name].label}",
                            f"{measure} {name}/{other} {label} {run_name} {shape}", "ratio", None, ratio,
                            verdict, reason=reason, tolerance=NOT_JUDGED, server_kind=kind or None, note=note,
                            kind=Kind.USER_VARIANT))
    return rows


def write_server_findings(params, order_paths: list, document_paths: list, out_path) -> pl.DataFrame:
    """results/docsize/tables/your_documents.csv (params: DocumentFindingsParams, each one's compare_to)."""

    orders = pl.concat([pl.read_parquet(p) for p in order_paths], how="diagonal_relaxed")
    tables: dict[str, pl.DataFrame] = {}
    for path in document_paths:
        raw = pl.read_parquet(path)
        name = str(raw["document"][0])
        tables[name] = pl.concat([tables[name], raw], how="diagonal_relaxed") if name in tables else raw
    frame = verdict_table(server_rows(orders, tables, params.documents), rounded=True)
    write_csv(frame, out_path)
    return frame
