"""Bulk Upsert as raw BSON: the update statements of a whole batch of events built with numpy, and sent.

This is the path the loader (load.py) and the load test's upsert workers (loadtest.py) use.
`AppVersion.bulk_upsert_ops` (versions.py) stays the readable reference: one `UpdateOne` per event.
Both produce the same bytes on the wire (tests/test_appversions_statements.py loads the same events
through both and compares the collections, for every version).

Why not UpdateOne: building a few dicts and an UpdateOne per event, then `bson.encode` of each, is
one Python call chain per event; it cannot run much faster than a per-row loop
(benchmarks/README.md). Here no Python object is built per event except the final
`RawBSONDocument` wrapper, which the driver copies into the command as is.

How: for each (version, status), the reference builder encodes the statement
`{q, u, multi: false, upsert: true}` of one sentinel event; the bytes that depend on the event
(key as text, key as binary, the binary _id's bucket code, the date, the dynamic item name) are
found in that template by their sentinel values. All of them are fixed-width, so a batch is the
template broadcast to an (events, length) uint8 array with each event's bytes written in by column.
The per-version differences are the version's layout object (its statement, costlab/appversions/
layouts.py) and its declaration (bucket, item name format, status names, totals) as the reference
builder turns them into a statement: there is no per-version or per-layout code here. Each
template is checked once against the reference builder for a second, different event before it
is used.

Sending: `send_update_statements` runs the `update` command with the statements (unordered, the
collection's write concern) and checks the reply itself, as the driver's bulk_write would:
`writeErrors` / `writeConcernError` raise `BulkUpsertError` naming the version and the first
error; the counts (n, nModified, upserted) come back so callers can report events applied.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Iterator, Mapping, Sequence

import bson
import numpy as np
import polars as pl
from bson.raw_bson import RawBSONDocument
from pymongo import UpdateOne
from pymongo.collection import Collection
from pymongo.errors import OperationFailure

from costlab.appversions.events import EVENT_SCHEMA, STATUS_DTYPE, STATUSES
from costlab.appversions.ids import bucket_code_expr
from costlab.appversions.versions import AppVersion, bucket_code, chunked_batches, item_name

# Sentinel event whose bytes are searched for in its statement: values no real event's other
# bytes contain (a key of repeating distinct hex pairs, a date in 2037).
SENTINEL_KEY = "A1B2C3D4E5F60718" * 4
SENTINEL_DAY = datetime(2037, 11, 29, tzinfo=timezone.utc)
# A second event, different in every templated byte, to check a template before using it.
PROBE_KEY = "0F1E2D3C4B5A6978" * 4
PROBE_DAY = datetime(2012, 2, 29, tzinfo=timezone.utc)

KEY_HEX_DIGITS = 64
KEY_BYTES = KEY_HEX_DIGITS // 2
# Width in digits of a dynamic item name (DD, MMDD, YYYYMMDD: the last digits of YYYYMMDD).
ITEM_NAME_DIGITS = {"DD": 2, "MMDD": 4, "YYYYMMDD": 8}
ITEM_NAME_PREFIX = b"items."

# MongoDB's limits on one write command: maxWriteBatchSize statements, and a command body of at
# most maxBsonObjectSize (16 MiB) + 16 KiB; statements are kept within 16 MiB (the rest of the
# command is a few dozen bytes) so a large batch_size is split rather than refused.
MAX_WRITE_BATCH_STATEMENTS = 100_000
MAX_STATEMENT_BYTES_PER_COMMAND = 16 * 1024 * 1024
ARRAY_ELEMENT_OVERHEAD = 8  # type byte, index key ("0" .. "99999") and its NUL, per statement


def driver_statement(op: UpdateOne) -> bytes:
    """The update statement pymongo's bulk writer sends for an upsert UpdateOne, BSON-encoded.

    pymongo's `_Bulk.add_update` builds {q, u, multi, upsert} in this order; this reads the
    operation's filter and update the same way (private attributes: pymongo has no public getter).
    """
    return bson.encode({"q": op._filter, "u": op._doc, "multi": False, "upsert": op._upsert})


# --------------------------------------------------------------------------------------------
# Event columns as bytes
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class EventBytes:
    """Each event's templated bytes, one row per event (uint8 arrays)."""

    key_text: np.ndarray  # (n, 64) the key's uppercase hex digits (ASCII)
    key_binary: np.ndarray  # (n, 32) the key as bytes
    date_millis: np.ndarray  # (n, 8) the date as a little-endian int64 of ms since the epoch
    bucket_code: np.ndarray  # (n, 3 or 4) YYYYMMDD / YYYYMM / YYYYQQ read as hex (binary _id suffix)
    item_name: np.ndarray | None  # (n, 2/4/8) the dynamic item name's digits (ASCII), None without one
    status_code: np.ndarray  # (n,) index into STATUSES


