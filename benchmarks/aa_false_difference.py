"""A/A: how often is costlab's verdict wrong, against the risk it states? And how often does compare.with
call two identical runs changed?

Not a speed benchmark (`make bench` does not run it). One JSON line per result:

1. Edges (issue 45): runs of k = 1, 3, 5, 10 repeats from known distributions (normal with a third of the
   tolerance as its SD, lognormal, bimodal with modes 4 % either side) whose true median is at the band's
   centre (1.0), on its upper edge (1.1) or just outside (1.11), band 0.9-1.1, 10,000 trials each, judged
   as costlab judges them (costlab.intervals.over_repeats_many: the same intervals as over_repeats; one
   repeat: the point verdict). Printed: the rates of "reproduced", "not reproduced" and "inconclusive",
   which of them is false for that truth, and the risk the page states ((1 - coverage) / 2; one run: not
   known). At the edge each decided verdict is wrong at about the stated risk.
2. compare.with on two identical runs (2,000 pairs of k repeats, k = 3, 5, 10), tolerance +-10 %: the rate
   of a false "changed" (costlab.intervals.compare_runs), and of the old any-difference test (exact
   Mann-Whitney at 5 %, runs_differ_many) beside it.
3. The engine lab: one appversions version measured `repeats` times with a different events seed
   each (the same configuration otherwise), its storage/data ratio per repeat; then 10,000 random
   pairs of disjoint k-subsets of those repeats are judged as two runs (the any-difference test).
4. The arraygrowth engine lab, the same way: the replica set's $push at N = ARRAYGROWTH_N measured `repeats`
   times, its modify calls per push and journal bytes per write per repeat, over 10,000 random pairs of
   disjoint k-subsets. Seconds of CPU.

    python benchmarks/aa_false_difference.py edges      (parts 1 and 2 alone: about 3 CPU minutes)
    python benchmarks/aa_false_difference.py [repeats=12] [version=appV1] [events_per_year=5000] [k=5]
    python benchmarks/aa_false_difference.py arraygrowth [repeats=12] [k=5]     (part 4 alone)
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

from costlab.intervals import compare_runs, over_repeats, over_repeats_many, runs_differ_many  # noqa: E402

TRIALS = 10_000
DISTRIBUTIONS = {
    "normal": lambda rng, size: rng.normal(1.0, 0.1 / 3, size),
    "lognormal": lambda rng, size: rng.lognormal(0.0, 0.03, size),
    "bimodal": lambda rng, size: (
        1 + np.where(rng.random(size) < 0.5, -0.04, 0.04) + rng.normal(0, 0.005, size)
    ),
}


BAND = (0.9, 1.1)
TRUTHS = {"centre": 1.0, "edge": 1.1, "just outside": 1.11}
# the verdict that is false for each truth (at the edge, a decided verdict either way is wrong: the truth
# sits on the line between them)
FALSE = {"centre": ("not reproduced",), "edge": ("reproduced", "not reproduced"),
         "just outside": ("reproduced",)}


def edges(seed: int = 1) -> None:
    rng = np.random.default_rng(seed)
    for name, draw in DISTRIBUTIONS.items():
        for truth_name, truth in TRUTHS.items():
            for k in (1, 3, 5, 10):
                _, low, high, risk = over_repeats_many(truth * draw(rng, (TRIALS, k)))
                inside = (low >= BAND[0]) & (high <= BAND[1])
                outside = (high < BAND[0]) | (low > BAND[1])
                rates = {"reproduced": float(inside.mean()), "not reproduced": float(outside.mean()),
                         "inconclusive": float((~inside & ~outside).mean())}
                print(json.dumps({"part": "edges", "distribution": name, "truth": f"{truth_name} ({truth})",
                                  "repeats": k, **{v: round(r, 4) for v, r in rates.items()},
                                  "false": list(FALSE[truth_name]),
                                  "stated_risk": "one run: not known" if k == 1 else round(risk, 4)}),
                      flush=True)


def identical_pairs(seed: int = 4, pairs: int = 2000) -> None:
    rng = np.random.default_rng(seed)
    for name, draw in DISTRIBUTIONS.items():
        for k in (3, 5, 10):
            this, other = draw(rng, (pairs, k)), draw(rng, (pairs, k))
            changed = np.mean([compare_runs(a, b, BAND).outcome == "changed" for a, b in zip(this, other)])
            print(json.dumps({"part": "compare identical runs", "distribution": name, "repeats": k,
                              "false_changed_rate": round(float(changed), 4),
                              "any_difference_rate": round(float(runs_differ_many(this, other).mean()), 4)}),
                  flush=True)


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
    if args[:1] == ["edges"]:   # parts 1 and 2 alone: simulations, seconds
        edges()
        identical_pairs()
        sys.exit(0)
    if args[:1] == ["arraygrowth"]:   # the arraygrowth engine part alone: arraygrowth [repeats=12] [k=5]
        arraygrowth_engine(int(args[1]) if len(args) > 1 else 12, int(args[2]) if len(args) > 2 else 5)
        sys.exit(0)
    edges()
    identical_pairs()
    engine(int(args[0]) if args else 12, args[1] if len(args) > 1 else "appV1",
           int(args[2]) if len(args) > 2 else 5000, int(args[3]) if len(args) > 3 else 5)
    arraygrowth_engine(int(args[0]) if args else 12, int(args[3]) if len(args) > 3 else 5)
