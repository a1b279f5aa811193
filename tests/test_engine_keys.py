"""Index entries byte for byte as mongod's KeyString V1 writes them.

Every expected value below is worked out by hand from the rules in mongod's
src/mongo/db/storage/key_string/key_string.cpp (cited in costlab/engine/keys.py), not produced
by the code under test: the type byte, then the value's bytes, then kEnd = 04.
"""
from __future__ import annotations

from datetime import datetime, timezone

import pytest
from bson import Binary, ObjectId
from bson.int64 import Int64

from costlab.engine.keys import (
    decode_fields,
    decode_record_id_at_end,
    decode_record_id_at_start,
    encode_key,
    encode_key_and_type_bits,
    encode_record_id,
    id_index_entry,
    index_entry,
    split_entry,
)

OID = ObjectId("65a1b2c3d4e5f60718293a4b")
DAY = datetime(2020, 1, 1, tzinfo=timezone.utc)   # 1,577,836,800,000 ms = 0x0000016F5E66E800


@pytest.mark.parametrize(
    "values, key_hex, type_bits_hex",
    [
        # int32 1: kNumericPositive1ByteInt (30+13 = 0x2b), 1 << 1 = 02; type bits int = 00 -> stored as
        # nothing
        ((1,), "2b0204", ""),
        # int32 128: 128 << 1 = 0x100 needs 2 bytes -> 0x2c 01 00
        ((128,), "2c010004", ""),
        # int32 0: kNumericZero (41 = 0x29)
        ((0,), "2904", ""),
        # int32 -1: kNumericNegative1ByteInt (39 = 0x27), 1 << 1 = 02 inverted = fd
        ((-1,), "27fd04", ""),
        # int64 5: same bytes as int32 5, type bits long = 0 1 -> second bit set -> 0x02
        ((Int64(5),), "2b0a04", "02"),
        # double 2.0 (integral): written as the integer 2, type bits double = 1 0 -> 0x01
        ((2.0,), "2b0404", "01"),
        # double 1.5: integer part 1 (<<1 = 2, one byte), 7 fraction bytes; encoding = 1.5 * 2**56 + 2 * 2**56
        # = 0x0380000000000000, type byte kNumericPositive8ByteInt - 7 = 0x2b
        ((1.5,), "2b038000000000000004", "01"),
        # double 0.25: kNumericPositiveSmallMagnitude (42 = 0x2a), bits of 0.25 (0x3fd0000000000000) << 2
        ((0.25,), "2aff4000000000000004", "01"),
        # a date: kDate (120 = 0x78), ms with the sign bit flipped, big-endian
        ((DAY,), "788000016f5e66e80004", ""),
        # the same date decoded naive (the engine's statements and documents are: UTC, no tzinfo)
        ((DAY.replace(tzinfo=None),), "788000016f5e66e80004", ""),
        (({"date": DAY.replace(tzinfo=None), "key": "ab"},),
         "46786461746500788000016f5e66e8003c6b6579003c6162000004", ""),
        # an ObjectId: kOID (100 = 0x64) and its 12 bytes
        ((OID,), "6465a1b2c3d4e5f60718293a4b04", ""),
        # a string: kStringLike (60 = 0x3c), bytes, 00; a NUL inside is 00 ff
        (("ab",), "3c61620004", ""),
        (("a\0b",), "3c6100ff620004", ""),
        # BinData of 3 bytes: kBinData (90 = 0x5a), ONE length byte 03, subtype 00, bytes
        ((Binary(b"\x01\x02\x03", 0),), "5a030001020304", ""),
        # an embedded document {date, key}: kObject (70 = 0x46), per field generic type, name, 00, value; 00
        (({"date": DAY, "key": "ab"},), "46786461746500788000016f5e66e8003c6b6579003c6162000004", ""),
        # docsize's {createdAt, total}: the date, then the double 54.25 (54 << 1 | 1 = 0x6d, fraction .25 ->
        # 0x40..)
        ((DAY, 54.25), "788000016f5e66e8002b6d4000000000000004", "01"),
        # appversions' {key, date}: string bit 0, date none -> all zeros -> nothing stored
        (("ab", DAY), "3c616200788000016f5e66e80004", ""),
    ],
)
def test_keys_and_type_bits_byte_for_byte(values, key_hex, type_bits_hex):
    key, type_bits = encode_key_and_type_bits(values)
    assert key.hex() == key_hex
    assert type_bits.hex() == type_bits_hex


def test_binary_of_255_bytes_or_more_takes_the_four_byte_length():
    assert encode_key((Binary(b"x" * 254, 0),))[:3].hex() == "5afe00"
    assert encode_key((Binary(b"x" * 255, 0),))[:7].hex() == "5aff000000ff00"


@pytest.mark.parametrize(
    "record_id, encoded_hex",
    [
        (1, "0008"),  # 1 bit: no middle byte; first = 0, last = 1 << 3
        (1023, "1ff8"),  # 10 bits still fit in two bytes: first = 1023 >> 5 = 31, last = (1023 << 3) & ff
        (1024, "202001"),  # 11 bits: one middle byte (N=1 in first's top 3 bits and last's low 3 bits)
        (
            2**18,
            "40200002",
        ),  # 19 bits: two middle bytes (2**18 >> 5 = 0x2000); first = 2 << 5 = 0x40, last = 02
    ],
)
def test_record_ids_in_mongods_width(record_id, encoded_hex):
    assert encode_record_id(record_id).hex() == encoded_hex
    assert decode_record_id_at_end(b"\x04" + bytes.fromhex(encoded_hex)) == (record_id, len(encoded_hex) // 2)
    assert decode_record_id_at_start(bytes.fromhex(encoded_hex) + b"\x01") == record_id


def test_standard_entries_key_on_keystring_and_record_id_the_id_index_on_keystring_alone():
    key, value = index_entry((DAY, 54.25), 300)
    assert key == encode_key((DAY, 54.25)) + encode_record_id(300) and value == b"\x01"
    assert split_entry(key) == (encode_key((DAY, 54.25)), 300)
    id_key, id_value = id_index_entry((OID,), 300)
    assert id_key == bytes.fromhex("6465a1b2c3d4e5f60718293a4b04")
    assert id_value == encode_record_id(300) == bytes.fromhex("0960")   # 300 = 0b1_0010_1100 -> 09 60
    # an _id with type bits: the record id, then the type bits
    assert id_index_entry((Int64(7),), 1) == (bytes.fromhex("2b0e04"), bytes.fromhex("0008" "02"))


def test_keys_sort_like_the_values_and_decode_back():
    values = [-1e19, -3.75, -1, 0, 0.25, 1, 1.5, 2, 54.37, 128, 2**40, 1e19]
    keys = [encode_key((v,)) for v in values]
    assert keys == sorted(keys)
    assert [decode_fields(k)[0] for k in keys] == values
    assert decode_fields(encode_key((DAY, 54.37, "a\0b", OID))) == [DAY, 54.37, "a\0b", OID]
    assert index_entry((1,), 255)[0] < index_entry((1,), 256)[0]      # ids order within one key
