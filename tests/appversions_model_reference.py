"""The server-free model as it was before it streamed: every event in memory, grouped on the key strings.

Kept as a reference for tests/test_appversions_model_stream.py: the chunked model
(costlab/appversions/model.py) must give exactly these numbers. Not product code.
"""
from __future__ import annotations

import polars as pl

from costlab.appversions import bsonsize as bsize
from costlab.appversions.events import STATUSES
from costlab.appversions.versions import VERSIONS, AppVersion, Bucket


def _status_fields_bytes(version: AppVersion, prefix: str = "has_") -> pl.Expr:
    """Sum of the int32 status elements that are present (one flag column per status)."""
    return pl.sum_horizontal(
        pl.col(f"{prefix}{s}").cast(pl.Int64) * bsize.element(version.status_field(s), bsize.INT32_BYTES)
        for s in STATUSES
    )


def _with_buckets(events: pl.DataFrame) -> pl.DataFrame:
    return events.select(
        "key", "date",
        pl.col("status").cast(pl.Utf8),
        month=pl.col("date").dt.truncate("1mo"),
        quarter=pl.col("date").dt.truncate("1q"),
    )


def _per_day(events: pl.DataFrame) -> pl.DataFrame:
    """One row per (key, day): which statuses occurred (the day documents / day items)."""
    return events.group_by("key", "date", "month", "quarter").agg(
        **{f"has_{s}": (pl.col("status") == s).any() for s in STATUSES})


class SharedFrames:
    """Group-bys that are the same for many versions, computed once per events frame.

    Only which statuses a day / bucket holds matters for the sizes, never the status names'
    spelling, so the per-day flags and the per-(key, bucket) day counts serve every version.
    """

    def __init__(self, events: pl.DataFrame) -> None:
        self.frame = _with_buckets(events)
        self._days: pl.DataFrame | None = None
        self._buckets: dict[str, pl.DataFrame] = {}

    @property
    def days(self) -> pl.DataFrame:
        if self._days is None:
            self._days = _per_day(self.frame)
        return self._days

    def bucket_days(self, bucket: Bucket) -> pl.DataFrame:
        """Per (key, bucket): n days, and per status the days that hold it (day_<status>)."""
        if bucket not in self._buckets:
            self._buckets[bucket] = self.days.group_by("key", bucket).agg(
                n=pl.len().cast(pl.Int64),
                **{f"day_{s}": pl.col(f"has_{s}").sum().cast(pl.Int64) for s in STATUSES},
            )
        return self._buckets[bucket]


def _status_counts_bytes(version: AppVersion, prefix: str) -> pl.Expr:
    """Sum over statuses of (count column) x (size of that status's int32 element)."""
    return pl.sum_horizontal(
        pl.col(f"{prefix}{s}") * bsize.element(version.status_field(s), bsize.INT32_BYTES) for s in STATUSES)


def _totals_bytes(version: AppVersion) -> int | pl.Expr:
    """The Computed Pattern's `totals` element per bucket (0 without one).

    Both versions with totals (appV5R4's update pipeline, appV6R2's `$inc`) write only the status of
    each event, so `totals` holds a counter for each status that occurred in the bucket.
    """
    if not version.totals:
        return 0
    present = pl.sum_horizontal((pl.col(f"day_{s}") > 0).cast(pl.Int64)
                                * bsize.element(version.status_field(s), bsize.INT32_BYTES) for s in STATUSES)
    return bsize.element("totals", bsize.document(present))


