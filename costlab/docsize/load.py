"""Loading one dataset into the server: generated BSON batches in createdAt order, the index, a marker.

The marker `dataset.json` is written LAST into the dataset's data directory, so a directory
whose load was interrupted never looks complete to the measuring jobs.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

from bson.raw_bson import RawBSONDocument
from pymongo.database import Database

from costlab.docsize.datasets import DATABASE, Dataset, parse_dataset
from costlab.docsize.generate import default_batch_docs, generate_bson_batches
from costlab.docsize.params import LoadParams
from costlab.io import atomic_path
from costlab.jobs import RunFacts
from costlab.measure.storage import checkpointed_coll_stats
from costlab.progress import progress
from costlab.server import measuring_job

WINDOW_INDEX = [("createdAt", 1), ("total", 1)]
WINDOW_INDEX_NAME = "createdAt_1_total_1"
# Only with the spread variant: serves (and covers) "all orders of one customer, by date".
CUSTOMER_INDEX = [("customerId", 1), ("createdAt", 1), ("total", 1)]
CUSTOMER_INDEX_NAME = "customerId_1_createdAt_1_total_1"
MARKER = "dataset.json"


def collection_stats(db: Database, collection: str) -> dict:
    """count, size (uncompressed BSON), storageSize, index sizes and block compressor, after a checkpoint.

    collStats, or $collStats where the command is gone (costlab.measure.storage).
    """
    stats, compressor, checkpoint = checkpointed_coll_stats(db, collection)
    return {
        "collection": collection,
        "documents": int(stats.get("count", 0)),
        "size_bytes": stats.get("size"),
        "avg_obj_bytes": stats.get("avgObjSize"),
        "storage_bytes": stats.get("storageSize"),
        "total_index_bytes": stats.get("totalIndexSize"),
        "index_sizes": dict(stats.get("indexSizes", {})),
        "block_compressor": compressor,
        "checkpoint": checkpoint,
    }


def _insert(db: Database, collection: str, size_kb: int, study_config: dict, layout: str) -> None:
    docs = int(study_config["docs_per_collection"])
    batches = generate_bson_batches(size_kb, docs, int(study_config["seed"]), layout=layout,
                                    customers=int(study_config["customers"]))
    total = math.ceil(docs / default_batch_docs(size_kb))
    target = db[collection]
    for batch in progress(batches, total=total, desc=f"load {collection}", unit="batch"):
        # ordered=True keeps createdAt order on disk, as the article inserted them.
        target.insert_many([RawBSONDocument(doc) for doc in batch], ordered=True)


def load_dataset(client, dataset: Dataset, study_config: dict, data_dir: str | Path,
                 database: str = DATABASE, load_id: str | None = None) -> dict:
    """(Re)create the dataset's collections and indexes; write data_dir/dataset.json last; return it."""
    data_dir = Path(data_dir)
    marker = data_dir / MARKER
    marker.unlink(missing_ok=True)
    db = client[database]
    collections = [(dataset.collection, dataset.layout)]
    if dataset.history_collection:
        collections.append((dataset.history_collection, dataset.history_layout))
    for name, layout in collections:
        db.drop_collection(name)
        _insert(db, name, dataset.size_kb, study_config, layout)
    main = db[dataset.collection]
    main.create_index(WINDOW_INDEX, name=WINDOW_INDEX_NAME)
    spread = bool((study_config.get("variants") or {}).get("spread_customer", False))
    if spread and dataset.variant == "base":
        main.create_index(CUSTOMER_INDEX, name=CUSTOMER_INDEX_NAME)
    record = {
        "dataset": dataset.name, "variant": dataset.variant, "size_kb": dataset.size_kb,
        "database": database, "load_id": load_id, "documents": int(study_config["docs_per_collection"]),
        "seed": int(study_config["seed"]), "customers": int(study_config["customers"]),
        "customer_index": spread and dataset.variant == "base",
        "collections": [collection_stats(db, name) for name, _ in collections],
    }
    data_dir.mkdir(parents=True, exist_ok=True)
    with atomic_path(marker) as tmp:
        tmp.write_text(json.dumps(record, indent=2, default=str) + "\n")
    return record


def read_marker(data_dir: str | Path, dataset: Dataset, study_config: dict) -> dict:
    """The load's marker, or a clear error when the load did not finish or was made with other settings."""
    marker = Path(data_dir) / MARKER
    if not marker.exists():
        raise RuntimeError(f"dataset {dataset.name} in {data_dir} is incomplete (no {MARKER}); "
                           f"rerun its load: snakemake --forcerun docsize_load")
    record = json.loads(marker.read_text())
    for key in ("documents", "seed", "customers"):
        wanted = int(study_config["docs_per_collection" if key == "documents" else key])
        if int(record.get(key, -1)) != wanted:
            raise RuntimeError(f"dataset {dataset.name} was loaded with {key}={record.get(key)}, config asks "
                               f"{wanted}; rerun its load: snakemake --forcerun docsize_load")
    return record


def load_job(params: LoadParams, run: RunFacts, dataset_name: str, data_dir: str | Path,
             provenance_path: str | Path) -> dict:
    """The load step: a standalone server on data_dir, the dataset loaded, provenance written."""

    study_config = params.section()
    dataset = parse_dataset(dataset_name)
    Path(data_dir).mkdir(parents=True, exist_ok=True)
    with measuring_job(run, "standalone", provenance_path, data_dir=data_dir, job=f"load_{dataset_name}",
                       extra={"dataset": dataset_name}, study="docsize", dataset=dataset_name, loads=True,
                       data=params.data) as server:
        return load_dataset(server.client, dataset, study_config, data_dir, database=server.database,
                            load_id=server.load_id)
