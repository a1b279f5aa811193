"""Bytes in and out of a WiredTiger cursor without the Python bindings' generic packer.

The bindings' set_key / set_value / get_key / get_value run every call through
`wiredtiger.packing` (a Python loop over the table's format): with the studies' tables, whose keys
and values are one `u` column (index entries, BSON records) or a `q` record id, that loop was about
a quarter of a cheap update statement's CPU (appV6R3: 4.7 -> 3.3 CPU s at 100,078 events).
WiredTiger's packing writes a lone (last) `u` item as its bytes with no size in front, so those bytes
go to the C calls as they are; a `q` is WiredTiger's variable-length integer (`intpacking.pack_int`,
what the packer calls for it). Only for those formats: anything else is refused, never guessed.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Callable

from costlab.engine.wt import wiredtiger_module


@lru_cache(maxsize=1)
def _pack_int() -> Callable[[int], bytes]:
    wiredtiger_module()   # the module's import path, with its one clear error where it is missing
    from wiredtiger.intpacking import pack_int  # noqa: PLC0415  heavy: wiredtiger: the engine lab's module; without it EngineUnavailable says what to install
    return pack_int


def check_formats(cursor, key_formats: tuple[str, ...], value_format: str = "u") -> None:
    if cursor.key_format not in key_formats or cursor.value_format != value_format:
        raise ValueError(
            f"raw cursor access needs key_format in {key_formats} and value_format={value_format}, "
            f"got {cursor.key_format!r} / {cursor.value_format!r}"
        )


def set_key_bytes(cursor, key: bytes) -> None:
    cursor._key = key   # held here, as the bindings hold it: WiredTiger keeps a pointer into these bytes
    cursor._set_key(key)


def set_key_int(cursor, key: int) -> None:
    set_key_bytes(cursor, _pack_int()(key))


def set_value_bytes(cursor, value: bytes) -> None:
    cursor._value = value
    cursor._set_value(value)


def key_bytes(cursor) -> bytes:
    return cursor._get_key()


def value_bytes(cursor) -> bytes:
    return cursor._get_value()


__all__ = ["check_formats", "set_key_bytes", "set_key_int", "set_value_bytes", "key_bytes", "value_bytes"]
