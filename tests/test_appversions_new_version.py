"""A version with a layout of its own, added in this file alone: the workflow models, tables and plans it.

The layout (`Counted`) is appV4's day document plus `t`, the day's event count: `{_id: key + YYYYMMDD,
<status>: n, ..., t: n}`, written by `$inc: {<status>: 1, t: 1}`. It is declared here, registered
at run time, and nothing else in the repository names it (checked below): the model, the raw-BSON
statements, the engine lab, the tables and the rules' wildcards all take it from the registry.
"""
from __future__ import annotations

import subprocess
import sys
from datetime import date
from pathlib import Path

import bson
import polars as pl
import pytest
from bson import Binary
from pymongo import UpdateOne

from costlab.appversions import registry
from costlab.appversions.bsonsize import INT32_BYTES, element
from costlab.appversions.layouts import IdDay, register_layout, unregister_layout
from costlab.config import ROOT

NAME, LAYOUT = "countedV1", "counted_day"


class Counted(IdDay):
    """appV4's document and statement plus a `t` counter of the day's events."""

    name = LAYOUT

    def upsert_ops(self, version, cols):
        return [
            UpdateOne({"_id": i}, {"$inc": {f: 1, "t": 1}}, upsert=True)
            for i, f in zip(cols["id"], cols["field"])
        ]

    def day_document_bytes(self, version):
        return super().day_document_bytes(version) + element("t", INT32_BYTES)

    def bucket_document(self, version, _id, fields, dates, items):
        # mongod applies an upsert's $inc in field-name order: the first status, then t; statuses
        # that appear later are appended after t (sizes do not depend on the order).
        doc = super().bucket_document(version, _id, fields, dates, items)
        first = next(iter(doc.keys() - {"_id"}), None)
        ordered = {"_id": _id, **({first: doc[first]} if first else {}), "t": len(fields)}
        return {**ordered, **{k: v for k, v in doc.items() if k not in ordered}}


def register() -> None:
    """What a user does to add the version: one layout object, one declaration."""
    register_layout(Counted())
    registry.register(registry.VersionDeclaration(NAME, LAYOUT, "day", "match_group"))


def unregister() -> None:
    registry.unregister(NAME)
    unregister_layout(LAYOUT)


@pytest.fixture
def counted():
    register()
    try:
        yield NAME
    finally:
        unregister()


@pytest.fixture(scope="module")
def events() -> pl.DataFrame:
    from costlab.appversions.events import generate_events

    return generate_events(600, 42, start=date(2019, 1, 1), end=date(2020, 1, 1))


def test_nothing_else_names_the_new_version():
    """No list in the repository was edited to hold it: its names occur in this file only."""
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    here = Path(__file__).resolve()
    for path in (ROOT / p for p in tracked.decode().split("\0") if p):
        if path.resolve() != here and path.is_file() and path.suffix not in (".parquet", ".png"):
            text = path.read_text(errors="ignore")
            assert NAME not in text and LAYOUT not in text, path