def document_sizes(
    version: AppVersion, events: pl.DataFrame, shared: SharedFrames | None = None
) -> pl.Series:
    """BSON size of every document `version` holds after upserting `events` (one value per document).

    shared: SharedFrames(events), when several versions are sized from the same events.
    """
    shared = SharedFrames(events) if shared is None else shared
    frame = shared.frame
    layout = version.layout_name
    if layout in ("embedded_id", "key_string", "key_binary", "id_day"):
        days = shared.days
        if layout == "embedded_id":  # _id: {date, key}
            fixed = bsize.element(
                "_id", bsize.document(bsize.element("date", bsize.DATE_BYTES)
                                      + bsize.element("key", bsize.string_value(bsize.KEY_HEX)))
            )
        elif layout == "key_string":
            fixed = (
                bsize.element("_id", bsize.OBJECTID_BYTES)
                + bsize.element("key", bsize.string_value(bsize.KEY_HEX))
                + bsize.element("date", bsize.DATE_BYTES)
            )
        elif layout == "key_binary":
            fixed = (
                bsize.element("_id", bsize.OBJECTID_BYTES)
                + bsize.element("key", bsize.binary_value(bsize.KEY_BYTES))
                + bsize.element("date", bsize.DATE_BYTES)
            )
        else:
            fixed = bsize.element("_id", bsize.binary_value(bsize.KEY_BYTES + bsize.BUCKET_CODE_BYTES["day"]))
        return days.select(size=bsize.document(fixed + _status_fields_bytes(version)))["size"]

    id_bytes = bsize.element("_id",
                             bsize.binary_value(bsize.KEY_BYTES + bsize.BUCKET_CODE_BYTES[version.bucket]))
    bucket = version.bucket
    if layout == "push":  # one {date, <status>: 1} element per event
        pushed = bsize.document(bsize.element("date", bsize.DATE_BYTES)
                                + bsize.element("a", bsize.INT32_BYTES))
        buckets = frame.group_by("key", bucket).agg(n=pl.len().cast(pl.Int64))
        items = bsize.element("items", bsize.document(
            pl.col("n") * (1 + 1 + pushed) + bsize.array_index_name_bytes(pl.col("n"))))
        return buckets.select(size=bsize.document(id_bytes + items))["size"]

    per_bucket = shared.bucket_days(bucket)
    statuses = _status_counts_bytes(version, "day_")  # the status elements of all the bucket's days
    if layout == "array_daily":  # one {date, statuses...} element per day
        day_docs = pl.col("n") * bsize.document(bsize.element("date", bsize.DATE_BYTES)) + statuses
        items = bsize.element("items", bsize.document(
            pl.col("n") * 2 + bsize.array_index_name_bytes(pl.col("n")) + day_docs))
        return per_bucket.select(size=bsize.document(id_bytes + _totals_bytes(version) + items))["size"]

    if layout == "dynamic":  # items: {<day name>: {statuses...}}
        name_chars = bsize.ITEM_NAME_CHARS[version.item_name_format]
        day_elements = pl.col("n") * bsize.element(name_chars, bsize.document(0)) + statuses
        items = bsize.element("items", bsize.document(day_elements))
        return per_bucket.select(size=bsize.document(id_bytes + items + _totals_bytes(version)))["size"]
    raise ValueError(f"unknown layout {layout!r}")


def collection_stats(events: pl.DataFrame, versions: list[str] | None = None) -> pl.DataFrame:
    """One row per version: version, events, documents, avg_doc_bytes, data_bytes (BSON bytes)."""
    names = list(VERSIONS) if versions is None else versions
    for name in names:
        if name not in VERSIONS:
            raise ValueError(f"unknown app version {name!r}; allowed: {', '.join(VERSIONS)}")
    # The group-bys are most of the cost and shared by the versions (benchmarks/bench_model.py).
    shared = SharedFrames(events)
    rows = []
    for name in names:
        sizes = document_sizes(VERSIONS[name], events, shared)
        data_bytes = int(sizes.sum()) if len(sizes) else 0
        rows.append(
            {
                "version": name,
                "events": events.height,
                "documents": len(sizes),
                "avg_doc_bytes": data_bytes / len(sizes) if len(sizes) else 0.0,
                "data_bytes": data_bytes,
            }
        )
    return pl.DataFrame(rows, schema={"version": pl.Utf8, "events": pl.Int64, "documents": pl.Int64,
                                      "avg_doc_bytes": pl.Float64, "data_bytes": pl.Int64})
