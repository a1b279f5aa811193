"""The 14 application versions of "The Cost of Not Knowing MongoDB" as a registry.

Each version is a small declarative `AppVersion` (layout, bucket, item naming, totals, report
style, indexes, collection options); the shared builder functions below turn that data into the
Bulk Upsert operations and Get Reports pipelines the articles describe:

- appV1: `_id: {date, key}` (key a string), long status names, extra unique index on `_id.key, _id.date`.
- appV2: `key` string + `date` top-level fields, long status names, unique index `{key, date}`.
- appV3: `key` binary, short status names (a, n, p, r), unique index `{key, date}`.
- appV4: `_id` = binary key+YYYYMMDD, `$inc` of short status names, `_id` index only.
- appV5R0/R1: `_id` = key+YYYYMM / key+YYYYQQ, `$push` of `{date, <status>: 1}` into `items`.
- appV5R2/R3: quarter buckets, an update pipeline that increments the day's element of `items` or
  appends one; R3 swaps the report's `$unwind`+`$match` for a `$reduce`.
- appV5R4: appV5R3 + `totals` pre-computed per quarter by the update pipeline (the statuses that occurred).
- appV6R0/R1: dynamic `items` document keyed by DD (month buckets) / MMDD (quarter buckets), `$inc`.
- appV6R2: appV6R1 + `totals` by `$inc`; reports use the totals of quarters fully inside a window.
- appV6R3: names YYYYMMDD, one Get Reports pipeline computing all five windows.
- appV6R4: appV6R3 in a collection with `block_compressor=zstd`.

Events carry exactly one status, so each operation increments/pushes that one status only: the
articles' `event.<other status>` are `undefined` and never reach the server (absent, not null, not 0).

Where the articles leave implementation detail open, the choices are documented in
docs/appversions.md ("events, versions, model, correctness").
"""
from __future__ import annotations

import gc
import re
from concurrent.futures import Executor
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from typing import Any, Callable, Iterator, Literal

import polars as pl
from pymongo import ASCENDING, IndexModel, UpdateOne
from pymongo.collection import Collection
from pymongo.database import Database

from costlab.appversions.events import STATUSES

REPORT_YEARS: tuple[int, ...] = (1, 3, 5, 7, 10)
WINDOW_NAMES: dict[int, str] = {
    1: "oneYear",
    3: "threeYears",
    5: "fiveYears",
    7: "sevenYears",
    10: "tenYears",
}
SHORT_NAMES: dict[str, str] = {"approved": "a", "noFunds": "n", "pending": "p", "rejected": "r"}
# Field names compare as strings; "~" sorts after every digit, so it is an open upper bound.
OPEN_HIGH = "~"

Layout = Literal["embedded_id", "key_string", "key_binary", "id_day", "push", "array_daily", "dynamic"]
Bucket = Literal["day", "month", "quarter"]
# Which days a window [start, end) counts when start and end carry a time of day (events sit at
# 00:00 UTC): "dates" compares event dates with the instants, so (start day, end day]; "day_ids"
# compares YYYYMMDD ids or item names built from the instants, so [start day, end day). At whole-day
# ends both are [start, end).
DayRule = Literal["dates", "day_ids"]
Report = Literal["match_group", "unwind", "reduce_array", "reduce_dynamic", "reduce_dynamic_single"]

_KEY_RE = re.compile(r"^[0-9A-Fa-f]{64}$")


# --------------------------------------------------------------------------------------------
# Dates, bucket codes and ids (buildId of the articles)
# --------------------------------------------------------------------------------------------

