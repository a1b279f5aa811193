"""The two deployments' storage rules and one WiredTiger transaction per write.

Logging (verified in mongod's source, src/mongo/db/storage/wiredtiger/wiredtiger_util.cpp,
WiredTigerUtil::useTableLogging): on a standalone every table is logged; on a replica set
only tables of the `local` database are logged (the oplog among them) except
local.replset.minvalid, and every replicated collection and its indexes are not logged.
A write is one transaction (mongod's WriteUnitOfWork): the record, its index entries and,
on a replica set, the oplog entry; WiredTiger writes one log record per committed
transaction holding the logged tables' operations, so a standalone logs the record and the
_id index entry together and a replica set logs the oplog insert only.

On a replica set each write also commits at its timestamp, moves the stable and oldest timestamps,
overwrites the oplog truncate point at each journal flush and upserts its session record: what
mongod does per write, and why, is in costlab.engine.replset.
"""
from __future__ import annotations

from contextlib import contextmanager
from datetime import datetime, timezone
from typing import Iterator

import bson
from bson import Int64, Timestamp

from costlab.engine.index import IndexTable
from costlab.engine.oplog import DEFAULT_LSID, OPLOG_NS, OplogWriter
from costlab.engine.records import RecordStore
from costlab.engine.replset import (
    SESSIONS_NS,
    TRUNCATE_POINT_NS,
    ReplicaSetSettings,
    oldest_for,
    timestamp_of,
)

PROFILES = ("standalone", "replset-1")


def check_profile(profile: str) -> str:
    if profile not in PROFILES:
        raise ValueError(f"unknown engine profile {profile!r}; allowed: {', '.join(PROFILES)}")
    return profile


def table_logged(profile: str, ns: str) -> bool:
    """Whether mongod logs the tables of namespace `ns` (db.collection) in this deployment."""
    if check_profile(profile) == "standalone":
        return True
    db, _, coll = ns.partition(".")
    if db != "local":
        return False
    return coll != "replset.minvalid"


def table_name(ns: str, suffix: str = "") -> str:
    return (ns.replace(".", "_") + (f"__{suffix}" if suffix else "")).replace("$", "_")


def _timestamp(ts: int) -> Timestamp:
    return Timestamp(ts >> 32, ts & 0xFFFFFFFF)


