"""Engine-lab settings WiredTiger would refuse part-way through, checked with the config (no
WiredTiger import: the pre-check and the Snakefile call this before any job).

- a queried window cannot hold more orders than the collection has;
- WiredTiger's cache_size is at most 10 TB (its own configuration limit; costlab/plan.py, the one place
  of every ceiling, holds every cache key to it and to this machine's memory);
- while loading, a transaction's dirty bytes must stay within WiredTiger's eviction dirty trigger
  (20 % of the cache by default): beyond it the loading transaction is rolled back
  (WT_ROLLBACK). Measured here with the docsize engine job, 300 orders of 64 KB: a 16 MB cache
  failed and 24 MB held; of 4 KB, 1 MB failed and 2 MB held — 64 orders per load transaction;
- engine.workdir, where scratch homes go, must be a directory (or not exist yet).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from costlab.plan import WT_MAX_CACHE_MB  # noqa: F401  (the one place of every ceiling)

DIRTY_TRIGGER = 0.20                 # WiredTiger's eviction_dirty_trigger default
DOCSIZE_LOAD_BATCH = 64              # orders per load transaction (costlab/docsize/engine.py INSERT_BATCH)
ORDER_OVERHEAD = 1.05                # an order's BSON is a little over its nominal size_kb


def large_cache_mb(docs_per_collection: int, sizes_kb: list[int], configured: int | None) -> int:
    """The docsize engine lab's large cache: the configured one, or one that holds the largest collection
    and its index, as the article's 15.7 GB held all of them: 1.5 x its data (WiredTiger's in-memory
    pages are larger than the BSON) + 64 MB."""
    if configured is not None:
        return int(configured)
    return int(docs_per_collection * max(sizes_kb) * 1024 * 1.5 / 2**20) + 64


def min_load_cache_mb(size_kb: int) -> int:
    """The smallest cache (MB) in which a load transaction of `size_kb` orders stays under the dirty
    trigger."""
    import math

    return math.ceil(DOCSIZE_LOAD_BATCH * size_kb * 1024 * ORDER_OVERHEAD / DIRTY_TRIGGER / (1 << 20))


def engine_problem(config: dict[str, Any]) -> str | None:
    """One line naming the engine key that cannot work and what is allowed, or None."""
    engine = config.get("engine") or {}
    if not engine.get("enabled", True):
        return None
    workdir = engine.get("workdir")
    if workdir:
        path = Path(workdir)
        if path.exists() and not path.is_dir():
            return (
                f"invalid config key engine.workdir: {workdir!r} is a file, not a directory "
                "(allowed: a directory, or null)"
            )
    docsize = engine.get("docsize") or {}
    studies = config.get("studies") or ()
    if "docsize" not in studies or not docsize:
        return None
    docs, window = int(docsize["docs_per_collection"]), int(docsize["window_minutes"])
    if window > docs:
        return (f"invalid config key engine.docsize.window_minutes: {window} is more than "
                f"engine.docsize.docs_per_collection ({docs}) (allowed: 1 to {docs})")
    sizes = [int(s) for s in (config.get("docsize") or {}).get("sizes_kb") or []]
    if sizes:
        needed = min_load_cache_mb(max(sizes))
        if large_cache_mb(docs, sizes, docsize.get("default_cache_mb")) < needed:
            return (
                f"invalid config key engine.docsize.default_cache_mb: {docsize['default_cache_mb']} MB "
                "cannot load "
                f"{max(sizes)} KB orders ({DOCSIZE_LOAD_BATCH} per transaction must stay under WiredTiger's "
                f"20 % dirty trigger; allowed: at least {needed} MB for docsize.sizes_kb up to {max(sizes)})"
            )
    return None
