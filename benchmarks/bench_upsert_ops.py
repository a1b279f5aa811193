"""Bulk Upsert operations (appversions): build + BSON-encode, per version, per core.

Target (issue 8): >= 200 k events/s per core for the `$inc` versions and >= 2x a straightforward
baseline (iterate over the event rows, build a dict and an UpdateOne per event). Encoding is
measured as the driver does it: each UpdateOne becomes the update statement
{q: filter, u: update, multi: false, upsert: true} (pymongo's bulk add_update) and is bson.encode'd.
The `$push` (appV5R0/R1) and update-pipeline (appV5R2-R4) versions are reported against the same
figures but only the `$inc` versions carry the target: a pipeline statement is ~1 KB of BSON per event.

    python benchmarks/bench_upsert_ops.py [events] [baseline_events]   # defaults 50000, 10000
"""
from __future__ import annotations

import common

common.one_core()

import sys  # noqa: E402

import bson  # noqa: E402
import polars as pl  # noqa: E402
from pymongo import UpdateOne  # noqa: E402

from costlab.appversions import versions as v  # noqa: E402
import raw_statements  # noqa: E402
from costlab.appversions.events import generate_events  # noqa: E402

INC_LAYOUTS = ("embedded_id", "key_string", "key_binary", "id_day", "dynamic")


# The update statement pymongo's bulk writer sends for an UpdateOne, BSON-encoded.
statement = raw_statements.statement_bytes


def encode_statements(ops: list[UpdateOne]) -> int:
    """BSON bytes of the update statements the driver would send for these operations."""
    return sum(len(statement(op)) for op in ops)


def vectorised(version: v.AppVersion, events: pl.DataFrame) -> int:
    return encode_statements(version.bulk_upsert_ops(events))


def baseline_ops(version: v.AppVersion, events: pl.DataFrame) -> list[UpdateOne]:
    """One event row at a time: build the filter and update dicts in Python, then an UpdateOne."""
    ops = []
    for row in events.iter_rows(named=True):
        key, day, status_field = row["key"].upper(), row["date"], version.status_field(row["status"])
        layout = version.layout
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
                op = UpdateOne({"_id": _id}, {"$push": {"items": {"date": day, status_field: 1}}}, upsert=True)
            elif layout == "array_daily":
                op = UpdateOne({"_id": _id}, v.array_daily_update(day, status_field, version.totals), upsert=True)
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


def raw_path(version: v.AppVersion, events: pl.DataFrame) -> int:
    """The prototype fix: statements as raw BSON from templates (benchmarks/raw_statements.py)."""
    return sum(len(doc.raw) for doc in raw_statements.statements(version, events))


def main(n_events: int = 50_000, n_baseline: int = 10_000) -> None:
    common.header(f"Bulk Upsert build + encode, one core, per version ({common.machine()})")
    events_per_year = max(1, n_events // 10)
    events = generate_events(events_per_year, seed=1)
    base_events = events.sample(n_baseline, seed=1, shuffle=False) if n_baseline < events.height else events
    cmd = "python benchmarks/bench_upsert_ops.py"
    short, prototypes = [], []
    for name, version in v.VERSIONS.items():
        # The baseline must build the same statements, or the comparison means nothing.
        sample = base_events.head(200)
        same = [statement(o) for o in version.bulk_upsert_ops(sample)] == \
               [statement(o) for o in baseline_ops(version, sample)]
        is_inc = version.layout in INC_LAYOUTS
        # Pipeline statements cost ~10x more each: fewer events keep the run short (rates are per event).
        mine = events if version.layout != "array_daily" else events.head(events.height // 5)
        theirs = base_events if version.layout != "array_daily" else base_events.head(base_events.height // 5)
        fast = common.best_of_cpu(lambda: vectorised(version, mine), repeat=2)
        slow = common.best_of_cpu(lambda: baseline(version, theirs), repeat=2)
        rate = mine.height / fast.cpu_s
        base_rate = theirs.height / slow.cpu_s
        kind = "$inc" if is_inc else ("$push" if version.layout == "push" else "pipeline")
        bytes_per_op = fast.result / mine.height
        ok_rate = common.result(f"{name} ({kind}) events/s per core", rate, "events/s", 200e3 if is_inc else None,
                                note=f"{bytes_per_op:,.0f} B/statement; baseline {base_rate:,.0f}/s"
                                     + ("" if same else "; BASELINE DIFFERS"), command=cmd)
        ok_ratio = common.result(f"{name} ({kind}) speed-up over per-row baseline", rate / base_rate, "x",
                                 2 if is_inc else None, command=cmd)
        if ok_rate is False or ok_ratio is False or not is_inc:
            short.append(f"{name} ({kind}, {bytes_per_op:,.0f} B/statement, {rate:,.0f} events/s, "
                         f"{rate / base_rate:.1f}x)")
        prototypes.append((name, kind, mine, base_rate, fast.cpu_s / mine.height))
    print("\nbelow target or without one: " + ("; ".join(short) if short else "none"))
    print("\nWhat the fix would give: PROTOTYPE statements as raw BSON from numpy-filled templates "
          "(benchmarks/raw_statements.py), byte-identical to the driver's (checked on 200 events each):")
    for name, kind, mine, base_rate, product_s_per_event in prototypes:
        version = v.VERSIONS[name]
        sample = mine.head(200)
        same = [bytes(d.raw) for d in raw_statements.statements(version, sample)] == \
               [statement(o) for o in version.bulk_upsert_ops(sample)]
        raw = common.best_of_cpu(lambda: raw_path(version, mine), repeat=2)
        rate = mine.height / raw.cpu_s
        common.result(f"PROTOTYPE {name} ({kind}) raw statements, events/s per core", rate, "events/s", None,
                      note=f"{rate / base_rate:.1f}x the baseline, {product_s_per_event * rate:.1f}x the product path"
                           + ("" if same else "; STATEMENTS DIFFER"), command=cmd)


if __name__ == "__main__":
    main(*[int(a) for a in sys.argv[1:]])
