"""The wiredtiger Python module: where it comes from and what it has built in.

costlab uses the module that ships inside the `secantusdb` wheel (WiredTiger 11.2.0, lz4 and
zlib compressors built in). mongod's snappy and zstd come from WiredTiger's own compressor
extensions, built for this exact version by `costlab.engine.extensions` and loaded with every
connection (`extensions=[...]`). See docs/engine-lab.md.
"""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
from contextlib import contextmanager
from functools import lru_cache
from typing import Iterator

from costlab.engine.extensions import extension_status, open_config_extensions
from costlab.engine.wtmodule import EngineUnavailable, wiredtiger_module, wiredtiger_version

__all__ = ["EngineUnavailable", "wiredtiger_module", "wiredtiger_version"]   # also said here: callers use wt

KNOWN_COMPRESSORS = ("snappy", "zstd", "lz4", "zlib")
NO_COMPRESSOR = "none"


@contextmanager
def _quiet_stderr() -> Iterator[None]:
    """WiredTiger prints 'unknown compressor' for every probe that fails; those are expected."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def available_compressors() -> tuple[str, ...]:
    """The compressors this WiredTiger accepts with the verified extensions loaded, found by
    asking it (not assumed); asked again when the loaded extensions change (`extensions build`)."""
    return _probe_compressors(open_config_extensions())


@lru_cache(maxsize=4)
def _probe_compressors(extensions_config: str) -> tuple[str, ...]:
    wt = wiredtiger_module()
    home = tempfile.mkdtemp(prefix="costlab-wt-probe-")
    found = []
    try:
        conn = wt.wiredtiger_open(home, "create,cache_size=10MB,verbose=[],error_prefix=probe,"
                                        + extensions_config)
        try:
            session = conn.open_session()
            with _quiet_stderr():
                for name in KNOWN_COMPRESSORS:
                    try:
                        session.create(f"table:probe_{name}",
                                       f"key_format=q,value_format=u,block_compressor={name}")
                        found.append(name)
                    except wt.WiredTigerError:
                        pass
        finally:
            conn.close()
    finally:
        shutil.rmtree(home, ignore_errors=True)
    return tuple(found)


def check_compressor(name: str, what: str) -> str:
    """`name` if this build has it (or it is 'none'), else a clear error listing what it has."""
    if name == NO_COMPRESSOR or name in available_compressors():
        return name
    allowed = ", ".join((NO_COMPRESSOR, *available_compressors()))
    raise ValueError(f"{what}: compressor {name!r} is not available in WiredTiger {wiredtiger_version()} "
                     f"here ({_why_missing(name)}); available: {allowed}")


def _why_missing(name: str) -> str:
    entry = extension_status().get(name)
    return entry["reason"] if entry else "not a compressor WiredTiger ships"


def compressor_or_nearest(wanted: str, preference: tuple[str, ...] = ("lz4", "zlib", NO_COMPRESSOR)
                          ) -> tuple[str, str | None]:
    """(compressor used, note) — `wanted` if built in, else the first available of `preference`.

    The note says what was wanted and what is used instead; it is None when nothing changed.
    Callers record both, so a substitute never passes for the original.
    """
    if wanted == NO_COMPRESSOR or wanted in available_compressors():
        return wanted, None
    for name in preference:
        if name == NO_COMPRESSOR or name in available_compressors():
            return name, (f"{wanted} not available in WiredTiger {wiredtiger_version()} here; used {name} "
                          f"({_why_missing(wanted)})")
    raise ValueError(f"none of {preference} is available")  # 'none' is always available


def forget_compressors() -> None:
    """Ask the build again next time (after building extensions or pointing COSTLAB_WT_EXTENSIONS
    elsewhere)."""
    extension_status.cache_clear()
    _probe_compressors.cache_clear()
