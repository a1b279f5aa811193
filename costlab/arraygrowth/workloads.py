"""What the study sends to the server. Each workload runs on a collection it is given and
returns what it did, so callers (and tests) can check the server ended up as expected.

Timestamps are 64-bit integers (bson.Int64) like the article's Unix timestamps; they are
deterministic (BASE_TIMESTAMP + i) so two runs write the same bytes.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from bson import Int64
from pymongo.collection import Collection

from costlab.arraygrowth.elements import one_declaration
from costlab.arraygrowth.names import FALLBACK_VARIANTS
from costlab.progress import progress

# The first timestamp of the article's example document; any 10-digit value has the same size.
BASE_TIMESTAMP = 1_784_106_933

# The article's job document, minus the array the study grows.
JOB_FIELDS = {"job_id": "my_scheduled_job", "schedule": "some cron expression", "command": "rsync /src /dest"}
ARRAY_FIELD = "timestamps"


DB_NAME = "costlab_arraygrowth"


def collection_name(workload: str, n: int) -> str:
    """The collection a growth run of `workload` at N writes (fresh each run), on a server and in the lab."""
    return f"{workload}_n{n}"


@dataclass(frozen=True)
class WorkloadResult:
    operations: int        # write commands sent inside the measured window
    documents: int         # documents the workload expects in the collection afterwards
    elements: int          # total array elements it expects across those documents


def timestamp(i: int) -> Int64:
    return Int64(BASE_TIMESTAMP + i)


def _check_n(n: int, name: str = "n") -> None:
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"{name} must be a positive integer, got {n!r}")


def new_job_document(collection: Collection, job_id: str = JOB_FIELDS["job_id"]) -> object:
    """Insert one job document with an empty array; returns its _id. Not part of any measured window."""
    return collection.insert_one({**JOB_FIELDS, "job_id": job_id, ARRAY_FIELD: []}).inserted_id


def inserted_document(value: object) -> dict:
    """The document an insert workload writes for one element: a document element's own fields, any
    other value (the article's timestamp) as {ts: value}."""
    return dict(value) if isinstance(value, dict) else {"ts": value}


def insert_timestamps(collection: Collection, n: int, prepared: object = None,
                      element: Callable[[int], object] = timestamp) -> WorkloadResult:
    """Workload 1: insert n documents, one timestamp (or `element(i)`) each, one insert command at a time."""
    _check_n(n)
    stored = 0
    for i in progress(range(n), total=n, desc=f"insert x{n}", unit="doc"):
        document = inserted_document(element(i))
        array = document.get(ARRAY_FIELD)
        stored += len(array) if isinstance(array, list) else 0
        collection.insert_one(document)
    return WorkloadResult(operations=n, documents=n, elements=stored)


def push_timestamps(collection: Collection, n: int, prepared: object = None) -> WorkloadResult:
    """Workload 2: $push n int64 timestamps into one job document's array, one update at a time.

    `prepared` is the job document's _id (made by prepare_push, outside the measured window).
    """
    _check_n(n)
    job_id = prepared if prepared is not None else new_job_document(collection)
    for i in progress(range(n), total=n, desc=f"$push x{n}", unit="update"):
        collection.update_one({"_id": job_id}, {"$push": {ARRAY_FIELD: timestamp(i)}})
    return WorkloadResult(operations=n, documents=1, elements=n)


def prepare_insert(collection: Collection) -> None:
    return None


def prepare_push(collection: Collection) -> object:
    return new_job_document(collection)


# name -> (prepare, run). prepare runs before the "before" snapshot.
WORKLOADS: dict[str, tuple[Callable, Callable]] = {
    "insert": (prepare_insert, insert_timestamps),
    "push": (prepare_push, push_timestamps),
}


def get_workload(name: str, elements: dict | None = None) -> tuple[Callable, Callable]:
    """A published workload, or a user's element declared in `elements` (the config's
    arraygrowth.elements: costlab.arraygrowth.elements) run as its update style says."""
    if name in WORKLOADS:
        return WORKLOADS[name]
    if elements and name in elements:
        return element_workload(one_declaration(name, elements[name]))
    allowed = [*WORKLOADS, *(elements or {})]
    raise ValueError(f"unknown arraygrowth workload {name!r}; allowed: {', '.join(allowed)}")


# A user's element's update style -> the fallback variant that sends it (with the element in place of the
# article's timestamp); insert is the insert workload.
ELEMENT_VARIANTS = {"push": "push_one", "push_slice": "push_slice", "set_array": "set_array"}


def element_params(declaration, n: int) -> FallbackParams:
    """The fallback parameters that run a user's element for n writes."""
    return FallbackParams(updates=n, slice_elements=declaration.slice or FallbackParams.slice_elements)


def element_workload(declaration) -> tuple[Callable, Callable]:
    """(prepare, run) of a user's element (costlab.arraygrowth.elements.ElementDeclaration): the article's
    job document, then n writes each adding `declaration.at(i)` as its update style says."""
    if declaration.update == "insert":
        def run_insert(collection: Collection, n: int, prepared: object = None) -> WorkloadResult:
            return insert_timestamps(collection, n, prepared, declaration.at)
        return prepare_insert, run_insert
    variant = ELEMENT_VARIANTS[declaration.update]

    def run(collection: Collection, n: int, prepared: object = None) -> WorkloadResult:
        _check_n(n)
        return run_fallback_variant(collection, variant, element_params(declaration, n),
                                    [prepared] if prepared is not None else None,
                                    declaration.at)
    return prepare_push, run


# ---- the fallback sweep ("beyond the published study") ------------------------------------
# Each variant sends `updates` update commands; they differ in what each update does to the
# stored document, to probe where WiredTiger's delta (modify) path stops being used.



@dataclass(frozen=True)
class FallbackParams:
    updates: int = 2000              # update commands per variant
    elements_per_update: int = 64    # push_many: int64 elements per $push ($each)
    big_element_bytes: int = 4096    # big_elements: length of the string pushed per update
    small_doc_elements: int = 40     # small_docs: elements per document (keeps each < 1 KB)
    slice_elements: int = 200        # push_slice: $push with $slice keeps the last this-many elements

    def __post_init__(self) -> None:
        for name in ("updates", "elements_per_update", "big_element_bytes", "small_doc_elements",
                     "slice_elements"):
            _check_n(getattr(self, name), name)

    def small_docs(self) -> int:
        """Documents the small_docs variant spreads its updates over (round robin)."""
        return math.ceil(self.updates / self.small_doc_elements)


def fallback_settings(section: dict) -> tuple[FallbackParams, list[str]]:
    """FallbackParams and variant list from the config section arraygrowth.fallback."""
    variants = list(section.get("variants", FALLBACK_VARIANTS))
    unknown = [v for v in variants if v not in FALLBACK_VARIANTS]
    if unknown or not variants:
        raise ValueError(f"arraygrowth.fallback.variants: unknown or empty {unknown or variants}; "
                         f"allowed: {', '.join(FALLBACK_VARIANTS)}")
    fields = {k: section[k] for k in FallbackParams.__dataclass_fields__ if k in section}
    return FallbackParams(**fields), variants


def big_element(i: int, size: int) -> str:
    """A string of exactly `size` bytes (ASCII), different per update so nothing dedupes it."""
    stamp = f"{i:010d}"
    return (stamp * (size // len(stamp) + 1))[:size]


def run_fallback_variant(collection: Collection, variant: str, params: FallbackParams,
                         prepared: object = None,
                         element: Callable[[int], object] = timestamp) -> WorkloadResult:
    """Send params.updates updates of kind `variant` to documents made by prepare_fallback; `element(i)` is
    what the i-th update pushes (the article's timestamp; a user's element: costlab.arraygrowth.elements)."""
    ids = prepared if prepared is not None else prepare_fallback(collection, variant, params)
    u = params.updates
    steps = progress(range(u), total=u, desc=variant, unit="update")
    if variant == "push_one":
        for i in steps:
            collection.update_one({"_id": ids[0]}, {"$push": {ARRAY_FIELD: element(i)}})
        return WorkloadResult(operations=u, documents=1, elements=u)
    if variant == "small_docs":
        for i in steps:
            collection.update_one({"_id": ids[i % len(ids)]}, {"$push": {ARRAY_FIELD: timestamp(i)}})
        return WorkloadResult(operations=u, documents=len(ids), elements=u)
    if variant == "push_many":
        k = params.elements_per_update
        for i in steps:
            batch = [timestamp(i * k + j) for j in range(k)]
            collection.update_one({"_id": ids[0]}, {"$push": {ARRAY_FIELD: {"$each": batch}}})
        return WorkloadResult(operations=u, documents=1, elements=u * k)
    if variant == "big_elements":
        for i in steps:
            collection.update_one({"_id": ids[0]},
                                  {"$push": {ARRAY_FIELD: big_element(i, params.big_element_bytes)}})
        return WorkloadResult(operations=u, documents=1, elements=u)
    if variant == "push_slice":
        # A capped array (the usual advice against unbounded arrays): once full, every element
        # shifts one slot, so the stored bytes change all along the array.
        keep = params.slice_elements
        for i in steps:
            collection.update_one({"_id": ids[0]},
                                  {"$push": {ARRAY_FIELD: {"$each": [element(i)], "$slice": -keep}}})
        return WorkloadResult(operations=u, documents=1, elements=min(u, keep))
    if variant == "set_array":
        # The application keeps the array and writes all of it back each time: same stored bytes
        # as push_one, but the update (and so the oplog entry on a replica set) carries the array.
        values: list = []
        for i in steps:
            values.append(element(i))
            collection.update_one({"_id": ids[0]}, {"$set": {ARRAY_FIELD: values}})
        return WorkloadResult(operations=u, documents=1, elements=u)
    raise ValueError(f"unknown fallback variant {variant!r}; allowed: {', '.join(FALLBACK_VARIANTS)}")


def job_name(j: int) -> str:
    """Fixed width, so every fallback job document has the same base size."""
    return f"job_{j:06d}"


def prepare_fallback(collection: Collection, variant: str, params: FallbackParams) -> list:
    """The job documents a variant updates, made before the measured window."""
    if variant not in FALLBACK_VARIANTS:
        raise ValueError(f"unknown fallback variant {variant!r}; allowed: {', '.join(FALLBACK_VARIANTS)}")
    count = params.small_docs() if variant == "small_docs" else 1
    return [new_job_document(collection, job_name(j)) for j in range(count)]
