"""appversions server-free steps at scale: events and model in bounded memory, time linear in events.

Targets (issue 26): peak RSS below 2 GB at every scale, for the events step and the model step;
CPU time linear in the number of events (log-log slope <= 1.05 between neighbouring scales and
over the whole range). Each step runs in a child process of its own, doing what its Snakemake script
does (scripts/appversions_events.py: `write_events(iter_event_chunks(...))`;
scripts/appversions_model.py: `collection_stats(iter_event_file(...))`), and is measured by the
kernel's accounting of that child (`os.wait4`: user + system CPU seconds of all its threads, peak
RSS). Polars uses every core, so CPU s is the figure; wall time, which other work on a shared
machine inflates, is printed beside it. Events are the calendar window (exactly the count asked
for); the workflow's default `authors` window differs by 0.08 % in count and not in cost.

    python benchmarks/bench_model_scale.py [millions of events ...]   # default: 2 32 128
"""
from __future__ import annotations

import math  # noqa: E402
import os  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from pathlib import Path  # noqa: E402

import common

RSS_TARGET_MB = 2000
SLOPE_TARGET = 1.05
SEED = 42

EVENTS_STEP = """
import sys
from costlab.appversions.events import iter_event_chunks, write_events
write_events(iter_event_chunks(int(sys.argv[1]), {seed}), sys.argv[2])
""".format(seed=SEED)
MODEL_STEP = """
import sys
from costlab.appversions.events import iter_event_file
from costlab.appversions.model import DEFAULT_CHUNK_ROWS, collection_stats
stats = collection_stats(iter_event_file(sys.argv[2], DEFAULT_CHUNK_ROWS))
assert (stats["events"] == int(sys.argv[1]) * 10).all(), stats
"""


@dataclass
class Step:
    cpu_s: float
    wall_s: float
    peak_rss_mb: float


def run_step(code: str, events_per_year: int, path: Path) -> Step:
    """Run one step in a child process; its CPU seconds (user + system) and peak RSS from the kernel."""
    started = time.monotonic()
    child = subprocess.Popen([sys.executable, "-c", code, str(events_per_year), str(path)])
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise RuntimeError(f"step failed (exit {child.returncode}) at {events_per_year * 10:,} events")
    return Step(usage.ru_utime + usage.ru_stime, time.monotonic() - started, usage.ru_maxrss / 1024)


def slope(small: tuple[int, float], large: tuple[int, float]) -> float:
    """Log-log slope of CPU time against events between two scales (1.0: linear)."""
    return math.log(large[1] / small[1]) / math.log(large[0] / small[0])


def main(millions: list[int] | None = None) -> None:
    millions = sorted(millions or [2, 32, 128])
    common.header(
        f"appversions events + model at {', '.join(f'{m} M' for m in millions)} events ({common.machine()})"
    )
    cmd = f"python benchmarks/bench_model_scale.py {' '.join(map(str, millions))}"
    measured: dict[int, dict[str, Step]] = {}
    with tempfile.TemporaryDirectory(prefix="costlab-bench-scale-") as scratch:
        for m in millions:
            events_per_year = m * 100_000
            path = Path(scratch) / f"events_{m}M.parquet"
            steps = {"events": run_step(EVENTS_STEP, events_per_year, path),
                     "model": run_step(MODEL_STEP, events_per_year, path)}
            file_mb = path.stat().st_size / 1e6
            path.unlink()
            measured[m] = steps
            for name, step in steps.items():
                common.result(
                    f"{name} step, {m} M events: peak RSS (MB)",
                    step.peak_rss_mb,
                    "MB",
                    RSS_TARGET_MB,
                    at_least=False,
                    note=f"{step.cpu_s:.1f} CPU s, {step.wall_s:.1f} s wall, "
                    f"{step.cpu_s / m * 1000:.0f} CPU ms per M events"
                    + (f"; file {file_mb:,.0f} MB" if name == "events" else ""),
                    command=cmd,
                )
    print(
        f"\n{'events':>10} {'events CPU s':>13} {'events RSS MB':>14} {'model CPU s':>12} "
        f"{'model RSS MB':>13}"
    )
    for m, steps in measured.items():
        print(f"{m:>8} M {steps['events'].cpu_s:>13.1f} {steps['events'].peak_rss_mb:>14.0f} "
              f"{steps['model'].cpu_s:>12.1f} {steps['model'].peak_rss_mb:>13.0f}")
    # Between each pair of neighbouring scales (the smallest carries the interpreter's start-up,
    # which flatters a slope from it), and over the whole range.
    pairs = list(zip(millions, millions[1:])) + ([(millions[0], millions[-1])] if len(millions) > 2 else [])
    for small, large in pairs:
        for name in ("events", "model"):
            fit = slope((small, measured[small][name].cpu_s), (large, measured[large][name].cpu_s))
            growth = measured[large][name].peak_rss_mb / measured[small][name].peak_rss_mb
            common.result(
                f"{name} step: CPU slope {small} M -> {large} M (log-log)",
                fit,
                "",
                SLOPE_TARGET,
                at_least=False,
                note=f"peak RSS x{growth:.2f} for x{large / small:.0f} events",
                command=cmd,
            )

if __name__ == "__main__":
    main([int(arg) for arg in sys.argv[1:]] or None)
