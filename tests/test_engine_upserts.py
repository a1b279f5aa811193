"""The appversions engine run applies the load step's own Bulk Upsert statements, in its batches.

The statements the loader sends come from costlab.appversions.load.worker_batches (statements.py's
raw BSON); the reference here is built independently: pymongo's UpdateOne of the readable builder
(versions.bulk_upsert_ops) encoded as the driver encodes it, per load worker's keys, 250 to a batch.
The documents mongod's update rules leave are checked against a MongoDB-compatible server that ran
the same statements.
"""
from __future__ import annotations

import tracemalloc

import bson
import polars as pl
import pytest
from bson.raw_bson import RawBSONDocument

from costlab.appversions.engine import measure_version, write_engine_events
from costlab.appversions.events import iter_event_file, with_keys
from costlab.appversions.load import worker_batches
from costlab.appversions.statements import driver_statement, send_update_statements
from costlab.appversions.versions import get_version
from costlab.engine.update import ObjectIds, apply_update, upsert_document


@pytest.fixture(scope="module")
def events_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("events") / "events.parquet"
    write_engine_events(40, 3, "authors", path)   # 400 events
    return path


def _reference_batches(version, path, worker, workers, batch_size):
    """The worker's events (user modulo workers) in file order, as UpdateOne statements, batch by batch."""
    events = pl.concat(list(iter_event_file(path)))
    mine = with_keys(events.filter(pl.col("user") % workers == worker))
    statements = [driver_statement(op) for op in version.bulk_upsert_ops(mine)]
    return [statements[i:i + batch_size] for i in range(0, len(statements), batch_size)]


@pytest.mark.parametrize("name", ["appV1", "appV5R4", "appV6R2"])
def test_the_engine_applies_the_loaders_statements_in_its_batches(events_path, tmp_path, name):
    version, workers, batch_size = get_version(name), 3, 40
    seen: dict[int, list[list[bytes]]] = {w: [] for w in range(workers)}
    row = measure_version(name, events_path, tmp_path / "wt", batch_size=batch_size, workers=workers,
                          chunk_rows=97, on_batch=lambda w, batch: seen[w].append([s.raw for s in batch]))
    for worker in range(workers):
        expected = _reference_batches(version, events_path, worker, workers, batch_size)
        assert seen[worker] == expected
        # what the loader's worker sends: the same statements in the same batches
        assert [[s.raw for s in b] for b in worker_batches(version, events_path, worker, workers, batch_size,
                                                          chunk_rows=97)] == expected
    assert (
        sum(len(b) for batches in seen.values() for b in batches)
        == row["events"]
        == pl.read_parquet(events_path).height
    )


def _server_documents(db, version, events_path):
    collection = version.prepare_collection(db)
    for worker in range(2):
        for statements in worker_batches(version, events_path, worker, 2, 250):
            send_update_statements(collection, statements, version.name)
    raw = db.get_collection(
        version.collection_name, codec_options=bson.CodecOptions(document_class=RawBSONDocument)
    )
    return raw.find({})


# appV1 is left out: the stand-in scans for its embedded-document _id filter (test_appversions_load)
@pytest.mark.parametrize("name", ["appV2", "appV4", "appV5R0", "appV5R4", "appV6R2"])
def test_the_documents_are_the_ones_a_server_keeps_for_the_same_statements(
    events_path, tmp_path, mongo_client, name
):
    from costlab.engine.connection import Engine, EngineSettings
    from costlab.engine.deployment import Deployment
    from costlab.engine.update import apply_statement, find_record

    version = get_version(name)
    db = mongo_client[f"t_engine_upserts_{name}"]
    mongo_client.drop_database(db.name)
    try:
        server = {
            bson.encode(
                {k: v for k, v in bson.decode(d.raw).items() if k != "_id"}
                if name == "appV2"
                else bson.decode(d.raw)
            ): None
            for d in _server_documents(db, version, events_path)
        }
    finally:
        mongo_client.drop_database(db.name)
    with Engine(tmp_path / "wt", EngineSettings(cache_mb=64, journal=False)) as engine:
        collection = Deployment(engine, "standalone", "none").collection(
            "t.c", {"_".join(k): k for k in version.index_keys})
        new_id = ObjectIds()
        for worker in range(2):
            for statements in worker_batches(version, events_path, worker, 2, 250):
                for statement in statements:
                    apply_statement(collection, statement.raw, new_id)
        cursor = engine.session.open_cursor(collection.records.uri)
        stored = []
        while cursor.next() == 0:
            document = bson.decode(cursor.get_value())
            stored.append(bson.encode({k: v for k, v in document.items() if k != "_id"} if name == "appV2"
                                      else document))
        cursor.close()
        first = bson.decode(stored[0]) if name != "appV2" else None
        if first is not None:   # found again through the index mongod would use
            assert find_record(collection, {"_id": first["_id"]}) == 1
    assert len(stored) > 30
    assert sorted(stored) == sorted(server)


