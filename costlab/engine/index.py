"""An index table and the two plans the studies compare: FETCH and COVERED.

Table settings follow mongod's WiredTigerIndex::generateCreateString: `type=file,
internal_page_max=16k,leaf_page_max=16k,checksum=on,prefix_compression=true,key_format=u,
value_format=u`, no block compressor (indexes rely on prefix compression), logged per the
deployment's rule.

A range scan walks the index from the first key >= lower to the last key < upper. FETCH then
reads each matching record from the record store (what mongod's FETCH stage does, whatever
the projection: a projection is applied after the whole document was read); COVERED returns
the key fields alone and never touches the record store.
"""
from __future__ import annotations

from typing import Iterator

from costlab.engine.keys import END, decode_fields, encode_key, index_entry, split_entry


def index_config(logged: bool) -> str:
    return ("type=file,internal_page_max=16k,leaf_page_max=16k,checksum=on,prefix_compression=true,"
            "block_compressor=,key_format=u,value_format=u,"
            f"log=(enabled={'true' if logged else 'false'})")


class IndexTable:
    def __init__(self, engine, name: str, fields: tuple[str, ...], logged: bool, create: bool = True) -> None:
        self.engine = engine
        self.uri = f"table:{name}"
        self.fields = fields
        self.logged = logged
        if create:
            engine.session.create(self.uri, index_config(logged))
        self.cursor = engine.session.open_cursor(self.uri)

    def reopen_cursor(self) -> None:
        self.cursor = self.engine.session.open_cursor(self.uri)

    def key_values(self, document: dict) -> tuple:
        return tuple(document[f] for f in self.fields)

    def insert(self, document: dict, record_id: int) -> None:
        self.cursor.set_key(index_entry(self.key_values(document), record_id))
        self.cursor.set_value(b"")  # type bits: empty for the key types used here
        self.cursor.insert()

    def scan(self, lower: tuple, upper: tuple) -> Iterator[tuple[bytes, int]]:
        """(key part, record id) for lower <= key < upper, in key order (an IXSCAN)."""
        low, high = encode_key(lower)[:-1], encode_key(upper)[:-1]  # prefixes without END
        cursor = self.cursor
        cursor.set_key(low)
        found = cursor.search_near()
        if found == self.engine.wt.WT_NOTFOUND:
            cursor.reset()
            return
        if found < 0 and cursor.next() != 0:
            cursor.reset()
            return
        try:
            while True:
                entry = cursor.get_key()
                if entry[:len(high)] >= high:
                    break
                key, record_id = split_entry(entry)
                yield key, record_id
                if cursor.next() != 0:
                    break
        finally:
            cursor.reset()

    def covered(self, lower: tuple, upper: tuple) -> list[list[object]]:
        """COVERED: the key fields of every match, from the index alone."""
        return [decode_fields(key) for key, _ in self.scan(lower, upper)]

    def fetch(self, records, lower: tuple, upper: tuple) -> list[bytes]:
        """FETCH: the whole stored document of every match (BSON bytes)."""
        return [records.read(record_id) for _, record_id in self.scan(lower, upper)]


__all__ = ["IndexTable", "index_config", "END"]
