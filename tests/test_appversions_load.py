"""Loading a version through its Bulk Upsert from worker processes, collStats -> per-event figures."""
import json
from datetime import datetime, timezone

import polars as pl
import pytest

from costlab.appversions.events import generate_events
from costlab.appversions.load import (
    batches,
    collection_stats,
    load_events,
    per_event_figures,
    read_marker,
    stats_row,
    worker_of_user,
    write_marker,
)
from costlab.appversions.versions import get_version


def test_per_event_figures_divide_by_events():
    stats = {"documents": 50, "data_bytes": 2_000, "avg_doc_bytes": 40.0, "storage_bytes": 500,
             "indexes": 1, "index_bytes": 300}
    figures = per_event_figures(stats, events=100)
    assert figures == {
        "data_bytes_per_event": 20.0,
        "index_bytes_per_event": 3.0,
        "total_bytes_per_event": 23.0,
        "storage_bytes_per_event": 5.0,
        "total_storage_bytes_per_event": 8.0,
        "documents_per_event": 0.5,
    }


def test_per_event_figures_published_appv1_example():
    # Published appV1: 39.58 GiB data, 20.06 GiB index, 500 million events -> 85 B, 43.1 B, 128.1 B per event.
    gib = 1024 ** 3
    figures = per_event_figures({"data_bytes": 39.58 * gib, "index_bytes": 20.06 * gib, "storage_bytes": None,
                                 "documents": 359_639_622}, events=500_000_000)
    assert figures["data_bytes_per_event"] == pytest.approx(85.0, abs=0.05)
    assert figures["index_bytes_per_event"] == pytest.approx(43.1, abs=0.05)
    assert figures["total_bytes_per_event"] == pytest.approx(128.1, abs=0.05)
    assert figures["storage_bytes_per_event"] is None            # missing stays missing, never 0
    assert figures["total_storage_bytes_per_event"] is None


def test_per_event_figures_reject_zero_events():
    with pytest.raises(ValueError, match="events"):
        per_event_figures({"data_bytes": 1}, events=0)


def test_worker_of_user_partitions_keys_disjointly():
    users = pl.DataFrame({"user": pl.Series(range(1, 41), dtype=pl.UInt32)})
    owner = users.select(worker_of_user(pl.col("user"), 4).alias("w"))["w"]
    # the same owner as the key's last 8 hex digits mod 4
    assert owner.to_list() == [int(format(i, "064X")[-8:], 16) % 4 for i in range(1, 41)]
    with pytest.raises(ValueError, match="workers"):
        worker_of_user(pl.col("user"), 0)


def test_batches_are_consecutive_and_cover_all_rows():
    frame = pl.DataFrame({"i": range(1003)})
    parts = batches(frame, 250)
    assert [p.height for p in parts] == [250, 250, 250, 250, 3]
    assert pl.concat(parts)["i"].to_list() == list(range(1003))


def test_marker_missing_names_the_fix(tmp_path):
    with pytest.raises(FileNotFoundError, match="rerun the load step"):
        read_marker(tmp_path)
    write_marker(tmp_path, {"documents": 3})
    assert json.loads((tmp_path / "dataset.json").read_text()) == {"documents": 3}


# appV1 is left out: the stand-in scans for its embedded-document _id filter (minutes for a few
# thousand upserts); appV2 has the extra unique index, appV5R2 the pipeline update.
@pytest.mark.parametrize("version_name", ["appV2", "appV5R2"])
def test_load_events_from_workers_matches_a_sequential_load(server_uri, mongo_client, tmp_path, version_name):
    """Parallel workers (disjoint keys) must leave the same documents as one sequential load."""
    events = generate_events(600, seed=3).head(600)
    path = tmp_path / "events.parquet"
    events.write_parquet(path)
    version = get_version(version_name)
    db = mongo_client[f"t_load_{version_name}"]
    mongo_client.drop_database(db.name)
    try:
        version.prepare_collection(db)
        # chunks of 170 rows: batches of 50 carry over chunk boundaries
        counts = load_events(server_uri, db.name, version.collection_name, version_name, path, batch_size=50,
                             workers=2, chunk_rows=170)
        # The servers' counts summed over both workers: every event applied, each document created once.
        assert counts.statements == counts.applied == events.height
        assert counts.upserted == db[version.collection_name].count_documents({})
        assert counts.modified == events.height - counts.upserted > 0
        sequential = db[f"{version.collection_name}_seq"]
        if version.indexes:   # the product's indexes (appV2's {key, date}): the stand-in's upserts use them
            sequential.create_indexes(version.indexes)   # rather than scanning the collection for each event
        for batch in batches(events, 250):
            sequential.bulk_write(version.bulk_upsert_ops(batch), ordered=False)
        assert db[version.collection_name].count_documents({}) == sequential.count_documents({}) > 0
        # Same reports for a few keys: the two loads hold the same counts.
        end = datetime(2020, 1, 1, tzinfo=timezone.utc)
        for key in events["key"].unique().sort().head(3).to_list():
            reports = version.get_reports(db[version.collection_name], key, end)
            assert reports == version.get_reports(sequential, key, end)
            assert sum(r["approved"] for r in reports) > 0
        stats = collection_stats(db, version.collection_name)
        assert stats["documents"] == sequential.count_documents({})
        assert stats["indexes"] == 1 + len(version.indexes)
        row = stats_row(version_name, version.collection_name, events.height, stats)
        assert row["documents_per_event"] == pytest.approx(stats["documents"] / events.height)
    finally:
        mongo_client.drop_database(db.name)


def test_load_events_write_error_fails_the_load_naming_the_version(server_uri, mongo_client, tmp_path):
    """A write error in a reply (here a unique index the upserts violate) fails the load."""
    path = tmp_path / "events.parquet"
    generate_events(600, seed=3).filter(pl.col("status") == "approved").head(20).write_parquet(path)
    version = get_version("appV4")
    db = mongo_client["t_load_write_error"]
    mongo_client.drop_database(db.name)
    try:
        collection = version.prepare_collection(db)
        collection.insert_one({"_id": b"someone else", "a": 1})
        collection.create_index("a", unique=True)   # every new appV4 document of an approved event has a: 1
        with pytest.raises(RuntimeError, match="loading appV4 failed in worker processes load-appV4-0"):
            load_events(server_uri, db.name, version.collection_name, "appV4", path, batch_size=10, workers=1)
    finally:
        mongo_client.drop_database(db.name)


def test_load_events_failure_names_the_version(server_uri, tmp_path):
    path = tmp_path / "events.parquet"
    generate_events(600, seed=3).head(10).write_parquet(path)
    with pytest.raises(RuntimeError, match="appV4"):
        # no such server: the workers fail to connect and the parent says which load failed
        load_events("mongodb://127.0.0.1:9/?serverSelectionTimeoutMS=300", "t_fail", "appV4", "appV4", path,
                    workers=1)
