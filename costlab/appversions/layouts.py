"""The app versions' document layouts as objects: each owns what its documents look like.

A layout owns four things, and nothing outside it tests a layout's name:
- its key fields: the columns its statements and documents are built from (`columns`), and the
  day-range `$match` of the day-document layouts' Get Reports (`day_match`);
- its statement: the Bulk Upsert `UpdateOne` of each event (`upsert_ops`); statements.py derives
  its raw-BSON templates from these, so a new layout needs no statement code of its own;
- its BSON size formula: the size of a document after its events (`day_document_bytes` for one
  document per key and day, `bucket_document_bytes` for one per key and month or quarter), as
  polars expressions over the model's integer-coded groups (costlab/appversions/model.py);
- its engine-lab document: the document after the first j of its events (`engine_groups`), which
  the engine lab inserts when it grows a collection by final documents.

The declaration a layout reads (bucket, status names, item names, totals) is the version's
(costlab/appversions/registry.py). Layouts are registered by name (`register_layout`); a version
names its layout (`VersionDeclaration.layout_name`).
"""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Callable, ClassVar, Iterator, Literal

import polars as pl
from bson import Binary, ObjectId
from pymongo import UpdateOne

from costlab.appversions.bsonsize import (
    BUCKET_CODE_BYTES,
    DATE_BYTES,
    INT32_BYTES,
    ITEM_NAME_CHARS,
    KEY_BYTES,
    KEY_HEX,
    OBJECTID_BYTES,
    array_index_name_bytes,
    binary_value,
    document,
    element,
    string_value,
)
from costlab.appversions.buckets import bucket_named
from costlab.appversions.ids import ITEM_NAME_STRFTIME, bucket_code_expr, build_id
from costlab.appversions.registry import STATUSES, VersionDeclaration

# Which days a window [start, end) counts when start and end carry a time of day (events sit at
# 00:00 UTC): "dates" compares event dates with the instants, so (start day, end day]; "day_ids"
# compares YYYYMMDD ids or item names built from the instants, so [start day, end day). At whole-day
# ends both are [start, end).
DayRule = Literal["dates", "day_ids"]
# Columns: what `columns` adds to the events' key (uppercase hex), date and field (status name).
Columns = dict[str, list]
# (the document's events' row numbers in load order, build(j) -> (document, index key fields)).
EngineGroup = tuple[list[int], Callable[[int], tuple[dict, dict]]]


def _counts(fields: list[str]) -> dict[str, int]:
    """{field: occurrences} in first-occurrence order (the order $inc creates the fields)."""
    counts: dict[str, int] = {}
    for f in fields:
        counts[f] = counts.get(f, 0) + 1
    return counts


def _utc(value: datetime) -> datetime:
    return value if value.tzinfo else value.replace(tzinfo=timezone.utc)


def status_elements_bytes(version: VersionDeclaration, present: list[pl.Expr]) -> pl.Expr:
    """Sum over statuses of (how many of the status's int32 elements) x (that element's size)."""
    return pl.sum_horizontal(n.cast(pl.Int64) * element(version.status_field(s), INT32_BYTES)
                             for s, n in zip(STATUSES, present))


