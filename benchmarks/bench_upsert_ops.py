"""Bulk Upsert operations (appversions): build + BSON-encode, per version, per core.

Target (issue 8): >= 200 k events/s per core for the `$inc` versions and >= 2x a straightforward
baseline (iterate over the event rows, build a dict and an UpdateOne per event).

Three paths, each ending in the BSON bytes the driver sends, checked to build the same statements
{q, u, multi: false, upsert: true} before they are timed:
- product (the figure): costlab/appversions/statements.py, what the loader and the load test send —
  statements as raw BSON from numpy-filled templates, then the `update` commands of 250 statements
  encoded as the driver encodes them (the raw statements are copied in);
- baseline: one event row at a time, filter and update dicts, an UpdateOne, its statement encoded;
- UpdateOne path (secondary line): `AppVersion.bulk_upsert_ops`, the readable reference
  (vectorised columns, then one UpdateOne per event), its statements encoded.
The `$push` (appV5R0/R1) and update-pipeline (appV5R2-R4) versions are reported against the same
figures but only the `$inc` versions carry the target: a pipeline statement is ~1 KB of BSON per event.

    python benchmarks/bench_upsert_ops.py [events] [baseline_events]   # defaults 50000, 10000
"""
from __future__ import annotations

import common

common.one_core()

import sys  # noqa: E402
from functools import partial  # noqa: E402

import bson  # noqa: E402
import polars as pl  # noqa: E402
from pymongo import UpdateOne  # noqa: E402

from costlab.appversions import versions as v  # noqa: E402
from costlab.appversions.events import generate_events  # noqa: E402
from costlab.appversions.statements import driver_statement, update_statements  # noqa: E402

INC_LAYOUTS = ("embedded_id", "key_string", "key_binary", "id_day", "dynamic")
COMMAND_STATEMENTS = 250  # the published batch: one `update` command per 250 events


def product(version: v.AppVersion, events: pl.DataFrame) -> int:
    """The product path: raw statements, then each command's BSON as the driver encodes it."""
    statements = update_statements(version, events)
    return sum(len(bson.encode({"update": version.collection_name,
                                "updates": statements[i:i + COMMAND_STATEMENTS], "ordered": False}))
               for i in range(0, len(statements), COMMAND_STATEMENTS))


def encode_statements(ops: list[UpdateOne]) -> int:
    """BSON bytes of the update statements the driver would send for these operations."""
    return sum(len(driver_statement(op)) for op in ops)


def update_one_path(version: v.AppVersion, events: pl.DataFrame) -> int:
    return encode_statements(version.bulk_upsert_ops(events))


def baseline_ops(version: v.AppVersion, events: pl.DataFrame) -> list[UpdateOne]:
    """One event row at a time: build the filter and update dicts in Python, then an UpdateOne."""
    ops = []
    for row in events.iter_rows(named=True):
        key, day, status_field = row["key"].upper(), row["date"], version.status_field(row["status"])
        layout = version.layout_name
        if layout == "embedded_id":
            op = UpdateOne({"_id": {"date": day, "key": key}}, {"$inc": {status_field: 1}}, upsert=True)
        elif layout == "key_string":
            op = UpdateOne({"key": key, "date": day}, {"$inc": {status_field: 1}}, upsert=True)
        elif layout == "key_binary":
            op = UpdateOne({"key": bytes.fromhex(key), "date": day}, {"$inc": {status_field: 1}}, upsert=True)
        else:
            _id = v.build_id(key, day, version.bucket)
            if layout == "id_day":
                op = UpdateOne({"_id": _id}, {"$inc": {status_field: 1}}, upsert=True)
            elif layout == "push":
                op = UpdateOne(
                    {"_id": _id}, {"$push": {"items": {"date": day, status_field: 1}}}, upsert=True
                )
            elif layout == "array_daily":
                op = UpdateOne(
                    {"_id": _id}, v.array_daily_update(day, status_field, version.totals), upsert=True
                )
            else:
                name = v.item_name(day, version.item_name_format)
                inc = {f"items.{name}.{status_field}": 1}
                if version.totals:
                    inc = {f"totals.{status_field}": 1, **inc}
                op = UpdateOne({"_id": _id}, {"$inc": inc}, upsert=True)
        ops.append(op)
    return ops


