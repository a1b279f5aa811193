"""The server-free model: BSON sizes (checked against `bson` encodings), counts, expected reports."""
from __future__ import annotations

import re
from datetime import date, datetime, timezone

import bson
import polars as pl
import pytest
import yaml
from bson import ObjectId
from known import UNKNOWN_VERSION

from costlab.appversions.events import STATUS_DTYPE, read_events
from costlab.appversions.model import (
    STATS_COLUMNS,
    collection_stats,
    compare_with_published,
    document_sizes,
    expected_reports,
)
from costlab.appversions.versions import VERSIONS
from costlab.config import ROOT

UTC = timezone.utc
K1 = "0" * 63 + "1"
K2 = "0" * 62 + "2A"
B1 = bytes.fromhex(K1)
B2 = bytes.fromhex(K2)
D5, D16, D701 = (
    datetime(2022, 6, 5, tzinfo=UTC),
    datetime(2022, 6, 16, tzinfo=UTC),
    datetime(2022, 7, 1, tzinfo=UTC),
)
EVENTS = pl.DataFrame(
    {"key": [K1, K1, K1, K1, K2], "date": [D5, D5, D5, D16, D701],
     "status": ["approved", "approved", "pending", "rejected", "noFunds"]},
    schema={"key": pl.Utf8, "date": pl.Datetime("ms", "UTC"), "status": STATUS_DTYPE})


def _hex(text: str) -> bytes:
    return bytes.fromhex(text)


# The documents each version must hold after the five EVENTS, written out by hand.
EXPECTED_DOCS = {
    "appV1": [
        {"_id": {"date": D5, "key": K1}, "approved": 2, "pending": 1},
        {"_id": {"date": D16, "key": K1}, "rejected": 1},
        {"_id": {"date": D701, "key": K2}, "noFunds": 1},
    ],
    "appV2": [
        {"_id": ObjectId(), "key": K1, "date": D5, "approved": 2, "pending": 1},
        {"_id": ObjectId(), "key": K1, "date": D16, "rejected": 1},
        {"_id": ObjectId(), "key": K2, "date": D701, "noFunds": 1},
    ],
    "appV3": [
        {"_id": ObjectId(), "key": B1, "date": D5, "a": 2, "p": 1},
        {"_id": ObjectId(), "key": B1, "date": D16, "r": 1},
        {"_id": ObjectId(), "key": B2, "date": D701, "n": 1},
    ],
    "appV4": [
        {"_id": B1 + _hex("20220605"), "a": 2, "p": 1},
        {"_id": B1 + _hex("20220616"), "r": 1},
        {"_id": B2 + _hex("20220701"), "n": 1},
    ],
    "appV5R0": [
        {"_id": B1 + _hex("202206"),
         "items": [{"date": D5, "a": 1}, {"date": D5, "a": 1}, {"date": D5, "p": 1}, {"date": D16, "r": 1}]},
        {"_id": B2 + _hex("202207"), "items": [{"date": D701, "n": 1}]},
    ],
    "appV5R1": [
        {"_id": B1 + _hex("202202"),
         "items": [{"date": D5, "a": 1}, {"date": D5, "a": 1}, {"date": D5, "p": 1}, {"date": D16, "r": 1}]},
        {"_id": B2 + _hex("202203"), "items": [{"date": D701, "n": 1}]},
    ],
    "appV5R2": [
        {"_id": B1 + _hex("202202"), "items": [{"date": D5, "a": 2, "p": 1}, {"date": D16, "r": 1}]},
        {"_id": B2 + _hex("202203"), "items": [{"date": D701, "n": 1}]},
    ],
    # appV5R4's totals hold only the statuses that occurred (the authors' Bulk Upsert; 413.7 B published).
    "appV5R4": [
        {
            "_id": B1 + _hex("202202"),
            "totals": {"a": 2, "p": 1, "r": 1},
            "items": [{"date": D5, "a": 2, "p": 1}, {"date": D16, "r": 1}],
        },
        {"_id": B2 + _hex("202203"), "totals": {"n": 1}, "items": [{"date": D701, "n": 1}]},
    ],
    "appV6R0": [
        {"_id": B1 + _hex("202206"), "items": {"05": {"a": 2, "p": 1}, "16": {"r": 1}}},
        {"_id": B2 + _hex("202207"), "items": {"01": {"n": 1}}},
    ],
    "appV6R1": [
        {"_id": B1 + _hex("202202"), "items": {"0605": {"a": 2, "p": 1}, "0616": {"r": 1}}},
        {"_id": B2 + _hex("202203"), "items": {"0701": {"n": 1}}},
    ],
    "appV6R2": [
        {
            "_id": B1 + _hex("202202"),
            "items": {"0605": {"a": 2, "p": 1}, "0616": {"r": 1}},
            "totals": {"a": 2, "p": 1, "r": 1},
        },
        {"_id": B2 + _hex("202203"), "items": {"0701": {"n": 1}}, "totals": {"n": 1}},
    ],
    "appV6R3": [
        {"_id": B1 + _hex("202202"), "items": {"20220605": {"a": 2, "p": 1}, "20220616": {"r": 1}}},
        {"_id": B2 + _hex("202203"), "items": {"20220701": {"n": 1}}},
    ],
}
EXPECTED_DOCS["appV5R3"] = EXPECTED_DOCS["appV5R2"]
EXPECTED_DOCS["appV6R4"] = EXPECTED_DOCS["appV6R3"]


