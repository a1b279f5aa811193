"""The 14 application versions of "The Cost of Not Knowing MongoDB": declarations over layouts.

Each version is declared once in registry.py (layout, bucket, item naming, totals, report style,
indexes, collection options: plain data, in published order); its layout is an object
(layouts.py: key fields, statement, BSON size formula, engine-lab document). `get_version` joins
them into an `AppVersion`; the builders below turn it into the Bulk Upsert operations and Get
Reports pipelines the articles describe:

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
from concurrent.futures import Executor
from dataclasses import dataclass
from datetime import date, datetime
from functools import cached_property
from typing import Any, Callable, Iterator, Mapping

import polars as pl
from pymongo import ASCENDING, IndexModel, UpdateOne
from pymongo.collection import Collection
from pymongo.database import Database

from costlab.appversions import registry
from costlab.appversions.events import STATUSES

# Dates, bucket codes and ids: re-exported (callers import them from here).
from costlab.appversions.ids import (  # noqa: F401
    OPEN_HIGH,
    REPORT_YEARS,
    as_report_end,
    bucket_code,
    bucket_start,
    build_id,
    check_key,
    full_bucket_bounds,
    item_name,
    next_bucket,
    report_windows,
    years_before,
)
from costlab.appversions.layouts import DayRule, Layout, array_daily_update, layout_named  # noqa: F401
from costlab.appversions.registry import SHORT_NAMES, Bucket, Report, VersionDeclaration  # noqa: F401
from costlab.appversions.variants import register_from_environment

WINDOW_NAMES: dict[int, str] = {
    1: "oneYear",
    3: "threeYears",
    5: "fiveYears",
    7: "sevenYears",
    10: "tenYears",
}


# --------------------------------------------------------------------------------------------
# The registry entry
# --------------------------------------------------------------------------------------------


def chunked_batches(
    build: Callable[[pl.DataFrame], list],
    events: pl.DataFrame,
    batch_size: int = 250,
    chunk_rows: int = 50_000,
) -> Iterator[list]:
    """build(chunk) over `chunk_rows` events at a time (bounded memory), yielded in batches of
    `batch_size`."""
    if batch_size < 1 or chunk_rows < 1:
        raise ValueError(f"batch_size and chunk_rows must be >= 1, got {batch_size}, {chunk_rows}")
    chunk_rows = max(batch_size, chunk_rows - chunk_rows % batch_size)
    for offset in range(0, events.height, chunk_rows):
        built = build(events.slice(offset, chunk_rows))
        for i in range(0, len(built), batch_size):
            yield built[i : i + batch_size]


@dataclass(frozen=True)
class AppVersion(VersionDeclaration):
    """One application version: its declaration (registry.py) with its layout object; behaviour
    comes from the layout and the shared builders below."""

    @cached_property
    def layout(self) -> Layout:
        """The layout object the declaration names (layouts.py), checked to hold the declaration."""
        layout = layout_named(self.layout_name)
        layout.check(self)
        return layout

    @property
    def collection_name(self) -> str:
        return self.name

    @property
    def indexes(self) -> list[IndexModel]:
        return [IndexModel([(k, ASCENDING) for k in keys], unique=True) for keys in self.index_keys]

    @property
    def day_rule(self) -> DayRule:
        """How Get Reports decides that a day is inside a window (DayRule): the layout's (appV4
        compares day ids, appV6R0-R4 item names (DD, MMDD, YYYYMMDD); the others compare dates)."""
        return self.layout.day_rule

    # -- Bulk Upsert ---------------------------------------------------------------------------
    def bulk_upsert_ops(self, events: pl.DataFrame) -> list[UpdateOne]:
        """One upsert UpdateOne per event row (in row order): the readable reference.

        The loader and the load test send the same statements built as raw BSON
        (statements.update_statements), which also derives its templates from this builder.
        """
        return _build_ops(self, events)

    def iter_op_batches(
        self, events: pl.DataFrame, batch_size: int = 250, chunk_rows: int = 50_000
    ) -> Iterator[list[UpdateOne]]:
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

    def get_reports(
        self, collection: Collection, key: str, end_date: date | datetime, executor: Executor | None = None
    ) -> list[dict]:
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


def prepared_columns(version: AppVersion, events: pl.DataFrame) -> pl.DataFrame:
    """The events' key (uppercase hex), date and status field, plus the layout's columns."""
    missing = {"key", "date", "status"} - set(events.columns)
    if missing:
        raise ValueError(f"events lack columns {sorted(missing)}; need key, date, status")
    names = {s: version.status_field(s) for s in STATUSES}
    return events.select(
        pl.col("key").str.to_uppercase().alias("key"),
        pl.col("date"),
        pl.col("status").cast(pl.Utf8).replace_strict(names, return_dtype=pl.Utf8).alias("field"),
        *version.layout.columns(version),
    )


def _build_ops(version: AppVersion, events: pl.DataFrame) -> list[UpdateOne]:
    # Each op is a handful of acyclic dicts; with the cyclic GC on, it rescans all ops built so far
    # again and again (5x slower for the pipeline versions at 50k events, benchmarks/bench_upsert_ops.py).
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        prepared = prepared_columns(version, events)
        if not version.layout.statement_has_date:  # skip converting a date no statement holds
            prepared = prepared.drop("date")
        return version.layout.upsert_ops(version, prepared.to_dict(as_series=False))
    finally:
        if gc_was_enabled:
            gc.enable()


# --------------------------------------------------------------------------------------------
# Get Reports builders
# --------------------------------------------------------------------------------------------


def _group_sum(prefix: str, version: AppVersion) -> dict:
    return {"$group": {"_id": None, **{s: {"$sum": f"${prefix}{version.status_field(s)}"} for s in STATUSES}}}


def _pipeline_match_group(version: AppVersion, key: str, start: datetime, end: datetime) -> list[dict]:
    """appV1-appV4: match the day documents of the key in [start, end) (the layout's key fields),
    sum the status fields."""
    return [{"$match": version.layout.day_match(key, start, end)}, _group_sum("", version)]


def _match_buckets(version: AppVersion, key: str, start: datetime, end: datetime) -> dict:
    """docsFromKeyBetweenDate: buckets from the one holding `start` to the one holding `end`."""
    return {
        "$match": {
            "_id": {"$gte": build_id(key, start, version.bucket), "$lte": build_id(key, end, version.bucket)}
        }
    }


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
    return {
        s: {"$add": [f"{value}.{s}", {"$cond": [condition, {"$ifNull": [f"{item}.{s}", 0]}, 0]}]}
        for s in SHORT_NAMES.values()
    }


_ZERO_TOTALS = {s: 0 for s in SHORT_NAMES.values()}


def _with_precomputed(version: AppVersion, key: str, start: datetime, end: datetime, computed: dict) -> dict:
    """Computed Pattern: use the stored quarter totals when the whole quarter is inside the window."""
    if not version.totals:
        return computed
    first_full, last_full = full_bucket_bounds(key, start, end, version.bucket)
    inside = {"$and": [{"$gte": ["$_id", first_full]}, {"$lte": ["$_id", last_full]}]}
    return {"$cond": [inside, "$totals", computed]}


def _totals_pipeline(version: AppVersion, key: str, start: datetime, end: datetime,
                     computed: dict) -> list[dict]:
    """The window's buckets, each with `totals` (computed, or stored where whole), summed per status."""
    return [
        _match_buckets(version, key, start, end),
        {"$addFields": {"totals": _with_precomputed(version, key, start, end, computed)}},
        _group_sum("totals.", version),
        {"$project": {"_id": 0}},
    ]


def _pipeline_reduce_array(version: AppVersion, key: str, start: datetime, end: datetime) -> list[dict]:
    """appV5R3/R4: $addFields totals = $reduce over items with the date filter (or stored totals)."""
    in_range = {"$and": [{"$gte": ["$$this.date", start]}, {"$lt": ["$$this.date", end]}]}
    computed = {
        "$reduce": {
            "input": "$items",
            "initialValue": _ZERO_TOTALS,
            "in": _add_status_if(in_range, "$$value", "$$this"),
        }
    }
    return _totals_pipeline(version, key, start, end, computed)


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
    computed = {
        "$let": {
            "vars": _dynamic_item_bounds(version, key, start, end),
            "in": {
                "$reduce": {
                    "input": {"$objectToArray": "$items"},
                    "initialValue": _ZERO_TOTALS,
                    "in": _add_status_if(in_range, "$$value", "$$this.v"),
                }
            },
        }
    }
    return _totals_pipeline(version, key, start, end, computed)


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
    narrowest = {
        "$switch": {
            "branches": [
                {
                    "case": {
                        "$and": [
                            {"$gte": ["$$this.k", item_name(start, fmt)]},
                            {"$lt": ["$$this.k", end_name]},
                        ]
                    },
                    "then": position,
                }
                for position, (_, start, _) in enumerate(windows)
            ],
            "default": len(windows),
        }
    }
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
        {
            "$match": {
                "_id": {
                    "$gte": build_id(key, widest_start, version.bucket),
                    "$lte": build_id(key, end, version.bucket),
                }
            }
        },
        {
            "$addFields": {
                "totals": {
                    "$reduce": {
                        "input": {"$objectToArray": "$items"},
                        "initialValue": {WINDOW_NAMES[years]: _ZERO_TOTALS for years, _, _ in windows},
                        "in": totals_in,
                    }
                }
            }
        },
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
# The registry (registry.py declares the versions, in published order)
# --------------------------------------------------------------------------------------------


def get_version(name: str) -> AppVersion:
    """The registered version `name` with its layout; ValueError naming the allowed names otherwise."""
    if name not in registry.version_names():
        # a spawned worker of a job that registered the config's variants (appversions.variants)
        register_from_environment()
    declared = registry.declaration(name)
    cached = _BUILT.get(name)
    if cached is None or cached[0] is not declared:
        version = AppVersion(**{f: getattr(declared, f) for f in declared.__dataclass_fields__})
        version.layout  # noqa: B018  resolve and check the layout now: a bad declaration fails here
        cached = _BUILT[name] = (declared, version)
    return cached[1]


_BUILT: dict[str, tuple[VersionDeclaration, AppVersion]] = {}


class _Versions(Mapping[str, AppVersion]):
    """The registered versions by name, in registry order (a live view: a version registered later
    is in it)."""

    def __getitem__(self, name: str) -> AppVersion:
        if name not in registry.version_names():
            raise KeyError(name)
        return get_version(name)

    def __iter__(self) -> Iterator[str]:
        return iter(registry.version_names())

    def __len__(self) -> int:
        return len(registry.version_names())


VERSIONS: Mapping[str, AppVersion] = _Versions()