def test_model_statements_and_tables_take_the_new_version(counted, events):
    from costlab.appversions.model import collection_stats, compare_with_published
    from costlab.appversions.statements import driver_statement, update_statements
    from costlab.appversions.versions import VERSIONS, get_version
    from costlab.inputs import read_csv

    version = get_version(counted)
    assert list(VERSIONS)[-1] == counted and version.day_rule == "day_ids"
    # Model: appV4's documents, each 7 bytes more (element "t": type, "t", NUL, int32 = 1 + 1 + 1 + 4).
    stats = {r["version"]: r for r in collection_stats(events, ["appV4", counted]).iter_rows(named=True)}
    assert stats[counted]["documents"] == stats["appV4"]["documents"] > 0
    assert stats[counted]["data_bytes"] == stats["appV4"]["data_bytes"] + 7 * stats["appV4"]["documents"]
    # Statements: the raw-BSON templates give what the driver would send for the layout's UpdateOne,
    # written out here independently for the first events.
    raw = update_statements(version, events)
    for row, statement in zip(events.head(20).iter_rows(named=True), raw):
        day = row["date"]
        _id = Binary(bytes.fromhex(row["key"] + f"{day.year:04d}{day.month:02d}{day.day:02d}"), 0)
        field = {"approved": "a", "noFunds": "n", "pending": "p", "rejected": "r"}[row["status"]]
        assert statement.raw == bson.encode(
            {"q": {"_id": _id}, "u": {"$inc": {field: 1, "t": 1}}, "multi": False, "upsert": True}
        )
    assert [s.raw for s in raw] == [driver_statement(op) for op in version.bulk_upsert_ops(events)]
    # Tables: the model's table beside the published one (none for a version of one's own).
    published = read_csv(ROOT / "resources/published/appversions_collection_stats.csv")
    table = compare_with_published(collection_stats(events, ["appV4", counted]), published)
    mine = table.filter(pl.col("version") == counted).row(0, named=True)
    assert mine["published_docs_per_event"] is None and mine["model_avg_doc_bytes"] > 0


def test_the_engine_lab_stores_the_new_version_as_the_model_sizes_it(counted, events, tmp_path):
    """Its statements applied by mongod's update rules in WiredTiger (the engine lab): the documents
    and BSON bytes the model predicts."""
    from costlab.appversions.engine import measure_version, storage_table
    from costlab.appversions.events import iter_event_chunks, write_events
    from costlab.appversions.model import collection_stats
    from costlab.inputs import read_csv

    path = tmp_path / "events.parquet"  # the `events` fixture's, integer-coded as the engine job writes them
    write_events(iter_event_chunks(600, 42, start=date(2019, 1, 1), end=date(2020, 1, 1)), path)
    row = measure_version(counted, path, tmp_path / "wt", cache_mb=8, workers=1)
    model = collection_stats(events, [counted]).row(0, named=True)
    assert (row["documents"], row["data_bytes"]) == (model["documents"], model["data_bytes"])
    table = storage_table(
        [row], read_csv(ROOT / "resources/published/appversions_collection_stats.csv"), "test"
    )
    assert table["version"].to_list() == [counted] and table["storage_bytes_per_event"][0] > 0


PLAN = f"""
import sys
sys.path.insert(0, {str(Path(__file__).parent)!r})
import {Path(__file__).stem} as new_version
new_version.register()
from snakemake.cli import main
sys.argv[0] = "snakemake"
main()
"""


def test_the_workflow_plans_the_new_version(tmp_path):
    """`snakemake -n` with the version registered (as a user's code would) and configured: its
    model, engine and server jobs are planned through the rules' wildcards."""
    for name in ("Snakefile", "rules", "scripts", "config", "resources", "profiles", "captions"):
        if (ROOT / name).exists():
            (tmp_path / name).symlink_to(ROOT / name)
    targets = [
        f"results/appversions/engine/versions/{NAME}/rep1.json",
        "results/appversions/model/stats.csv",
        f"results/appversions/raw/loadtest_{NAME}.parquet",
    ]
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            PLAN,
            *targets,
            "-n",
            "--cores",
            "1",
            "--directory",
            str(tmp_path),
            "--snakefile",
            str(tmp_path / "Snakefile"),
            "--config",
            f"appversions={{versions: [appV4, {NAME}]}}",
            # planned only (-n): an external server is named, never contacted
            "server={backend: external, uri: 'mongodb://127.0.0.1:9/'}",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    jobs = {block.split(":", 1)[0]: block for block in out.split("\nrule ")[1:]}
    assert "appversions_model" in jobs, out[-3000:]
    for rule in (
        "appversions_engine_version",
        "appversions_load",
        "appversions_correctness",
        "appversions_loadtest",
    ):
        assert f"wildcards: version={NAME}" in jobs.get(rule, ""), (rule, out[-3000:])
