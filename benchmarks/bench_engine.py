"""The engine lab's harness against bare WiredTiger making the same calls.

Target (issue 23): the harness (costlab/engine/ and the studies' engine code) within 1.1x of a
loop that calls WiredTiger's Python API directly for the same work, in CPU seconds. Both sides
open the same connection (mongod's settings, the same compressor extensions) and make the same
cursor calls; each pair is checked to leave the same bytes (journal bytes / table contents)
before it is timed.

    python benchmarks/bench_engine.py [pushes] [orders]   # default 4000 standalone $push, 2000 16 KB orders
"""
from __future__ import annotations

import shutil  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

import bson  # noqa: E402
import common

from costlab.arraygrowth.engine import NAMESPACE, run_workload  # noqa: E402
from costlab.arraygrowth.workloads import timestamp  # noqa: E402
from costlab.docsize.engine import EPOCH, load_collection  # noqa: E402
from costlab.docsize.generate import EPOCH_MS, generate_bson_batches, order_fields  # noqa: E402
from costlab.engine import stats  # noqa: E402
from costlab.engine.bsonbytes import append_int64_to_last_field  # noqa: E402
from costlab.engine.connection import Engine, EngineSettings  # noqa: E402
from costlab.engine.deployment import table_name  # noqa: E402
from costlab.engine.index import index_config  # noqa: E402
from costlab.engine.keys import encode_record_id  # noqa: E402
from costlab.engine.records import record_store_config  # noqa: E402
from costlab.engine.wt import compressor_or_nearest  # noqa: E402

SNAPPY = compressor_or_nearest("snappy")[0]
SETTINGS = EngineSettings(cache_mb=1024, journal_compressor=SNAPPY, block_compressor=SNAPPY)


def bare_push(n: int, home: Path) -> int:
    """The standalone $push workload as direct WiredTiger calls: per push one transaction with
    search + set_value + insert on the record (mongod's full update on a logged table)."""
    engine = Engine(home, SETTINGS)
    try:
        session = engine.session
        uri = f"table:{table_name(NAMESPACE)}"
        session.create(uri, record_store_config(SNAPPY, True))
        session.create(f"table:{table_name(NAMESPACE, '_id_')}", index_config(True))
        records = session.open_cursor(uri)
        id_index = session.open_cursor(f"table:{table_name(NAMESPACE, '_id_')}")
        from costlab.arraygrowth.engine import _job_document
        job = _job_document()
        current = bson.encode(job)
        session.begin_transaction()
        records[1] = current
        id_index[b"\x64" + job["_id"].binary + b"\x04"] = encode_record_id(1)
        session.commit_transaction()
        before = stats.snapshot(session)
        for i in range(n):
            current = append_int64_to_last_field(current, i, int(timestamp(i)))
            session.begin_transaction()
            records.set_key(1)
            records.search()
            records.set_value(current)
            records.insert()
            records.reset()
            session.commit_transaction()
        return stats.delta(before, stats.snapshot(session))["log_bytes"]
    finally:
        engine.close()


def bare_docsize_load(size_kb: int, orders: int, home: Path) -> int:
    """docsize's load as direct calls: records and both index entries, 64 documents a transaction."""
    from datetime import timedelta

    from costlab.engine.keys import encode_key_and_type_bits
    engine = Engine(home, EngineSettings(cache_mb=1024, journal_compressor=SNAPPY, block_compressor=SNAPPY,
                                         journal=False))
    try:
        session = engine.session
        ns = f"costlab_docsize.orders_{size_kb}k"
        names = (table_name(ns), table_name(ns, "_id_"), table_name(ns, "createdAt_1_total_1"))
        session.create(f"table:{names[0]}", record_store_config(SNAPPY, True))
        for name in names[1:]:
            session.create(f"table:{name}", index_config(True))
        records, id_index, index = (session.open_cursor(f"table:{n}") for n in names)
        fields = order_fields(orders, 42, 20)
        created, totals, ids = fields.created_at_ms.tolist(), fields.total.tolist(), fields.ids
        record_id = 0
        for batch in generate_bson_batches(size_kb, orders, 42, customers=20):
            for begin in range(0, len(batch), 64):
                session.begin_transaction()
                for document in batch[begin:begin + 64]:
                    record_id += 1
                    position = record_id - 1
                    rid = encode_record_id(record_id)
                    records[record_id] = document
                    id_index[b"\x64" + ids[position].tobytes() + b"\x04"] = rid
                    key, type_bits = encode_key_and_type_bits(
                        (EPOCH + timedelta(milliseconds=created[position] - EPOCH_MS), totals[position]))
                    index[key + rid] = type_bits
                session.commit_transaction()
        session.checkpoint()
        return record_id
    finally:
        engine.close()


def harness_docsize_load(size_kb: int, orders: int, home: Path) -> int:
    engine = Engine(home, EngineSettings(cache_mb=1024, journal_compressor=SNAPPY, block_compressor=SNAPPY,
                                         journal=False))
    try:
        load_collection(engine, size_kb, orders, 42, 20, SNAPPY)
        return orders
    finally:
        engine.close()


def _table_contents(home: Path) -> dict[str, list]:
    """Every key and value of the docsize tables (what both loads must leave)."""
    engine = Engine(home, SETTINGS, fresh=False)
    try:
        found = {}
        for path in sorted(home.glob("costlab_docsize*.wt")):
            cursor = engine.session.open_cursor(f"table:{path.stem}")
            rows = []
            while cursor.next() == 0:
                rows.append((cursor.get_key(), cursor.get_value()))
            cursor.close()
            found[path.stem] = rows
        return found
    finally:
        engine.close()


def main(pushes: int = 4000, orders: int = 2000) -> None:
    common.header(f"engine lab harness vs bare WiredTiger ({common.machine()}; compressor {SNAPPY})")
    scratch = Path(tempfile.mkdtemp(prefix="bench-engine-"))
    try:
        harness_log = run_workload("standalone", "push", pushes, SETTINGS, scratch)["log_bytes"]
        bare_log = bare_push(pushes, scratch / "bare")
        # the same calls leave the same journal, to a log record or two: two runs of either side already
        # differ
        # by 128-256 B (WiredTiger's own log-flush records), so "same" is within 1 KB
        assert abs(harness_log - bare_log) <= 1024, (harness_log, bare_log)
        harness = common.best_of_cpu(lambda: run_workload("standalone", "push", pushes, SETTINGS, scratch), 2)
        bare = common.best_of_cpu(lambda: bare_push(pushes, scratch / "bare"), 2)
        common.result(f"standalone $push x{pushes}: harness / bare CPU", harness.cpu_s / bare.cpu_s, "x", 1.1,
                      at_least=False, note=f"harness {harness.cpu_s:.2f} s, bare {bare.cpu_s:.2f} s CPU; "
                                           f"journal {bare_log / 2**20:.1f} MiB both")
        harness_load = common.best_of_cpu(lambda: harness_docsize_load(16, orders, scratch / "h"), 2)
        bare_load = common.best_of_cpu(lambda: bare_docsize_load(16, orders, scratch / "b"), 2)
        same = _table_contents(scratch / "h") == _table_contents(scratch / "b")
        common.result(
            f"docsize load, {orders} x 16 KB orders: harness / bare CPU",
            harness_load.cpu_s / bare_load.cpu_s,
            "x",
            1.1,
            at_least=False,
            note=f"harness {harness_load.cpu_s:.2f} s, bare {bare_load.cpu_s:.2f} s CPU; same keys: {same}",
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
