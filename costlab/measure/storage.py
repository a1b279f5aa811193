"""Storage sizes as they are on disk: a checkpoint first, then collStats, and the real block compressor.

WiredTiger's file sizes (collStats storageSize, totalIndexSize) grow only when pages are
evicted or a checkpoint writes them (every 60 s by default, storage.syncPeriodSecs), so sizes
read right after a load depend on timing. The `fsync` command makes WiredTiger take a
checkpoint now (mongod docs, "fsync": "To provide durable data, WiredTiger uses checkpoints").
The compressor a collection really has is in its WiredTiger creation string
(collStats.wiredTiger.creationString, e.g. "...,block_compressor=snappy,..."): the config a
collection was created with can be overridden or ignored, the creation string cannot.
"""
from __future__ import annotations

import re
from typing import Mapping

from pymongo.errors import OperationFailure

NOT_REPORTED = "not reported"
CHECKPOINT_DONE = "fsync"
# WiredTiger config strings: key=value pairs separated by commas, nested in parentheses; a
# repeated key takes its last value.
_BLOCK_COMPRESSOR = re.compile(r"(?:^|[,(])block_compressor=([^,)]*)")


def checkpoint(client) -> str:
    """Ask the server to checkpoint (fsync); 'fsync' when done, else why not (never raises for a refusal).

    A deployment may refuse fsync (a user without the fsync privilege, some hosted tiers): the
    sizes are then as of the server's last checkpoint, and the returned text says so.
    """
    try:
        client.admin.command("fsync", 1)
        return CHECKPOINT_DONE
    except OperationFailure as err:
        reason = (err.details or {}).get("errmsg") or str(err)
        return (
            f"not done: fsync refused (code {err.code}: {reason}); "
            "sizes are as of the server's last checkpoint"
        )


def block_compressor(coll_stats: Mapping) -> str:
    """The collection's block compressor from collStats: 'snappy', 'zstd', 'zlib', 'none', or 'not reported'.

    A server without a wiredTiger section in collStats (another storage engine, or the stand-in)
    gives 'not reported': never a guessed default.
    """
    wired_tiger = coll_stats.get("wiredTiger")
    creation = wired_tiger.get("creationString") if isinstance(wired_tiger, Mapping) else None
    if not isinstance(creation, str):
        return NOT_REPORTED
    found = _BLOCK_COMPRESSOR.findall(creation)
    if not found:
        return NOT_REPORTED
    return found[-1] or "none"   # "block_compressor=" (empty) is WiredTiger's "no compression"


def coll_stats(db, collection: str) -> dict:
    """collStats of one collection, or $collStats storageStats where the command is gone (raw, unscaled)."""
    try:
        return dict(db.command("collStats", collection))
    except OperationFailure:
        result = list(db[collection].aggregate([{"$collStats": {"storageStats": {}}}]))
        return dict(result[0]["storageStats"]) if result else {}


def checkpointed_coll_stats(db, collection: str) -> tuple[dict, str, str]:
    """(collStats, block compressor, checkpoint status), read after a checkpoint so sizes are on disk."""
    status = checkpoint(db.client)
    stats = coll_stats(db, collection)
    return stats, block_compressor(stats), status


__all__ = ["NOT_REPORTED", "CHECKPOINT_DONE", "checkpoint", "block_compressor", "coll_stats",
           "checkpointed_coll_stats"]
