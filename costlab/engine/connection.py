"""Opening WiredTiger the way mongod opens it, and reopening it for a cold cache.

mongod's wiredtiger_open configuration (as its startup log prints it) is
`create,cache_size=<N>M,session_max=33000,eviction=(threads_min=4,threads_max=4),
config_base=false,statistics=(fast),log=(enabled=true,remove=true,path=journal,
compressor=snappy),...`. We keep what changes the counters the studies read (cache size,
journal on and its compressor, fast statistics, eviction threads) and leave out what only
matters to a long-running server (file manager, verbose, session_max).

One setting differs: log=(prealloc=false). mongod lets WiredTiger's log server prepare the next
log files in the background, and each prepared file's 128-byte header goes into "log bytes
written" (`__log_file_header`, from `__log_prealloc_once`) at a moment of the server's own: a
run's window would catch one or not (two identical runs read 81,792 and 81,664 bytes). Without
preallocation a file is begun only when the log reaches the end of one, by the writer itself, at
the same byte every time. The records, and so a run's journal bytes, are the same either way.
"""
from __future__ import annotations

import shutil
import signal
import threading
import weakref
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from costlab.engine.extensions import open_config_extensions
from costlab.engine.wt import NO_COMPRESSOR, check_compressor, wiredtiger_module, wiredtiger_version

JOURNAL_DIR = "journal"  # mongod keeps the WiredTiger log in <dbpath>/journal

# Connections open in this process: engine_home closes those on its home before removing it.
OPEN_ENGINES: "weakref.WeakSet[Engine]" = weakref.WeakSet()


@contextmanager
def signals_deferred() -> Iterator[None]:
    """SIGINT and SIGTERM wait until the block is done (main thread; elsewhere they cannot run anyway)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held = {signal.SIGINT, signal.SIGTERM}
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


@dataclass(frozen=True)
class EngineSettings:
    cache_mb: int = 1024
    journal_compressor: str = "lz4"   # mongod's default is snappy (see docs/engine-lab.md)
    block_compressor: str = "lz4"     # collections' default in mongod: snappy
    journal: bool = True

    def __post_init__(self) -> None:
        if isinstance(self.cache_mb, bool) or not isinstance(self.cache_mb, int) or self.cache_mb < 1:
            raise ValueError(f"cache_mb must be a positive integer (MB), got {self.cache_mb!r}")

    def open_config(self) -> str:
        journal_compressor = check_compressor(self.journal_compressor, "journal")
        compressor = "" if journal_compressor == NO_COMPRESSOR else f",compressor={journal_compressor}"
        log = (f"log=(enabled=true,remove=true,prealloc=false,path={JOURNAL_DIR}{compressor})"
               if self.journal else "log=(enabled=false)")
        extensions = open_config_extensions()
        return (f"create,cache_size={self.cache_mb}M,eviction=(threads_min=4,threads_max=4),"
                f"config_base=false,statistics=(fast),{log}" + (f",{extensions}" if extensions else ""))

    def describe(self) -> dict[str, Any]:
        return {"wt_version": wiredtiger_version(), "cache_mb": self.cache_mb,
                "journal": self.journal, "journal_compressor": self.journal_compressor,
                "block_compressor": self.block_compressor}


class Engine:
    """One WiredTiger connection on a home directory, with one session (mongod: one per operation)."""

    def __init__(self, home: str | Path, settings: EngineSettings, fresh: bool = True) -> None:
        self.home = Path(home)
        self.settings = settings
        if fresh and self.home.exists():
            shutil.rmtree(self.home)
        (self.home / JOURNAL_DIR).mkdir(parents=True, exist_ok=True)
        self.wt = wiredtiger_module()
        self.conn = None
        self._open()

    def _open(self) -> None:
        # Ctrl-C or SIGTERM between wiredtiger_open and the assignment used to drop a live connection
        # whose threads kept writing into the home while it was removed: signals wait until it is held.
        with signals_deferred():
            self.conn = self.wt.wiredtiger_open(str(self.home), self.settings.open_config())
            OPEN_ENGINES.add(self)
        self.session = self.conn.open_session()

    def reopen(self, settings: EngineSettings | None = None) -> None:
        """Close (which checkpoints) and open again: the cache starts empty, like a restarted mongod."""
        self.close()
        if settings is not None:
            self.settings = settings
        self._open()

    @contextmanager
    def transaction(self, commit_timestamp: int | None = None) -> Iterator[None]:
        """One WiredTiger transaction (mongod's WriteUnitOfWork): committed, or rolled back on error.
        WT_CURSOR::modify is only allowed inside an explicit transaction. `commit_timestamp` (a
        mongod Timestamp as WiredTiger's uint64, secs << 32 | inc) commits it at that time, as a
        replica set's writes commit at their oplog entry's timestamp."""
        self.session.begin_transaction()
        try:
            if commit_timestamp is not None:
                self.stamp(commit_timestamp)
            yield
        except BaseException:
            self.session.rollback_transaction()
            raise
        self.session.commit_transaction()

    def stamp(self, commit_timestamp: int) -> None:
        """The running transaction's commit timestamp from here on (WT_SESSION::timestamp_transaction):
        a batched insert gives each document its own, as mongod does."""
        self.session.timestamp_transaction(f"commit_timestamp={commit_timestamp:x}")

    def set_timestamps(self, stable: int, oldest: int | None = None) -> None:
        """WT_CONNECTION::set_timestamp: the stable (and oldest) timestamp, as mongod's
        WiredTigerKVEngine::setStableTimestamp / setOldestTimestamp set them."""
        config = f"stable_timestamp={stable:x}"
        if oldest is not None:
            config += f",oldest_timestamp={oldest:x}"
        self.conn.set_timestamp(config)

    def checkpoint(self) -> None:
        self.session.checkpoint()

    def close(self) -> None:
        with signals_deferred():   # closed and forgotten together: never closed twice, never left open
            if self.conn is not None:
                self.conn.close()
                self.conn = None
                self.session = None
            OPEN_ENGINES.discard(self)

    def __enter__(self) -> "Engine":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