def test_upsert_and_update_follow_mongods_field_order():
    # $inc paths are applied in lexicographic order: items before totals on insert
    doc = upsert_document({"_id": b"k"}, {"$inc": {"totals.a": 1, "items.0101.a": 1}}, ObjectIds())
    assert list(doc) == ["_id", "items", "totals"] and doc["items"] == {"0101": {"a": 1}}
    apply_update(doc, {"$inc": {"totals.n": 1, "items.0102.a": 1}})
    assert doc == {"_id": b"k", "items": {"0101": {"a": 1}, "0102": {"a": 1}}, "totals": {"a": 1, "n": 1}}
    # no _id in the query: one is generated and put first; the query's fields by path (a std::map)
    doc = upsert_document({"key": "K", "date": 5}, {"$inc": {"a": 1}}, ObjectIds())
    assert list(doc) == ["_id", "date", "key", "a"] and isinstance(doc["_id"], bson.ObjectId)
    with pytest.raises(ValueError, match=r"update operator \$bit is not implemented"):
        apply_update({}, {"$bit": {"a": {"and": 1}}})


def test_memory_does_not_hold_the_whole_stream(tmp_path):
    """Python's allocations while growing hardly move with 4x the events (the events are read chunk by
    chunk, each batch's statements built and applied, the documents live in WiredTiger); an engine
    holding the stream's batches (list(load_batches(...))) measured 3.3x here."""
    peaks = []
    for run, per_year in enumerate((10, 100, 400)):   # the first run warms imports and templates up
        path = tmp_path / f"e{run}.parquet"
        write_engine_events(per_year, 3, "authors", path)
        tracemalloc.start()
        measure_version("appV4", path, tmp_path / f"wt{run}", chunk_rows=500)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    assert peaks[2] < 2 * peaks[1], peaks


def test_a_compiled_update_gives_each_document_its_own_pushed_value():
    """A statement's `u` is compiled once and applied to every document it is sent for: a pushed
    document must be each one's own, or a later change to one would show in the others."""
    from costlab.engine.update import compile_update

    push = compile_update({"$push": {"items": {"date": 1, "a": 1}}})
    first, second = push({"_id": 1}), push({"_id": 2, "items": [{"date": 0}]})
    first["items"][0]["a"] = 99
    assert second == {"_id": 2, "items": [{"date": 0}, {"date": 1, "a": 1}]}
    assert bson.encode(push({})) == bson.encode({"items": [{"date": 1, "a": 1}]})


def test_statements_with_a_positional_path_and_array_filters_are_applied_as_mongod_applies_them(
        tmp_path, test_db, real_mongod):
    """Through apply_statement (the engine lab's path): the document found by its _id, the rest of the
    query matched on it (the positional `$`'s index), arrayFilters passed on; the bytes are mongod's."""
    if not real_mongod:
        pytest.skip("the reference is mongod 6.0.5")
    from costlab.engine.connection import Engine, EngineSettings
    from costlab.engine.deployment import Deployment
    from costlab.engine.update import apply_statement, find_record

    statements = [
        {"q": {"_id": 7}, "u": {"$setOnInsert": {"items": [{"k": 1, "n": 0}, {"k": 2, "n": 0}]},
                                "$set": {"seen": 1}}, "upsert": True},
        {"q": {"_id": 7, "items.k": 2}, "u": {"$inc": {"items.$.n": 5}}, "upsert": True},
        {"q": {"_id": 7}, "u": {"$set": {"items.$[low].flag": True}}, "upsert": True,
         "arrayFilters": [{"low.n": {"$lt": 1}}]},
        {"q": {"_id": 7}, "u": [{"$set": {"total": {"$reduce": {
            "input": "$items", "initialValue": 0, "in": {"$add": ["$$value", "$$this.n"]}}}}}],
         "upsert": True},
    ]
    for s in statements:
        test_db.c.update_one(s["q"], s["u"], upsert=s["upsert"], array_filters=s.get("arrayFilters"))
    raw = test_db.get_collection("c", codec_options=bson.CodecOptions(document_class=RawBSONDocument))
    server = bytes(raw.find_one({"_id": 7}).raw)
    with Engine(tmp_path / "wt", EngineSettings(cache_mb=16, journal=False)) as engine:
        collection = Deployment(engine, "standalone", "none").collection("t.c", {})
        paths = [apply_statement(collection, bson.encode({**s, "multi": False}), ObjectIds())
                 for s in statements]
        stored = collection.records.read(find_record(collection, {"_id": 7}))
    assert paths[0] == "insert" and "insert" not in paths[1:]
    # {_id, items: [{k: 1, n: 0, flag: true}, {k: 2, n: 5}], seen: 1, total: 5} as mongod wrote it
    assert bytes(stored) == server
    assert bson.decode(server) == {"_id": 7, "items": [{"k": 1, "n": 0, "flag": True}, {"k": 2, "n": 5}],
                                   "seen": 1, "total": 5}
