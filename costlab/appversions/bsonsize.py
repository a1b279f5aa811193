"""BSON sizes by the spec's rules (bsonspec.org): what the layouts' size formulas are built from.

Per element `type byte + name + NUL + value`: int32 4 bytes, date 8, ObjectId 12, string
4 + bytes + NUL, binary 4 + subtype byte + bytes, embedded document / array 4 + elements + NUL
(array element names are "0", "1", ...). Values may be ints or polars expressions (one size per
row).
"""
from __future__ import annotations

import polars as pl

KEY_HEX = 64
KEY_BYTES = 32
DATE_BYTES = 8
INT32_BYTES = 4
OBJECTID_BYTES = 12

# Bytes of each bucket's code in a binary _id: YYYYMMDD / YYYYMM / YYYYQQ read as hex; a bucket a layout file
# declares is added when it is registered (costlab/appversions/buckets.py register_bucket).
BUCKET_CODE_BYTES: dict[str, int] = {"day": 4, "month": 3, "quarter": 3}
ITEM_NAME_CHARS = {"DD": 2, "MMDD": 4, "YYYYMMDD": 8}


def element(name: str | int, value_bytes: int | pl.Expr) -> int | pl.Expr:
    """Size of one BSON element: type byte + name + NUL + value."""
    name_len = name if isinstance(name, int) else len(name.encode())
    return 1 + name_len + 1 + value_bytes


def document(content_bytes: int | pl.Expr) -> int | pl.Expr:
    """Size of a BSON document (or array) around `content_bytes` of elements: int32 length + NUL."""
    return 4 + content_bytes + 1


def string_value(text_bytes: int) -> int:
    return 4 + text_bytes + 1


def binary_value(data_bytes: int) -> int:
    return 4 + 1 + data_bytes


def array_index_name_bytes(n: pl.Expr) -> pl.Expr:
    """Sum over i < n of len(str(i)): the names of an n-element array's elements (without NUL)."""
    n = n.cast(pl.Int64)  # unsigned counts would wrap below zero in n - power
    total = n
    for power in (10, 100, 1_000, 10_000, 100_000):
        total = total + pl.max_horizontal(n - power, pl.lit(0))
    return total