class Deployment:
    """A standalone or a one-node replica set on one engine connection.

    `replica_set` (a replica set only; default ReplicaSetSettings()) models what the primary does per
    write besides the write: commit timestamps, the stable and oldest timestamps, checkpoints, and
    with `side_tables` the oplog entry, the truncate-point overwrite per journal flush and the
    retryable write's session record (costlab.engine.replset)."""

    def __init__(self, engine, profile: str, block_compressor: str, retryable_writes: bool = True,
                 replica_set: ReplicaSetSettings | None = None) -> None:
        self.engine = engine
        self.profile = check_profile(profile)
        self.replica_set = profile != "standalone"
        self.settings = (replica_set or ReplicaSetSettings()) if self.replica_set else None
        self.block_compressor = block_compressor
        side_tables = self.replica_set and self.settings.side_tables
        # Drivers send retryable-write fields only to replica sets (a standalone rejects txnNumber).
        self.retryable_writes = retryable_writes and side_tables
        self.oplog = (RecordStore(engine, table_name(OPLOG_NS), block_compressor,
                                  logged=table_logged(profile, OPLOG_NS))
                      if side_tables else None)
        self.writes = 0               # commits so far: the clock of the commit timestamps
        self.unflushed = 0            # writes since the last journal flush
        self.stable: int | None = None
        self.oldest: int | None = None
        self.counts = {"journal_flushes": 0, "truncate_point_writes": 0, "session_writes": 0,
                       "checkpoints": 0, "oldest_moves": 0}
        self._truncate_point = None
        self._sessions = None
        if side_tables:
            # The truncate point exists from step-up on (setOplogTruncateAfterPointToTopOfOplog):
            # created and inserted before any measured write.
            self._truncate_point = EngineCollection(self, TRUNCATE_POINT_NS, {})
            with engine.transaction():
                self._truncate_point._insert_one(self._truncate_point_document(0))
        if self.retryable_writes:
            self._sessions = EngineCollection(self, SESSIONS_NS, {})
            self._session_record: int | None = None

    def collection(self, ns: str, indexes: dict[str, tuple[str, ...]] | None = None) -> "EngineCollection":
        return EngineCollection(self, ns, indexes or {})

    def reopen_cursors(self) -> None:
        if self.oplog is not None:
            self.oplog.reopen_cursor()
        for internal in (self._truncate_point, self._sessions):
            if internal is not None:
                internal.reopen_cursors(deployment=False)

    # ---- one write ---------------------------------------------------------------------------

    @contextmanager
    def write(self, documents: int = 1) -> Iterator[list[int]]:
        """One write's WriteUnitOfWork: yields the commit timestamps of its `documents` operations
        (empty on a standalone, which does not timestamp writes); the caller stamps each operation
        after the first with `engine.stamp`. On a replica set the session record is upserted in the
        same transaction, and after the commit comes what follows a write (`_after_commit`)."""
        if not self.replica_set:
            with self.engine.transaction():
                yield []
            return
        stamps = [timestamp_of(self.writes + k, self.settings) for k in range(documents)]
        with self.engine.transaction(stamps[0]):
            yield stamps
            if self._sessions is not None:
                self._upsert_session_record(stamps[-1])
        self.writes += documents
        self.unflushed += documents
        self._after_commit(stamps[-1])

    def _after_commit(self, last: int) -> None:
        settings = self.settings
        if self.unflushed >= settings.writes_per_flush:
            self.journal_flush(last)
        every = settings.writes_per_checkpoint
        if every and self.writes // every > self.counts["checkpoints"]:
            # Checkpointer::run every syncPeriodSecs: a stable checkpoint (WiredTiger checkpoints at
            # the stable timestamp once one is set)
            self.engine.checkpoint()
            self.counts["checkpoints"] += 1

    def journal_flush(self, durable: int) -> None:
        """JournalFlusher::_flushJournal: the journal listener's token first
        (refreshOplogTruncateAfterPointIfPrimary overwrites the truncate point with the all-durable
        timestamp, here the newest commit), then the flush; once durable the write is majority-
        committed on one node, so stable follows it and oldest trails stable by the history window
        (setStableTimestamp -> setOldestTimestampFromStable). The log flush itself is not made here:
        WiredTiger pads and counts each log record as it is written, so the bytes do not depend on
        it, and a sync per write would only cost time (docs/engine-lab.md)."""
        self.unflushed = 0
        self.counts["journal_flushes"] += 1
        if self._truncate_point is not None:
            # _upsertOplogTruncateAfterPointDocument, its own untimestamped WriteUnitOfWork: 8.x's
            # updateRecord of the whole document, or 6.0's in-place $set (replset.TRUNCATE_POINT_WRITES)
            document = bson.encode(self._truncate_point_document(durable))
            with self.engine.transaction():
                if self.settings.truncate_point_write == "in_place":
                    self._truncate_point.records.modify_bytes(1, document, len(document) - 9, 8)
                else:
                    self._truncate_point.records.update(1, document)
            self.counts["truncate_point_writes"] += 1
        self.stable = durable
        oldest = oldest_for(durable, self.settings)
        if oldest is not None and (self.oldest is None or oldest > self.oldest):
            self.oldest = oldest
            self.counts["oldest_moves"] += 1
            self.engine.set_timestamps(durable, oldest)
        else:
            self.engine.set_timestamps(durable)

    def flush_pending(self) -> None:
        """The last command's journal flush, for writes still waiting on one (a last command shorter
        than writes_per_command): it waits for its write concern like every other, and a checkpoint
        (closing takes one) writes only what stable has reached."""
        if self.replica_set and self.unflushed:
            self.journal_flush(timestamp_of(self.writes - 1, self.settings))

    @staticmethod
    def _truncate_point_document(ts: int) -> dict:
        """ReplicationConsistencyMarkersImpl::_setOplogTruncateAfterPoint's document (71 bytes)."""
        return {"_id": "oplogTruncateAfterPoint", "oplogTruncateAfterPoint": _timestamp(ts)}

    def _upsert_session_record(self, ts: int) -> None:
        """TransactionParticipant's updateSessionEntry: the session's config.transactions document,
        inserted at the session's first write, then overwritten through updateRecord (not logged: a
        replicated collection; timestamped with the write)."""
        document = {"_id": DEFAULT_LSID, "txnNum": Int64(self.writes + 1),
                    "lastWriteOpTime": {"ts": _timestamp(ts), "t": Int64(1)},
                    "lastWriteDate": datetime.fromtimestamp(ts >> 32, tz=timezone.utc)}
        if self._session_record is None:
            self._session_record = self._sessions._insert_one(document)
        else:
            self._sessions.records.update(self._session_record, bson.encode(document))
        self.counts["session_writes"] += 1

    def describe(self) -> dict:
        """The deployment as the rows and provenance record it."""
        out = {"profile": self.profile, "retryable_writes": self.retryable_writes}
        if self.settings is not None:
            out |= {"replica_set": self.settings.describe(), "writes": self.writes, **self.counts}
        return out


