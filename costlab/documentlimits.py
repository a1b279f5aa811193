"""A document of yours (a docsize sample, an arraygrowth element) held to mongod's limits before any job.

- at most 16 MiB of BSON (mongod's BSONObjMaxUserSize: a 16,777,236-byte insert was refused by mongod 6.0.5,
  "object to insert too large ... max size: 16777216");
- at most 100 levels of nesting, MongoDB's documented limit (mongod 6.0.5 itself refused an insert past
  180 levels: "exceeds 180 levels of nesting"); the top-level document is level 1;
- a field the engine lab indexes (a projected field) names a WiredTiger table, so it is letters, digits,
  `_` and `-` (a `/`, `,` or `(` died in WiredTiger with a traceback; mongod accepts them).

Standard library and bson only; the walk is iterative, so a sample 5,000 levels deep is one line, not a
RecursionError.
"""
from __future__ import annotations

import re
from typing import Any

MAX_BSON_BYTES = 16 * 1024 * 1024
MAX_NESTING = 100
MAX_FILE_BYTES = 4 * MAX_BSON_BYTES     # JSON text a sample or element file may hold before it is read
INDEXED_NAME_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_-]{0,63}$")
INDEXED_NAME_ALLOWED = "letters, digits, _ and - (at most 64, not starting with -)"


def nesting(value: Any) -> int:
    """Levels of documents and arrays on the deepest path (a flat document is 1; a scalar is 0)."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, dict):
            children = node.values()
        elif isinstance(node, (list, tuple)):
            children = node
        else:
            continue
        deepest = max(deepest, level)
        if deepest > MAX_NESTING + 1:    # deep enough to refuse: stop walking
            return deepest
        stack.extend((child, level + 1) for child in children)
    return deepest


def document_problem(document: Any, what: str, bson_bytes: int | None = None) -> str | None:
    """Why mongod would refuse `document` (what: how the message names it), or None."""
    depth = nesting(document)
    if depth > MAX_NESTING:
        shown = f"{depth}" if depth <= MAX_NESTING + 1 else f"more than {MAX_NESTING}"
        return (f"{what} nests {shown} levels of documents and arrays: MongoDB allows at most {MAX_NESTING}")
    if bson_bytes is None:
        import bson  # noqa: PLC0415  heavy: bson; the rule files import this module (through costlab.declarations)

        try:
            bson.encode(document)
        except (bson.errors.InvalidDocument, OverflowError, ValueError) as err:
            return f"{what} is not a document mongod can store: {' '.join(str(err).split())[:160]}"
        except RecursionError:
            return f"{what} nests more than {MAX_NESTING} levels of documents and arrays"
        bson_bytes = len(bson.encode(document))
    if bson_bytes > MAX_BSON_BYTES:
        return (f"{what} is {bson_bytes:,} BSON bytes: mongod stores at most {MAX_BSON_BYTES:,} "
                "(16 MiB) in a document")
    return None


def indexed_name_problem(name: str) -> str | None:
    """Why a field the engine lab indexes cannot be one, or None."""
    if INDEXED_NAME_RE.match(name):
        return None
    return f"{name!r} cannot name an index of the engine lab (allowed: {INDEXED_NAME_ALLOWED})"
