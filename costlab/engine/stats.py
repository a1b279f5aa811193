"""WiredTiger statistics as named fields: snapshots and deltas.

The `statistics:` cursor yields (description, printable, value) rows; descriptions are
"<section>: <name>" (e.g. "log: log bytes written"). Log counters count what reached the
log buffer, so callers flush the log with sync=on before reading them (`snapshot` does).
"""
from __future__ import annotations

from typing import Mapping

# Our field name -> WiredTiger's statistics description.
FIELDS: dict[str, str] = {
    "log_bytes": "log: log bytes written",
    "log_payload_bytes": "log: log bytes of payload data",
    "log_records_compressed": "log: log records compressed",
    "log_records_not_compressed": "log: log records not compressed",
    "log_records_too_small": "log: log records too small to compress",
    "bytes_read_into_cache": "cache: bytes read into cache",
    "pages_read_into_cache": "cache: pages read into cache",
    "block_bytes_read": "block-manager: bytes read",
    "block_blocks_read": "block-manager: blocks read",
    "cursor_insert_calls": "cursor: cursor insert calls",
    "cursor_update_calls": "cursor: cursor update calls",
    "cursor_modify_calls": "cursor: cursor modify calls",
    "cursor_reserve_calls": "cursor: cursor reserve calls",
    "cursor_search_calls": "cursor: cursor search calls",
    "cursor_next_calls": "cursor: cursor next calls",
}


def read_statistics(session, flush_log: bool = True) -> dict[str, int]:
    """Every statistic of the connection, keyed by its description."""
    if flush_log:
        session.log_flush("sync=on")
    cursor = session.open_cursor("statistics:", None, None)
    values: dict[str, int] = {}
    try:
        while cursor.next() == 0:
            description, _, value = cursor.get_value()
            values[description] = int(value)
    finally:
        cursor.close()
    return values


_FIELD_KEYS: dict[str, int] | None = None   # our field name -> the statistic's key (this build's id)


def _field_keys(session) -> dict[str, int]:
    """The statistics cursor's key of each FIELDS entry, found once by walking every statistic
    (the keys are this WiredTiger build's constants). A statistic the build lacks is a clear error."""
    global _FIELD_KEYS
    if _FIELD_KEYS is None:
        cursor = session.open_cursor("statistics:", None, None)
        keys: dict[str, int] = {}
        try:
            while cursor.next() == 0:
                keys[cursor.get_value()[0]] = cursor.get_key()
        finally:
            cursor.close()
        missing = [desc for desc in FIELDS.values() if desc not in keys]
        if missing:
            raise KeyError(f"WiredTiger statistics missing from this build: {missing}")
        _FIELD_KEYS = {name: keys[desc] for name, desc in FIELDS.items()}
    return _FIELD_KEYS


def snapshot(session, flush_log: bool = True) -> dict[str, int]:
    """The FIELDS we use, by our names, each read by its key (a search per field, not a walk over the
    connection's ~1,000 statistics: that walk was a third of the docsize job's CPU)."""
    keys = _field_keys(session)
    if flush_log:
        session.log_flush("sync=on")
    cursor = session.open_cursor("statistics:", None, None)
    values: dict[str, int] = {}
    try:
        for name, key in keys.items():
            cursor.set_key(key)
            if cursor.search() != 0:
                raise KeyError(f"WiredTiger statistic {FIELDS[name]!r} not found by its key {key}")
            values[name] = int(cursor.get_value()[2])
    finally:
        cursor.close()
    return values


def log_records(values: Mapping[str, int]) -> int:
    """Log records written (WiredTiger counts them by compression outcome)."""
    return (values["log_records_compressed"] + values["log_records_not_compressed"]
            + values["log_records_too_small"])


def delta(before: Mapping[str, int], after: Mapping[str, int]) -> dict[str, int]:
    """after - before for every field of `before` (both from `snapshot`)."""
    return {name: after[name] - before[name] for name in before}
