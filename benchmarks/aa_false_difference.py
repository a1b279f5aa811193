"""A/A: how often does costlab call two identical runs different, or an exact reproduction "not reproduced"?

Not a speed benchmark (`make bench` does not run it). Two parts, one JSON line per result:

1. Simulation with known distributions (normal, lognormal, bimodal): 10,000 pairs of runs of k
   repeats each from the same distribution, judged by costlab.intervals.runs_differ_many (the test
   compare.with uses), and 10,000 single runs of k repeats whose true median is the published value,
   judged against a band of +-10 % (costlab.intervals.judge).
2. The engine lab: one appversions version measured `repeats` times with a different events seed
   each (the same configuration otherwise), its storage/data ratio per repeat; then 10,000 random
   pairs of disjoint k-subsets of those repeats are judged as two runs. The repeats are real
   WiredTiger measurements, so this is the engine's own run-to-run spread, resampled.
3. The arraygrowth engine lab, the same way: the replica set's $push at N = ARRAYGROWTH_N measured `repeats`
   times (the same writes each time: the study has no seed), its modify calls per push (which move with
   eviction's timing) and journal bytes per write (the same in every repeat) per repeat, judged as two runs
   over 10,000 random pairs of disjoint k-subsets. Seconds of CPU.

    python benchmarks/aa_false_difference.py [repeats=12] [version=appV1] [events_per_year=5000] [k=5]
    python benchmarks/aa_false_difference.py arraygrowth [repeats=12] [k=5]     (part 3 alone)

The stated error rate is 5 %: a false-difference rate at or below it (plus binomial error) is the target.
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

from costlab.intervals import judge, over_repeats, runs_differ_many  # noqa: E402

TRIALS = 10_000
DISTRIBUTIONS = {
    "normal": lambda rng, size: rng.normal(1.0, 0.1 / 3, size),
    "lognormal": lambda rng, size: rng.lognormal(0.0, 0.03, size),
    "bimodal": lambda rng, size: (
        1 + np.where(rng.random(size) < 0.5, -0.04, 0.04) + rng.normal(0, 0.005, size)
    ),
}


def simulate(seed: int = 1) -> None:
    rng = np.random.default_rng(seed)
    for name, draw in DISTRIBUTIONS.items():
        for k in (3, 5, 10):
            differ = runs_differ_many(draw(rng, (TRIALS, k)), draw(rng, (TRIALS, k))).mean()
            outside = np.mean([judge(over_repeats(draw(rng, k)), 0.9, 1.1).outcome == "outside"
                               for _ in range(TRIALS // 10)])
            print(json.dumps({"part": "simulation", "distribution": name, "repeats": k,
                              "false_difference_rate": round(float(differ), 4),
                              "false_not_reproduced_rate": round(float(outside), 4)}), flush=True)


def engine(repeats: int, version: str, events_per_year: int, k: int, seed: int = 2) -> None:
    from costlab.appversions.engine import engine_cache_mb, measure_version, write_engine_events

    ratios, cpu = [], 0.0
    scratch = Path(tempfile.mkdtemp(prefix="costlab-aa-"))
    try:
        for rep in range(repeats):
            started = time.process_time()
            events_path = scratch / f"events_{rep}.parquet"
            events = write_engine_events(events_per_year, 1000 + rep, "authors", events_path)
            row = measure_version(
                version, events_path, scratch / f"wt{rep}", cache_mb=engine_cache_mb(events, None)
            )
            ratios.append(row["storage_bytes"] / row["data_bytes"])
            cpu += time.process_time() - started
            shutil.rmtree(scratch / f"wt{rep}", ignore_errors=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    values = np.array(ratios)
    rng = np.random.default_rng(seed)
    picks = np.array([rng.permutation(repeats)[: 2 * k] for _ in range(TRIALS)])
    differ = runs_differ_many(values[picks[:, :k]], values[picks[:, k:]]).mean()
    print(json.dumps({"part": "engine", "version": version, "events_per_year": events_per_year,
                      "repeats": repeats, "k": k, "storage_over_data": [round(r, 4) for r in ratios],
                      "spread": round(float(np.ptp(values)), 4), "interval": over_repeats(values).describe(),
                      "false_difference_rate": round(float(differ), 4), "cpu_s": round(cpu, 1)}), flush=True)


# the replica set's modify calls move between repeats from about here (docs/uncertainty.md)
ARRAYGROWTH_N = 2000


def arraygrowth_engine(repeats: int, k: int, n: int = ARRAYGROWTH_N, seed: int = 3) -> None:
    from costlab.arraygrowth.engine import run_workload
    from costlab.engine.connection import EngineSettings

    settings = EngineSettings(journal_compressor="lz4", block_compressor="lz4")
    measures: dict[str, list[float]] = {"modify_calls_per_push": [], "log_bytes_per_write": []}
    started = time.process_time()
    scratch = Path(tempfile.mkdtemp(prefix="costlab-aa-"))
    try:
        for _ in range(repeats):
            row = run_workload("replset-1", "push", n, settings, scratch)
            measures["modify_calls_per_push"].append(row["modify_calls"] / n)
            measures["log_bytes_per_write"].append(row["log_bytes"] / n)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    cpu = time.process_time() - started
    rng = np.random.default_rng(seed)
    picks = np.array([rng.permutation(repeats)[: 2 * k] for _ in range(TRIALS)])
    for measure, values in measures.items():
        data = np.array(values)
        differ = runs_differ_many(data[picks[:, :k]], data[picks[:, k:]]).mean()
        print(json.dumps({"part": "arraygrowth-engine", "measure": f"{measure} (replset-1, $push, N={n})",
                          "repeats": repeats, "k": k, "values": [round(v, 4) for v in values],
                          "spread": round(float(np.ptp(data)), 4), "interval": over_repeats(data).describe(),
                          "false_difference_rate": round(float(differ), 4), "cpu_s": round(cpu, 1)}),
              flush=True)


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["arraygrowth"]:   # the arraygrowth engine part alone: arraygrowth [repeats=12] [k=5]
        arraygrowth_engine(int(args[1]) if len(args) > 1 else 12, int(args[2]) if len(args) > 2 else 5)
        sys.exit(0)
    simulate()
    engine(int(args[0]) if args else 12, args[1] if len(args) > 1 else "appV1",
           int(args[2]) if len(args) > 2 else 5000, int(args[3]) if len(args) > 3 else 5)
    arraygrowth_engine(int(args[0]) if args else 12, int(args[3]) if len(args) > 3 else 5)