def _ascii_digits(values: np.ndarray, width: int) -> np.ndarray:
    """(n, width) ASCII digits of the last `width` decimal digits of each value."""
    powers = 10 ** np.arange(width - 1, -1, -1, dtype=np.int64)
    return (ord("0") + (values[:, None] // powers) % 10).astype(np.uint8)


def _hex_pairs_to_bytes(ascii_hex: np.ndarray) -> np.ndarray:
    """(n, 2k) ASCII hex digits (0-9, A-F) -> (n, k) bytes, as bytes.fromhex does per row."""
    nibbles = np.where(ascii_hex <= ord("9"), ascii_hex - ord("0"), ascii_hex - (ord("A") - 10)).astype(
        np.uint8
    )
    return nibbles[:, 0::2] << 4 | nibbles[:, 1::2]


def _bucket_number(
    version: AppVersion, year: np.ndarray, month: np.ndarray, day: np.ndarray
) -> tuple[np.ndarray, int]:
    """The bucket code as a decimal number and its digit count (versions.bucket_code, vectorised)."""
    if version.bucket == "day":
        return year * 10_000 + month * 100 + day, 8
    if version.bucket == "month":
        return year * 100 + month, 6
    if version.bucket == "quarter":
        return year * 100 + (month - 1) // 3 + 1, 6
    raise ValueError(f"{version.name}: no arithmetic for bucket {version.bucket!r} "
                     "(its codes: _bucket_digits)")


def _bucket_digits(version: AppVersion, dates: pl.Series) -> np.ndarray:
    """(n, digits) ASCII digits of each date's bucket code: the built-in buckets by arithmetic, a declared
    one (costlab/appversions/buckets.py) by its code expression, whole column at once."""
    if version.bucket in ("day", "month", "quarter"):
        year, month, day = (getattr(dates.dt, part)().to_numpy().astype(np.int64)
                            for part in ("year", "month", "day"))
        return _ascii_digits(*_bucket_number(version, year, month, day))
    codes = pl.DataFrame({"date": dates}).select(bucket_code_expr(version.bucket))["date"]
    width = len(bucket_code(SENTINEL_DAY, version.bucket))
    return np.frombuffer(codes.str.join("").item().encode("ascii"), dtype=np.uint8).reshape(len(dates), width)


def event_bytes(version: AppVersion, events: pl.DataFrame) -> EventBytes:
    """Validate `events` (key, date, status) and turn its columns into the bytes statements hold."""
    missing = {"key", "date", "status"} - set(events.columns)
    if missing:
        raise ValueError(f"events lack columns {sorted(missing)}; need key, date, status")
    for column in ("key", "date", "status"):
        if events[column].null_count():
            raise ValueError(f"events column {column!r} has {events[column].null_count()} null values")
    n = events.height
    keys = events["key"].cast(pl.Utf8).str.to_uppercase()
    bad_keys = keys.filter(~keys.str.contains(f"^[0-9A-F]{{{KEY_HEX_DIGITS}}}$"))
    if len(bad_keys):
        raise ValueError(
            f"key must be {KEY_HEX_DIGITS} hexadecimal digits, got {bad_keys[0]!r} "
            f"({len(bad_keys)} such keys)"
        )
    if not isinstance(events.schema["date"], pl.Datetime):
        raise ValueError(f"events column 'date' must be a Datetime, got {events.schema['date']}")
    try:
        status_code = events["status"].cast(STATUS_DTYPE).to_physical().to_numpy()
    except pl.exceptions.InvalidOperationError:
        unknown = events["status"].cast(pl.Utf8).filter(~events["status"].cast(pl.Utf8).is_in(list(STATUSES)))
        raise ValueError(f"unknown status {unknown[0]!r}; allowed: {', '.join(STATUSES)}") from None

    # One string of all keys back to back: a single copy into numpy, no Python str per event.
    key_text = np.frombuffer(keys.str.join("").item().encode("ascii"), dtype=np.uint8).reshape(
        n, KEY_HEX_DIGITS
    )
    dates = events["date"]
    year = dates.dt.year().to_numpy().astype(np.int64)
    if n and not (1000 <= year.min() and year.max() <= 9999):
        raise ValueError(f"event years must have four digits, got {year.min()}..{year.max()}")
    month = dates.dt.month().to_numpy().astype(np.int64)
    day = dates.dt.day().to_numpy().astype(np.int64)
    item_digits = ITEM_NAME_DIGITS.get(version.item_name_format or "")
    if version.item_name_format and item_digits is None:
        raise ValueError(
            f"{version.name}: unknown item name format {version.item_name_format!r}; "
            f"allowed: {', '.join(ITEM_NAME_DIGITS)}"
        )
    return EventBytes(
        key_text=key_text,
        key_binary=_hex_pairs_to_bytes(key_text),
        date_millis=dates.dt.epoch("ms").to_numpy().astype("<i8").view(np.uint8).reshape(n, 8),
        # The digits of YYYYMM.. read as hex: "202403" -> 0x20 0x24 0x03, as Buffer.from(.., 'hex').
        bucket_code=_hex_pairs_to_bytes(_bucket_digits(version, dates)),
        item_name=None
        if item_digits is None
        else _ascii_digits(year * 10_000 + month * 100 + day, item_digits),
        status_code=status_code.astype(np.intp),
    )


# --------------------------------------------------------------------------------------------
# Templates
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StatementTemplate:
    """One (version, status)'s statement bytes and where each event's bytes go in it."""

    statement: np.ndarray  # uint8: the sentinel event's statement
    key_text_offsets: tuple[int, ...]  # 64 ASCII hex digits of the key start here
    key_binary_offsets: tuple[int, ...]  # 32 key bytes start here (bucketed ids: the code follows)
    bucket_code_offsets: tuple[int, ...]  # the binary _id's bucket code starts here
    date_offsets: tuple[int, ...]  # int64 ms dates start here
    item_name_offsets: tuple[int, ...]  # a dynamic item's name (after "items.") starts here


def _offsets(buffer: bytes, pattern: bytes) -> tuple[int, ...]:
    found, at = [], buffer.find(pattern)
    while at >= 0:
        found.append(at)
        at = buffer.find(pattern, at + 1)
    return tuple(found)


def _one_event(key: str, day: datetime, status: str) -> pl.DataFrame:
    return pl.DataFrame({"key": [key], "date": [day], "status": [status]}, schema=EVENT_SCHEMA)


def _reference_statement(version: AppVersion, key: str, day: datetime, status: str) -> bytes:
    return driver_statement(version.bulk_upsert_ops(_one_event(key, day, status))[0])


def _derive_template(version: AppVersion, status: str) -> StatementTemplate:
    statement = _reference_statement(version, SENTINEL_KEY, SENTINEL_DAY, status)
    key_binary_offsets = _offsets(statement, bytes.fromhex(SENTINEL_KEY))
    bucket_code_offsets: tuple[int, ...] = ()
    if version.layout.bucketed_id:  # the binary _id is key + bucket code
        code = bytes.fromhex(bucket_code(SENTINEL_DAY, version.bucket))
        bucket_code_offsets = tuple(
            at + KEY_BYTES
            for at in key_binary_offsets
            if statement[at + KEY_BYTES : at + KEY_BYTES + len(code)] == code
        )
    item_name_offsets: tuple[int, ...] = ()
    if version.item_name_format:
        name = item_name(SENTINEL_DAY, version.item_name_format).encode()
        item_name_offsets = tuple(
            at + len(ITEM_NAME_PREFIX) for at in _offsets(statement, ITEM_NAME_PREFIX + name)
        )
    millis = int(SENTINEL_DAY.timestamp() * 1000)
    return StatementTemplate(
        statement=np.frombuffer(statement, dtype=np.uint8),
        key_text_offsets=_offsets(statement, SENTINEL_KEY.encode()),
        key_binary_offsets=key_binary_offsets,
        bucket_code_offsets=bucket_code_offsets,
        date_offsets=_offsets(statement, struct.pack("<q", millis)),
        item_name_offsets=item_name_offsets,
    )


def _fill(template: StatementTemplate, columns: EventBytes, rows: np.ndarray) -> np.ndarray:
    """(len(rows), statement length) uint8: the template with events `rows`' bytes written in."""
    filled = np.empty((len(rows), len(template.statement)), dtype=np.uint8)
    filled[:] = template.statement
    for offsets, values in (
        (template.key_text_offsets, columns.key_text),
        (template.key_binary_offsets, columns.key_binary),
        (template.bucket_code_offsets, columns.bucket_code),
        (template.date_offsets, columns.date_millis),
        (template.item_name_offsets, columns.item_name),
    ):
        if offsets:
            picked = values[rows]
            for at in offsets:
                filled[:, at : at + picked.shape[1]] = picked
    return filled


_TEMPLATES: dict[tuple[str, str], tuple[AppVersion, StatementTemplate]] = {}


def statement_template(version: AppVersion, status: str) -> StatementTemplate:
    """The checked template of (version, status), derived once per process."""
    cached = _TEMPLATES.get((version.name, status))
    if cached is not None and cached[0] == version:
        return cached[1]
    template = _derive_template(version, status)
    # A sentinel byte pattern found somewhere it does not belong would corrupt every statement:
    # fill the template for a different event and compare with the reference builder's bytes.
    probe = _one_event(PROBE_KEY, PROBE_DAY, status)
    built = _fill(template, event_bytes(version, probe), np.zeros(1, dtype=np.intp)).tobytes()
    if built != _reference_statement(version, PROBE_KEY, PROBE_DAY, status):
        raise RuntimeError(
            f"{version.name}: the raw statement template for status {status!r} does not "
            "reproduce the reference builder's statement (versions.bulk_upsert_ops); "
            "a templated value is not fixed-width or not found in the template"
        )
    _TEMPLATES[(version.name, status)] = (version, template)
    return template


# --------------------------------------------------------------------------------------------
# Statements
# --------------------------------------------------------------------------------------------


def update_statements(version: AppVersion, events: pl.DataFrame) -> list[RawBSONDocument]:
    """One upsert statement {q, u, multi: false, upsert: true} per event row, in row order.

    The same bytes as encoding `version.bulk_upsert_ops(events)` the way the driver does.
    """
    columns = event_bytes(version, events)
    statements: list[RawBSONDocument | None] = [None] * events.height
    for code, status in enumerate(STATUSES):
        rows = np.flatnonzero(columns.status_code == code)
        if not len(rows):
            continue
        filled = _fill(statement_template(version, status), columns, rows)
        length, flat = filled.shape[1], filled.tobytes()
        # The only per-event Python work: slicing one bytes object and wrapping the slice.
        for i, position in enumerate(rows.tolist()):
            statements[position] = RawBSONDocument(flat[i * length : (i + 1) * length])
    return statements  # type: ignore[return-value]  # every row has one status: no None left


def iter_statement_batches(
    version: AppVersion, events: pl.DataFrame, batch_size: int = 250, chunk_rows: int = 50_000
) -> Iterator[list[RawBSONDocument]]:
    """Statements in batches of `batch_size`, built `chunk_rows` events at a time (bounded memory)."""
    return chunked_batches(lambda chunk: update_statements(version, chunk), events, batch_size, chunk_rows)


# --------------------------------------------------------------------------------------------
# Sending
# --------------------------------------------------------------------------------------------


class BulkUpsertError(RuntimeError):
    """The server refused some statements of an update command (or its write concern)."""

    def __init__(self, message: str, version: str, reply: Mapping | None = None):
        super().__init__(message)
        self.version = version
        self.reply = reply


@dataclass(frozen=True)
class UpsertCounts:
    """What the server reports for upsert statements (summed over commands)."""

    statements: int = 0  # statements sent
    applied: int = 0  # n: statements that matched a document or upserted one
    modified: int = 0  # nModified: matched documents the update changed
    upserted: int = 0  # documents created

    def __add__(self, other: "UpsertCounts") -> "UpsertCounts":
        return UpsertCounts(
            self.statements + other.statements,
            self.applied + other.applied,
            self.modified + other.modified,
            self.upserted + other.upserted,
        )


def check_update_reply(reply: Mapping, version: str, statements: int) -> UpsertCounts:
    """The counts of an `update` command's reply; BulkUpsertError on any write or write concern error.

    The reply of a write command is ok: 1 even when statements failed: the failures are in
    `writeErrors` (index, code, errmsg) and `writeConcernError`, which the driver's bulk_write
    would raise as BulkWriteError; here the reply is read directly, so it is checked here.
    """
    write_errors = reply.get("writeErrors") or []
    if write_errors:
        first = min(write_errors, key=lambda error: error.get("index", 0))
        raise BulkUpsertError(
            f"{version}: {len(write_errors)} of {statements} upsert statements failed; first: statement "
            f"{first.get('index')}, code {first.get('code')}: {first.get('errmsg')}",
            version,
            reply,
        )
    concern_error = reply.get("writeConcernError")
    if concern_error:
        raise BulkUpsertError(
            f"{version}: write concern error, code {concern_error.get('code')} "
            f"({concern_error.get('codeName', '')}): {concern_error.get('errmsg')} "
            f"(the {statements} statements may be applied but not as durable as asked)",
            version,
            reply,
        )
    if "n" not in reply:
        raise BulkUpsertError(f"{version}: update reply without 'n': {dict(reply)!r}", version, reply)
    applied, upserted = int(reply["n"]), len(reply.get("upserted") or [])
    # Every upsert statement either matches one document or creates one: n must count them all.
    if applied != statements:
        raise BulkUpsertError(
            f"{version}: the server applied {applied} of {statements} upsert statements "
            "without reporting an error",
            version,
            reply,
        )
    return UpsertCounts(
        statements=statements, applied=applied, modified=int(reply.get("nModified", 0)), upserted=upserted
    )


def _command_slices(statements: Sequence[RawBSONDocument]) -> Iterator[Sequence[RawBSONDocument]]:
    """Consecutive slices that each fit one write command (statement count and bytes)."""
    start, size = 0, 0
    for i, statement in enumerate(statements):
        cost = len(statement.raw) + ARRAY_ELEMENT_OVERHEAD
        if i > start and (
            size + cost > MAX_STATEMENT_BYTES_PER_COMMAND or i - start >= MAX_WRITE_BATCH_STATEMENTS
        ):
            yield statements[start:i]
            start, size = i, 0
        size += cost
    if start < len(statements):
        yield statements[start:]


def send_update_statements(
    collection: Collection, statements: Sequence[RawBSONDocument], version: str
) -> UpsertCounts:
    """Run unordered `update` commands with the pre-encoded statements; check each reply.

    Uses the collection's write concern when it is not the server default (as bulk_write does).
    Raises BulkUpsertError naming `version` and the first error; returns the summed counts.
    """
    options = {}
    if not collection.write_concern.is_server_default:
        options["writeConcern"] = collection.write_concern.document
    counts = UpsertCounts()
    for part in _command_slices(statements):
        try:
            reply = collection.database.command(
                "update", collection.name, updates=list(part), ordered=False, **options
            )
        except OperationFailure as exc:  # the whole command was refused (ok: 0)
            raise BulkUpsertError(
                f"{version}: update command on {collection.full_name} failed: {exc}", version, exc.details
            ) from exc
        counts += check_update_reply(reply, version, len(part))
    return counts
