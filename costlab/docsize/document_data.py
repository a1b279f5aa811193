"""The data of a document you declare (docsize.documents; costlab.docsize.documents reads the declaration):
the size it stands beside, its template grown with the orders' filler, its window key, the batches a load
inserts. The jobs import this module (bson, numpy, the orders' generator); the rule files import
costlab.docsize.documents, which stays light.
"""
from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import bson
import numpy as np
from bson import Int64, ObjectId

from costlab.docsize.documents import DocumentDeclaration, filler_name
from costlab.docsize.generate import (
    EPOCH_MS,
    MINUTE_MS,
    Template,
    _history_lengths,
    _write_history,
    _Writer,
    order_fields,
    target_doc_bytes,
    template_batches,
)
from costlab.engine.bsonbytes import _FIXED_SIZES, _value_size


def nearest_size_kb(document_bytes: int, sizes_kb: list[int]) -> int:
    """The configured size whose order is closest in BSON bytes (what a document kept as it is is compared
    with)."""
    return min((int(s) for s in sizes_kb), key=lambda s: (abs(target_doc_bytes(s) - document_bytes), s))


def measured_size_kb(declaration: DocumentDeclaration, document: dict, label: str,
                     sizes_kb: list[int]) -> int:
    """The size a document's label stands beside: its own ('4k' -> 4), or the nearest order's ('sample')."""
    if label != "sample":
        return int(label[:-1])
    return nearest_size_kb(len(bson.encode(document)), sizes_kb)


def _element_offsets(encoded: bytes) -> dict[str, int]:
    """name -> offset of its value bytes, for a document's top-level elements."""
    offsets = {}
    i, end = 4, len(encoded) - 1
    while i < end:
        kind = encoded[i]
        name_end = encoded.index(b"\0", i + 1)
        value = name_end + 1
        offsets[encoded[i + 1:name_end].decode()] = value
        size = _FIXED_SIZES.get(kind)
        i = value + (size if size is not None else _value_size(encoded, kind, value))
    return offsets


def _key_slot(value: Any) -> tuple[str, Any]:
    """(the template's slot for the window key, a placeholder of its BSON type)."""
    if isinstance(value, datetime):
        return "createdAt", datetime(1970, 1, 1, tzinfo=timezone.utc)
    if isinstance(value, Int64) or (isinstance(value, int) and not -(1 << 31) <= value < (1 << 31)):
        return "position_int64", Int64(0)
    if isinstance(value, int):
        return "position_int32", 0
    return "position_double", 0.0


def document_template(declaration: DocumentDeclaration, document: dict, size_kb: int | None, seed: int):
    """The template (costlab.docsize.generate.Template) of the declared document: `_id` first, the sample's
    fields with the window key's slot, and, at `size_kb`, the orders' filler that makes it exactly
    target_doc_bytes(size_kb) (None: the sample as it is)."""
    key = declaration.projected[0]
    slot, placeholder = _key_slot(document[key])
    fields = {"_id": ObjectId(bytes(12)), **{k: v for k, v in document.items() if k != "_id"}}
    fields[key] = placeholder
    filler = filler_name(fields)
    lengths: list[int] = []
    if size_kb is not None:
        empty = len(bson.encode({**fields, filler: []}))
        lengths = _history_lengths(target_doc_bytes(size_kb) - empty, seed, size_kb)
    prefix = bson.encode(fields)
    offsets = _element_offsets(prefix)
    writer = _Writer()
    writer.buf = bytearray(prefix[:-1])
    writer.slots = {"_id": offsets["_id"], slot: offsets[key]}
    at_offsets: list[int] = []
    note_offsets: list[int] = []
    if size_kb is not None:
        _write_history(writer, filler, lengths, at_offsets, note_offsets)
    writer.buf += b"\0"
    writer.buf[0:4] = len(writer.buf).to_bytes(4, "little")
    note_lengths = np.array(lengths, dtype=np.int64)
    gaps_rng = np.random.default_rng([seed, size_kb or 0, 3])
    at_gaps_ms = np.cumsum(gaps_rng.integers(1, 240, size=len(lengths))) * 60_000
    text_offsets = (np.concatenate([[0], np.cumsum(note_lengths)[:-1]]).astype(np.int64) if lengths
                    else note_lengths)
    return Template(np.frombuffer(bytes(writer.buf), dtype=np.uint8), dict(writer.slots),
                    np.array(at_offsets, dtype=np.int64), np.array(note_offsets, dtype=np.int64),
                    note_lengths, text_offsets, at_gaps_ms)


def key_value(document: dict, key: str, position: int):
    """The window key's value of the order at `position` (what the template's slot holds)."""
    slot, placeholder = _key_slot(document[key])
    if slot == "createdAt":
        return placeholder + timedelta(milliseconds=EPOCH_MS + position * MINUTE_MS)
    if slot == "position_int64":
        return Int64(position)
    return position if slot == "position_int32" else float(position)


def batches(declaration: DocumentDeclaration, document: dict, size_kb: int | None, documents: int, seed: int,
            customers: int | None = None, batch_docs: int = 1024):
    """(index key dicts, encoded documents) per batch, in window-key order: what a load inserts."""
    tpl = document_template(declaration, document, size_kb, seed)
    ids = order_fields(documents, seed, customers).ids
    key = declaration.projected[0]
    constant = {f: document[f] for f in declaration.projected[1:]}
    stream = sum(declaration.name.encode()) + 1000 * (size_kb or 0)
    position = 0
    for encoded in template_batches(tpl, documents, seed, stream=stream, customers=customers,
                                    batch_docs=batch_docs):
        keys = []
        for k in range(len(encoded)):
            keys.append({"_id": ObjectId(ids[position + k].tobytes()),
                         key: key_value(document, key, position + k), **constant})
        position += len(encoded)
        yield keys, encoded
