"""The engine lab's storage layer: mongod's rules reproduced on a real WiredTiger (no server)."""
from __future__ import annotations

import bson
import polars as pl
import pytest
from bson import Int64, ObjectId

from costlab.engine import stats
from costlab.engine.bsonbytes import append_int64_to_last_field
from costlab.engine.connection import Engine, EngineSettings
from costlab.engine.deployment import Deployment, table_logged
from costlab.engine.oplog import OplogWriter, push_diff
from costlab.engine.records import RecordStore, modify_allowed
from costlab.engine.wt import available_compressors, compressor_or_nearest, wiredtiger_module

SETTINGS = EngineSettings(cache_mb=64, journal_compressor="lz4", block_compressor="lz4")


@pytest.fixture
def engine(tmp_path):
    with Engine(tmp_path / "wt", SETTINGS) as e:
        yield e


def test_logging_rules_follow_use_table_logging():
    assert table_logged("standalone", "app.orders") and table_logged("standalone", "local.oplog.rs")
    assert not table_logged("replset-1", "app.orders")
    assert table_logged("replset-1", "local.oplog.rs")
    assert not table_logged("replset-1", "local.replset.minvalid")
    with pytest.raises(ValueError, match="standalone, replset-1"):
        table_logged("sharded", "app.orders")


@pytest.mark.parametrize("logged,old,new,allowed", [
    (False, 2000, 2008, True),     # big document, small growth, unlogged: delta
    (True, 2000, 2008, False),     # logged table: never a delta
    (False, 1000, 1016, False),    # new length not over 1 KB
    (False, 1100, 1300, False),    # grew by more than a tenth of the new length
    (False, 2000, 2200, True),     # exactly len/10 growth is still allowed
])
def test_modify_precheck(logged, old, new, allowed):
    assert modify_allowed(logged, old, new) is allowed


def test_update_path_modify_only_on_unlogged_tables(engine):
    old = bson.encode({"_id": 1, "a": "x" * 3000})
    new = bson.encode({"_id": 1, "a": "x" * 3000 + "y"})
    paths = {}
    for logged in (True, False):
        store = RecordStore(engine, f"t_{logged}", "lz4", logged=logged)
        with engine.transaction():
            record_id = store.insert(old)
        with engine.transaction():
            paths[logged] = store.update(record_id, new)
        assert store.read(record_id) == new
    assert paths == {True: "update", False: "modify"}


def test_a_full_update_is_mongods_search_then_insert_not_an_update_call(engine):
    from costlab.engine import stats
    old = bson.encode({"_id": 1, "a": "x" * 300})
    new = bson.encode({"_id": 1, "a": "y" * 400})   # logged table: never a delta
    store = RecordStore(engine, "t_full", "lz4", logged=True)
    with engine.transaction():
        record_id = store.insert(old)
    before = stats.snapshot(engine.session, flush_log=False)
    with engine.transaction():
        assert store.update(record_id, new) == "update"
    counted = stats.delta(before, stats.snapshot(engine.session, flush_log=False))
    assert (
        counted["cursor_search_calls"],
        counted["cursor_insert_calls"],
        counted["cursor_update_calls"],
    ) == (1, 1, 0)
    assert store.read(record_id) == new


def test_append_int64_matches_bson_encode():
    doc = {"_id": ObjectId(b"\x01" * 12), "job": "j", "timestamps": []}
    encoded = bson.encode(doc)
    for i in range(120):
        doc["timestamps"].append(Int64(1_784_106_933 + i))
        encoded = append_int64_to_last_field(encoded, i, 1_784_106_933 + i)
        assert encoded == bson.encode(doc)
    with pytest.raises(ValueError, match="not an array"):
        append_int64_to_last_field(bson.encode({"a": 1}), 0, 1)


def test_push_oplog_entry_holds_the_delta_not_the_array():
    writer = OplogWriter("db.c")
    _, small = writer.update(1, push_diff("timestamps", 5, Int64(7)))
    _, large = writer.update(1, push_diff("timestamps", 50_000, Int64(7)))
    assert len(large) - len(small) == 4          # only the index's digits grow
    entry = bson.decode(large)
    assert entry["o"] == {"$v": 2, "diff": {"stimestamps": {"a": True, "u50000": 7}}}
    assert entry["op"] == "u" and entry["o2"] == {"_id": 1} and entry["v"] == 2


