"""Server-free reference model: what each version's collection holds, and the expected reports.

Document sizes follow the BSON rules (bsonspec.org), per element `type byte + name + NUL + value`:
int32 4 bytes, date 8, ObjectId 12, string 4 + bytes + NUL, binary 4 + subtype byte + bytes,
embedded document / array 4 + elements + NUL (array element names are "0", "1", ...). Counters
are int32 (`$inc` by the int 1 keeps int32). Everything is computed with polars group-bys, one row
per document, never by encoding documents one by one; tests check the formulas against `bson`
encodings of the documents a server actually holds after the versions' own Bulk Upserts.
"""
from __future__ import annotations

from datetime import date, datetime

import polars as pl

from costlab.appversions.events import STATUSES
from costlab.appversions.versions import VERSIONS, AppVersion, Bucket, report_windows

STATS_COLUMNS = ["version", "events", "documents", "avg_doc_bytes", "data_bytes"]

KEY_HEX = 64
KEY_BYTES = 32
DATE_BYTES = 8
INT32_BYTES = 4
OBJECTID_BYTES = 12
BUCKET_CODE_BYTES = {"day": 4, "month": 3, "quarter": 3}  # YYYYMMDD / YYYYMM / YYYYQQ as hex bytes
ITEM_NAME_CHARS = {"DD": 2, "MMDD": 4, "YYYYMMDD": 8}


def element(name: str | int, value_bytes: int | pl.Expr) -> int | pl.Expr:
    """Size of one BSON element: type byte + name + NUL + value."""
    name_len = name if isinstance(name, int) else len(name.encode())
    return 1 + name_len + 1 + value_bytes


def document(content_bytes: int | pl.Expr) -> int | pl.Expr:
    """Size of a BSON document (or array) around `content_bytes` of elements: int32 length + NUL."""
    return 4 + content_bytes + 1


def string_value(text_bytes: int) -> int:
    return 4 + text_bytes + 1


def binary_value(data_bytes: int) -> int:
    return 4 + 1 + data_bytes


def array_index_name_bytes(n: pl.Expr) -> pl.Expr:
    """Sum over i < n of len(str(i)): the names of an n-element array's elements (without NUL)."""
    n = n.cast(pl.Int64)  # unsigned counts would wrap below zero in n - power
    total = n
    for power in (10, 100, 1_000, 10_000, 100_000):
        total = total + pl.max_horizontal(n - power, pl.lit(0))
    return total


def _status_fields_bytes(version: AppVersion, prefix: str = "has_") -> pl.Expr:
    """Sum of the int32 status elements that are present (one flag column per status)."""
    return pl.sum_horizontal(
        pl.col(f"{prefix}{s}").cast(pl.Int64) * element(version.status_field(s), INT32_BYTES) for s in STATUSES)


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
                n=pl.len().cast(pl.Int64), **{f"day_{s}": pl.col(f"has_{s}").sum().cast(pl.Int64) for s in STATUSES})
        return self._buckets[bucket]


def _status_counts_bytes(version: AppVersion, prefix: str) -> pl.Expr:
    """Sum over statuses of (count column) x (size of that status's int32 element)."""
    return pl.sum_horizontal(
        pl.col(f"{prefix}{s}") * element(version.status_field(s), INT32_BYTES) for s in STATUSES)


def _totals_bytes(version: AppVersion) -> int | pl.Expr:
    """The Computed Pattern's `totals` element per bucket (0 without one).

    Both versions with totals (appV5R4's update pipeline, appV6R2's `$inc`) write only the status of
    each event, so `totals` holds a counter for each status that occurred in the bucket.
    """
    if not version.totals:
        return 0
    present = pl.sum_horizontal((pl.col(f"day_{s}") > 0).cast(pl.Int64)
                                * element(version.status_field(s), INT32_BYTES) for s in STATUSES)
    return element("totals", document(present))


def document_sizes(version: AppVersion, events: pl.DataFrame, shared: SharedFrames | None = None) -> pl.Series:
    """BSON size of every document `version` holds after upserting `events` (one value per document).

    shared: SharedFrames(events), when several versions are sized from the same events.
    """
    shared = SharedFrames(events) if shared is None else shared
    frame = shared.frame
    layout = version.layout
    if layout in ("embedded_id", "key_string", "key_binary", "id_day"):
        days = shared.days
        if layout == "embedded_id":  # _id: {date, key}
            fixed = element("_id", document(element("date", DATE_BYTES) + element("key", string_value(KEY_HEX))))
        elif layout == "key_string":
            fixed = element("_id", OBJECTID_BYTES) + element("key", string_value(KEY_HEX)) + element("date", DATE_BYTES)
        elif layout == "key_binary":
            fixed = element("_id", OBJECTID_BYTES) + element("key", binary_value(KEY_BYTES)) + element("date", DATE_BYTES)
        else:
            fixed = element("_id", binary_value(KEY_BYTES + BUCKET_CODE_BYTES["day"]))
        return days.select(size=document(fixed + _status_fields_bytes(version)))["size"]

    id_bytes = element("_id", binary_value(KEY_BYTES + BUCKET_CODE_BYTES[version.bucket]))
    bucket = version.bucket
    if layout == "push":  # one {date, <status>: 1} element per event
        pushed = document(element("date", DATE_BYTES) + element("a", INT32_BYTES))
        buckets = frame.group_by("key", bucket).agg(n=pl.len().cast(pl.Int64))
        items = element("items", document(
            pl.col("n") * (1 + 1 + pushed) + array_index_name_bytes(pl.col("n"))))
        return buckets.select(size=document(id_bytes + items))["size"]

    per_bucket = shared.bucket_days(bucket)
    statuses = _status_counts_bytes(version, "day_")  # the status elements of all the bucket's days
    if layout == "array_daily":  # one {date, statuses...} element per day
        day_docs = pl.col("n") * document(element("date", DATE_BYTES)) + statuses
        items = element("items", document(
            pl.col("n") * 2 + array_index_name_bytes(pl.col("n")) + day_docs))
        return per_bucket.select(size=document(id_bytes + _totals_bytes(version) + items))["size"]

    if layout == "dynamic":  # items: {<day name>: {statuses...}}
        name_chars = ITEM_NAME_CHARS[version.item_name_format]
        day_elements = pl.col("n") * element(name_chars, document(0)) + statuses
        items = element("items", document(day_elements))
        return per_bucket.select(size=document(id_bytes + items + _totals_bytes(version)))["size"]
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
        rows.append({"version": name, "events": events.height, "documents": len(sizes),
                     "avg_doc_bytes": data_bytes / len(sizes) if len(sizes) else 0.0, "data_bytes": data_bytes})
    return pl.DataFrame(rows, schema={"version": pl.Utf8, "events": pl.Int64, "documents": pl.Int64,
                                      "avg_doc_bytes": pl.Float64, "data_bytes": pl.Int64})