class EngineCollection:
    """A collection's record store, its _id index and secondary indexes, written like mongod writes them."""

    def __init__(self, deployment: Deployment, ns: str, indexes: dict[str, tuple[str, ...]]) -> None:
        self.deployment = deployment
        self.ns = ns
        engine, logged = deployment.engine, table_logged(deployment.profile, ns)
        self.records = RecordStore(engine, table_name(ns), deployment.block_compressor, logged)
        self.indexes = {"_id_": IndexTable(engine, table_name(ns, "_id_"), ("_id",), logged, id_index=True)}
        for name, fields in indexes.items():
            self.indexes[name] = IndexTable(engine, table_name(ns, name), tuple(fields), logged)
        # the oplog holds replicated writes only: none of the `local` database's
        replicated = not ns.startswith("local.")
        self.oplog_writer = (OplogWriter(ns, session_fields=deployment.retryable_writes)
                             if deployment.oplog is not None and replicated and ns != SESSIONS_NS else None)

    @property
    def session(self):
        return self.deployment.engine.session

    def reopen_cursors(self, deployment: bool = True) -> None:
        self.records.reopen_cursor()
        for index in self.indexes.values():
            index.reopen_cursor()
        if deployment:
            self.deployment.reopen_cursors()

    def _insert_one(self, document: dict, encoded: bytes | None = None, ts: int | None = None) -> int:
        record_id = self.records.insert(encoded if encoded is not None else bson.encode(document))
        for index in self.indexes.values():
            index.insert(document, record_id)
        if self.oplog_writer is not None:
            key, entry = self.oplog_writer.insert(document, ts)
            self.deployment.oplog.insert(entry, key)
        return record_id

    def insert(self, document: dict, encoded: bytes | None = None) -> int:
        """insertOne: one transaction. `document` must have its _id."""
        with self.deployment.write() as stamps:
            return self._insert_one(document, encoded, stamps[0] if stamps else None)

    def insert_batch(self, documents: list[dict], encoded: list[bytes] | None = None) -> list[int]:
        """insertMany's batched path: several documents in one transaction (used for loading), each
        with its own timestamp on a replica set."""
        record_ids = []
        with self.deployment.write(len(documents)) as stamps:
            for i, d in enumerate(documents):
                if i and stamps:
                    self.deployment.engine.stamp(stamps[i])
                record_ids.append(self._insert_one(d, encoded[i] if encoded is not None else None,
                                                   stamps[i] if stamps else None))
        return record_ids

    def update(self, record_id: int, document_id: object, new: bytes, oplog_o: dict,
               old: bytes | None = None) -> str:
        """updateOne on an unindexed field: one transaction with the record update (mongod's
        modify rule) and, on a replica set, the oplog entry holding `oplog_o` (the $v:2 diff).
        Returns the record-store path: 'modify', 'reserve' or 'update'."""
        with self.deployment.write() as stamps:
            path = self.records.update(record_id, new, old)
            if self.oplog_writer is not None:
                key, entry = self.oplog_writer.update(document_id, oplog_o, stamps[0])
                self.deployment.oplog.insert(entry, key)
        return path
