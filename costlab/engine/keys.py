"""Index key bytes: order-preserving, with the record id appended, sized like mongod's KeyString.

mongod stores a standard (non-unique) index entry as key = KeyString(fields) + record id,
value = type bits (empty for these types). We do not reimplement KeyString; we encode each
field as one type byte plus fixed-width big-endian bytes (sign bit flipped so that signed
numbers sort correctly), then an end byte, then the record id as its minimal big-endian bytes
between two length bytes. Sizes land within a few bytes of KeyString's (a type byte and 8
bytes per date/double, 12 per ObjectId, a few bytes of record id), which is what the cache
and storage counters depend on.
"""
from __future__ import annotations

import struct
from datetime import datetime, timezone

from bson import ObjectId
from bson.int64 import Int64

TYPE_NUMBER, TYPE_OID, TYPE_DATE, TYPE_STRING = 0x29, 0x64, 0x78, 0x3C
TYPE_OBJECT, TYPE_BINARY = 0x46, 0x5A
END = 0x04


def _sortable_double(value: float) -> bytes:
    bits = struct.unpack(">Q", struct.pack(">d", float(value)))[0]
    bits = bits ^ 0xFFFFFFFFFFFFFFFF if bits >> 63 else bits | (1 << 63)
    return struct.pack(">Q", bits)


def _sortable_int(value: int) -> bytes:
    return struct.pack(">Q", (int(value) + (1 << 63)) & 0xFFFFFFFFFFFFFFFF)


def encode_field(value: object) -> bytes:
    if isinstance(value, ObjectId):
        return bytes([TYPE_OID]) + value.binary
    if isinstance(value, datetime):
        aware = value if value.tzinfo else value.replace(tzinfo=timezone.utc)
        return bytes([TYPE_DATE]) + _sortable_int(int(aware.timestamp() * 1000))
    if isinstance(value, bool):
        raise TypeError("booleans are not index key fields here")
    if isinstance(value, (int, Int64)):
        # mongod compares all numbers by value; a double keeps int and float keys ordered together
        return bytes([TYPE_NUMBER]) + _sortable_double(float(value))
    if isinstance(value, float):
        return bytes([TYPE_NUMBER]) + _sortable_double(value)
    if isinstance(value, str):
        return bytes([TYPE_STRING]) + value.encode() + b"\0"
    if isinstance(value, (bytes, bytearray)):   # BinData: length, subtype, bytes
        return bytes([TYPE_BINARY]) + struct.pack(">I", len(value)) + b"\0" + bytes(value)
    if isinstance(value, dict):                 # an embedded document: each field's name and value
        return bytes([TYPE_OBJECT]) + b"".join(k.encode() + b"\0" + encode_field(v)
                                               for k, v in value.items()) + b"\0"
    raise TypeError(f"unsupported index key value {value!r} ({type(value).__name__})")


def encode_key(values: tuple | list) -> bytes:
    """The key part (without record id): each field, then the end byte."""
    return b"".join(encode_field(v) for v in values) + bytes([END])


def encode_record_id(record_id: int) -> bytes:
    if record_id < 1:
        raise ValueError(f"record ids start at 1, got {record_id}")
    body = record_id.to_bytes((record_id.bit_length() + 7) // 8, "big")
    # length first keeps the order of ids; length last lets a reader find it from the end
    # (mongod's KeyString also encodes a record id's size at both ends)
    return bytes([len(body)]) + body + bytes([len(body)])


def index_entry(values: tuple | list, record_id: int) -> bytes:
    return encode_key(values) + encode_record_id(record_id)


def split_entry(entry: bytes) -> tuple[bytes, int]:
    """(key part incl. end byte, record id) of an index entry."""
    length = entry[-1]
    if not 1 <= length <= 8 or entry[-2 - length] != length:
        raise ValueError("not an index entry with a record id suffix")
    return entry[: -2 - length], int.from_bytes(entry[-1 - length:-1], "big")


def decode_fields(key: bytes) -> list[object]:
    """The field values of a key part (what a COVERED plan returns without reading the document)."""
    values: list[object] = []
    i = 0
    while key[i] != END:
        kind = key[i]
        if kind == TYPE_OID:
            values.append(ObjectId(key[i + 1:i + 13]))
            i += 13
        elif kind == TYPE_DATE:
            ms = struct.unpack(">Q", key[i + 1:i + 9])[0] - (1 << 63)
            values.append(datetime.fromtimestamp(ms / 1000, tz=timezone.utc))
            i += 9
        elif kind == TYPE_NUMBER:
            bits = struct.unpack(">Q", key[i + 1:i + 9])[0]
            bits = bits ^ (1 << 63) if bits >> 63 else bits ^ 0xFFFFFFFFFFFFFFFF
            values.append(struct.unpack(">d", struct.pack(">Q", bits))[0])
            i += 9
        elif kind == TYPE_STRING:
            end = key.index(b"\0", i + 1)
            values.append(key[i + 1:end].decode())
            i = end + 1
        else:
            raise ValueError(f"unknown key type byte {kind:#x} at {i}")
    return values
