"""The engine lab's BSON type ranks and two-argument operators, against mongod's own numbers."""
from __future__ import annotations

from datetime import datetime, timezone

import pytest
from bson import Binary, Code, Decimal128, Int64, MaxKey, MinKey, ObjectId, Regex, Timestamp

from costlab.engine.expressions import compile_expression
from costlab.engine.values import canonical_type


@pytest.mark.parametrize("value, rank", [
    # canonicalizeBSONType (mongo r6.0.5 src/mongo/bson/bsontypes.cpp): the rank each type sorts by
    (MinKey(), -1), (None, 5), (1, 10), (Int64(2), 10), (1.5, 10), (Decimal128("1"), 10), ("a", 15),
    ({}, 20), ([], 25), (b"x", 30), (Binary(b"x", 4), 30), (ObjectId(), 35), (True, 40),
    (datetime(2020, 1, 1, tzinfo=timezone.utc), 45), (Timestamp(1, 1), 47), (Regex("a"), 50),
    (Code("f()"), 60), (MaxKey(), 127),
])
def test_each_type_ranks_as_mongod_ranks_it(value, rank):
    # bool is an int and Code a str in Python: each still ranks as its own BSON type
    assert canonical_type(value) == rank


def _evaluate(expression: dict, document: dict) -> object:
    return compile_expression(expression)({"ROOT": document, "CURRENT": document})


def test_subtract_and_divide_are_null_when_an_argument_is():
    day = datetime(2020, 1, 2, tzinfo=timezone.utc)
    assert _evaluate({"$subtract": ["$a", 1]}, {"a": None}) is None
    assert _evaluate({"$divide": [1, "$missing"]}, {}) is None
    # a date minus a date: milliseconds as a long (86,400,000 ms in a day)
    day_before = datetime(2020, 1, 1, tzinfo=timezone.utc)
    assert _evaluate({"$subtract": ["$d", "$e"]}, {"d": day, "e": day_before}) == Int64(86_400_000)
    assert _evaluate({"$divide": [7, 2]}, {}) == 3.5
    with pytest.raises(ValueError, match="divide by zero"):
        _evaluate({"$divide": [7, 0]}, {})
