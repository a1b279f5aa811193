"""Storage sizes are read after a checkpoint, and the block compressor is read back from the server.

Response shapes:
- collStats on WiredTiger carries wiredTiger.creationString, the collection's WiredTiger config
  (e.g. the `db.coll.stats()` output attached to jira.mongodb.org SERVER tickets:
  "wiredTiger" : { "metadata" : { "formatVersion" : 1 }, "creationString" :
  "allocation_size=4KB,app_metadata=(formatVersion=1),block_allocation=best,block_compressor=snappy,...",
  "type" : "file", "uri" : "statistics:table:collection-0-..." }); an empty `block_compressor=`
  is WiredTiger's "no compression" (WiredTiger metadata dumps show `block_compressor=,`).
- fsync: `{fsync: 1}` returns {numFiles, ok: 1}; MongoDB docs ("fsync"): "To provide durable data,
  WiredTiger uses checkpoints". A user without the privilege gets code 13 (Unauthorized).
- The stand-in has no wiredTiger section in collStats: the compressor is "not reported", never guessed.
"""
from __future__ import annotations

import json

import polars as pl
import pytest
from pymongo.errors import OperationFailure

from costlab.appversions import load as appversions_load
from costlab.docsize import load as docsize_load
from costlab.measure.storage import NOT_REPORTED, block_compressor, checkpointed_coll_stats

CREATION_STRING = (
    "access_pattern_hint=none,allocation_size=4KB,app_metadata=(formatVersion=1),assert=(commit_timestamp=none,"
    "durable_timestamp=none,read_timestamp=none,write_timestamp=off),block_allocation=best,"
    "block_compressor={compressor},cache_resident=false,checksum=on,colgroups=,collator=,columns=,dictionary=0,"
    "encryption=(keyid=,name=),exclusive=false,extractor=,format=btree,huffman_key=,huffman_value=,"
    "internal_page_max=4KB,key_format=q,key_gap=10,leaf_page_max=32KB,leaf_value_max=64MB,log=(enabled=true),"
    "memory_page_max=10m,os_cache_dirty_max=0,os_cache_max=0,prefix_compression=false,split_pct=90,"
    "type=file,value_format=u,verbose=[],write_timestamp_usage=none")


def mongod_collstats(compressor: str, storage_size: int) -> dict:
    return {"ns": "costlab_appversions.appV6R4", "size": 1_000_000, "count": 1000, "avgObjSize": 1000,
            "numOrphanDocs": 0, "storageSize": storage_size, "freeStorageSize": 0, "capped": False,
            "wiredTiger": {"metadata": {"formatVersion": 1},
                           "creationString": CREATION_STRING.format(compressor=compressor),
                           "type": "file", "uri": "statistics:table:collection-7-1234567890123456789"},
            "nindexes": 2, "indexBuilds": [], "totalIndexSize": 90_112, "totalSize": 90_112 + storage_size,
            "indexSizes": {"_id_": 36_864, "key_1": 53_248}, "scaleFactor": 1, "ok": 1.0}


class _RecordingServer:
    """Test double of a pymongo Database + its client: records the commands in the order sent.

    Sizes change at the checkpoint, as WiredTiger file sizes do: collStats before fsync would
    see the pre-checkpoint storageSize.
    """

    def __init__(self, compressor="zstd", refuse_fsync=False):
        self.sent: list[str] = []
        self.checkpointed = False
        self.compressor = compressor
        self.refuse_fsync = refuse_fsync
        self.client = self
        self.admin = _Admin(self)

    def command(self, name, *args, **kwargs):
        self.sent.append(name)
        assert name == "collStats"
        return mongod_collstats(self.compressor, 8_388_608 if self.checkpointed else 4096)


class _Admin:
    def __init__(self, server: _RecordingServer):
        self.server = server

    def command(self, name, *args, **kwargs):
        self.server.sent.append(name)
        assert name == "fsync"
        if self.server.refuse_fsync:
            raise OperationFailure(
                "not authorized on admin to execute command { fsync: 1 }",
                13,
                {
                    "ok": 0.0,
                    "errmsg": "not authorized on admin to execute command { fsync: 1 }",
                    "code": 13,
                    "codeName": "Unauthorized",
                },
            )
        self.server.checkpointed = True
        return {"numFiles": 1, "ok": 1.0}


def test_block_compressor_is_read_from_the_creation_string():
    assert block_compressor(mongod_collstats("snappy", 1)) == "snappy"
    assert block_compressor(mongod_collstats("zstd", 1)) == "zstd"
    assert block_compressor(mongod_collstats("", 1)) == "none"
    assert block_compressor({"size": 1, "storageSize": 1}) == NOT_REPORTED
    # WiredTiger config: a repeated key takes its last value
    assert (
        block_compressor({"wiredTiger": {"creationString": "block_compressor=snappy,block_compressor=zstd"}})
        == "zstd"
    )


