"""Server-free model of when WiredTiger may store a delta instead of the whole document.

What MongoDB's WiredTiger record store does on a full-document update (doUpdateRecord in
src/mongo/db/storage/wiredtiger/wiredtiger_record_store.cpp, read for this study): it tries
WT_CURSOR::modify only when ALL of these hold, otherwise it rewrites the whole record (counted
by WiredTiger as a *cursor insert call*):

1. the table is not logged (`!_isLogged`): on a standalone every table is journaled, so never;
   on a replica set user collections are not logged (the oplog is), so the path is open;
2. the new record is larger than 1024 bytes (`kMinLengthForDiff`);
3. new length <= old length + new length / 10 (it grew by at most a tenth of its new size);
4. `wiredtiger_calc_modify` finds the difference in at most 16 entries (`kMaxEntries`) whose
   bytes total at most new length / 10.

Conditions 1-3 are arithmetic on BSON sizes and are modelled here exactly; condition 4 needs
WiredTiger's diff routine and is not modelled, so the model's count is an UPPER bound on modify
calls. The measured fallback sweep is what decides (see costlab.arraygrowth.run).

BSON sizes are computed, not encoded per step: appending one element to an array grows the
document by exactly that element's encoded size (type byte + decimal index key + NUL + value).
"""
from __future__ import annotations

import bson
import numpy as np
import polars as pl
from bson import ObjectId

from costlab.arraygrowth.workloads import (
    ARRAY_FIELD,
    FALLBACK_VARIANTS,
    JOB_FIELDS,
    FallbackParams,
    fallback_settings,
    job_name,
)
from costlab.io import write_csv

MIN_LENGTH_FOR_DIFF = 1024
MAX_GROWTH_FRACTION_DIVISOR = 10
MAX_MODIFY_ENTRIES = 16
INT64_BYTES = 8


def base_document_bytes(job_id: str) -> int:
    """BSON size of a job document with an empty array, as stored (with its ObjectId _id)."""
    return len(bson.encode({"_id": ObjectId(), **JOB_FIELDS, "job_id": job_id, ARRAY_FIELD: []}))


def index_key_bytes(indexes: np.ndarray) -> np.ndarray:
    """Bytes of the decimal array-index keys '0', '1', ... (without the NUL)."""
    indexes = np.asarray(indexes, dtype=np.int64)
    digits = np.ones_like(indexes)
    for power in range(1, 19):
        digits += indexes >= 10 ** power
    return digits


def element_bytes(indexes: np.ndarray, value_bytes: int | np.ndarray) -> np.ndarray:
    """Encoded size of array elements at `indexes`: type byte + key + NUL + value."""
    return 1 + index_key_bytes(indexes) + 1 + np.asarray(value_bytes, dtype=np.int64)


def string_value_bytes(length: int) -> int:
    """BSON string value: int32 length + bytes + NUL."""
    return 4 + length + 1


def modify_eligible(old_bytes: np.ndarray, new_bytes: np.ndarray, table_logged: bool) -> np.ndarray:
    """Per update: do conditions 1-3 allow the delta path? (condition 4 not modelled)."""
    old_bytes = np.asarray(old_bytes, dtype=np.int64)
    new_bytes = np.asarray(new_bytes, dtype=np.int64)
    if table_logged:
        return np.zeros(new_bytes.shape, dtype=bool)
    return (new_bytes > MIN_LENGTH_FOR_DIFF) & (
        new_bytes <= old_bytes + new_bytes // MAX_GROWTH_FRACTION_DIVISOR
    )


def update_sizes(variant: str, params: FallbackParams) -> tuple[np.ndarray, np.ndarray]:
    """(old, new) BSON bytes of the updated document for each of the variant's updates."""
    u = params.updates
    base = base_document_bytes(job_name(0))
    if variant in ("push_one", "set_array"):
        # $set of the whole array stores the same bytes as $push: only what travels differs.
        growth = element_bytes(np.arange(u), INT64_BYTES)
        new = base + np.cumsum(growth)
    elif variant == "push_slice":
        keep = params.slice_elements
        position = np.minimum(np.arange(u), keep - 1)   # slot the new element lands in
        per_position = np.cumsum(element_bytes(np.arange(keep), INT64_BYTES))
        new = base + per_position[position]
        # once the array is full the size no longer changes (one element out, one in)
        growth = np.where(np.arange(u) < keep, element_bytes(position, INT64_BYTES), 0)
    elif variant == "small_docs":
        docs = params.small_docs()
        position_in_doc = np.arange(u) // docs          # round robin: update i -> doc i % docs
        per_position = np.cumsum(element_bytes(np.arange(position_in_doc.max() + 1), INT64_BYTES))
        new = base + per_position[position_in_doc]
        growth = element_bytes(position_in_doc, INT64_BYTES)
    elif variant == "push_many":
        k = params.elements_per_update
        per_element = element_bytes(np.arange(u * k), INT64_BYTES)
        new = base + np.cumsum(per_element)[k - 1::k]
        growth = per_element.reshape(u, k).sum(axis=1)
    elif variant == "big_elements":
        growth = element_bytes(np.arange(u), string_value_bytes(params.big_element_bytes))
        new = base + np.cumsum(growth)
    else:
        raise ValueError(f"unknown fallback variant {variant!r}; allowed: {', '.join(FALLBACK_VARIANTS)}")
    return new - growth, new


TOPOLOGY_LOGGED = {"standalone": True, "replica set": False}


def fallback_conditions(params: FallbackParams, variants=FALLBACK_VARIANTS) -> pl.DataFrame:
    """One row per (variant, topology): how many updates conditions 1-3 leave eligible for modify."""
    rows = []
    for variant in variants:
        old, new = update_sizes(variant, params)
        for topology, logged in TOPOLOGY_LOGGED.items():
            eligible = modify_eligible(old, new, logged)
            small = new <= MIN_LENGTH_FOR_DIFF
            too_much_growth = new > old + new // MAX_GROWTH_FRACTION_DIVISOR
            rows.append({
                "variant": variant, "topology": topology, "table_logged": logged, "updates": int(new.size),
                "first_doc_bytes": int(new[0]), "final_doc_bytes": int(new.max()),
                "updates_at_most_1kb": int(small.sum()),
                "updates_growing_over_10pct": int(too_much_growth.sum()),
                "modify_eligible_updates": int(eligible.sum()),
                "modify_eligible_fraction": float(eligible.mean()),
            })
    return pl.DataFrame(rows)


def write_fallback_model(section: dict, path) -> pl.DataFrame:
    """Server-free step: the model table for config arraygrowth.fallback to model/fallback_conditions.csv."""

    params, variants = fallback_settings(section)
    frame = fallback_conditions(params, variants)
    write_csv(frame, path)
    return frame
