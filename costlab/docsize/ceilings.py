"""What a docsize config plans, counted before any job, with its ceilings (costlab/plan.py runs them), and
the engine-lab settings WiredTiger would refuse part-way through. Plain arithmetic, standard library only
(no WiredTiger import): the pre-check and the Snakefile call it.

- a queried window cannot hold more orders than the collection has;
- while loading, a transaction's dirty bytes must stay within WiredTiger's eviction dirty trigger
  (20 % of the cache by default): beyond it the loading transaction is rolled back
  (WT_ROLLBACK). Measured here with the docsize engine job, 300 orders of 64 KB: a 16 MB cache
  failed and 24 MB held; of 4 KB, 1 MB failed and 2 MB held — 64 orders per load transaction.
"""
from __future__ import annotations

import math

from costlab.study import Ceiling

KB = 1024
DIRTY_TRIGGER = 0.20                 # WiredTiger's eviction_dirty_trigger default
DOCSIZE_LOAD_BATCH = 64              # orders per load transaction (costlab/docsize/engine.py INSERT_BATCH)
ORDER_OVERHEAD = 1.05                # an order's BSON is a little over its nominal size_kb


def _datasets_per_size(docsize: dict) -> int:
    variants = docsize.get("variants") or {}
    return 1 + bool(variants.get("fields_after_history", True)) + bool(variants.get("split_history", True))


def order_bytes(config: dict) -> float:
    docsize = config.get("docsize") or {}
    return (
        float(docsize.get("docs_per_collection", 0))
        * sum(docsize.get("sizes_kb") or ())
        * KB
        * _datasets_per_size(docsize)
    )


def documents(config: dict) -> float:
    docsize = config.get("docsize") or {}
    return (
        float(docsize.get("docs_per_collection", 0))
        * len(docsize.get("sizes_kb") or ())
        * _datasets_per_size(docsize)
    )


def engine_bytes(config: dict) -> float:
    engine, docsize = config.get("engine") or {}, config.get("docsize") or {}
    return (
        float((engine.get("docsize") or {}).get("docs_per_collection", 0))
        * max(docsize.get("sizes_kb") or [0])
        * KB
    )


CEILINGS: dict[str, Ceiling] = {
    "docsize_bytes": Ceiling(
        "bytes of orders to generate and load",
        50e9,
        50_000 * 85 * KB * 3,
        "docsize.docs_per_collection x sum(docsize.sizes_kb) KB x datasets per size",
        order_bytes,
    ),
    "documents": Ceiling(   # shared with flatnested's
        "documents to generate and load",
        20_000_000,
        50_000 * 4 * 3,
        "docsize.docs_per_collection x sizes x datasets",
        documents,
    ),
    "engine_bytes": Ceiling(
        "bytes of the largest engine collection (scratch)",
        20e9,
        50_000 * 64 * KB,
        "engine.docsize.docs_per_collection x max(docsize.sizes_kb) KB",
        engine_bytes,
        engine=True,
        scratch_key="engine.docsize.docs_per_collection",
    ),
}
# its engine-lab caches, MB (costlab/plan.py holds each to WiredTiger's largest cache and this machine's
# memory)
ENGINE_CACHE_KEYS = (("engine", "docsize", "default_cache_mb"), ("engine", "docsize", "small_cache_mb"))


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
    return math.ceil(DOCSIZE_LOAD_BATCH * size_kb * 1024 * ORDER_OVERHEAD / DIRTY_TRIGGER / (1 << 20))


def engine_problem(config: dict) -> str | None:
    """One line naming the engine.docsize key that cannot work and what is allowed, or None."""
    docsize = (config.get("engine") or {}).get("docsize") or {}
    if not docsize:
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
