"""Index entries as mongod writes them: KeyString V1 keys, record ids and type bits.

Each rule was read in mongod's source, src/mongo/db/storage/key_string/key_string.cpp and
key_string.h (facts carried over, code written here):

* A key is each indexed value, in index order, as `_appendBsonValue` writes it, then the end
  byte kEnd = 0x04 (`appendDiscriminator(kInclusive)`). Type bytes (`CType`): kNumeric = 30 and
  its width variants (kNumericZero = 41, kNumericPositive1ByteInt = 43 … 8ByteInt = 50,
  kNumericNegative1ByteInt = 39 … 8ByteInt = 32, small magnitudes 40 / 42, large 31 / 51),
  kStringLike = 60, kObject = 70, kBinData = 90, kOID = 100, kBool = 110/111, kDate = 120.
* Integers (int32, int64 and integral doubles) are written in their minimal width
  (`_appendPreshiftedIntegerPortion`): the magnitude shifted left one bit, in as few big-endian
  bytes as hold it, the width in the type byte; a negative number's bytes are inverted. So
  `1` is `2b 02`, `128` is `2c 01 00`.
* A double with a fraction (V1, `_appendDoubleWithoutTypeBits`): 8 bytes holding the integer
  part (shifted, with the low "has fraction" bit) and as many fraction bytes as are left; the
  type byte says how many integer bytes. Magnitudes below 1 use kNumericPositiveSmallMagnitude
  and the double's bits shifted left 2.
* A date: kDate and the milliseconds as big-endian int64 with the sign bit flipped. An ObjectId:
  kOID and its 12 bytes. A string: kStringLike, the bytes (a NUL written as 00 FF) and 00.
* BinData (`_appendBinData`): kBinData, the length in **one byte** when it is under 0xFF (else
  FF and a 4-byte big-endian length), the subtype byte, the bytes.
* An embedded document (`_appendBson`): kObject, then per field the field's generic type byte,
  its name and NUL, its value as above (with its own type byte), and a closing 00.
* A record id (`_appendRecordIdLong`): N = the bytes needed beyond two, in the high 3 bits of
  the first byte and the low 3 bits of the last; the id's bits fill the rest, big-endian. Ids
  below 2**10 take 2 bytes, below 2**18 3, below 2**26 4 (id 1 is `00 08`).
* Type bits (`TypeBits`): what tells 1, 1L and 1.0 apart, never part of the ordering. Per value
  a string appends bit 0, an int32 bits 0 0, an int64 0 1, a double 1 0 (dates, ObjectIds,
  BinData none), packed from the low bit of the first byte. All zeros are stored as nothing;
  one data byte without its high bit is stored alone; else a size byte 0x80|n then n bytes.

Where they go (src/mongo/db/storage/wiredtiger/wiredtiger_index.cpp): a standard index and a
unique index of the current format key each entry on KeyString + record id and store the type
bits as the value (`WiredTigerIndexStandard::_insert`); the `_id` index keys on the KeyString
*without* the record id and stores the record id, then the type bits, as the value
(`WiredTigerIdIndex::_insert`).
"""
from __future__ import annotations

import math
import struct
from datetime import datetime, timedelta, timezone

from bson import ObjectId
from bson.int64 import Int64

END = 0x04                                   # kEnd
NUMERIC_ZERO = 41                            # kNumericZero
POSITIVE_1BYTE_INT, POSITIVE_8BYTE_INT = 43, 50
NEGATIVE_1BYTE_INT, NEGATIVE_8BYTE_INT = 39, 32
POSITIVE_SMALL, NEGATIVE_SMALL = 42, 40      # magnitudes in (0, 1)
POSITIVE_LARGE, NEGATIVE_LARGE = 51, 31      # magnitudes >= 2**63
NUMERIC_NAN = 30
TYPE_NUMBER, TYPE_STRING, TYPE_OBJECT, TYPE_BINARY, TYPE_OID, TYPE_DATE = 30, 60, 70, 90, 100, 120
TYPE_BOOL_FALSE, TYPE_BOOL_TRUE = 110, 111
MIN_LARGE_DOUBLE = float(1 << 63)
TINIEST_2BIT_DCM = math.ldexp(1.0, -255)
_MILLISECOND = timedelta(milliseconds=1)

# type bits per value (TypeBits::kString = 0; kInt = 0b00, kLong = 0b01, kDouble = 0b10)
BITS_STRING, BITS_INT, BITS_LONG, BITS_DOUBLE = (0,), (0, 0), (0, 1), (1, 0)


