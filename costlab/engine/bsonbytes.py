"""BSON bytes without decoding the whole document: growing its last array, picking two fields.

`bson.encode` of a dict holding a 20,000-element list costs milliseconds; the $push sweep
does it tens of thousands of times. Appending one element's bytes is what the array's BSON
looks like anyway; tests check the result equals bson.encode of the same dict.
"""
from __future__ import annotations

import struct

import bson

INT64 = 0x12


def append_int64_to_last_field(document: bytes, index: int, value: int) -> bytes:
    """`document` (BSON) whose last field is an array of `index` elements, with `value`
    (a BSON int64) appended as element `index`."""
    element = bytes([INT64]) + str(index).encode() + b"\0" + struct.pack("<q", value)
    # document = header(4) ... [array: len(4) ... elements ... 0x00] 0x00
    array_start = _last_field_value_offset(document)
    array_length = struct.unpack_from("<i", document, array_start)[0]
    array_end = array_start + array_length          # one past the array's 0x00
    body = bytearray(document[: array_end - 1])
    body += element + b"\0" + document[array_end:]
    struct.pack_into("<i", body, array_start, array_length + len(element))
    struct.pack_into("<i", body, 0, len(document) + len(element))
    return bytes(body)


def append_to_last_array(document: bytes, index: int, value: object) -> bytes:
    """`document` (BSON) whose last field is an array of `index` elements, with `value` (any BSON value:
    a document, a string, an int64, ...) appended as element `index`: bson.encode's bytes of the value."""
    encoded = bson.encode({"": value})          # header(4) type name("\0") value 0x00
    element = encoded[4:5] + str(index).encode() + b"\0" + encoded[6:-1]
    array_start = _last_field_value_offset(document)
    array_length = struct.unpack_from("<i", document, array_start)[0]
    array_end = array_start + array_length
    body = bytearray(document[: array_end - 1])
    body += element + b"\0" + document[array_end:]
    struct.pack_into("<i", body, array_start, array_length + len(element))
    struct.pack_into("<i", body, 0, len(document) + len(element))
    return bytes(body)


def _last_field_value_offset(document: bytes) -> int:
    """Offset of the last field's value; it must be an array (type 0x04)."""
    i, last = 4, None
    end = len(document) - 1
    while i < end:
        kind = document[i]
        name_end = document.index(b"\0", i + 1)
        value = name_end + 1
        last = (kind, value)
        i = value + _value_size(document, kind, value)
    if last is None or last[0] != 0x04:
        raise ValueError("the document's last field is not an array")
    return last[1]


def _value_size(document: bytes, kind: int, offset: int) -> int:
    fixed = {0x01: 8, 0x07: 12, 0x08: 1, 0x09: 8, 0x0A: 0, 0x10: 4, 0x11: 8, 0x12: 8, 0x13: 16}
    if kind in fixed:
        return fixed[kind]
    if kind in (0x03, 0x04):
        return struct.unpack_from("<i", document, offset)[0]
    if kind == 0x02:
        return 4 + struct.unpack_from("<i", document, offset)[0]
    if kind == 0x05:
        return 5 + struct.unpack_from("<i", document, offset)[0]
    if kind in _FIXED_SIZES:
        return _FIXED_SIZES[kind]
    raise ValueError(f"BSON type {kind:#x} not handled here")


_FIXED_SIZES = {
    0x01: 8,
    0x07: 12,
    0x08: 1,
    0x09: 8,
    0x0A: 0,
    0x10: 4,
    0x11: 8,
    0x12: 8,
    0x13: 16,
    0xFF: 0,
    0x7F: 0,
}


def pick_fields(document: bytes, names: tuple[str, ...]) -> list[object]:
    """The values of `names` in a BSON document, in that order, stepping over every other field by
    its length (what mongod's PROJECTION_SIMPLE does with a fetched document): only the picked
    elements are decoded. A name the document lacks is None."""
    wanted = {name.encode(): i for i, name in enumerate(names)}
    found: list[object] = [None] * len(names)
    remaining = len(wanted)
    i, end = 4, len(document) - 1
    while i < end and remaining:
        kind = document[i]
        name_end = document.index(b"\0", i + 1)
        value = name_end + 1
        size = _FIXED_SIZES.get(kind)
        if size is None:
            size = _value_size(document, kind, value)
        slot = wanted.get(document[i + 1:name_end])
        if slot is not None:
            element = document[i:value + size]
            found[slot] = bson.decode(struct.pack("<i", len(element) + 5) + element + b"\0")[names[slot]]
            remaining -= 1
        i = value + size
    return found
