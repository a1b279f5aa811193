"""A record store: one WiredTiger table per collection, key = record id (int64), value = BSON.

Table settings follow mongod's WiredTigerRecordStore::generateCreateString
(`type=file,memory_page_max=10m,split_pct=90,leaf_value_max=64MB,checksum=on,
block_compressor=<collection compressor>,key_format=q,value_format=u`, plus
`log=(enabled=…)` from the deployment's logging rule).

The update rule (verified in mongod's source, src/mongo/db/storage/wiredtiger/
wiredtiger_record_store.cpp, WiredTigerRecordStore::updateRecord): mongod writes a delta
with WT_CURSOR::modify instead of the whole new document only when
  * the table is not logged (its comment: WiredTiger's recovery is not trusted with
    non-idempotent operations), and
  * the new document is longer than 1024 bytes (kMinLengthForDiff), and
  * new length <= old length + new length / 10 (kMaxDiffBytes = len / 10), and
  * wiredtiger_calc_modify(old, new, maxdiff = len / 10, at most 16 entries) succeeds;
    with zero entries it calls reserve() instead of modify().
Otherwise it writes the whole new document. The call sequence is mongod's: set the record id
and search() (which positions the cursor and gives the old value), then modify() / reserve(),
or set_value() and insert() on that overwrite cursor (wiredTigerCursorInsert) — so a full
update counts a search and an insert call in WiredTiger's statistics, not an update call.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from costlab.engine.cursors import check_formats, set_key_int, set_value_bytes, value_bytes
from costlab.engine.wt import NO_COMPRESSOR, check_compressor

MIN_LENGTH_FOR_DIFF = 1024   # kMinLengthForDiff
MAX_MODIFY_ENTRIES = 16      # kMaxEntries
MAX_DIFF_DIVISOR = 10        # kMaxDiffBytes = len / 10


def record_store_config(block_compressor: str, logged: bool) -> str:
    compressor = "" if block_compressor == NO_COMPRESSOR else block_compressor
    return ("type=file,memory_page_max=10m,split_pct=90,leaf_value_max=64MB,checksum=on,"
            f"block_compressor={compressor},key_format=q,value_format=u,"
            f"log=(enabled={'true' if logged else 'false'})")


def modify_allowed(logged: bool, old_length: int, new_length: int) -> bool:
    """mongod's pre-check before it even tries to compute a delta (see module docstring)."""
    return (not logged and new_length > MIN_LENGTH_FOR_DIFF
            and new_length <= old_length + new_length // MAX_DIFF_DIVISOR)


@dataclass
class UpdateCounts:
    modify: int = 0        # WT_CURSOR::modify with a delta
    reserve: int = 0       # no bytes changed
    update: int = 0        # whole document
    by_reason: dict[str, int] = field(default_factory=dict)

    def note(self, reason: str) -> None:
        self.by_reason[reason] = self.by_reason.get(reason, 0) + 1


class RecordStore:
    """A collection's table. Calls must run inside the caller's transaction (see deployment)."""

    def __init__(self, engine, name: str, block_compressor: str, logged: bool, create: bool = True) -> None:
        self.engine = engine
        self.uri = f"table:{name}"
        self.logged = logged
        self.block_compressor = check_compressor(block_compressor, f"block compressor of {name}")
        if create:
            engine.session.create(self.uri, record_store_config(self.block_compressor, logged))
        self.reopen_cursor()
        self.next_id = 1
        self.counts = UpdateCounts()

    def reopen_cursor(self) -> None:
        self.cursor = self.engine.session.open_cursor(self.uri)
        check_formats(self.cursor, ("q",))

    def insert(self, document: bytes, record_id: int | None = None) -> int:
        """Insert BSON bytes under the next record id (mongod: a monotonically increasing int64),
        or under `record_id` (the oplog's ids are its timestamps)."""
        if record_id is None:
            record_id = self.next_id
            self.next_id += 1
        set_key_int(self.cursor, record_id)
        set_value_bytes(self.cursor, document)
        self.cursor.insert()
        return record_id

    def read(self, record_id: int) -> bytes:
        set_key_int(self.cursor, record_id)
        if self.cursor.search() != 0:
            raise KeyError(f"record {record_id} not in {self.uri}")
        value = value_bytes(self.cursor)
        self.cursor.reset()
        return value

    def seek_exact(self, record_id: int) -> bytes:
        """The record, the cursor left positioned on its page, as mongod's record store cursor
        leaves it (WiredTigerRecordStoreCursorBase::seekExact searches and returns the value in the
        cursor's page; only save() resets it). A FETCH over many records keeps each page pinned
        until the next search, so eviction cannot take a page between two of its documents; the
        caller resets the cursor when its batch ends (`end_seeks`)."""
        set_key_int(self.cursor, record_id)
        if self.cursor.search() != 0:
            self.cursor.reset()
            raise KeyError(f"record {record_id} not in {self.uri}")
        return value_bytes(self.cursor)

    def end_seeks(self) -> None:
        """mongod's save(): release the page the last seek_exact left pinned."""
        self.cursor.reset()

    def modify_bytes(self, record_id: int, new: bytes, offset: int, size: int) -> None:
        """An in-place update's damages, as mongod's WiredTigerRecordStore::doUpdateWithDamages writes them:
        search, then WT_CURSOR::modify replacing `size` bytes at `offset` with new[offset:offset + size]
        (one damage; the record keeps its length)."""
        cursor = self.cursor
        set_key_int(cursor, record_id)
        if cursor.search() != 0:
            raise KeyError(f"record {record_id} not in {self.uri}")
        cursor.modify([self.engine.wt.Modify(new[offset:offset + size], offset, size)])
        self.counts.modify += 1
        cursor.reset()

    def update(self, record_id: int, new: bytes, old: bytes | None = None) -> str:
        """Replace the record with `new` the way mongod does; returns 'modify', 'reserve' or 'update'
        (the whole document, written with insert()). `old`, when the caller has it, saves copying
        the stored value out; the search is made either way, as mongod makes it."""
        wt, cursor = self.engine.wt, self.cursor
        set_key_int(cursor, record_id)
        if cursor.search() != 0:
            raise KeyError(f"record {record_id} not in {self.uri}")
        if old is None:
            old = value_bytes(cursor)
        length = len(new)
        path = "update"
        if modify_allowed(self.logged, len(old), length):
            max_diff = length // MAX_DIFF_DIVISOR
            try:
                entries = wt.wiredtiger_calc_modify(self.engine.session, old, new, max_diff,
                                                    MAX_MODIFY_ENTRIES)
            except wt.WiredTigerError:  # WT_NOTFOUND: the delta would be too big or too scattered
                entries = None
                self.counts.note("calc_modify failed")
            if entries is not None:
                if entries:
                    cursor.modify(entries)
                    path = "modify"
                else:
                    cursor.reserve()
                    path = "reserve"
        else:
            self.counts.note("logged table" if self.logged else
                             "1 KB or less" if length <= MIN_LENGTH_FOR_DIFF else "grew over a tenth")
        if path == "update":
            set_value_bytes(cursor, new)
            cursor.insert()
        setattr(self.counts, path, getattr(self.counts, path) + 1)
        cursor.reset()
        return path
