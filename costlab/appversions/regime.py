"""Whether the load test ran in the article's regime: a working set larger than the cache.

The article sized its initial data so that "the initial dataset (working set) ... was larger than
the available memory" (2 vCPU, 4 GB, 1.5 GB WiredTiger cache): which versions keep up, and where
latency rises, rest on cache misses. Here the working set is collStats `size` (uncompressed data,
what the cache holds) plus `totalIndexSize`, against serverStatus
`wiredTiger.cache."maximum bytes configured"`. A server that reports no cache size (the stand-in)
gives an unknown regime.
"""
from __future__ import annotations

FITS = "working set fits in cache"
EXCEEDS = "working set exceeds cache"
UNKNOWN = "unknown (cache size not reported)"
CACHE_MAX_PATH = ("wiredTiger", "cache", "maximum bytes configured")


def working_set_regime(
    data_bytes: float | None, index_bytes: float | None, cache_bytes: float | None
) -> dict:
    """{working_set_bytes, cache_bytes, working_set_to_cache, regime} from collStats and the cache size."""
    working_set = (
        None if data_bytes is None or index_bytes is None else float(data_bytes) + float(index_bytes)
    )
    if working_set is None or not cache_bytes:
        return {"working_set_bytes": working_set, "cache_bytes": cache_bytes, "working_set_to_cache": None,
                "regime": UNKNOWN}
    ratio = working_set / float(cache_bytes)
    return {
        "working_set_bytes": working_set,
        "cache_bytes": float(cache_bytes),
        "working_set_to_cache": ratio,
        "regime": EXCEEDS if ratio > 1 else FITS,
    }


def measure_regime(client, database: str, collection: str) -> dict:
    """The regime of one collection on a running server (collStats and serverStatus, read once)."""
    stats = client[database].command("collStats", collection)
    status = client.admin.command("serverStatus")
    cache = status
    for key in CACHE_MAX_PATH:
        cache = cache.get(key) if isinstance(cache, dict) else None
    return working_set_regime(stats.get("size"), stats.get("totalIndexSize"), cache)