def test_retryable_write_fields_in_the_oplog_entry():
    plain = bson.decode(OplogWriter("db.c").insert({"_id": 1})[1])
    retryable_writer = OplogWriter("db.c", session_fields=True)
    first = bson.decode(retryable_writer.insert({"_id": 1})[1])
    second = bson.decode(retryable_writer.insert({"_id": 2})[1])
    assert not {"lsid", "txnNumber", "stmtId", "prevOpTime"} & set(plain)
    assert {"lsid", "txnNumber", "stmtId", "prevOpTime"} <= set(first)
    assert second["txnNumber"] == first["txnNumber"] + 1
    assert second["prevOpTime"]["ts"] == first["ts"]


def _orders(engine, profile="standalone", docs=300, body=8000):
    from datetime import datetime, timedelta, timezone
    deployment = Deployment(engine, profile, "lz4")
    coll = deployment.collection("db.orders", {"createdAt_1_total_1": ("createdAt", "total")})
    start = datetime(2024, 1, 1, tzinfo=timezone.utc)
    for i in range(docs):
        coll.insert({"_id": ObjectId(i.to_bytes(12, "big")), "createdAt": start + timedelta(minutes=i),
                     "total": float(i), "history": "h" * body})
    return coll, start


def test_range_scan_fetch_and_covered_return_the_same_rows(engine):
    from datetime import timedelta
    coll, start = _orders(engine)
    index = coll.indexes["createdAt_1_total_1"]
    lower, upper = (start + timedelta(minutes=100),), (start + timedelta(minutes=150),)
    covered = index.covered(lower, upper)
    fetched = [bson.decode(d) for d in index.fetch(coll.records, lower, upper)]
    assert len(covered) == len(fetched) == 50
    assert [c[1] for c in covered] == [d["total"] for d in fetched] == [float(i) for i in range(100, 150)]
    assert index.covered((start + timedelta(days=10),), (start + timedelta(days=11),)) == []


def test_covered_reads_far_less_into_a_cold_cache_than_fetch(engine):
    from datetime import timedelta
    coll, start = _orders(engine, docs=600, body=16000)
    lower, upper = (start + timedelta(minutes=100),), (start + timedelta(minutes=400),)
    read = {}
    for shape in ("fetch", "covered"):
        engine.reopen()
        coll.reopen_cursors()
        before = stats.snapshot(engine.session)
        index = coll.indexes["createdAt_1_total_1"]
        rows = index.fetch(coll.records, lower, upper) if shape == "fetch" else index.covered(lower, upper)
        assert len(rows) == 300
        read[shape] = stats.delta(before, stats.snapshot(engine.session))["bytes_read_into_cache"]
    assert read["fetch"] > 300 * 16000 * 0.9        # whole documents came in
    assert read["covered"] * 50 < read["fetch"]


def test_log_bytes_follow_the_deployment(engine, tmp_path):
    """One log record per write; a replica set logs only the oplog entry."""
    from costlab.arraygrowth.engine import run_workload
    rows = {(p, w): run_workload(p, w, 400, SETTINGS, tmp_path)
            for p in ("standalone", "replset-1") for w in ("insert", "push")}
    assert all(400 <= r["log_records"] <= 402 for r in rows.values())   # one per write (+ WiredTiger's own)
    # one 128-byte record per write; WiredTiger may add a record of its own now and then
    assert rows["standalone", "insert"]["log_bytes"] == pytest.approx(400 * 128, abs=2 * 128)
    assert rows["standalone", "push"]["modify_calls"] == 0
    assert rows["replset-1", "push"]["modify_calls"] > 300          # the delta path once over 1 KB
    assert rows["standalone", "push"]["log_bytes"] > 3 * rows["replset-1", "push"]["log_bytes"]


def test_retryable_writes_add_one_log_unit_per_write(tmp_path):
    from costlab.arraygrowth.engine import run_workload
    with_session = run_workload("replset-1", "insert", 300, SETTINGS, tmp_path, retryable_writes=True)
    without = run_workload("replset-1", "insert", 300, SETTINGS, tmp_path, retryable_writes=False)
    assert with_session["log_bytes"] - without["log_bytes"] == pytest.approx(300 * 128, abs=256)