# The scale at which the model stands in for the published one (500 million events): events
# per user per year are fixed (60), so per-event figures depend on the scale only through how
# finely the dense keys are resolved, and they stop moving well below this rate (documents per
# event and average size change < 0.3 % from 20,000 to 200,000 events a year; see docs/appversions.md).
REFERENCE_EVENTS_PER_YEAR = 50_000


def reference_stats(events_per_year: int, seed: int, versions: list[str] | None = None,
                    stats_here: pl.DataFrame | None = None, window: str = "calendar") -> pl.DataFrame:
    """collection_stats at the reference scale (or at this one when it is larger), with
    events_per_year and event_window (the generator's window, window.py) as columns.

    stats_here (the model at events_per_year, same window) is reused when this scale is already the larger one.
    """
    from costlab.appversions.events import generate_events

    rate = max(int(events_per_year), REFERENCE_EVENTS_PER_YEAR)
    if rate == events_per_year and stats_here is not None:
        stats = stats_here
    else:
        stats = collection_stats(generate_events(rate, seed, window=window), versions)
    return stats.with_columns(pl.lit(rate, dtype=pl.Int64).alias("events_per_year"),
                              pl.lit(window).alias("event_window"))


def _day_start(instant: datetime) -> datetime:
    return instant.replace(hour=0, minute=0, second=0, microsecond=0)


def expected_reports(events: pl.DataFrame, key: str, end_date: date | datetime, day_rule: str = "dates") -> list[dict]:
    """Status counts of `key`'s events in each window [end - N years, end), N = 1, 3, 5, 7, 10.

    Straight from the events (no version logic). day_rule (versions.DayRule) says which days a
    window with a time of day counts: "dates" the events at instants in [start, end), "day_ids" the
    events on days [day of start, day of end). At whole-day ends both give the one answer every
    version's Get Reports must give.
    """
    if day_rule not in ("dates", "day_ids"):
        raise ValueError(f"invalid day rule {day_rule!r}; allowed: dates, day_ids")
    mine = events.filter(pl.col("key") == key.upper())
    reports = []
    for years, start, end in report_windows(end_date):
        if day_rule == "day_ids":
            start, end = _day_start(start), _day_start(end)
        counts = mine.filter((pl.col("date") >= start) & (pl.col("date") < end)).select(
            **{s: (pl.col("status") == s).sum() for s in STATUSES}).row(0, named=True)
        reports.append({"window_years": years, **{s: int(counts[s]) for s in STATUSES}})
    return reports


def compare_with_published(model: pl.DataFrame, published: pl.DataFrame, tolerance: float = 0.015,
                           window: str | None = None) -> pl.DataFrame:
    """Model vs published documents per event and average document size, one row per version.

    `published` is resources/published/appversions_collection_stats.csv (500,000,000 events).
    The per-user density does not depend on events_per_year, so ratios per event are comparable.
    window: the event window the model's events were generated with, written as a column when given.
    """
    joined = model.join(published.select("version", "events", "documents", "avg_doc_bytes"),
                        on="version", how="left", suffix="_published")
    return joined.select(
        "version",
        model_docs_per_event=pl.col("documents") / pl.col("events"),
        published_docs_per_event=pl.col("documents_published") / pl.col("events_published"),
        model_avg_doc_bytes=pl.col("avg_doc_bytes"),
        published_avg_doc_bytes=pl.col("avg_doc_bytes_published").cast(pl.Float64),
    ).with_columns(
        docs_ratio=pl.col("model_docs_per_event") / pl.col("published_docs_per_event"),
        size_ratio=pl.col("model_avg_doc_bytes") / pl.col("published_avg_doc_bytes"),
    ).with_columns(
        within_tolerance=((pl.col("docs_ratio") - 1).abs() <= tolerance)
        & ((pl.col("size_ratio") - 1).abs() <= tolerance),
        **({} if window is None else {"event_window": pl.lit(window)}),
    )
