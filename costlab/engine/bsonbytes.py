"""Growing a BSON document's last array without re-encoding the whole document.

`bson.encode` of a dict holding a 20,000-element list costs milliseconds; the $push sweep
does it tens of thousands of times. Appending one element's bytes is what the array's BSON
looks like anyway; tests check the result equals bson.encode of the same dict.
"""
from __future__ import annotations

import struct

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
    raise ValueError(f"BSON type {kind:#x} not handled here")
