"""An index table and the two plans the studies compare: FETCH and COVERED.

Table settings follow mongod's WiredTigerIndex::generateCreateString: `type=file,
internal_page_max=16k,leaf_page_max=16k,checksum=on,prefix_compression=true,key_format=u,
value_format=u`, no block compressor (indexes rely on prefix compression), logged per the
deployment's rule.

Entries are mongod's (costlab.engine.keys): a standard or unique index keys on KeyString +
record id with the type bits as value; the `_id` index keys on the KeyString alone with the
record id and type bits as value (WiredTigerIdIndex::_insert), so its keys are unique.

A range scan walks the index from the first key >= lower to the last key < upper. FETCH then
reads each matching record from the record store (what mongod's FETCH stage does, whatever
the projection: a projection is applied after the whole document was read); COVERED returns
the key fields alone and never touches the record store.
"""
from __future__ import annotations

from typing import Iterator

from costlab.engine.cursors import check_formats, key_bytes, set_key_bytes, set_value_bytes, value_bytes
from costlab.engine.keys import (
    decode_fields,
    decode_record_id_at_start,
    encode_key,
    id_index_entry,
    index_entry,
    split_entry,
)


def index_config(logged: bool) -> str:
    return ("type=file,internal_page_max=16k,leaf_page_max=16k,checksum=on,prefix_compression=true,"
            "block_compressor=,key_format=u,value_format=u,"
            f"log=(enabled={'true' if logged else 'false'})")


class IndexTable:
    def __init__(self, engine, name: str, fields: tuple[str, ...], logged: bool, create: bool = True,
                 id_index: bool = False) -> None:
        self.engine = engine
        self.uri = f"table:{name}"
        self.fields = fields
        self.logged = logged
        self.id_index = id_index
        self._entry = id_index_entry if id_index else index_entry
        if create:
            engine.session.create(self.uri, index_config(logged))
        self.reopen_cursor()

    def reopen_cursor(self) -> None:
        self.cursor = self.engine.session.open_cursor(self.uri)
        check_formats(self.cursor, ("u",))

    def key_values(self, document: dict) -> tuple:
        return tuple(document[f] for f in self.fields)

    def insert(self, document: dict, record_id: int) -> None:
        key, value = self._entry(self.key_values(document), record_id)
        set_key_bytes(self.cursor, key)
        set_value_bytes(self.cursor, value)
        self.cursor.insert()

    def find(self, values: tuple) -> int | None:
        """The record id of the entry for exactly `values`, or None: an exact search of the `_id`
        index (its keys are the KeyString alone), or of a unique index the first key at or after the
        KeyString (its keys are the KeyString + the record id), as an equality IXSCAN of it."""
        cursor = self.cursor
        key = encode_key(values)
        set_key_bytes(cursor, key)
        try:
            if self.id_index:
                if cursor.search() != 0:
                    return None
                return decode_record_id_at_start(value_bytes(cursor))
            found = cursor.search_near()
            if found == self.engine.wt.WT_NOTFOUND or (found < 0 and cursor.next() != 0):
                return None
            entry = key_bytes(cursor)
            if not entry.startswith(key):
                return None
            return split_entry(entry)[1]
        finally:
            cursor.reset()

    def scan(self, lower: tuple, upper: tuple) -> Iterator[tuple[bytes, int]]:
        """(key part, record id) for lower <= key < upper, in key order (an IXSCAN)."""
        low, high = encode_key(lower)[:-1], encode_key(upper)[:-1]  # prefixes without kEnd
        cursor = self.cursor
        set_key_bytes(cursor, low)
        found = cursor.search_near()
        if found == self.engine.wt.WT_NOTFOUND:
            cursor.reset()
            return
        if found < 0 and cursor.next() != 0:
            cursor.reset()
            return
        try:
            while True:
                entry = key_bytes(cursor)
                if entry[:len(high)] >= high:
                    break
                if self.id_index:
                    yield entry, decode_record_id_at_start(value_bytes(cursor))
                else:
                    yield split_entry(entry)
                if cursor.next() != 0:
                    break
        finally:
            cursor.reset()

    def covered(self, lower: tuple, upper: tuple) -> list[list[object]]:
        """COVERED: the key fields of every match, from the index alone."""
        return [decode_fields(key) for key, _ in self.scan(lower, upper)]

    def fetch(self, records, lower: tuple, upper: tuple) -> list[bytes]:
        """FETCH: the whole stored document of every match (BSON bytes), each by mongod's seekExact
        (the record cursor stays on its page until the next document), the cursor reset at the end."""
        try:
            return [records.seek_exact(record_id) for _, record_id in self.scan(lower, upper)]
        finally:
            records.end_seeks()


__all__ = ["IndexTable", "index_config"]