def baseline(version: v.AppVersion, events: pl.DataFrame) -> int:
    return encode_statements(baseline_ops(version, events))


def same_statements(version: v.AppVersion, events: pl.DataFrame) -> tuple[bool, bool]:
    """(product == reference, baseline == reference) statement bytes: the comparison means nothing
    otherwise."""
    reference = [driver_statement(op) for op in version.bulk_upsert_ops(events)]
    return ([bytes(doc.raw) for doc in update_statements(version, events)] == reference,
            [driver_statement(op) for op in baseline_ops(version, events)] == reference)


def main(n_events: int = 50_000, n_baseline: int = 10_000) -> None:
    common.header(f"Bulk Upsert build + encode, one core, per version ({common.machine()})")
    events_per_year = max(1, n_events // 10)
    events = generate_events(events_per_year, seed=1)
    base_events = events.sample(n_baseline, seed=1, shuffle=False) if n_baseline < events.height else events
    cmd = "python benchmarks/bench_upsert_ops.py"
    short, secondary = [], []
    for name, version in v.VERSIONS.items():
        product_same, baseline_same = same_statements(version, base_events.head(200))
        is_inc = version.layout_name in INC_LAYOUTS
        # Pipeline statements cost ~10x more each on the dict paths: fewer events keep the run short
        # (rates are per event).
        pipeline = version.layout_name == "array_daily"
        mine = events.head(events.height // 5) if pipeline else events
        theirs = base_events.head(base_events.height // 5) if pipeline else base_events
        fast = common.best_of_cpu(partial(product, version, mine), repeat=3)
        slow = common.best_of_cpu(partial(baseline, version, theirs), repeat=2)
        reference = common.best_of_cpu(partial(update_one_path, version, mine), repeat=2)
        rate, base_rate = mine.height / fast.cpu_s, theirs.height / slow.cpu_s
        reference_rate = mine.height / reference.cpu_s
        kind = "$inc" if is_inc else ("$push" if version.layout_name == "push" else "pipeline")
        bytes_per_statement = reference.result / mine.height
        checks = ("" if product_same else "; PRODUCT STATEMENTS DIFFER") + (
            "" if baseline_same else "; BASELINE DIFFERS"
        )
        ok_rate = common.result(
            f"{name} ({kind}) events/s per core",
            rate,
            "events/s",
            200e3 if is_inc else None,
            note=f"{bytes_per_statement:,.0f} B/statement; baseline {base_rate:,.0f}/s" + checks,
            command=cmd,
        )
        ok_ratio = common.result(
            f"{name} ({kind}) speed-up over per-row baseline",
            rate / base_rate,
            "x",
            2 if is_inc else None,
            command=cmd,
        )
        if ok_rate is False or ok_ratio is False or not is_inc:
            short.append(
                f"{name} ({kind}, {bytes_per_statement:,.0f} B/statement, {rate:,.0f} events/s, "
                f"{rate / base_rate:.1f}x)"
            )
        secondary.append((name, kind, reference_rate, reference_rate / base_rate, rate / reference_rate))
    print("\nbelow target or without one: " + ("; ".join(short) if short else "none"))
    print(
        "\nSecondary: the UpdateOne path (AppVersion.bulk_upsert_ops, the readable reference), same "
        "statements:"
    )
    for name, kind, reference_rate, over_baseline, product_over in secondary:
        common.result(
            f"UpdateOne path {name} ({kind}) events/s per core",
            reference_rate,
            "events/s",
            None,
            note=f"{over_baseline:.2f}x the baseline; the product is {product_over:.1f}x faster",
            command=cmd,
        )


if __name__ == "__main__":
    main(*[int(a) for a in sys.argv[1:]])