class Layout:
    """What a version's documents look like. Subclasses set `name` and implement the methods their
    kind of document needs (DayLayout: one document per key and day; BucketLayout: per key and
    bucket, with a binary `_id` of key + bucket code)."""

    name: ClassVar[str] = ""
    per_day: ClassVar[bool] = False      # one document per (key, day), whatever the declared bucket
    bucketed_id: ClassVar[bool] = False  # _id = the key's bytes followed by the bucket code (buildId)
    day_rule: ClassVar[DayRule] = "dates"
    statement_has_date: ClassVar[bool] = True   # False: its statements hold no date (not converted)

    def check(self, version: VersionDeclaration) -> None:
        """ValueError when `version`'s declaration is one this layout cannot hold."""

    def columns(self, version: VersionDeclaration) -> list[pl.Expr]:
        """Columns the statements and documents need besides key, date and field."""
        columns = []
        if self.bucketed_id:
            columns.append((pl.col("key") + bucket_code_expr(version.bucket)).str.decode("hex").alias("id"))
        if version.item_name_format:
            columns.append(pl.col("date").dt.strftime(ITEM_NAME_STRFTIME[version.item_name_format]).alias("item"))
        return columns

    def upsert_ops(self, version: VersionDeclaration, cols: Columns) -> list[UpdateOne]:
        """One upsert UpdateOne per event (cols: the prepared columns as lists, in row order)."""
        raise NotImplementedError(f"layout {self.name!r} defines no upsert statement")

    def day_match(self, key: str, start: datetime, end: datetime) -> dict:
        """Get Reports' $match of `key`'s day documents in [start, end) (report match_group)."""
        raise ValueError(f"layout {self.name!r} has no day documents: report match_group needs a day layout")

    def day_document_bytes(self, version: VersionDeclaration) -> int:
        """A day document's BSON size without its status counters (per_day layouts)."""
        raise NotImplementedError(f"layout {self.name!r} has no day documents")

    def bucket_document_bytes(self, version: VersionDeclaration, held: list[pl.Expr]) -> pl.Expr:
        """A bucket document's BSON size from its group's `days`, `events` and, per status, the days
        holding it (`held`)."""
        raise NotImplementedError(f"layout {self.name!r} has no bucket documents")

    def engine_groups(self, version: VersionDeclaration, prepared: pl.DataFrame) -> Iterator[EngineGroup]:
        """Per document, in first-event order: (its events' rows, build(j) = (document, index key
        fields) after the first j of them). `prepared` has a `row` column besides the columns."""
        raise NotImplementedError(f"layout {self.name!r} defines no engine-lab document")

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def _check_day_bucket(layout: Layout, version: VersionDeclaration) -> None:
    if version.bucket != "day":
        raise ValueError(f"app version {version.name!r}: layout {layout.name!r} holds one day per document, "
                         f"not bucket {version.bucket!r} (allowed: day)")


class DayLayout(Layout):
    """One document per key and day, found by key and date (a unique {key, date} index)."""

    per_day = True
    key_column: ClassVar[str] = "key"   # the prepared column the documents are keyed by, with the date

    def check(self, version: VersionDeclaration) -> None:
        _check_day_bucket(self, version)

    fixed_bytes: ClassVar[int] = 0  # the document without its status counters

    def day_document_bytes(self, version: VersionDeclaration) -> int:
        return self.fixed_bytes

    def document(self, i: int, key, day: datetime, counts: dict[str, int]) -> tuple[dict, dict]:
        raise NotImplementedError

    def engine_groups(self, version: VersionDeclaration, prepared: pl.DataFrame) -> Iterator[EngineGroup]:
        groups = prepared.group_by(self.key_column, "date", maintain_order=True).agg(
            pl.col("field"), pl.col("row")
        )
        for i, (key, day, fields, rows) in enumerate(groups.iter_rows()):
            day = _utc(day)

            def build(j: int, key=key, day=day, fields=fields, i=i) -> tuple[dict, dict]:
                return self.document(i, key, day, _counts(fields[:j]))

            yield rows, build


class EmbeddedId(DayLayout):
    """appV1: `_id: {date, key}` (key a hex string)."""

    name = "embedded_id"
    fixed_bytes = element(
        "_id", document(element("date", DATE_BYTES) + element("key", string_value(KEY_HEX)))
    )

    def upsert_ops(self, version: VersionDeclaration, cols: Columns) -> list[UpdateOne]:
        # filter as the article writes it: { _id: { date, key } }
        return [
            UpdateOne({"_id": {"date": d, "key": k}}, {"$inc": {f: 1}}, upsert=True)
            for k, d, f in zip(cols["key"], cols["date"], cols["field"])
        ]

    def day_match(self, key: str, start: datetime, end: datetime) -> dict:
        return {"_id.key": key, "_id.date": {"$gte": start, "$lt": end}}

    def document(self, i: int, key, day: datetime, counts: dict[str, int]) -> tuple[dict, dict]:
        doc = {"_id": {"date": day, "key": key}, **counts}
        return doc, {"_id": doc["_id"], "_id.key": key, "_id.date": day}