def test_exponents_quadratic_on_standalone_linear_on_replica_set(tmp_path):
    from costlab.arraygrowth.engine import fits, sweep
    table = sweep([500, 1000, 2000], ["standalone", "replset-1"], ["push"], SETTINGS, "snappy", tmp_path)
    exponents = {r["profile"]: r["exponent"] for r in fits(table).iter_rows(named=True)}
    assert exponents["standalone"] > 1.7
    assert 0.9 < exponents["replset-1"] < 1.1
    assert set(table["journal_compressor"]) == {"lz4"} and set(table["journal_compressor_wanted"]) == {
        "snappy"
    }
    assert set(table["server_kind"]) == {"engine"}


def test_compressor_substitute_is_named_never_silent():
    assert "lz4" in available_compressors()
    assert compressor_or_nearest("lz4") == ("lz4", None)
    if "snappy" not in available_compressors():
        used, note = compressor_or_nearest("snappy")
        assert used == "lz4" and "snappy not available in WiredTiger" in note and "used lz4" in note
    with pytest.raises(ValueError, match="available: none"):
        EngineSettings(journal_compressor="nosuch").open_config()


def test_statistics_are_named_and_a_missing_one_is_an_error(engine):
    snap = stats.snapshot(engine.session)
    assert set(stats.FIELDS) <= set(snap)
    assert stats.delta(snap, snap) == {name: 0 for name in snap}


def _log_rows(standalone_push_exponent: float) -> "pl.DataFrame":
    rows = []
    for n in (2500, 5000, 10000):
        for profile, workload, per_op in (("standalone", "insert", 128), ("replset-1", "insert", 384),
                                          ("replset-1", "push", 384)):
            rows.append({"profile": profile, "workload": workload, "n": n, "log_bytes": per_op * n,
                         "modify_calls": n - 75 if workload == "push" else 0, "insert_calls": n})
        rows.append({"profile": "standalone", "workload": "push", "n": n,
                     "log_bytes": int(30850 * 10000 * (n / 10000) ** standalone_push_exponent),
                     "modify_calls": 0, "insert_calls": 0})
    return pl.DataFrame(rows)


@pytest.mark.parametrize("exponent,verdict", [(2.0, "reproduced"), (1.0, "not reproduced")])
def test_engine_verdict_on_the_quadratic_finding(exponent, verdict):

    from costlab.arraygrowth.engine_verdicts import arraygrowth_verdicts
    from costlab.config import ROOT
    table = arraygrowth_verdicts(_log_rows(exponent),
                                 pl.read_csv(ROOT / "resources/published/arraygrowth_log_bytes.csv"),
                                 pl.read_csv(ROOT / "resources/published/arraygrowth_cursor_calls.csv"))
    quadratic = table.filter(pl.col("finding").str.contains("quadratically"))
    assert quadratic["verdict"].to_list() == [verdict]
    assert set(table["server_kind"]) == {"engine"}
    per_write = table.filter(pl.col("metric").str.starts_with("log bytes per write (replset-1, insert"))
    assert per_write["verdict"].to_list() == ["not reproduced"] and per_write["ratio"][0] == 0.75
    assert "128-byte log unit" in per_write["note"][0]


def test_replica_set_gap_is_a_log_unit_boundary(tmp_path):
    """docs/engine-lab.md: with the session fields the oplog entry's record sits just under 384 B;
    a namespace 16 characters longer crosses into 512 B per write, the published figure."""
    def per_write(ns: str) -> float:
        with Engine(tmp_path / ns, EngineSettings(journal_compressor="none")) as engine:
            coll = Deployment(engine, "replset-1", "lz4", retryable_writes=True).collection(ns)
            before = stats.snapshot(engine.session)
            for i in range(200):
                coll.insert({"_id": ObjectId(i.to_bytes(12, "big")), "ts": Int64(i)})
            return stats.delta(before, stats.snapshot(engine.session))["log_bytes"] / 200
    ours = "costlab_arraygrowth.timestamps"
    assert per_write(ours) == pytest.approx(384, abs=1.5)       # (an occasional record of WiredTiger's own)
    assert per_write(ours + "x" * 16) == pytest.approx(512, abs=1.5)


def test_fallback_sweep_beside_the_model(tmp_path):
    from costlab.arraygrowth.engine import fallback_sweep
    from costlab.arraygrowth.workloads import FallbackParams
    table = fallback_sweep(["standalone", "replset-1"], ["push_one", "small_docs"],
                           FallbackParams(updates=200, small_doc_elements=40), SETTINGS, tmp_path)
    rows = {(r["profile"], r["variant"]): r for r in table.iter_rows(named=True)}
    assert rows["standalone", "push_one"]["modify_calls"] == 0  # logged: never a delta
    assert rows["replset-1", "small_docs"]["modify_calls"] == 0  # under 1 KB: never a delta
    one = rows["replset-1", "push_one"]
    assert one["modify_calls"] == one["model_modify_eligible"] > 100  # engine = model's size rules
    assert one["eligible_but_calc_modify_refused"] == 0


