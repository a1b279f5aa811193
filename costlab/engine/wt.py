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
from types import ModuleType
from typing import Iterator

KNOWN_COMPRESSORS = ("snappy", "zstd", "lz4", "zlib")
NO_COMPRESSOR = "none"


class EngineUnavailable(RuntimeError):
    """The wiredtiger module cannot be imported; the message says what to install."""


def wiredtiger_module() -> ModuleType:
    try:
        import wiredtiger  # shipped by secantusdb (see requirements.txt)
    except ImportError as err:
        raise EngineUnavailable(
            "the engine lab needs the `wiredtiger` Python module; install it with "
            "`pip install secantusdb==0.7.0b3` (make installs it from requirements.txt): " + str(err)
        ) from None
    return wiredtiger


def wiredtiger_version() -> str:
    """'11.2.0' (major.minor.patch of the loaded library)."""
    _, major, minor, patch = wiredtiger_module().wiredtiger_version()
    return f"{major}.{minor}.{patch}"


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


@lru_cache(maxsize=1)
def available_compressors() -> tuple[str, ...]:
    """The compressors this WiredTiger accepts with the verified extensions loaded, found by
    asking it (not assumed)."""
    from costlab.engine.extensions import open_config_extensions

    wt = wiredtiger_module()
    home = tempfile.mkdtemp(prefix="costlab-wt-probe-")
    found = []
    try:
        conn = wt.wiredtiger_open(home, "create,cache_size=10MB,verbose=[],error_prefix=probe,"
                                        + open_config_extensions())
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
    from costlab.engine.extensions import extension_status

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
    from costlab.engine.extensions import extension_status

    extension_status.cache_clear()
    available_compressors.cache_clear()
