"""Oplog entries: what mongod writes to local.oplog.rs for each write on a replica set.

Fields (mongod's OplogEntry / DurableReplOperation): `op` ('i' insert, 'u' update), `ns`,
`ui` (the collection UUID), `o` (the inserted document, or for an update the $v:2 diff),
`o2` (the _id of the document), `ts` (Timestamp), `t` (term), `v` (2, a BSON long), `wall` (date); verified
in mongod's
src/mongo/db/repl/oplog_entry.idl (DurableReplOperation, OplogEntryBase).
A retryable write (drivers retry writes by default since MongoDB 4.2 / driver spec; the
article's Rust demo uses the driver's default) also carries the session fields `lsid`
({id: UUID, uid: 32-byte SHA-256 of the user}), `txnNumber`, `stmtId` and `prevOpTime`
({ts, t}). Those fields are the difference between the replica-set rows without and with
retryable writes; see docs/engine-lab.md.

A $push of one element is logged as the $v:2 update diff
{$v: 2, diff: {s<array>: {a: true, u<index>: <value>}}} — an array sub-diff (`s` prefix,
`a: true` header) updating the new index (`u` prefix), as mongod's doc_diff serialisation
writes it — not the array.
"""
from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone

import bson
from bson import Binary, Int64, Timestamp
from bson.binary import UUID_SUBTYPE

OPLOG_NS = "local.oplog.rs"
# The driver's session: {id: a random (version 4) UUID, uid: SHA-256 of the user} (the same in the oplog and
# config.transactions). With no authentication the user is empty: mongod's uid is then SHA-256 of no bytes
# (logical_session_id_helpers.cpp, kNoAuthDigest: e3b0c442..., read back from mongod 6.0.5's oplog). Both
# are incompressible, as on a server: a uid of zeros let the journal compressor shrink the lab's entries
# below mongod's (a $push's entry fitted 384 padded bytes in the lab and took 512 on mongod).
_SESSION_ID = uuid.UUID(bytes=hashlib.sha256(b"costlab session").digest()[:16], version=4)
DEFAULT_LSID = {"id": Binary(_SESSION_ID.bytes, UUID_SUBTYPE), "uid": Binary(hashlib.sha256(b"").digest(), 0)}


def push_diff(array_field: str, index: int, value: object) -> dict:
    """The $v:2 diff of appending `value` at position `index` of `array_field`."""
    return {"$v": 2, "diff": {f"s{array_field}": {"a": True, f"u{index}": value}}}


@dataclass
class OplogWriter:
    """Builds entries with increasing timestamps; `session_fields` adds a retryable write's fields."""
    ns: str
    session_fields: bool = False
    term: int = 1
    # a collection's UUID is random (version 4) on mongod: so here, from the namespace
    collection_uuid: Binary | None = None
    lsid: dict = field(default_factory=lambda: dict(DEFAULT_LSID))
    seconds: int = 1_784_106_933
    counter: int = 0
    txn_number: int = 0

    def __post_init__(self) -> None:
        if self.collection_uuid is None:
            digest = hashlib.sha256(self.ns.encode()).digest()[:16]
            self.collection_uuid = Binary(uuid.UUID(bytes=digest, version=4).bytes, UUID_SUBTYPE)

    def next_ts(self) -> Timestamp:
        self.counter += 1
        return Timestamp(self.seconds, self.counter)

    def _entry(self, op: str, o: dict, o2: dict | None, commit_ts: int | None = None) -> tuple[int, bytes]:
        """`commit_ts`: the write's commit timestamp (WiredTiger's uint64) when the deployment keeps the
        clock; else the writer's own counter."""
        ts = self.next_ts() if commit_ts is None else Timestamp(commit_ts >> 32, commit_ts & 0xFFFFFFFF)
        # Field order of mongod's OplogEntryBase: session info, the operation, the optime, then
        # v (a safeInt64: BSON long), wall and prevOpTime.
        entry: dict = {}
        if self.session_fields:
            self.txn_number += 1
            entry |= {"lsid": self.lsid, "txnNumber": Int64(self.txn_number)}
        entry |= {"op": op, "ns": self.ns, "ui": self.collection_uuid, "o": o}
        if o2 is not None:
            entry["o2"] = o2
        if self.session_fields:
            entry["stmtId"] = 0
        entry |= {"ts": ts, "t": Int64(self.term), "v": Int64(2),
                  "wall": datetime.fromtimestamp(self.seconds, tz=timezone.utc)}
        if self.session_fields:
            # the previous write of the same transaction number: none for a one-statement retryable write,
            # each its own txnNumber (TransactionParticipant resets the last write optime with a new
            # txnNumber), so the null optime {ts: Timestamp(0, 0), t: -1}, as mongod 6.0.5's oplog holds
            # (an optime of the session's previous write made the lab's $push entries compressible)
            entry["prevOpTime"] = {"ts": Timestamp(0, 0), "t": Int64(-1)}
        # the oplog's record id is the timestamp as an int64 (secs << 32 | inc)
        return (ts.time << 32) | ts.inc, bson.encode(entry)

    def insert(self, document: dict, commit_ts: int | None = None) -> tuple[int, bytes]:
        return self._entry("i", document, {"_id": document["_id"]}, commit_ts)

    def update(self, document_id: object, diff: dict, commit_ts: int | None = None) -> tuple[int, bytes]:
        return self._entry("u", diff, {"_id": document_id}, commit_ts)
