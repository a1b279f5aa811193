"""docsize on the engine lab: which small-cache protocol the article's bytes-read table matches.

Not a speed benchmark (`make bench` does not run it): per document size it loads one collection
(the generator's orders, as the engine job loads them), then, for each protocol x warm-up count x
seed, starts WiredTiger on the loaded data with the small cache (a close and reopen: the article's
"second server on the same volume") and runs whole, projection, covered in the article's order.
It prints one JSON line per (size, protocol, warm-ups, seed, shape) with the mean, median, p90,
share of zero-byte queries of the bytes read into the cache per measured query, and what the cache
held right after the start; then a summary table per (size, protocol, warm-ups, shape) over seeds.

Protocols:
    one_start        one start, then per shape its own warm-ups and measured queries (costlab's
                     `small_cache` run before issue 23)
    cold_per_shape   a start before every shape (costlab's `small_cache_cold_per_shape`)
    warmups_once     one start, the warm-ups once (whole-document queries), then the three shapes'
                     measured queries back to back (costlab's `small_cache` run since issue 23)

    nice -n 10 .venv/bin/python benchmarks/docsize_engine_protocols.py 1,4,16 50000 \\
        one_start,cold_per_shape,warmups_once 5,50,200 0,1,2
"""
from __future__ import annotations

import json  # noqa: E402
import shutil  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import common  # noqa: F401  (puts the repository on sys.path)
import numpy as np  # noqa: E402

from costlab.docsize.engine import PUBLISHED_SMALL_CACHE_MB, load_collection, run_shape  # noqa: E402
from costlab.docsize.protocol import SHAPES, plan_blocks  # noqa: E402
from costlab.engine import stats  # noqa: E402
from costlab.engine.connection import Engine, EngineSettings  # noqa: E402
from costlab.engine.wt import available_compressors  # noqa: E402

WINDOW = 1000
QUERIES = 30
PROTOCOLS = ("one_start", "cold_per_shape", "warmups_once")
START_STATS = ("cache: bytes currently in the cache", "cache: pages read into cache",
               "cache: bytes read into cache")
EVICTION_STATS = ("cache: pages evicted by application threads", "cache: unmodified pages evicted",
                  "cache: bytes currently in the cache")


def _schedule(protocol: str, documents: int, warmups: int, seed: int) -> list[tuple[bool, str, str, int]]:
    """(start before this query?, shape, phase, window start) in the order they run."""
    if protocol not in PROTOCOLS:
        raise ValueError(f"unknown protocol {protocol!r}; allowed: {', '.join(PROTOCOLS)}")
    cold = protocol == "cold_per_shape"
    plan = plan_blocks(
        documents=documents,
        window=WINDOW,
        windows="random",
        warmups=warmups,
        queries=QUERIES,
        seed=[seed, 2, 0],
        cold_cache=cold,
        warmups_in="first" if protocol == "warmups_once" else "each",
    )
    return [((cold or block.index == 0) and q.query == 0, q.shape, q.phase, q.window_start)
            for block in plan.blocks for q in block.queries]


def _named(session, names) -> dict[str, int]:
    values = stats.read_statistics(session, flush_log=False)
    return {n: values[n] for n in names}


def run(
    size_kb: int, documents: int, protocols: list[str], warmup_counts: list[int], seeds: list[int]
) -> list[dict]:
    compressor = "snappy" if "snappy" in available_compressors() else "lz4"
    scratch = Path(tempfile.mkdtemp(prefix=f"costlab-docsize-protocols-{size_kb}k-"))
    cache_mb = max(1, round(PUBLISHED_SMALL_CACHE_MB * documents / 50_000))
    lines = []
    try:
        engine = Engine(
            scratch / "wt",
            EngineSettings(
                cache_mb=4096, journal=False, block_compressor=compressor, journal_compressor=compressor
            ),
        )
        started = time.process_time()
        collection = load_collection(engine, size_kb, documents, 42, 50, compressor)
        print(
            json.dumps({"size_kb": size_kb, "load_cpu_s": round(time.process_time() - started, 1)}),
            flush=True,
        )
        small = EngineSettings(cache_mb=cache_mb, journal_compressor=compressor, block_compressor=compressor)
        for protocol in protocols:
            for warmups in warmup_counts:
                for seed in seeds:
                    per_shape: dict[str, list[int]] = {s: [] for s in SHAPES}
                    at_start = None
                    for start, shape, phase, window_start in _schedule(protocol, documents, warmups, seed):
                        if start:
                            engine.reopen(small)
                            collection.reopen_cursors()
                            if at_start is None:
                                at_start = _named(engine.session, START_STATS)
                        before = stats.snapshot(engine.session, flush_log=False)
                        run_shape(collection, shape, window_start, window_start + WINDOW)
                        read = stats.delta(before, stats.snapshot(engine.session, flush_log=False))
                        if phase == "measured":
                            per_shape[shape].append(read["bytes_read_into_cache"])
                    evicted = _named(engine.session, EVICTION_STATS)
                    for shape, values in per_shape.items():
                        v = np.asarray(values, dtype=float)
                        line = {
                            "size_kb": size_kb,
                            "protocol": protocol,
                            "warmups": warmups,
                            "seed": seed,
                            "shape": shape,
                            "cache_mb": cache_mb,
                            "mean": round(v.mean()),
                            "median": round(float(np.median(v))),
                            "p90": round(float(np.percentile(v, 90))),
                            "zero_share": round(float((v == 0).mean()), 2),
                            "cache_bytes_at_start": at_start[START_STATS[0]],
                            "pages_read_at_start": at_start[START_STATS[1]],
                            "bytes_read_at_start": at_start[START_STATS[2]],
                            "app_evictions_end": evicted[EVICTION_STATS[0]],
                            "evictions_end": evicted[EVICTION_STATS[1]],
                            "cache_bytes_end": evicted[EVICTION_STATS[2]],
                        }
                        lines.append(line)
                        print(json.dumps(line), flush=True)
        engine.close()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return lines


def summary(lines: list[dict]) -> str:
    """Per (size, protocol, warm-ups, shape): the mean over seeds of the per-run mean, its range, the
    median."""
    groups: dict[tuple, list[dict]] = {}
    for line in lines:
        groups.setdefault((line["size_kb"], line["protocol"], line["warmups"], line["shape"]), []).append(
            line
        )
    out = [
        "| size | protocol | warm-ups | shape | mean of runs (KB) | run means min-max (KB) | median of runs "
        "(KB) | zero share |",
        "|---:|---|---:|---|---:|---:|---:|---:|",
    ]
    for (size, protocol, warmups, shape), rows in groups.items():
        means = [r["mean"] / 1000 for r in rows]
        medians = [r["median"] / 1000 for r in rows]
        zero = sum(r["zero_share"] for r in rows) / len(rows)
        out.append(f"| {size} | {protocol} | {warmups} | {shape} | {np.mean(means):,.0f} | "
                   f"{min(means):,.0f}-{max(means):,.0f} | {np.median(medians):,.0f} | {zero:.2f} |")
    return "\n".join(out)


def main(
    sizes: str = "1,4,16",
    documents: str = "50000",
    protocols: str = "one_start,cold_per_shape,warmups_once",
    warmups: str = "50",
    seeds: str = "0,1,2",
) -> None:
    lines = []
    for size_kb in (int(x) for x in sizes.split(",")):
        lines += run(size_kb, int(documents), protocols.split(","), [int(x) for x in warmups.split(",")],
                     [int(x) for x in seeds.split(",")])
    print(summary(lines))


if __name__ == "__main__":
    main(*sys.argv[1:6])
