"""The two deployments' storage rules and one WiredTiger transaction per write.

Logging (verified in mongod's source, src/mongo/db/storage/wiredtiger/wiredtiger_util.cpp,
WiredTigerUtil::useTableLogging): on a standalone every table is logged; on a replica set
only tables of the `local` database are logged (the oplog among them) except
local.replset.minvalid, and every replicated collection and its indexes are not logged.
A write is one transaction (mongod's WriteUnitOfWork): the record, its index entries and,
on a replica set, the oplog entry; WiredTiger writes one log record per committed
transaction holding the logged tables' operations, so a standalone logs the record and the
_id index entry together and a replica set logs the oplog insert only.
"""
from __future__ import annotations

import bson

from costlab.engine.index import IndexTable
from costlab.engine.oplog import OPLOG_NS, OplogWriter
from costlab.engine.records import RecordStore

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


class Deployment:
    """A standalone or a one-node replica set on one engine connection."""

    def __init__(self, engine, profile: str, block_compressor: str, retryable_writes: bool = True) -> None:
        self.engine = engine
        self.profile = check_profile(profile)
        self.replica_set = profile != "standalone"
        self.block_compressor = block_compressor
        # Drivers send retryable-write fields only to replica sets (a standalone rejects txnNumber).
        self.retryable_writes = retryable_writes and self.replica_set
        self.oplog = (RecordStore(engine, table_name(OPLOG_NS), block_compressor,
                                  logged=table_logged(profile, OPLOG_NS))
                      if self.replica_set else None)

    def collection(self, ns: str, indexes: dict[str, tuple[str, ...]] | None = None) -> "EngineCollection":
        return EngineCollection(self, ns, indexes or {})

    def reopen_cursors(self) -> None:
        if self.oplog is not None:
            self.oplog.reopen_cursor()


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
        self.oplog_writer = (OplogWriter(ns, session_fields=deployment.retryable_writes)
                             if deployment.replica_set else None)

    @property
    def session(self):
        return self.deployment.engine.session

    def reopen_cursors(self) -> None:
        self.records.reopen_cursor()
        for index in self.indexes.values():
            index.reopen_cursor()
        self.deployment.reopen_cursors()

    def _insert_one(self, document: dict, encoded: bytes | None = None) -> int:
        record_id = self.records.insert(encoded if encoded is not None else bson.encode(document))
        for index in self.indexes.values():
            index.insert(document, record_id)
        if self.oplog_writer is not None:
            key, entry = self.oplog_writer.insert(document)
            self.deployment.oplog.insert(entry, key)
        return record_id

    def insert(self, document: dict, encoded: bytes | None = None) -> int:
        """insertOne: one transaction. `document` must have its _id."""
        with self.deployment.engine.transaction():
            return self._insert_one(document, encoded)

    def insert_batch(self, documents: list[dict], encoded: list[bytes] | None = None) -> list[int]:
        """insertMany's batched path: several documents in one transaction (used for loading)."""
        with self.deployment.engine.transaction():
            return [self._insert_one(d, encoded[i] if encoded is not None else None)
                    for i, d in enumerate(documents)]

    def update(self, record_id: int, document_id: object, new: bytes, oplog_o: dict,
               old: bytes | None = None) -> str:
        """updateOne on an unindexed field: one transaction with the record update (mongod's
        modify rule) and, on a replica set, the oplog entry holding `oplog_o` (the $v:2 diff).
        Returns the record-store path: 'modify', 'reserve' or 'update'."""
        with self.deployment.engine.transaction():
            path = self.records.update(record_id, new, old)
            if self.oplog_writer is not None:
                key, entry = self.oplog_writer.update(document_id, oplog_o)
                self.deployment.oplog.insert(entry, key)
        return path
