"""Shared bits of the benchmarks: best-of-N timing, a stand-in server, one line per figure.

Benchmarks print figures; they never fail a test run. A target that is missed prints MISSED.

Per-core figures are divided by CPU seconds of this process (time.process_time, all its threads),
with polars and BLAS limited to one thread (`one_core()`): other work on the machine then costs
wall time but does not change the figure, and a multi-threaded library cannot pass off two cores
as one. The wall time is printed beside it.

Every figure goes through `result(...)`, which prints figure, target and ratio side by side and,
when COSTLAB_BENCH_JSON names a file, appends one JSON line to it (benchmarks/README.md is
written from those lines: `make bench COSTLAB_BENCH_JSON=/tmp/bench.jsonl`).
"""
from __future__ import annotations

import json
import os
import statistics
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

ONE_THREAD_ENV = ("POLARS_MAX_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def one_core() -> None:
    """Limit polars/BLAS to one thread. Call before polars is imported (top of the script)."""
    if "polars" in sys.modules:  # imported as a module (e.g. by a test): its thread pool is fixed already
        print("(one_core(): polars already imported, thread count unchanged)", file=sys.stderr)
        return
    for name in ONE_THREAD_ENV:
        os.environ[name] = "1"


def best_of(fn: Callable[[], object], repeat: int = 3) -> tuple[float, object]:
    """Fastest wall time of `repeat` calls (seconds) and the last result: the least noisy estimate."""
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result


@dataclass
class Timing:
    wall_s: float  # fastest wall time
    cpu_s: float   # CPU seconds of this process (all threads) in the run with the least CPU
    result: object = None


def best_of_cpu(fn: Callable[[], object], repeat: int = 3) -> Timing:
    """Best-of-`repeat` wall and CPU time of fn(), each the minimum over the runs."""
    walls, cpus, result = [], [], None
    for _ in range(repeat):
        cpu0, wall0 = time.process_time(), time.perf_counter()
        result = fn()
        walls.append(time.perf_counter() - wall0)
        cpus.append(time.process_time() - cpu0)
    return Timing(min(walls), min(cpus), result)


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


def result(name: str, value: float, unit: str, target: float | None = None, at_least: bool = True,
           note: str = "", command: str | None = None) -> bool | None:
    """Print figure | target | ratio (figure/target) | ok/MISSED; record it when asked.

    at_least=True: the target is a floor (throughput, speed-up); False: a ceiling (seconds).
    Returns whether the target is met (None when there is no target: an informative figure).
    """
    ok = None if target is None else (value >= target if at_least else value <= target)
    ratio = None if not target else value / target
    target_text = "" if target is None else f"{'>=' if at_least else '<='} {target:,.6g}"
    ratio_text = "" if ratio is None else f"{ratio:6.2f}x"
    verdict = "" if ok is None else ("ok" if ok else "MISSED")
    print(f"{name:<52} {value:>14,.3f} {unit:<12} {target_text:>14} {ratio_text:>8}  {verdict:<6} {note}",
          flush=True)
    path = os.environ.get("COSTLAB_BENCH_JSON")
    if path:
        record = {"benchmark": Path(sys.argv[0]).name, "name": name, "value": value, "unit": unit,
                  "target": target, "at_least": at_least, "ratio": ratio, "ok": ok, "note": note,
                  "command": command or f"python benchmarks/{Path(sys.argv[0]).name}"}
        with open(path, "a") as out:
            out.write(json.dumps(record) + "\n")
    return ok


def header(title: str) -> None:
    print(f"\n{title}\n{'figure':<52} {'value':>14} {'unit':<12} {'target':>14} {'ratio':>8}  verdict",
          flush=True)


def machine() -> str:
    """One line: CPU model, cores, memory (what the figures were measured on)."""
    from costlab.server.provenance import host_info

    host = host_info()
    load = ", load average {:.1f}".format(os.getloadavg()[0]) if hasattr(os, "getloadavg") else ""
    return (
        f"{host['cpu_model']}, {host['cpu_cores_logical']} cores, {host['memory_bytes'] / 2**30:.0f} GiB, "
        f"Python {host['python']}{load}"
    )


@contextmanager
def bench_server(storage_path: str = ":memory:", port: int = 0) -> Iterator[str]:
    """COSTLAB_BENCH_URI if set (a real mongod), else the SecantusDB stand-in in-process.

    storage_path/port: keep the stand-in's data on disk at a fixed address between runs
    (bench_workflow.py reuses a built workflow directory whose data lives in the server).
    """
    uri = os.environ.get("COSTLAB_BENCH_URI")
    if uri:
        yield uri
        return
    import secantus

    server = secantus.SecantusDBServer(port=port, storage_path=storage_path)
    server.start()
    try:
        print("(server: SecantusDB stand-in — throughput figures are the stand-in's, not MongoDB's)")
        yield server.uri
    finally:
        server.stop()