def as_report_end(end_date: date | datetime) -> datetime:
    """A report end as an aware UTC datetime, to the millisecond (a JavaScript Date, a BSON date).

    A date is its UTC midnight; a naive datetime is read as UTC; any time of day is accepted, as the
    authors' load test asks (uniform in milliseconds). At such an end the versions do not all count
    the same days: see DayRule and docs/appversions.md.
    """
    if isinstance(end_date, datetime):
        if end_date.tzinfo is not None:
            end_date = end_date.astimezone(timezone.utc).replace(tzinfo=None)
        return end_date.replace(microsecond=end_date.microsecond // 1000 * 1000, tzinfo=timezone.utc)
    if isinstance(end_date, date):
        return datetime(end_date.year, end_date.month, end_date.day, tzinfo=timezone.utc)
    raise ValueError(f"report end date must be a date or datetime, got {end_date!r}")


def years_before(day: datetime, years: int) -> datetime:
    """`years` earlier by JavaScript's rule (Date.setUTCFullYear): same month, day and time of day;
    29 February in a year without one overflows to 1 March, as in the authors' getReportsDates."""
    try:
        return day.replace(year=day.year - years)
    except ValueError:
        return day.replace(year=day.year - years, month=3, day=1)


def report_windows(end_date: date | datetime) -> list[tuple[int, datetime, datetime]]:
    """[(N, start, end)] for N = 1, 3, 5, 7, 10: the window [end - N years, end)."""
    end = as_report_end(end_date)
    return [(years, years_before(end, years), end) for years in REPORT_YEARS]


def bucket_code(day: date | datetime, bucket: Bucket) -> str:
    """YYYYMMDD (day), YYYYMM (month) or YYYYQQ (quarter, QQ = 01..04) of a date."""
    if bucket == "day":
        return f"{day.year:04d}{day.month:02d}{day.day:02d}"
    if bucket == "month":
        return f"{day.year:04d}{day.month:02d}"
    if bucket == "quarter":
        return f"{day.year:04d}{(day.month - 1) // 3 + 1:02d}"
    raise ValueError(f"unknown bucket {bucket!r}; allowed: day, month, quarter")


def build_id(key: str, day: date | datetime, bucket: Bucket) -> bytes:
    """The binary _id: hex key followed by the date's bucket code, read as hex (Buffer.from(.., 'hex'))."""
    return bytes.fromhex(check_key(key) + bucket_code(day, bucket))


def check_key(key: str) -> str:
    if not isinstance(key, str) or not _KEY_RE.match(key):
        raise ValueError(f"key must be 64 hexadecimal digits, got {key!r}")
    return key.upper()


def item_name(day: date | datetime, name_format: str) -> str:
    """Field name of a day in a dynamic `items` document: DD, MMDD or YYYYMMDD."""
    full = f"{day.year:04d}{day.month:02d}{day.day:02d}"
    return {"DD": full[6:], "MMDD": full[4:], "YYYYMMDD": full}[name_format]


def bucket_start(day: datetime, bucket: Bucket) -> datetime:
    """Midnight (UTC) of the first day of the bucket holding `day`."""
    midnight = day.replace(hour=0, minute=0, second=0, microsecond=0)
    if bucket == "month":
        return midnight.replace(day=1)
    if bucket == "quarter":
        return midnight.replace(month=(day.month - 1) // 3 * 3 + 1, day=1)
    return midnight


def next_bucket(day: datetime, bucket: Bucket) -> datetime:
    """Start of the bucket after the one that contains `day`."""
    start = bucket_start(day, bucket)
    months = {"month": 1, "quarter": 3}[bucket]
    month = start.month - 1 + months
    return start.replace(year=start.year + month // 12, month=month % 12 + 1)


def full_bucket_bounds(key: str, start: datetime, end: datetime, bucket: Bucket) -> tuple[bytes, bytes]:
    """(_id of the first, _id of the last) bucket lying entirely inside [start, end).

    Used by the Computed Pattern versions to decide "documentQuarterWithinReportDateRange" by
    comparing `_id`s (all one length), instead of decoding the binary `_id` on the server.
    If no bucket fits, the first bound is above the last and nothing compares inside.
    """
    first = start if bucket_start(start, bucket) == start else next_bucket(start, bucket)
    last = bucket_start(end, bucket)  # the bucket holding `end` is not inside (end is exclusive) ...
    # ... so the last full bucket is the one before it: step back by one bucket.
    months = {"month": 1, "quarter": 3}[bucket]
    month = last.month - 1 - months
    last = last.replace(year=last.year + month // 12, month=month % 12 + 1)
    return build_id(key, first, bucket), build_id(key, last, bucket)


# --------------------------------------------------------------------------------------------
# The registry entry
# --------------------------------------------------------------------------------------------

def chunked_batches(build: Callable[[pl.DataFrame], list], events: pl.DataFrame, batch_size: int = 250,
                    chunk_rows: int = 50_000) -> Iterator[list]:
    """build(chunk) over `chunk_rows` events at a time (bounded memory), yielded in batches of
    `batch_size`."""
    if batch_size < 1 or chunk_rows < 1:
        raise ValueError(f"batch_size and chunk_rows must be >= 1, got {batch_size}, {chunk_rows}")
    chunk_rows = max(batch_size, chunk_rows - chunk_rows % batch_size)
    for offset in range(0, events.height, chunk_rows):
        built = build(events.slice(offset, chunk_rows))
        for i in range(0, len(built), batch_size):
            yield built[i:i + batch_size]


@dataclass(frozen=True)
class AppVersion:
    """One application version: declarative data; behaviour comes from the shared builders."""

    name: str
    layout: Layout
    bucket: Bucket
    report: Report
    long_status_names: bool = False
    item_name_format: str | None = None  # dynamic items: DD, MMDD or YYYYMMDD
    totals: bool = False  # Computed Pattern: quarter totals in the document
    index_keys: tuple[tuple[str, ...], ...] = ()  # extra unique indexes besides _id
    create_collection_options: dict[str, Any] = field(default_factory=dict)

    @property
    def collection_name(self) -> str:
        return self.name

    @property
    def indexes(self) -> list[IndexModel]:
        return [IndexModel([(k, ASCENDING) for k in keys], unique=True) for keys in self.index_keys]

    def status_field(self, status: str) -> str:
        return status if self.long_status_names else SHORT_NAMES[status]

    @property
    def day_rule(self) -> DayRule:
        """How Get Reports decides that a day is inside a window (DayRule): appV4 compares day ids,
        appV6R0-R4 item names (DD, MMDD, YYYYMMDD); the others compare dates."""
        return "day_ids" if self.layout in ("id_day", "dynamic") else "dates"

    # -- Bulk Upsert ---------------------------------------------------------------------------
    def bulk_upsert_ops(self, events: pl.DataFrame) -> list[UpdateOne]:
        """One upsert UpdateOne per event row (in row order): the readable reference.

        The loader and the load test send the same statements built as raw BSON
        (statements.update_statements), which also derives its templates from this builder.
        """
        return _build_ops(self, events)

    def iter_op_batches(self, events: pl.DataFrame, batch_size: int = 250,
                        chunk_rows: int = 50_000) -> Iterator[list[UpdateOne]]:
        """Operations in batches of `batch_size`, built `chunk_rows` events at a time (bounded memory)."""
        return chunked_batches(lambda chunk: _build_ops(self, chunk), events, batch_size, chunk_rows)

    # -- Get Reports ---------------------------------------------------------------------------
    def get_reports_pipelines(self, key: str, end_date: date | datetime) -> list[list[dict]]:
        """Five pipelines (one per window: 1, 3, 5, 7, 10 years) or one for appV6R3/R4."""
        key = check_key(key)
        windows = report_windows(end_date)
        if self.report == "reduce_dynamic_single":
            return [_pipeline_all_windows(self, key, windows)]
        builder = _REPORT_BUILDERS[self.report]
        return [builder(self, key, start, end) for _, start, end in windows]

    def get_reports(self, collection: Collection, key: str, end_date: date | datetime,
                    executor: Executor | None = None) -> list[dict]:
        """Run Get Reports; [{"window_years": N, "approved": n, "noFunds": n, "pending": n, "rejected": n}].

        executor: run the five pipelines concurrently on it (as the authors' getReports does with
        Promise.all: the call lasts as long as the slowest); without one, one after another.
        """
        pipelines = self.get_reports_pipelines(key, end_date)
        if executor is not None and len(pipelines) > 1:
            results = list(executor.map(lambda pipeline: list(collection.aggregate(pipeline)), pipelines))
        else:
            results = [list(collection.aggregate(pipeline)) for pipeline in pipelines]
        if self.report == "reduce_dynamic_single":
            doc = results[0][0] if results[0] else {}
            return [_counts(years, doc.get(WINDOW_NAMES[years], {})) for years in REPORT_YEARS]
        return [_counts(years, docs[0] if docs else {}) for years, docs in zip(REPORT_YEARS, results)]

    # -- Collection ------------------------------------------------------------------------------
    def prepare_collection(self, db: Database) -> Collection:
        """Drop and recreate the collection with its options and indexes."""
        db.drop_collection(self.collection_name)
        collection = db.create_collection(self.collection_name, **self.create_collection_options)
        if self.indexes:
            collection.create_indexes(self.indexes)
        return collection


def _counts(years: int, doc: dict) -> dict:
    return {"window_years": years, **{status: int(doc.get(status) or 0) for status in STATUSES}}


# --------------------------------------------------------------------------------------------
# Bulk Upsert builders (vectorised column preparation, then one dict per row)
# --------------------------------------------------------------------------------------------

_STRFTIME = {"day": "%Y%m%d", "month": "%Y%m"}
_NAME_STRFTIME = {"DD": "%d", "MMDD": "%m%d", "YYYYMMDD": "%Y%m%d"}


def _bucket_code_expr(bucket: Bucket) -> pl.Expr:
    if bucket == "quarter":
        return pl.col("date").dt.strftime("%Y") + pl.lit("0") + pl.col("date").dt.quarter().cast(pl.Utf8)
    return pl.col("date").dt.strftime(_STRFTIME[bucket])


def _prepared(version: AppVersion, events: pl.DataFrame) -> pl.DataFrame:
    missing = {"key", "date", "status"} - set(events.columns)
    if missing:
        raise ValueError(f"events lack columns {sorted(missing)}; need key, date, status")
    names = {s: version.status_field(s) for s in STATUSES}
    columns = [
        pl.col("key").str.to_uppercase().alias("key"),
        pl.col("date"),
        pl.col("status").cast(pl.Utf8).replace_strict(names, return_dtype=pl.Utf8).alias("field"),
    ]
    if version.layout in ("key_binary",):
        columns.append(pl.col("key").str.decode("hex").alias("key_bin"))
    if version.layout in ("id_day", "push", "array_daily", "dynamic"):
        columns.append((pl.col("key") + _bucket_code_expr(version.bucket)).str.decode("hex").alias("id"))
    if version.item_name_format:
        columns.append(pl.col("date").dt.strftime(_NAME_STRFTIME[version.item_name_format]).alias("item"))
    return events.select(columns)


def _build_ops(version: AppVersion, events: pl.DataFrame) -> list[UpdateOne]:
    # Each op is a handful of acyclic dicts; with the cyclic GC on, it rescans all ops built so far
    # again and again (5x slower for the pipeline versions at 50k events, benchmarks/bench_upsert_ops.py).
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _build_ops_gc_paused(version, events)
    finally:
        if gc_was_enabled:
            gc.enable()


def _build_ops_gc_paused(version: AppVersion, events: pl.DataFrame) -> list[UpdateOne]:
    prepared = _prepared(version, events)
    if version.layout in ("id_day", "dynamic"):  # their statements hold no date: skip converting it
        prepared = prepared.drop("date")
    cols = prepared.to_dict(as_series=False)
    field_names, dates = cols["field"], cols.get("date")
    layout = version.layout
    if layout == "embedded_id":  # filter as the article writes it: { _id: { date, key } }
        return [UpdateOne({"_id": {"date": d, "key": k}}, {"$inc": {f: 1}}, upsert=True)
                for k, d, f in zip(cols["key"], dates, field_names)]
    if layout == "key_string":
        return [UpdateOne({"key": k, "date": d}, {"$inc": {f: 1}}, upsert=True)
                for k, d, f in zip(cols["key"], dates, field_names)]
    if layout == "key_binary":
        return [UpdateOne({"key": k, "date": d}, {"$inc": {f: 1}}, upsert=True)
                for k, d, f in zip(cols["key_bin"], dates, field_names)]
    ids = cols["id"]
    if layout == "id_day":
        return [UpdateOne({"_id": i}, {"$inc": {f: 1}}, upsert=True) for i, f in zip(ids, field_names)]
    if layout == "push":
        return [UpdateOne({"_id": i}, {"$push": {"items": {"date": d, f: 1}}}, upsert=True)
                for i, d, f in zip(ids, dates, field_names)]
    if layout == "array_daily":
        return [UpdateOne({"_id": i}, array_daily_update(d, f, version.totals), upsert=True)
                for i, d, f in zip(ids, dates, field_names)]
    if layout == "dynamic":
        if version.totals:
            return [UpdateOne({"_id": i}, {"$inc": {f"totals.{f}": 1, f"items.{n}.{f}": 1}}, upsert=True)
                    for i, n, f in zip(ids, cols["item"], field_names)]
        return [UpdateOne({"_id": i}, {"$inc": {f"items.{n}.{f}": 1}}, upsert=True)
                for i, n, f in zip(ids, cols["item"], field_names)]
    raise ValueError(f"unknown layout {layout!r}")


def array_daily_update(day: datetime, status_field: str, totals: bool) -> list[dict]:
    """The update pipeline of appV5R2-R4 for one event (an "upsert within the items array").

    sumIfItemExists: walk `items`; the element with the event's date gets the event's status added
    (a status the element lacks starts from 0; statuses the event lacks are left as they are).
    returnItemsOrCreateNew: keep the walked items if found, else append `{date, <status>: 1}`.
    appV5R4 first adds the event's status to `totals` (a status not yet there starts from 0); the
    other statuses are not written, so `totals` holds only the statuses that occurred in the quarter,
    as the authors' Bulk Upsert does (and the published 413.7 B average size says).
    """
    add_status = {
        "$mergeObjects": ["$$this", {status_field: {"$add": [{"$ifNull": [f"$$this.{status_field}", 0]}, 1]}}]
    }
    stages: list[dict] = []
    if totals:
        stages.append({"$set": {"totals": {"$mergeObjects": [
            {"$ifNull": ["$totals", {}]},
            {status_field: {"$add": [{"$ifNull": [f"$totals.{status_field}", 0]}, 1]}}]}}})
    stages += [
        {"$set": {"result": {"$reduce": {
            "input": {"$ifNull": ["$items", []]},
            "initialValue": {"found": False, "items": []},
            "in": {"$cond": [
                {"$eq": ["$$this.date", day]},
                {"found": True, "items": {"$concatArrays": ["$$value.items", [add_status]]}},
                {"found": "$$value.found", "items": {"$concatArrays": ["$$value.items", ["$$this"]]}},
            ]},
        }}}},
        {"$set": {"items": {"$cond": [
            "$result.found", "$result.items",
            {"$concatArrays": ["$result.items", [{"date": day, status_field: 1}]]},
        ]}}},
        {"$unset": ["result"]},
    ]
    return stages


# --------------------------------------------------------------------------------------------
# Get Reports builders
# --------------------------------------------------------------------------------------------

def _group_sum(prefix: str, version: AppVersion) -> dict:
    return {"$group": {"_id": None, **{s: {"$sum": f"${prefix}{version.status_field(s)}"} for s in STATUSES}}}


def _pipeline_match_group(version: AppVersion, key: str, start: datetime, end: datetime) -> list[dict]:
    """appV1-appV4: match the day documents of the key in [start, end), sum the status fields."""
    if version.layout == "embedded_id":
        match = {"_id.key": key, "_id.date": {"$gte": start, "$lt": end}}
    elif version.layout == "key_string":
        match = {"key": key, "date": {"$gte": start, "$lt": end}}
    elif version.layout == "key_binary":
        match = {"key": bytes.fromhex(key), "date": {"$gte": start, "$lt": end}}
    else:  # id_day: _id in [buildId(key, start), buildId(key, end))
        match = {"_id": {"$gte": build_id(key, start, "day"), "$lt": build_id(key, end, "day")}}
    return [{"$match": match}, _group_sum("", version)]


def _match_buckets(version: AppVersion, key: str, start: datetime, end: datetime) -> dict:
    """docsFromKeyBetweenDate: buckets from the one holding `start` to the one holding `end`."""
    return {"$match": {"_id": {"$gte": build_id(key, start, version.bucket),
                               "$lte": build_id(key, end, version.bucket)}}}


def _pipeline_unwind(version: AppVersion, key: str, start: datetime, end: datetime) -> list[dict]:
    """appV5R0-R2: $match buckets, $unwind items, $match items.date, $group, $project."""
    return [
        _match_buckets(version, key, start, end),
        {"$unwind": {"path": "$items"}},
        {"$match": {"items.date": {"$gte": start, "$lt": end}}},
        _group_sum("items.", version),
        {"$project": {"_id": 0}},
    ]


def _add_status_if(condition: Any, value: str, item: str) -> dict:
    """{a, n, p, r} of `value` plus the item's statuses when `condition` holds."""
    return {s: {"$add": [f"{value}.{s}", {"$cond": [condition, {"$ifNull": [f"{item}.{s}", 0]}, 0]}]}
            for s in SHORT_NAMES.values()}


_ZERO_TOTALS = {s: 0 for s in SHORT_NAMES.values()}


def _with_precomputed(version: AppVersion, key: str, start: datetime, end: datetime, computed: dict) -> dict:
    """Computed Pattern: use the stored quarter totals when the whole quarter is inside the window."""
    if not version.totals:
        return computed
    first_full, last_full = full_bucket_bounds(key, start, end, version.bucket)
    inside = {"$and": [{"$gte": ["$_id", first_full]}, {"$lte": ["$_id", last_full]}]}
    return {"$cond": [inside, "$totals", computed]}


def _pipeline_reduce_array(version: AppVersion, key: str, start: datetime, end: datetime) -> list[dict]:
    """appV5R3/R4: $addFields totals = $reduce over items with the date filter (or stored totals)."""
    in_range = {"$and": [{"$gte": ["$$this.date", start]}, {"$lt": ["$$this.date", end]}]}
    computed = {"$reduce": {"input": "$items", "initialValue": _ZERO_TOTALS,
                            "in": _add_status_if(in_range, "$$value", "$$this")}}
    return [
        _match_buckets(version, key, start, end),
        {"$addFields": {"totals": _with_precomputed(version, key, start, end, computed)}},
        _group_sum("totals.", version),
        {"$project": {"_id": 0}},
    ]


def _dynamic_item_bounds(version: AppVersion, key: str, start: datetime, end: datetime) -> dict:
    """Per document, the item-name range [lo, hi) inside the window.

    The articles rebuild each item's date from the year/month in the binary _id and the field name.
    The same test without decoding _id: only the bucket holding `start` (or `end`) is cut; in it,
    names from DD/MMDD(start) on (before DD/MMDD(end)) count; other matched buckets count whole.
    """
    fmt = version.item_name_format
    return {
        "lo": {"$cond": [{"$eq": ["$_id", build_id(key, start, version.bucket)]}, item_name(start, fmt), ""]},
        "hi": {
            "$cond": [{"$eq": ["$_id", build_id(key, end, version.bucket)]}, item_name(end, fmt), OPEN_HIGH]
        },
    }


def _pipeline_reduce_dynamic(version: AppVersion, key: str, start: datetime, end: datetime) -> list[dict]:
    """appV6R0-R2: $objectToArray(items) reduced with the date filter (or stored totals for R2)."""
    in_range = {"$and": [{"$gte": ["$$this.k", "$$lo"]}, {"$lt": ["$$this.k", "$$hi"]}]}
    computed = {"$let": {
        "vars": _dynamic_item_bounds(version, key, start, end),
        "in": {"$reduce": {"input": {"$objectToArray": "$items"}, "initialValue": _ZERO_TOTALS,
                           "in": _add_status_if(in_range, "$$value", "$$this.v")}},
    }}
    return [
        _match_buckets(version, key, start, end),
        {"$addFields": {"totals": _with_precomputed(version, key, start, end, computed)}},
        _group_sum("totals.", version),
        {"$project": {"_id": 0}},
    ]


def _pipeline_all_windows(
    version: AppVersion, key: str, windows: list[tuple[int, datetime, datetime]]
) -> list[dict]:
    """appV6R3/R4: one pipeline; items named YYYYMMDD compared as strings with each window's start.

    As in the article, an item in the one-year window counts in all five, one in the three-year
    window (but not one-year) in the four wider ones, and so on: a $switch finds the narrowest window.
    """
    fmt = version.item_name_format
    end = windows[0][2]
    end_name = item_name(end, fmt)
    widest_start = windows[-1][1]
    narrowest = {"$switch": {"branches": [
        {"case": {"$and": [{"$gte": ["$$this.k", item_name(start, fmt)]}, {"$lt": ["$$this.k", end_name]}]},
         "then": position}
        for position, (_, start, _) in enumerate(windows)], "default": len(windows)}}
    totals_in = {
        "$let": {
            "vars": {"level": narrowest},
            "in": {
                WINDOW_NAMES[years]: _add_status_if(
                    {"$lte": ["$$level", position]}, f"$$value.{WINDOW_NAMES[years]}", "$$this.v"
                )
                for position, (years, _, _) in enumerate(windows)
            },
        }
    }
    group = {"_id": None}
    project: dict[str, Any] = {"_id": 0}
    for years, _, _ in windows:
        window = WINDOW_NAMES[years]
        for status in STATUSES:
            group[f"{window}_{status}"] = {"$sum": f"$totals.{window}.{version.status_field(status)}"}
        project[window] = {status: f"${window}_{status}" for status in STATUSES}
    return [
        {"$match": {"_id": {"$gte": build_id(key, widest_start, version.bucket),
                            "$lte": build_id(key, end, version.bucket)}}},
        {"$addFields": {"totals": {"$reduce": {
            "input": {"$objectToArray": "$items"},
            "initialValue": {WINDOW_NAMES[years]: _ZERO_TOTALS for years, _, _ in windows},
            "in": totals_in}}}},
        {"$group": group},
        {"$project": project},
    ]


_REPORT_BUILDERS = {
    "match_group": _pipeline_match_group,
    "unwind": _pipeline_unwind,
    "reduce_array": _pipeline_reduce_array,
    "reduce_dynamic": _pipeline_reduce_dynamic,
}


# --------------------------------------------------------------------------------------------
# The registry, in published order
# --------------------------------------------------------------------------------------------

_ZSTD = {"storageEngine": {"wiredTiger": {"configString": "block_compressor=zstd"}}}

VERSIONS: dict[str, AppVersion] = {
    v.name: v
    for v in (
        AppVersion(
            "appV1",
            "embedded_id",
            "day",
            "match_group",
            long_status_names=True,
            index_keys=(("_id.key", "_id.date"),),
        ),
        AppVersion(
            "appV2", "key_string", "day", "match_group", long_status_names=True, index_keys=(("key", "date"),)
        ),
        AppVersion("appV3", "key_binary", "day", "match_group", index_keys=(("key", "date"),)),
        AppVersion("appV4", "id_day", "day", "match_group"),
        AppVersion("appV5R0", "push", "month", "unwind"),
        AppVersion("appV5R1", "push", "quarter", "unwind"),
        AppVersion("appV5R2", "array_daily", "quarter", "unwind"),
        AppVersion("appV5R3", "array_daily", "quarter", "reduce_array"),
        AppVersion("appV5R4", "array_daily", "quarter", "reduce_array", totals=True),
        AppVersion("appV6R0", "dynamic", "month", "reduce_dynamic", item_name_format="DD"),
        AppVersion("appV6R1", "dynamic", "quarter", "reduce_dynamic", item_name_format="MMDD"),
        AppVersion("appV6R2", "dynamic", "quarter", "reduce_dynamic", item_name_format="MMDD", totals=True),
        AppVersion("appV6R3", "dynamic", "quarter", "reduce_dynamic_single", item_name_format="YYYYMMDD"),
        AppVersion(
            "appV6R4",
            "dynamic",
            "quarter",
            "reduce_dynamic_single",
            item_name_format="YYYYMMDD",
            create_collection_options=_ZSTD,
        ),
    )
}


def get_version(name: str) -> AppVersion:
    """The registered version `name`; ValueError naming the allowed names otherwise."""
    try:
        return VERSIONS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown app version {name!r}; allowed: {', '.join(VERSIONS)}") from None
