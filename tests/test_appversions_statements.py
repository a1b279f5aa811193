"""The raw-BSON Bulk Upsert path (statements.py) against the reference path (UpdateOne + bulk_write)."""
from __future__ import annotations

from datetime import datetime, timezone

import bson
import polars as pl
import pytest
from bson.raw_bson import RawBSONDocument
from pymongo import WriteConcern

from costlab.appversions import statements as st
from costlab.appversions.events import generate_events
from costlab.appversions.versions import VERSIONS, get_version
from tests.conftest import each_version

# The stand-in answers appV1's upserts with a collection scan each; its first 200 events keep it
# fast and still update existing documents (17 (key, day) pairs repeat; the test asserts it).
APPV1_EVENTS = 200


def _events() -> pl.DataFrame:
    """~600 events: a dense first half-year and a late half-year; (key, day) pairs repeat, so upserts
    both create documents and update them (and buckets receive many events)."""
    events = generate_events(600, seed=3)
    return pl.concat([events.filter(pl.col("date") < datetime(2010, 7, 1, tzinfo=timezone.utc)),
                      events.filter(pl.col("date") >= datetime(2019, 7, 1, tzinfo=timezone.utc))])


@pytest.mark.parametrize("name", list(VERSIONS))
def test_statements_are_the_bytes_the_driver_sends_for_the_reference_ops(name):
    version = VERSIONS[name]
    events = generate_events(200, seed=2)   # 2,000 events over ten years: every status, many buckets
    raw = [bytes(doc.raw) for doc in st.update_statements(version, events)]
    assert raw == [st.driver_statement(op) for op in version.bulk_upsert_ops(events)]
    assert len(raw) == events.height and len(set(raw)) > events.height // 2


def _documents(collection) -> list[bytes]:
    """Every document as BSON, in a canonical order; a server-made ObjectId _id (appV2/appV3,
    whose filter has no _id) is dropped, everything else (field order, array order) is kept."""
    docs = []
    for doc in collection.find({}):
        if isinstance(doc.get("_id"), bson.ObjectId):
            doc.pop("_id")
        docs.append(bson.encode(doc))
    return sorted(docs)


@pytest.mark.parametrize("name", each_version(VERSIONS))
def test_both_paths_leave_identical_collections(name, test_db):
    version = get_version(name)
    events = _events()
    if name == "appV1":  # the stand-in scans for appV1's embedded-document _id (docs/appversions.md)
        events = events.head(APPV1_EVENTS)
    reference = test_db[f"{name}_reference"]
    if version.indexes:   # the product's indexes (appV2's {key, date}): the stand-in's upserts use them
        reference.create_indexes(version.indexes)   # rather than scanning the collection for each event
    for start in range(0, events.height, 250):
        reference.bulk_write(version.bulk_upsert_ops(events.slice(start, 250)), ordered=False)
    product = version.prepare_collection(test_db)
    counts = st.UpsertCounts()
    for statements in st.iter_statement_batches(version, events, batch_size=250, chunk_rows=400):
        counts += st.send_update_statements(product, statements, name)

    documents = _documents(product)
    assert documents == _documents(reference)
    assert counts.statements == counts.applied == events.height
    assert counts.upserted == len(documents) < events.height          # some events updated existing docs
    assert counts.modified == events.height - counts.upserted


def _status_unique_index_collision(test_db, version_name: str):
    """A collection where the first event's upsert must violate a unique index: a document that
    already holds the status counter the new document will get (appV4: `a: 1` for an approved event)."""
    version = get_version(version_name)
    collection = version.prepare_collection(test_db)
    collection.insert_one({"_id": b"someone else", "a": 1})
    collection.create_index("a", unique=True, sparse=True)
    events = generate_events(600, seed=3).filter(pl.col("status") == "approved").head(3)
    return collection, events