class TypeBits:
    """The bits a key's values append, and their stored form (`getBuffer`, all-zeros as b"")."""

    def __init__(self) -> None:
        self.bits: list[int] = []

    def extend(self, bits: tuple[int, ...]) -> None:
        self.bits.extend(bits)

    def stored(self) -> bytes:
        if not any(self.bits):
            return b""
        data = bytearray((len(self.bits) + 7) // 8)
        for i, bit in enumerate(self.bits):
            if bit:
                data[i // 8] |= 1 << (i % 8)
        if len(data) == 1 and not data[0] & 0x80:
            return bytes(data)
        if len(data) > 127:
            return b"\x80" + struct.pack("<i", len(data)) + bytes(data)
        return bytes([0x80 | len(data)]) + bytes(data)


def _flip(data: bytes) -> bytes:
    return bytes(b ^ 0xFF for b in data)


def _preshifted_integer(value: int, negative: bool) -> bytes:
    """`value` (a magnitude already shifted left one bit) in its minimal big-endian width."""
    width = (value.bit_length() + 7) // 8
    body = value.to_bytes(width, "big")
    if negative:
        return bytes([NEGATIVE_1BYTE_INT - (width - 1)]) + _flip(body)
    return bytes([POSITIVE_1BYTE_INT + (width - 1)]) + body


def _integer(value: int) -> bytes:
    if value == 0:
        return bytes([NUMERIC_ZERO])
    if value == -(1 << 63):   # not a positive int64: written as the double it equals
        return _double(float(value))
    return _preshifted_integer(abs(value) << 1, value < 0)


def _double(value: float) -> bytes:
    negative = value < 0
    magnitude = -value if negative else value
    if not magnitude >= 1.0:
        if magnitude > 0.0:
            if magnitude < TINIEST_2BIT_DCM:
                raise ValueError(f"doubles below 2**-255 are not handled here, got {value!r}")
            bits = struct.unpack(">Q", struct.pack(">d", magnitude))[0] << 2
            body = bits.to_bytes(8, "big")
            return bytes([NEGATIVE_SMALL if negative else POSITIVE_SMALL]) + (
                _flip(body) if negative else body
            )
        if value == 0.0:
            return bytes([NUMERIC_ZERO])
        return bytes([NUMERIC_NAN])
    if magnitude < MIN_LARGE_DOUBLE:
        integer_part = int(magnitude)
        if float(integer_part) == magnitude:
            return _preshifted_integer(integer_part << 1, negative)
        fraction_bytes = (64 - (integer_part << 1).bit_length()) // 8
        encoding = int(magnitude * 256 ** fraction_bytes) + ((integer_part + 1) << (fraction_bytes * 8))
        body = encoding.to_bytes(8, "big")
        kind = NEGATIVE_8BYTE_INT + fraction_bytes if negative else POSITIVE_8BYTE_INT - fraction_bytes
        return bytes([kind]) + (_flip(body) if negative else body)
    bits = struct.unpack(">Q", struct.pack(">d", value))[0]
    bits = ((bits << 1) & ~(1 << 63)) & 0xFFFFFFFFFFFFFFFF if math.isfinite(value) else 0xFFFFFFFFFFFFFFFF
    body = bits.to_bytes(8, "big")
    return bytes([NEGATIVE_LARGE if negative else POSITIVE_LARGE]) + (_flip(body) if negative else body)


def _string_body(text: str) -> bytes:
    return text.encode().replace(b"\0", b"\0\xff") + b"\0"


_GENERIC_TYPES = ((bool, 110), ((int, float, Int64), TYPE_NUMBER), (str, TYPE_STRING), (dict, TYPE_OBJECT),
                  ((bytes, bytearray), TYPE_BINARY), (ObjectId, TYPE_OID), (datetime, TYPE_DATE))
_GENERIC_BY_TYPE: dict[type, int] = {}   # each Python type's code, found once by the isinstance order above


def _by_type(value: object, in_order: tuple, found: dict):
    """What `in_order` ((kind, entry), ...) gives the first kind `value` is an instance of, remembered in
    `found` by the value's exact type: one dict lookup per value after the first of its type."""
    entry = found.get(type(value))
    if entry is None:
        for kind, candidate in in_order:
            if isinstance(value, kind):
                entry = found[type(value)] = candidate
                break
        else:
            raise TypeError(f"unsupported index key value {value!r} ({type(value).__name__})")
    return entry


def _generic_type(value: object) -> int:
    return _by_type(value, _GENERIC_TYPES, _GENERIC_BY_TYPE)


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_EPOCH_NAIVE = datetime(1970, 1, 1)   # a naive date is UTC (bson decodes dates naive by default)


def _object_id(value: ObjectId, type_bits: TypeBits) -> bytes:
    return bytes([TYPE_OID]) + value.binary


def _date(value: datetime, type_bits: TypeBits) -> bytes:
    millis = (value - (_EPOCH if value.tzinfo else _EPOCH_NAIVE)) // _MILLISECOND
    return bytes([TYPE_DATE]) + ((millis & 0xFFFFFFFFFFFFFFFF) ^ (1 << 63)).to_bytes(8, "big")


def _bool(value: bool, type_bits: TypeBits) -> bytes:
    return bytes([TYPE_BOOL_TRUE if value else TYPE_BOOL_FALSE])


def _long(value: Int64, type_bits: TypeBits) -> bytes:
    type_bits.extend(BITS_LONG)
    return _integer(int(value))


def _int(value: int, type_bits: TypeBits) -> bytes:
    # what bson.encode writes: int32 when it fits, else int64
    type_bits.extend(BITS_INT if -(1 << 31) <= value < (1 << 31) else BITS_LONG)
    return _integer(value)


def _float(value: float, type_bits: TypeBits) -> bytes:
    if value == 0.0 and math.copysign(1.0, value) < 0:
        raise ValueError("-0.0 index keys (their own type bits) are not handled here")
    type_bits.extend(BITS_DOUBLE)
    return _double(value)


def _string(value: str, type_bits: TypeBits) -> bytes:
    type_bits.extend(BITS_STRING)
    return bytes([TYPE_STRING]) + _string_body(value)


def _binary(value: bytes, type_bits: TypeBits) -> bytes:
    subtype = getattr(value, "subtype", 0)
    length = len(value)
    size = bytes([length]) if length < 0xFF else b"\xff" + struct.pack(">i", length)
    return bytes([TYPE_BINARY]) + size + bytes([subtype]) + bytes(value)


def _object(value: dict, type_bits: TypeBits) -> bytes:
    body = b"".join(bytes([_generic_type(v)]) + k.encode() + b"\0" + encode_value(v, type_bits)
                    for k, v in value.items())
    return bytes([TYPE_OBJECT]) + body + b"\0"


# In isinstance order (a bool is an int, an Int64 is an int): the first that matches encodes the value.
_ENCODERS = ((ObjectId, _object_id), (datetime, _date), (bool, _bool), (Int64, _long), (int, _int),
             (float, _float), (str, _string), ((bytes, bytearray), _binary), (dict, _object))
_ENCODER_BY_TYPE: dict[type, object] = {}   # each Python type's encoder, found once by that order


def encode_value(value: object, type_bits: TypeBits) -> bytes:
    """One value as `_appendBsonValue` writes it; its type bits are appended to `type_bits`."""
    return _by_type(value, _ENCODERS, _ENCODER_BY_TYPE)(value, type_bits)


def encode_key_and_type_bits(values: tuple | list) -> tuple[bytes, bytes]:
    """(KeyString of `values` ending with kEnd, stored type bits)."""
    type_bits = TypeBits()
    key = b"".join(encode_value(v, type_bits) for v in values) + bytes([END])
    return key, type_bits.stored()


def encode_key(values: tuple | list) -> bytes:
    """The KeyString of `values` (no record id), ending with kEnd."""
    return encode_key_and_type_bits(values)[0]


def encode_record_id(record_id: int) -> bytes:
    """`_appendRecordIdLong`: 2 bytes below 2**10, 3 below 2**18, 4 below 2**26, …"""
    if record_id < 1:
        raise ValueError(f"record ids start at 1, got {record_id}")
    bits = record_id.bit_length()
    extra = 0 if bits <= 10 else (bits - 10 + 7) // 8
    first = (extra << 5) | (record_id >> (5 + extra * 8))
    last = ((record_id << 3) | extra) & 0xFF
    middle = ((record_id >> 5) & ((1 << (8 * extra)) - 1)).to_bytes(extra, "big") if extra else b""
    return bytes([first]) + middle + bytes([last])


def decode_record_id_at_end(data: bytes) -> tuple[int, int]:
    """(record id, its encoded size) of the record id that ends `data` (its size is in the last byte)."""
    size = (data[-1] & 0x07) + 2
    return _record_id(data[-size:]), size


def decode_record_id_at_start(data: bytes) -> int:
    """The record id that starts `data` (an `_id` index value; its size is in the first byte)."""
    return _record_id(data[:(data[0] >> 5) + 2])


def _record_id(encoded: bytes) -> int:
    value = encoded[0] & 0x1F
    for byte in encoded[1:-1]:
        value = (value << 8) | byte
    return (value << 5) | (encoded[-1] >> 3)


def index_entry(values: tuple | list, record_id: int) -> tuple[bytes, bytes]:
    """(key, value) of a standard or unique index entry: KeyString + record id, type bits."""
    key, type_bits = encode_key_and_type_bits(values)
    return key + encode_record_id(record_id), type_bits


def id_index_entry(values: tuple | list, record_id: int) -> tuple[bytes, bytes]:
    """(key, value) of an `_id` index entry: KeyString alone, record id + type bits."""
    key, type_bits = encode_key_and_type_bits(values)
    return key, encode_record_id(record_id) + type_bits


def split_entry(entry: bytes) -> tuple[bytes, int]:
    """(key part incl. kEnd, record id) of a standard index key."""
    record_id, size = decode_record_id_at_end(entry)
    if entry[-size - 1] != END:
        raise ValueError("not an index key ending in kEnd + record id")
    return entry[:-size], record_id


def decode_fields(key: bytes) -> list[object]:
    """The values of a key (what a COVERED plan returns without reading the document): ObjectIds,
    dates, strings, BinData (bytes) and numbers (int when the encoding is integral, else float;
    the type bits that would restore 1.0 are not read here)."""
    values: list[object] = []
    i = 0
    while key[i] != END:
        value, i = _decode_value(key, i)
        values.append(value)
    return values


def _decode_value(key: bytes, i: int) -> tuple[object, int]:
    kind = key[i]
    if kind == TYPE_OID:
        return ObjectId(key[i + 1:i + 13]), i + 13
    if kind == TYPE_DATE:
        millis = int.from_bytes(key[i + 1:i + 9], "big") ^ (1 << 63)
        millis -= (1 << 64) if millis >= (1 << 63) else 0
        return _EPOCH + millis * _MILLISECOND, i + 9
    if kind == TYPE_STRING:
        end = key.index(b"\0", i + 1)
        while end + 1 < len(key) and key[end + 1] == 0xFF:   # an escaped NUL
            end = key.index(b"\0", end + 2)
        return key[i + 1:end].replace(b"\0\xff", b"\0").decode(), end + 1
    if kind == TYPE_BINARY:
        length, at = key[i + 1], i + 2
        if length == 0xFF:
            length, at = struct.unpack(">i", key[i + 2:i + 6])[0], i + 6
        return key[at + 1:at + 1 + length], at + 1 + length
    if kind == NUMERIC_ZERO:
        return 0, i + 1
    if POSITIVE_1BYTE_INT <= kind <= POSITIVE_8BYTE_INT or NEGATIVE_8BYTE_INT <= kind <= NEGATIVE_1BYTE_INT:
        negative = kind <= NEGATIVE_1BYTE_INT
        width = (NEGATIVE_1BYTE_INT - kind if negative else kind - POSITIVE_1BYTE_INT) + 1
        body = key[i + 1:i + 1 + width]
        raw = int.from_bytes(_flip(body) if negative else body, "big")
        if raw & 1 == 0:                        # no fraction: an integer
            return (-(raw >> 1) if negative else raw >> 1), i + 1 + width
        # a fraction follows: the 8 bytes hold integer and fraction (width = integer bytes)
        body = key[i + 1:i + 9]
        encoding = int.from_bytes(_flip(body) if negative else body, "big")
        fraction_bytes = 8 - width
        integer_part = ((encoding >> (fraction_bytes * 8)) - 1) >> 1
        scaled = encoding - ((integer_part + 1) << (fraction_bytes * 8))
        magnitude = math.ldexp(float(scaled), -8 * fraction_bytes)
        return (-magnitude if negative else magnitude), i + 9
    if kind in (POSITIVE_SMALL, NEGATIVE_SMALL):
        body = key[i + 1:i + 9]
        bits = int.from_bytes(_flip(body) if kind == NEGATIVE_SMALL else body, "big") >> 2
        magnitude = struct.unpack(">d", bits.to_bytes(8, "big"))[0]
        return (-magnitude if kind == NEGATIVE_SMALL else magnitude), i + 9
    if kind in (
        POSITIVE_LARGE,
        NEGATIVE_LARGE,
    ):  # the double's bits shifted left one; the top exponent bit is 1
        body = key[i + 1:i + 9]
        encoded = int.from_bytes(_flip(body) if kind == NEGATIVE_LARGE else body, "big")
        bits = 0x7FF0000000000000 if encoded == 0xFFFFFFFFFFFFFFFF else (encoded >> 1) | (1 << 62)
        magnitude = struct.unpack(">d", bits.to_bytes(8, "big"))[0]
        return (-magnitude if kind == NEGATIVE_LARGE else magnitude), i + 9
    raise ValueError(f"key type byte {kind} at {i} is not decoded here")
