"""Raw cursor access (costlab.engine.cursors) stores and reads exactly what the bindings' packer does."""
from __future__ import annotations

import pytest

from costlab.engine.connection import Engine, EngineSettings
from costlab.engine.cursors import (
    check_formats,
    key_bytes,
    set_key_bytes,
    set_key_int,
    set_value_bytes,
    value_bytes,
)

IDS = [1, 2, 63, 64, 127, 128, 8191, 8192, 2**20 + 5, 2**40 + 1, 2**63 - 1, -1, -64, -65, -2**63]


def _rows(cursor) -> list:
    cursor.reset()
    rows = []
    while cursor.next() == 0:
        rows.append((cursor.get_key(), cursor.get_value()))
    return rows


def test_raw_keys_and_values_are_the_packers(tmp_path):
    with Engine(tmp_path / "wt", EngineSettings(cache_mb=8, journal=False)) as engine:
        session = engine.session
        for uri, fmt in (
            ("table:raw_q", "key_format=q,value_format=u"),
            ("table:packed_q", "key_format=q,value_format=u"),
            ("table:raw_u", "key_format=u,value_format=u"),
            ("table:packed_u", "key_format=u,value_format=u"),
        ):
            session.create(uri, fmt)
        raw_q, packed_q = session.open_cursor("table:raw_q"), session.open_cursor("table:packed_q")
        raw_u, packed_u = session.open_cursor("table:raw_u"), session.open_cursor("table:packed_u")
        for i, record_id in enumerate(IDS):
            value = bytes([i]) * (i + 1) + b"\x00"   # a trailing NUL: a `u` item is not a C string
            set_key_int(raw_q, record_id)
            set_value_bytes(raw_q, value)
            raw_q.insert()
            packed_q.set_key(record_id)
            packed_q.set_value(value)
            packed_q.insert()
            key = b"\x00k" + value
            set_key_bytes(raw_u, key)
            set_value_bytes(raw_u, value)
            raw_u.insert()
            packed_u.set_key(key)
            packed_u.set_value(value)
            packed_u.insert()
        assert _rows(raw_q) == _rows(packed_q) and len(_rows(raw_q)) == len(IDS)
        assert _rows(raw_u) == _rows(packed_u)
        # and read back raw: the same bytes the bindings unpack
        for record_id in (IDS[0], IDS[-1]):
            set_key_int(raw_q, record_id)
            assert raw_q.search() == 0
            packed_q.set_key(record_id)
            assert packed_q.search() == 0
            assert value_bytes(raw_q) == packed_q.get_value()
        raw_u.reset()
        assert (
            raw_u.next() == 0
            and key_bytes(raw_u) == raw_u.get_key()
            and value_bytes(raw_u) == raw_u.get_value()
        )
        check_formats(raw_q, ("q",))
        session.create("table:s", "key_format=S,value_format=u")
        with pytest.raises(ValueError, match=r"key_format in \('u',\) and value_format=u, got 'S' / 'u'"):
            check_formats(session.open_cursor("table:s"), ("u",))
