"""PROTOTYPE (benchmark code, not product code): Bulk Upsert statements as raw BSON, no per-event dicts.

What the upsert benchmark measures as "the fix": for each version and status, the product's own
builder encodes the statement {q, u, multi, upsert} of one sentinel event; the bytes that depend on
the event (key as text, key as binary, the bucket code of the binary _id, the date, the item name)
are found in that template by their sentinel values; then a whole batch is the template broadcast
to an (n, length) uint8 array with each event's values written in by numpy (as
costlab/docsize/generate.py does for documents). Each statement is wrapped in a RawBSONDocument,
which the driver copies as is, e.g. `db.command({"update": coll, "updates": statements, "ordered": False})`.

`statements(version, events)` returns the same bytes as encoding the product's UpdateOne
operations (tests/test_benchmarks_smoke.py checks it for every version).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from datetime import datetime, timezone

import bson
import numpy as np
import polars as pl
from bson.raw_bson import RawBSONDocument

from costlab.appversions.events import EVENT_SCHEMA, STATUSES
from costlab.appversions.versions import AppVersion, bucket_code, item_name

SENTINEL_KEY = "A1B2C3D4E5F60718" * 4
SENTINEL_DAY = datetime(2037, 11, 29, tzinfo=timezone.utc)


def statement_bytes(op) -> bytes:
    """The update statement pymongo's bulk writer sends for an UpdateOne, BSON-encoded."""
    return bson.encode({"q": op._filter, "u": op._doc, "multi": False, "upsert": op._upsert})


def _find_all(buf: bytes, pattern: bytes) -> list[int]:
    found, at = [], buf.find(pattern)
    while at >= 0:
        found.append(at)
        at = buf.find(pattern, at + 1)
    return found


@dataclass(frozen=True)
class _Template:
    buf: np.ndarray
    key_text: list[int]   # offsets of the 64 key characters
    key_binary: list[int]  # offsets of the 32 key bytes (a binary _id's bucket code follows them)
    code_len: int          # bytes of bucket code after each key_binary (0: a plain binary key)
    dates: list[int]       # offsets of int64 dates
    names: list[int]       # offsets of item names (after "items.")


def _template(version: AppVersion, status: str) -> _Template:
    sentinel = pl.DataFrame({"key": [SENTINEL_KEY], "date": [SENTINEL_DAY], "status": [status]},
                            schema=EVENT_SCHEMA)
    buf = statement_bytes(version.bulk_upsert_ops(sentinel)[0])
    key_binary = _find_all(buf, bytes.fromhex(SENTINEL_KEY))
    code_len = 0
    if version.layout not in ("embedded_id", "key_string", "key_binary"):
        code = bytes.fromhex(bucket_code(SENTINEL_DAY, version.bucket))
        assert all(buf[at + 32:at + 32 + len(code)] == code for at in key_binary)
        code_len = len(code)
    names = []
    if version.item_name_format:
        prefix = b"items."
        names = [at + len(prefix) for at in _find_all(buf, prefix + item_name(SENTINEL_DAY, version.item_name_format).encode())]
    millis = int(SENTINEL_DAY.timestamp() * 1000)
    return _Template(np.frombuffer(buf, dtype=np.uint8), _find_all(buf, SENTINEL_KEY.encode()), key_binary,
                     code_len, _find_all(buf, struct.pack("<q", millis)), names)


def _bcd(values: np.ndarray) -> np.ndarray:
    """Two decimal digits as one byte read as hex ("12" -> 0x12), as Buffer.from(.., 'hex') does."""
    return ((values // 10) << 4 | values % 10).astype(np.uint8)


def _digits(values: np.ndarray, width: int) -> np.ndarray:
    """(n, width) ASCII digits of values."""
    powers = 10 ** np.arange(width - 1, -1, -1)
    return (48 + (values[:, None] // powers) % 10).astype(np.uint8)


def statements(version: AppVersion, events: pl.DataFrame) -> list[RawBSONDocument]:
    n = events.height
    keys = events["key"].str.to_uppercase()
    if not (keys.str.len_bytes() == 64).all():
        raise ValueError("every key must be 64 hexadecimal digits")
    arrow = keys.cast(pl.Binary).to_arrow()  # one chunk: 64 bytes per key, back to back
    offsets = np.frombuffer(arrow.buffers()[1], dtype=np.int64)[arrow.offset:arrow.offset + n + 1]
    data = np.frombuffer(arrow.buffers()[2], dtype=np.uint8)
    key_text = data[offsets[0]:offsets[0] + 64 * n].reshape(n, 64)
    nibbles = np.where(key_text <= ord("9"), key_text - ord("0"), key_text - ord("A") + 10).astype(np.uint8)
    key_binary = nibbles[:, 0::2] << 4 | nibbles[:, 1::2]
    dates = events["date"]
    millis = dates.dt.epoch("ms").to_numpy().astype("<i8").view(np.uint8).reshape(n, 8)
    year, month, day = (dates.dt.year().to_numpy(), dates.dt.month().to_numpy().astype(np.int64),
                        dates.dt.day().to_numpy().astype(np.int64))
    code_parts = [_bcd(year // 100), _bcd(year % 100)]
    if version.bucket == "day":
        code_parts += [_bcd(month), _bcd(day)]
    elif version.bucket == "month":
        code_parts += [_bcd(month)]
    else:
        code_parts += [_bcd((month - 1) // 3 + 1)]
    code = np.stack(code_parts, axis=1)
    names = None
    if version.item_name_format == "DD":
        names = _digits(day, 2)
    elif version.item_name_format == "MMDD":
        names = _digits(month * 100 + day, 4)
    elif version.item_name_format == "YYYYMMDD":
        names = _digits(year.astype(np.int64) * 10_000 + month * 100 + day, 8)

    status = events["status"].cast(pl.Utf8).to_numpy()
    out: list[RawBSONDocument | None] = [None] * n
    for name in STATUSES:
        rows_index = np.flatnonzero(status == name)
        if not len(rows_index):
            continue
        tpl = _template(version, name)
        rows = np.empty((len(rows_index), len(tpl.buf)), dtype=np.uint8)
        rows[:] = tpl.buf
        for at in tpl.key_text:
            rows[:, at:at + 64] = key_text[rows_index]
        for at in tpl.key_binary:
            rows[:, at:at + 32] = key_binary[rows_index]
            if tpl.code_len:
                rows[:, at + 32:at + 32 + tpl.code_len] = code[rows_index]
        for at in tpl.dates:
            rows[:, at:at + 8] = millis[rows_index]
        for at in tpl.names:
            rows[:, at:at + names.shape[1]] = names[rows_index]
        length = rows.shape[1]
        flat = rows.tobytes()
        for i, position in enumerate(rows_index.tolist()):
            out[position] = RawBSONDocument(flat[i * length:(i + 1) * length])
    return out  # type: ignore[return-value]