class KeyString(DayLayout):
    """appV2: an ObjectId `_id`, `key` a hex string and `date` at the top level."""

    name = "key_string"
    fixed_bytes = (
        element("_id", OBJECTID_BYTES) + element("key", string_value(KEY_HEX)) + element("date", DATE_BYTES)
    )

    def upsert_ops(self, version: VersionDeclaration, cols: Columns) -> list[UpdateOne]:
        return [
            UpdateOne({"key": k, "date": d}, {"$inc": {f: 1}}, upsert=True)
            for k, d, f in zip(cols["key"], cols["date"], cols["field"])
        ]

    def day_match(self, key: str, start: datetime, end: datetime) -> dict:
        return {"key": key, "date": {"$gte": start, "$lt": end}}

    def key_value(self, key):
        return key

    def document(self, i: int, key, day: datetime, counts: dict[str, int]) -> tuple[dict, dict]:
        # an upsert's query fields by path (costlab.engine.update.upsert_document): date, key
        doc = {"_id": ObjectId(i.to_bytes(12, "big")), "date": day, "key": self.key_value(key), **counts}
        return doc, {"_id": doc["_id"], "key": self.index_key(key), "date": day}

    def index_key(self, key):
        return key


class KeyBinary(KeyString):
    """appV3: appV2 with `key` as 32 binary bytes."""

    name = "key_binary"
    key_column = "key_bin"
    fixed_bytes = (
        element("_id", OBJECTID_BYTES) + element("key", binary_value(KEY_BYTES)) + element("date", DATE_BYTES)
    )

    def columns(self, version: VersionDeclaration) -> list[pl.Expr]:
        return [pl.col("key").str.decode("hex").alias("key_bin"), *super().columns(version)]

    def upsert_ops(self, version: VersionDeclaration, cols: Columns) -> list[UpdateOne]:
        return [
            UpdateOne({"key": k, "date": d}, {"$inc": {f: 1}}, upsert=True)
            for k, d, f in zip(cols["key_bin"], cols["date"], cols["field"])
        ]

    def day_match(self, key: str, start: datetime, end: datetime) -> dict:
        return {"key": bytes.fromhex(key), "date": {"$gte": start, "$lt": end}}

    def key_value(self, key):
        return Binary(key, 0)

    def index_key(self, key):
        return bytes(key)


class BucketLayout(Layout):
    """One document per key and bucket (a day, a month, a quarter or a declared bucket: buckets.py), `_id` =
    buildId(key, bucket)."""

    bucketed_id = True

    def bucket_document(
        self, version: VersionDeclaration, _id: Binary, fields: list[str], dates: list, items: list[str]
    ) -> dict:
        """The document after the events with these status fields, dates and item names."""
        raise NotImplementedError

    def engine_groups(self, version: VersionDeclaration, prepared: pl.DataFrame) -> Iterator[EngineGroup]:
        groups = prepared.group_by("id", maintain_order=True).agg(
            pl.col("field"),
            pl.col("date"),
            pl.col("row"),
            *([pl.col("item")] if "item" in prepared.columns else []),
        )
        for row in groups.iter_rows(named=True):

            def build(j: int, row=row) -> tuple[dict, dict]:
                _id = Binary(row["id"], 0)
                doc = self.bucket_document(
                    version, _id, row["field"][:j], row["date"][:j], (row.get("item") or [])[:j]
                )
                return doc, {"_id": bytes(_id)}

            yield row["row"], build


class IdDay(BucketLayout):
    """appV4: `_id` = key + YYYYMMDD (binary), `$inc` of the status counters."""

    name = "id_day"
    per_day = True
    day_rule = "day_ids"
    statement_has_date = False

    def check(self, version: VersionDeclaration) -> None:
        _check_day_bucket(self, version)

    def upsert_ops(self, version: VersionDeclaration, cols: Columns) -> list[UpdateOne]:
        return [
            UpdateOne({"_id": i}, {"$inc": {f: 1}}, upsert=True) for i, f in zip(cols["id"], cols["field"])
        ]

    def day_match(self, key: str, start: datetime, end: datetime) -> dict:
        # _id in [buildId(key, start), buildId(key, end))
        return {"_id": {"$gte": build_id(key, start, "day"), "$lt": build_id(key, end, "day")}}

    def day_document_bytes(self, version: VersionDeclaration) -> int:
        return element("_id", binary_value(KEY_BYTES + BUCKET_CODE_BYTES["day"]))

    def bucket_document(self, version, _id, fields, dates, items) -> dict:
        return {"_id": _id, **_counts(fields)}