def test_engine_provenance_says_engine_and_hashes_what_a_rerun_depends_on():
    from datetime import datetime, timezone

    from costlab.engine.provenance import LABEL, engine_provenance
    now = datetime.now(timezone.utc)
    config = {
        "engine": {"journal_compressor": "snappy", "block_compressor": "snappy", "docsize": {"queries": 10}},
        "docsize": {"seed": 42},
        "arraygrowth": {"ns": [10, 20]},
    }
    record = engine_provenance("docsize_engine", config, now, now)
    assert record["server_kind"] == "engine" and record["label"] == LABEL
    assert record["compressors"]["journal_compressor_wanted"] == "snappy"
    assert record["compressors"]["journal_compressor"] in available_compressors() + ("none",)
    other_study = engine_provenance("docsize_engine", config | {"arraygrowth": {"ns": [10, 30]}}, now, now)
    assert other_study["engine_config_hash"] == record["engine_config_hash"]
    changed = engine_provenance("docsize_engine", config | {"docsize": {"seed": 7}}, now, now)
    assert changed["engine_config_hash"] != record["engine_config_hash"]


def test_pick_fields_steps_over_the_others_and_matches_a_full_decode():
    from datetime import datetime, timezone

    from costlab.engine.bsonbytes import pick_fields
    doc = {"_id": ObjectId(b"\x02" * 12), "note": "x" * 500, "lines": [{"sku": "a", "qty": 2}] * 20,
           "blob": bson.Binary(b"\x00" * 40), "flag": True, "n": None, "i": 7, "big": Int64(1 << 40),
           "createdAt": datetime(2024, 1, 1, tzinfo=timezone.utc), "total": 54.37}
    encoded = bson.encode(doc)
    decoded = bson.decode(encoded)
    assert pick_fields(encoded, ("createdAt", "total")) == [decoded["createdAt"], decoded["total"]]
    assert pick_fields(encoded, ("total", "missing", "i")) == [54.37, None, 7]


def test_a_snapshot_reads_by_key_what_walking_every_statistic_reads(tmp_path):
    """snapshot() searches each statistic by its key; the walk over all of them must agree (the cache
    and block counters, which neither read moves) after a load, a restart and a read."""
    from costlab.engine import stats
    from costlab.engine.connection import Engine, EngineSettings
    from costlab.engine.records import RecordStore

    with Engine(tmp_path / "wt", EngineSettings(cache_mb=32, journal=False)) as engine:
        records = RecordStore(engine, "t", "none", logged=False)
        with engine.transaction():
            for _ in range(2_000):
                records.insert(bytes(500))
        engine.reopen()
        records.reopen_cursor()
        records.read(1_000)
        snap = stats.snapshot(engine.session, flush_log=False)
        walked = stats.read_statistics(engine.session, flush_log=False)
    for name in ("bytes_read_into_cache", "pages_read_into_cache", "block_bytes_read", "block_blocks_read"):
        assert snap[name] == walked[stats.FIELDS[name]]
    assert snap["bytes_read_into_cache"] > 0


def test_fetch_keeps_the_record_cursor_on_its_page_between_documents_then_resets(engine):
    """mongod's seekExact leaves its cursor positioned (only save() resets it): a page stays pinned
    between two of its documents. Resetting after every record let eviction take the page in between,
    and 16 KB queries read pages 2-6 times (docs/engine-lab.md)."""
    from datetime import timedelta
    coll, start = _orders(engine, docs=50)
    records, index = coll.records, coll.indexes["createdAt_1_total_1"]
    positioned = []
    seek = records.seek_exact

    def watching(record_id):
        value = seek(record_id)
        positioned.append(records.cursor.get_key())   # a reset cursor has no key to give
        return value
    records.seek_exact = watching
    documents = index.fetch(records, (start + timedelta(minutes=10),), (start + timedelta(minutes=20),))
    assert [bson.decode(d)["total"] for d in documents] == [float(i) for i in range(10, 20)]
    assert positioned == list(range(11, 21))   # record ids 1.. in insert order
    with pytest.raises(wiredtiger_module().WiredTigerError):
        records.cursor.get_key()               # reset once the FETCH is done: nothing left pinned
