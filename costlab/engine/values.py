"""BSON values as the engine lab's updates see them: their order, their numbers, their paths.

Values are what `bson.decode` gives with costlab.engine.update.CODEC: dict, list, int (an int32),
`bson.Int64`, float, str, bool, None, datetime (naive, UTC), bytes / `Binary`, ObjectId, Timestamp,
Regex, MinKey, MaxKey, Decimal128. `MISSING` is a field that is not there (not null).

The order is mongod's (src/mongo/bson/bsontypes.h canonicalizeBSONType; BSONElement::compareElements;
facts carried over, code written here): types in canonical order (MinKey < null < numbers < strings <
objects < arrays < binary < ObjectId < bool < date < timestamp < regex < MaxKey), then within a type:
numbers by value whatever their width (NaN below every number), strings by their UTF-8 bytes, objects
field by field (the value's canonical type, then the name, then the value; a prefix sorts first),
arrays element by element, binary by length then subtype then bytes.
"""
from __future__ import annotations

import math
from datetime import datetime
from typing import Any

from bson import Binary, Decimal128, Int64, MaxKey, MinKey, ObjectId, Regex, Timestamp
from bson.code import Code

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


class _Missing:
    """A field that is not there (not null): expression objects leave such fields out."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


def nullish(value: object) -> bool:
    return value is None or value is MISSING


# mongod's canonical type numbers (BSONType's canonicalizeBSONType, bsontypes.cpp), in the order tested:
# a subclass before its base: bool before the numbers (a bool is an int), Code before str (bson's Code is one)
_CANONICAL_TYPES: tuple[tuple[type | tuple[type, ...], int], ...] = (
    (bool, 40), ((int, float, Decimal128), 10), (Code, 60), (str, 15), (dict, 20), (list, 25),
    ((bytes, Binary), 30), (ObjectId, 35), (datetime, 45), (Timestamp, 47), (Regex, 50), (MinKey, -1),
    (MaxKey, 127))


def canonical_type(value: object) -> int:
    """mongod's canonical type number of a value (its rank among types when comparing)."""
    if value is MISSING:
        return 0
    if value is None:
        return 5
    for types, number in _CANONICAL_TYPES:
        if isinstance(value, types):
            return number
    raise ValueError(f"values of type {type(value).__name__} are not implemented in the engine lab")


def _sign(x: Any) -> int:
    return (x > 0) - (x < 0)


def _number_compare(left: Any, right: Any) -> int:
    if isinstance(left, Decimal128) or isinstance(right, Decimal128):
        left, right = (v.to_decimal() if isinstance(v, Decimal128) else v for v in (left, right))
    left_nan = isinstance(left, float) and math.isnan(left)
    right_nan = isinstance(right, float) and math.isnan(right)
    if left_nan or right_nan:
        return right_nan - left_nan if not (left_nan and right_nan) else 0
    return _sign(left - right) if not (isinstance(left, float) or isinstance(right, float)) else (
        (left > right) - (left < right))


def _binary(value: bytes) -> tuple[int, int, bytes]:
    subtype = value.subtype if isinstance(value, Binary) else 0
    return len(value), subtype, bytes(value)


_SAME_TYPE_FAST = {int, str, datetime, bool}   # Python's order is mongod's (str: by code point = UTF-8 bytes)


def compare(left: object, right: object) -> int:
    """-1, 0 or 1: `left` against `right` in mongod's order of BSON values."""
    kind = type(left)
    if kind is type(right) and (kind in _SAME_TYPE_FAST
                                or (kind is float and left == left and right == right)):
        return (left > right) - (left < right)
    lt, rt = canonical_type(left), canonical_type(right)
    if lt != rt:
        return -1 if lt < rt else 1
    if lt == 10:
        return _number_compare(left, right)
    if lt == 15:
        return _bytes_compare(left.encode(), right.encode())
    if lt == 20:
        return _object_compare(left, right)
    if lt == 25:
        for a, b in zip(left, right):
            c = compare(a, b)
            if c:
                return c
        return _sign(len(left) - len(right))
    if lt == 30:
        a, b = _binary(left), _binary(right)
        return (a > b) - (a < b)
    if lt == 35:
        return _bytes_compare(left.binary, right.binary)
    if lt in (40, 45):
        return (left > right) - (left < right)
    if lt == 47:
        a, b = (left.time, left.inc), (right.time, right.inc)
        return (a > b) - (a < b)
    if lt == 50:
        a, b = (left.pattern, left.flags), (right.pattern, right.flags)
        return (a > b) - (a < b)
    if lt == 60:
        return (str(left) > str(right)) - (str(left) < str(right))
    return 0


def _bytes_compare(a: bytes, b: bytes) -> int:
    return (a > b) - (a < b)


def _fields(document: dict) -> list[tuple[str, object]]:
    return [(k, v) for k, v in document.items() if v is not MISSING]   # a pipeline's tombstones left out


def _object_compare(left: dict, right: dict) -> int:
    left_items, right_items = _fields(left), _fields(right)
    for (ln, lv), (rn, rv) in zip(left_items, right_items):
        lt, rt = canonical_type(lv), canonical_type(rv)
        if lt != rt:
            return -1 if lt < rt else 1
        c = _bytes_compare(ln.encode(), rn.encode())
        if c:
            return c
        c = compare(lv, rv)
        if c:
            return c
    return _sign(len(left_items) - len(right_items))


def equal(left: object, right: object) -> bool:
    return compare(left, right) == 0


# -- numbers ---------------------------------------------------------------------------------

def number_kind(value: object) -> str | None:
    """'int' (int32), 'long' (int64), 'double', 'decimal', or None for a non-number."""
    if isinstance(value, bool):
        return None
    if isinstance(value, Int64):
        return "long"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "double"
    if isinstance(value, Decimal128):
        return "decimal"
    return None


_WIDTH = {"int": 0, "long": 1, "double": 2, "decimal": 3}


def widest(*kinds: str) -> str:
    return max(kinds, key=_WIDTH.__getitem__)


def as_kind(value: int | float, kind: str) -> Any:
    """`value` as a BSON number of `kind` (an int32 as a plain int, an int64 as Int64)."""
    if kind == "double":
        return float(value)
    if kind == "long":
        return Int64(value)
    return int(value)


def integer_result(total: int, kind: str) -> Any:
    """An exact integer result of int32/int64 operands: int32 while it fits, else int64; None when
    it overflows int64 (the caller decides: an update fails, an expression goes to double)."""
    if kind == "int" and INT32_MIN <= total <= INT32_MAX:
        return int(total)
    if INT64_MIN <= total <= INT64_MAX:
        return Int64(total)
    return None


def is_integral(value: object) -> bool:
    kind = number_kind(value)
    return kind in ("int", "long") or (kind == "double" and math.isfinite(value) and value == int(value))


__all__ = [
    "MISSING",
    "nullish",
    "canonical_type",
    "compare",
    "equal",
    "number_kind",
    "widest",
    "as_kind",
    "integer_result",
    "is_integral",
]