class Push(BucketLayout):
    """appV5R0/R1: `$push` of `{date, <status>: 1}` into `items`, one element per event."""

    name = "push"

    def upsert_ops(self, version: VersionDeclaration, cols: Columns) -> list[UpdateOne]:
        return [
            UpdateOne({"_id": i}, {"$push": {"items": {"date": d, f: 1}}}, upsert=True)
            for i, d, f in zip(cols["id"], cols["date"], cols["field"])
        ]

    def bucket_document_bytes(self, version: VersionDeclaration, held: list[pl.Expr]) -> pl.Expr:
        id_bytes = element("_id", binary_value(KEY_BYTES + BUCKET_CODE_BYTES[version.bucket]))
        pushed = document(element("date", DATE_BYTES) + element("a", INT32_BYTES))
        events = pl.col("events")
        items = element("items", document(events * (1 + 1 + pushed) + array_index_name_bytes(events)))
        return document(id_bytes + items)

    def bucket_document(self, version, _id, fields, dates, items) -> dict:
        return {"_id": _id, "items": [{"date": _utc(d), f: 1} for d, f in zip(dates, fields)]}


def _totals_bytes(version: VersionDeclaration, held: list[pl.Expr]) -> int | pl.Expr:
    """The Computed Pattern's `totals` element per bucket (0 without one).

    Both versions with totals (appV5R4's update pipeline, appV6R2's `$inc`) write only the status of
    each event, so `totals` holds a counter for each status that occurred in the bucket.
    """
    if not version.totals:
        return 0
    return element("totals", document(status_elements_bytes(version, [days > 0 for days in held])))


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
        stages.append(
            {
                "$set": {
                    "totals": {
                        "$mergeObjects": [
                            {"$ifNull": ["$totals", {}]},
                            {status_field: {"$add": [{"$ifNull": [f"$totals.{status_field}", 0]}, 1]}},
                        ]
                    }
                }
            }
        )
    stages += [
        {
            "$set": {
                "result": {
                    "$reduce": {
                        "input": {"$ifNull": ["$items", []]},
                        "initialValue": {"found": False, "items": []},
                        "in": {
                            "$cond": [
                                {"$eq": ["$$this.date", day]},
                                {"found": True, "items": {"$concatArrays": ["$$value.items", [add_status]]}},
                                {
                                    "found": "$$value.found",
                                    "items": {"$concatArrays": ["$$value.items", ["$$this"]]},
                                },
                            ]
                        },
                    }
                }
            }
        },
        {
            "$set": {
                "items": {
                    "$cond": [
                        "$result.found",
                        "$result.items",
                        {"$concatArrays": ["$result.items", [{"date": day, status_field: 1}]]},
                    ]
                }
            }
        },
        {"$unset": ["result"]},
    ]
    return stages


class ArrayDaily(BucketLayout):
    """appV5R2-R4: `items` holds one `{date, <statuses>}` element per day, kept by an update pipeline
    (plus `totals` for the Computed Pattern)."""

    name = "array_daily"

    def upsert_ops(self, version: VersionDeclaration, cols: Columns) -> list[UpdateOne]:
        return [
            UpdateOne({"_id": i}, array_daily_update(d, f, version.totals), upsert=True)
            for i, d, f in zip(cols["id"], cols["date"], cols["field"])
        ]

    def bucket_document_bytes(self, version: VersionDeclaration, held: list[pl.Expr]) -> pl.Expr:
        id_bytes = element("_id", binary_value(KEY_BYTES + BUCKET_CODE_BYTES[version.bucket]))
        n_days = pl.col("days")
        day_docs = n_days * document(element("date", DATE_BYTES)) + status_elements_bytes(version, held)
        items = element("items", document(n_days * 2 + array_index_name_bytes(n_days) + day_docs))
        return document(id_bytes + _totals_bytes(version, held) + items)

    def bucket_document(self, version, _id, fields, dates, items) -> dict:
        days: dict[datetime, list[str]] = {}
        for d, f in zip(dates, fields):
            days.setdefault(_utc(d), []).append(f)
        doc = {"_id": _id}
        if version.totals:  # the statuses that occurred, in the order the pipeline adds them
            doc["totals"] = _counts(fields)
        doc["items"] = [{"date": d, **_counts(fs)} for d, fs in days.items()]
        return doc