@pytest.mark.parametrize("name", list(VERSIONS))
def test_document_sizes_follow_bson(name):
    expected = sorted(len(bson.encode(doc)) for doc in EXPECTED_DOCS[name])
    assert sorted(document_sizes(VERSIONS[name], EVENTS).to_list()) == expected


def test_array_index_names_beyond_ten_elements():
    # 12 events of one key in one month: appV5R0 items "0".."9" (2 bytes) and "10", "11" (3 bytes).
    days = [datetime(2022, 6, d, tzinfo=UTC) for d in range(1, 13)]
    events = pl.DataFrame({"key": [K1] * 12, "date": days, "status": ["approved"] * 12},
                          schema={"key": pl.Utf8, "date": pl.Datetime("ms", "UTC"), "status": STATUS_DTYPE})
    doc = {"_id": B1 + _hex("202206"), "items": [{"date": d, "a": 1} for d in days]}
    assert document_sizes(VERSIONS["appV5R0"], events).to_list() == [len(bson.encode(doc))]


def test_collection_stats_rows():
    stats = collection_stats(EVENTS)
    assert stats.columns == STATS_COLUMNS
    assert stats["version"].to_list() == list(VERSIONS)
    docs = dict(zip(stats["version"], stats["documents"]))
    assert docs["appV1"] == 3 and docs["appV5R0"] == 2 and docs["appV6R3"] == 2
    row = stats.filter(pl.col("version") == "appV4").row(0, named=True)
    assert row["events"] == 5
    assert row["data_bytes"] == sum(len(bson.encode(d)) for d in EXPECTED_DOCS["appV4"])
    assert row["avg_doc_bytes"] == pytest.approx(row["data_bytes"] / 3)
    with pytest.raises(ValueError, match=f"unknown app version '{re.escape(UNKNOWN_VERSION)}'"):
        collection_stats(EVENTS, [UNKNOWN_VERSION])


def test_expected_reports_count_events_in_each_window():
    reports = expected_reports(EVENTS, K1, date(2022, 6, 16))  # 16 June itself is outside [start, end)
    assert reports[0] == {"window_years": 1, "approved": 2, "noFunds": 0, "pending": 1, "rejected": 0}
    assert [r["window_years"] for r in reports] == [1, 3, 5, 7, 10]
    assert expected_reports(EVENTS, K1, date(2022, 6, 17))[4]["rejected"] == 1
    assert expected_reports(EVENTS, K1, date(2023, 6, 6))[0]["approved"] == 0
    assert expected_reports(EVENTS, K1, date(2023, 6, 5))[0]["approved"] == 2  # start is inclusive
    assert expected_reports(EVENTS, K1.lower(), date(2023, 6, 5))[0]["approved"] == 2
    assert all(r["noFunds"] == 0 for r in expected_reports(EVENTS, K1, date(2030, 1, 1)))


def test_compare_with_published_flags_the_tolerance():
    model = pl.DataFrame({"version": ["appV1", "appV4"], "events": [1000, 1000], "documents": [720, 700],
                          "avg_doc_bytes": [119.5, 59.0], "data_bytes": [0, 0]})
    published = pl.DataFrame({"version": ["appV1", "appV4"], "events": [500_000_000] * 2,
                              "documents": [360_000_000, 360_000_000], "avg_doc_bytes": [119, 59]})
    out = compare_with_published(model, published, tolerance=0.015)
    assert out["docs_ratio"].to_list() == pytest.approx([1.0, 700 / 720])
    assert out["within_tolerance"].to_list() == [True, False]  # appV4 documents per event are 2.8 % low


@pytest.mark.workflow   # a Snakemake run: make test-workflow
def test_workflow_writes_model_stats_without_a_server_job(snakemake_run):
    result = snakemake_run(
        ["results/appversions/model/stats.csv", "results/appversions/model/vs_published.csv"]
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert not (snakemake_run.workdir / "results/appversions/provenance").exists()  # no server job ran
    stats = pl.read_csv(snakemake_run.workdir / "results/appversions/model/stats.csv")
    assert stats.columns == STATS_COLUMNS
    # the smoke config's versions: the published ones and its variant (docs/variants.md)
    smoke = yaml.safe_load((ROOT / "config" / "smoke.yaml").read_text())["appversions"]
    assert stats["version"].to_list() == [*VERSIONS, *smoke["variants"]] == smoke["versions"]
    events = read_events(snakemake_run.workdir / "results/appversions/events.parquet")
    assert (stats["events"] == events.height).all()
    day_docs = events.select(pl.struct("key", "date").n_unique()).item()
    assert stats.filter(pl.col("version") == "appV4")["documents"].item() == day_docs
    comparison = pl.read_csv(snakemake_run.workdir / "results/appversions/model/vs_published.csv")
    assert comparison.height == len(smoke["versions"]) and "within_tolerance" in comparison.columns