def test_a_write_error_in_the_reply_raises_naming_version_and_first_error(test_db):
    collection, events = _status_unique_index_collision(test_db, "appV4")
    statements = st.update_statements(get_version("appV4"), events)
    with pytest.raises(st.BulkUpsertError) as raised:
        st.send_update_statements(collection, statements, "appV4")
    message = str(raised.value)
    assert message.startswith("appV4: ")
    assert "of 3 upsert statements failed; first: statement 0, code 11000" in message
    assert "duplicate key" in message
    assert raised.value.version == "appV4"
    assert raised.value.reply["writeErrors"][0]["index"] == 0


def test_a_write_concern_error_raises(test_db, real_mongod):
    version = get_version("appV4")
    collection = version.prepare_collection(test_db).with_options(
        write_concern=WriteConcern(w=3, wtimeout=200))   # no deployment here has three data-bearing nodes
    statements = st.update_statements(version, generate_events(600, seed=3).head(5))
    with pytest.raises(st.BulkUpsertError, match="^appV4: ") as raised:
        st.send_update_statements(collection, statements, "appV4")
    if not real_mongod:   # a standalone mongod refuses w: 3 as a command error instead
        assert "write concern error" in str(raised.value)


def test_reply_counts_and_silent_shortfall():
    reply = {"n": 3, "nModified": 1, "upserted": [{"index": 0, "_id": 1}, {"index": 2, "_id": 2}], "ok": 1.0}
    assert st.check_update_reply(reply, "appV4", 3) == st.UpsertCounts(statements=3, applied=3, modified=1,
                                                                       upserted=2)
    with pytest.raises(st.BulkUpsertError, match="appV4: the server applied 2 of 3"):
        st.check_update_reply({"n": 2, "nModified": 2, "ok": 1.0}, "appV4", 3)
    errors = {"n": 1, "ok": 1.0, "writeErrors": [{"index": 2, "code": 2, "errmsg": "late"},
                                                 {"index": 1, "code": 11000, "errmsg": "dup"}]}
    with pytest.raises(
        st.BulkUpsertError, match="2 of 3 upsert statements failed; first: statement 1, code 11000: dup"
    ):
        st.check_update_reply(errors, "appV6R1", 3)


def test_large_batches_are_split_into_commands_that_fit(test_db, monkeypatch):
    version = get_version("appV6R0")
    events = _events().head(300)
    statements = st.update_statements(version, events)
    size = len(statements[0].raw) + st.ARRAY_ELEMENT_OVERHEAD
    monkeypatch.setattr(st, "MAX_STATEMENT_BYTES_PER_COMMAND", 40 * size)
    parts = list(st._command_slices(statements))
    assert [len(part) for part in parts][:-1] == [40] * (len(parts) - 1)
    assert [doc for part in parts for doc in part] == statements
    monkeypatch.setattr(st, "MAX_WRITE_BATCH_STATEMENTS", 7)
    assert max(len(part) for part in st._command_slices(statements)) == 7
    collection = version.prepare_collection(test_db)
    counts = st.send_update_statements(collection, statements, version.name)
    assert counts.statements == counts.applied == 300
    assert counts.upserted == collection.count_documents({})


def test_bad_events_are_refused_with_the_bad_value():
    version = get_version("appV2")   # a string key: the reference path would pass any string through
    good = generate_events(600, seed=3).head(3)
    with pytest.raises(ValueError, match="64 hexadecimal digits, got 'NOT-HEX'"):
        st.update_statements(version, good.with_columns(pl.Series("key", ["NOT-HEX"] * 3)))
    with pytest.raises(ValueError, match="unknown status 'lost'; allowed: approved"):
        st.update_statements(version, good.with_columns(pl.Series("status", ["approved", "lost", "pending"])))
    with pytest.raises(ValueError, match="lack columns"):
        st.update_statements(version, good.drop("date"))


def test_statements_are_raw_documents_the_driver_copies():
    statements = st.update_statements(get_version("appV5R1"), generate_events(600, seed=3).head(4))
    assert all(isinstance(doc, RawBSONDocument) for doc in statements)
    command = bson.encode({"update": "appV5R1", "updates": statements, "ordered": False})
    assert all(doc.raw in command for doc in statements)
    assert bson.decode(command)["updates"][0]["upsert"] is True
