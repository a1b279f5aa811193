"""Shared bits of the benchmarks: best-of-N timing, a stand-in server, one line per figure.

Benchmarks print figures; they never fail a test run. A target that is missed prints MISSED.
"""
from __future__ import annotations

import os
import statistics
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def best_of(fn: Callable[[], object], repeat: int = 3) -> tuple[float, object]:
    """Fastest wall time of `repeat` calls (seconds) and the last result: the least noisy estimate."""
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result


def median_of(fn: Callable[[], object], repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def line(name: str, value: float, unit: str, target: str = "", ok: bool | None = None) -> None:
    verdict = "" if ok is None else ("  ok" if ok else "  MISSED")
    print(f"{name:<58} {value:>14,.2f} {unit:<10} {target}{verdict}", flush=True)


@contextmanager
def bench_server() -> Iterator[str]:
    """COSTLAB_BENCH_URI if set (a real mongod), else the SecantusDB stand-in in-process."""
    uri = os.environ.get("COSTLAB_BENCH_URI")
    if uri:
        yield uri
        return
    import secantus

    server = secantus.SecantusDBServer(storage_path=":memory:")
    server.start()
    try:
        print("(server: SecantusDB stand-in — throughput figures are the stand-in's, not MongoDB's)")
        yield server.uri
    finally:
        server.stop()