def test_checkpoint_comes_before_the_sizes_are_read():
    server = _RecordingServer("zstd")
    stats, compressor, status = checkpointed_coll_stats(server, "appV6R4")
    assert server.sent == ["fsync", "collStats"]
    assert stats["storageSize"] == 8_388_608 and compressor == "zstd" and status == "fsync"


def test_a_refused_checkpoint_is_recorded_not_hidden():
    server = _RecordingServer("snappy", refuse_fsync=True)
    _, compressor, status = checkpointed_coll_stats(server, "appV6R3")
    assert compressor == "snappy"
    assert status.startswith("not done") and "13" in status and "last checkpoint" in status


@pytest.mark.parametrize("collection_stats, size_key", [(appversions_load.collection_stats, "storage_bytes"),
                                                         (docsize_load.collection_stats, "storage_bytes")])
def test_study_size_readers_checkpoint_first_and_record_the_compressor(collection_stats, size_key):
    server = _RecordingServer("zstd")
    stats = collection_stats(server, "c")
    assert server.sent == ["fsync", "collStats"]
    assert stats[size_key] == 8_388_608                      # the post-checkpoint file size
    assert stats["block_compressor"] == "zstd" and stats["checkpoint"] == "fsync"


def test_stand_in_reports_no_compressor(test_db, real_mongod):
    test_db.create_collection("z", storageEngine={"wiredTiger": {"configString": "block_compressor=zstd"}})
    test_db.z.insert_many([{"i": i} for i in range(5)])
    for stats in (
        appversions_load.collection_stats(test_db, "z"),
        docsize_load.collection_stats(test_db, "z"),
    ):
        assert stats["checkpoint"] == "fsync"
        if real_mongod:
            assert stats["block_compressor"] == "zstd"
        else:
            assert stats["block_compressor"] == NOT_REPORTED    # never an invented default


def test_flatnested_load_marker_reads_sizes_after_a_checkpoint(tmp_path, external_server_config, real_mongod,
                                                              monkeypatch):
    from costlab.config import run_facts
    from costlab.flatnested import run as flatnested_run
    from costlab.flatnested.generate import generate_values
    from costlab.flatnested.params import LoadParams

    calls = []
    real = flatnested_run.checkpointed_coll_stats
    monkeypatch.setattr(flatnested_run, "checkpointed_coll_stats",
                        lambda db, name: calls.append(name) or real(db, name))
    values_path = tmp_path / "values.parquet"
    generate_values(20, 2, seed=1).write_parquet(values_path)
    data_dir = tmp_path / "data"
    config = {"server": external_server_config}
    flatnested_run.load_dataset(LoadParams.from_config(config), run_facts(config, "flatnested"), values_path,
                                "flat_10", data_dir, tmp_path / "load.json")
    marker = json.loads((data_dir / "dataset.json").read_text())
    assert calls == ["flat_10"]
    assert marker["checkpoint"] == "fsync"
    assert marker["block_compressor"] == ("snappy" if real_mongod else NOT_REPORTED)


def _appversions_stats(compressors: dict) -> "pl.DataFrame":

    from costlab.appversions.tables import published_collection_stats
    from costlab.config import ROOT

    published = published_collection_stats(
        ROOT / "resources" / "published" / "appversions_collection_stats.csv",
        ROOT / "resources" / "published" / "appversions_event_stats.csv",
    )
    rows = published.filter(pl.col("version").is_in(list(compressors)))
    return rows.with_columns(
        pl.col("published_documents_per_event").alias("documents_per_event"),
        *[
            pl.col(f"published_{c}").alias(c)
            for c in (
                "avg_doc_bytes",
                "data_bytes_per_event",
                "index_bytes_per_event",
                "total_bytes_per_event",
                "storage_bytes_per_event",
                "storage_bytes",
            )
        ],
        pl.col("version").replace_strict(compressors).alias("block_compressor"),
        pl.lit("mongod").alias("server_kind"),
    )


def test_zstd_finding_is_judged_only_on_the_compressors_the_article_compared():
    from costlab.appversions.tables import collection_findings

    def zstd_verdict(compressors):
        rows = collection_findings(_appversions_stats(compressors))
        return next(r for r in rows if r.finding.startswith("zstd")).text

    assert zstd_verdict({"appV6R3": "snappy", "appV6R4": "zstd"}) == "reproduced"
    # a server whose default compressor is zstd (--wiredTigerCollectionBlockCompressor) compares zstd with
    # zstd
    assert zstd_verdict({"appV6R3": "zstd", "appV6R4": "zstd"}) == \
        "not comparable (the collections use zstd and zstd, not zstd and snappy)"
    assert zstd_verdict({"appV6R3": NOT_REPORTED, "appV6R4": NOT_REPORTED}) == "reproduced"
