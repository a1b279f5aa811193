"""Stopping a server without losing what it wrote: a checkpoint first, then a grace period that fits the data.

On SIGTERM mongod shuts down cleanly, and that shutdown ends with a WiredTiger checkpoint that
writes every dirty page. After a multi-GB load that can take longer than a fixed 30 s, and a
SIGKILL in the middle leaves an unclean shutdown: the next start recovers from the journal and
collection counts can be off until validated, which the measuring jobs then refuse ("reload the
dataset"). So the backends ask for a checkpoint (`fsync`) while the server is still serving,
which leaves little for the final one, and then give the stop a grace period that grows with
the data directory.
"""
from __future__ import annotations

import os
from pathlib import Path

from pymongo.errors import PyMongoError

STOP_GRACE_MIN_S = 30
# A slow disk's sequential write rate (a cloud standard volume writes 60-100 MB/s): the grace
# lets the final checkpoint rewrite the whole data directory even if the fsync above failed.
STOP_GRACE_BYTES_PER_S = 50 * 1024 * 1024
STOP_GRACE_MAX_S = 900   # a server that has not stopped in 15 minutes is stuck, not busy


def data_dir_bytes(data_dir: Path | None) -> int:
    """Total size of the files under data_dir (0 when there is none or it cannot be read)."""
    if data_dir is None:
        return 0
    total = 0
    for root, _dirs, files in os.walk(data_dir):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                continue
    return total


def stop_grace_seconds(data_bytes: int) -> int:
    """Seconds to wait after SIGTERM before SIGKILL: 30 s plus the time to write data_bytes at 50 MB/s, at
    most 900."""
    if data_bytes < 0:
        raise ValueError(f"data_bytes must be >= 0, got {data_bytes!r}")
    return int(min(STOP_GRACE_MAX_S, STOP_GRACE_MIN_S + -(-data_bytes // STOP_GRACE_BYTES_PER_S)))


def checkpoint_before_stop(client) -> str:
    """fsync (a WiredTiger checkpoint) on a server about to be stopped; never raises, says what happened."""
    try:
        client.admin.command("fsync", 1)
        return "fsync"
    except PyMongoError as err:   # a server that already died, or refuses: the stop goes ahead
        return f"not done ({err.__class__.__name__}: {err})"
