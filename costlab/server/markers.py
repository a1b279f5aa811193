"""Dataset markers on the server: proof that the data a job is about to measure is the data its run loaded.

A load job removes the dataset's marker document before it writes anything and writes a new one
(with a fresh load id) only after the load succeeded; the same load id goes into the data
directory's dataset.json. A measuring job compares the two before it measures: another run that
reloaded the collection, a half-finished load, or a deployment that lost the data all differ.
"""
from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

MARKER_COLLECTION = "costlab_datasets"
DATASET_FILE = "dataset.json"


class DatasetMismatch(RuntimeError):
    """The server does not hold the dataset the job's inputs describe."""


def clear_marker(db, dataset: str) -> None:
    db[MARKER_COLLECTION].delete_one({"_id": dataset})


def write_marker(db, dataset: str, load_id: str, job: str, data_params: dict) -> dict:
    record = {"_id": dataset, "load_id": load_id, "job": job, "data_params": data_params,
              "loaded_at": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    db[MARKER_COLLECTION].replace_one({"_id": dataset}, record, upsert=True)
    return record


def expected_load_id(data_dir: str | Path, rebuild: str) -> str:
    """The load id in data_dir/dataset.json, or DatasetMismatch saying how to reload."""
    path = Path(data_dir) / DATASET_FILE
    try:
        record = json.loads(path.read_text())
    except FileNotFoundError:
        raise DatasetMismatch(f"{path} is missing: the load did not finish; rebuild it: {rebuild}") from None
    except (OSError, ValueError) as err:
        raise DatasetMismatch(f"{path} cannot be read ({err}); rebuild it: {rebuild}") from None
    load_id = record.get("load_id") if isinstance(record, dict) else None
    if not load_id:
        raise DatasetMismatch(
            f"{path} records no load id (loaded by an older costlab); rebuild it: {rebuild}"
        )
    return load_id


def verify_marker(db, dataset: str, load_id: str, server_uri: str, rebuild: str) -> dict:
    """The server's marker of `dataset` if it carries load_id, else DatasetMismatch naming both."""
    found = db[MARKER_COLLECTION].find_one({"_id": dataset})
    where = f"{db.name} on {server_uri}"
    if found is None:
        raise DatasetMismatch(f"dataset {dataset} is not loaded in {where} (no marker: never loaded, a load "
                              f"was interrupted, or the data was removed); rebuild it: {rebuild}")
    if found.get("load_id") != load_id:
        raise DatasetMismatch(f"dataset {dataset} in {where} is not the data this run loaded (load "
                              f"{found.get('load_id')} by {found.get('job')} at {found.get('loaded_at')}, "
                              f"expected load {load_id}); rebuild it: {rebuild}")
    return found