class Dynamic(BucketLayout):
    """appV6R0-R4: `items` is a document keyed by the day's name (DD, MMDD or YYYYMMDD), `$inc`."""

    name = "dynamic"
    day_rule = "day_ids"
    statement_has_date = False

    def check(self, version: VersionDeclaration) -> None:
        if not version.item_name_format:
            raise ValueError(
                f"app version {version.name!r}: layout 'dynamic' needs item_name_format "
                "(allowed: DD, MMDD, YYYYMMDD)"
            )
        # An item name must tell a document's days apart, and Get Reports compares names in the bucket a
        # window cuts: DD repeats every month, MMDD every year (costlab/appversions/buckets.py, `within`).
        within = bucket_named(version.bucket).within
        needs = {"DD": ("month",), "MMDD": ("month", "year")}.get(version.item_name_format)
        if needs is not None and within not in needs:
            raise ValueError(
                f"app version {version.name!r}: bucket {version.bucket!r} may cross a "
                f"{'month' if version.item_name_format == 'DD' else 'year'}, where item names "
                f"{version.item_name_format} repeat (allowed with it: item_name_format YYYYMMDD)"
            )

    def upsert_ops(self, version: VersionDeclaration, cols: Columns) -> list[UpdateOne]:
        if version.totals:
            return [
                UpdateOne({"_id": i}, {"$inc": {f"totals.{f}": 1, f"items.{n}.{f}": 1}}, upsert=True)
                for i, n, f in zip(cols["id"], cols["item"], cols["field"])
            ]
        return [
            UpdateOne({"_id": i}, {"$inc": {f"items.{n}.{f}": 1}}, upsert=True)
            for i, n, f in zip(cols["id"], cols["item"], cols["field"])
        ]

    def bucket_document_bytes(self, version: VersionDeclaration, held: list[pl.Expr]) -> pl.Expr:
        id_bytes = element("_id", binary_value(KEY_BYTES + BUCKET_CODE_BYTES[version.bucket]))
        day_elements = pl.col("days") * element(
            ITEM_NAME_CHARS[version.item_name_format], document(0)
        ) + status_elements_bytes(version, held)
        return document(id_bytes + element("items", document(day_elements)) + _totals_bytes(version, held))

    def bucket_document(self, version, _id, fields, dates, items) -> dict:
        by_name: dict[str, list[str]] = {}
        for name, f in zip(items, fields):
            by_name.setdefault(name, []).append(f)
        doc = {"_id": _id, "items": {name: _counts(fs) for name, fs in by_name.items()}}
        if version.totals:  # $inc creates items before totals (field names in order)
            doc["totals"] = _counts(fields)
        return doc


_LAYOUTS: dict[str, Layout] = {}


def register_layout(layout: Layout) -> Layout:
    """Make `layout` available to versions by its name; ValueError when the name is taken."""
    if not isinstance(layout, Layout) or not layout.name:
        raise ValueError(f"register_layout takes a Layout instance with a name, got {layout!r}")
    if layout.name in _LAYOUTS and type(_LAYOUTS[layout.name]) is not type(layout):
        raise ValueError(f"layout {layout.name!r} is already registered ({_LAYOUTS[layout.name]!r})")
    _LAYOUTS[layout.name] = layout
    return layout


def unregister_layout(name: str) -> None:
    """Remove a layout registered at run time (the published ones stay)."""
    if name in PUBLISHED_LAYOUTS:
        raise ValueError(f"{name!r} is a published layout: it cannot be unregistered")
    _LAYOUTS.pop(name, None)


def registered_layouts() -> list[str]:
    """The names of the registered layouts (the published ones first)."""
    return list(_LAYOUTS)


def layout_named(name: str) -> Layout:
    """The registered layout `name`; ValueError naming the registered layouts otherwise."""
    try:
        return _LAYOUTS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown layout {name!r}; allowed: {', '.join(_LAYOUTS)}") from None


for _layout in (EmbeddedId(), KeyString(), KeyBinary(), IdDay(), Push(), ArrayDaily(), Dynamic()):
    register_layout(_layout)
PUBLISHED_LAYOUTS: tuple[str, ...] = tuple(_LAYOUTS)
