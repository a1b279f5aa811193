"""Server-free model (appversions): collection stats of all 14 versions at 5 M events.

Target (issue 8): <= 10 s for all 14 versions at 5 million events. The figure is CPU seconds (all
threads): a CPU-bound run never takes longer than its CPU time on an idle machine, and other work on
this shared machine inflates wall time but not CPU time. Wall time is printed beside it. Event generation is
timed separately (the
workflow's events step writes them once; the model step reads them).

    python benchmarks/bench_model.py [events_per_year]   # default 500000 -> 5 M events over 10 years
"""
from __future__ import annotations

import sys  # noqa: E402

import common

from costlab.appversions.events import generate_events  # noqa: E402
from costlab.appversions.model import bucket_rows, collection_stats, day_rows, event_codes  # noqa: E402
from costlab.appversions.versions import VERSIONS  # noqa: E402


def _shared_group_bys(events) -> None:
    days = day_rows(event_codes(events))
    for bucket in ("month", "quarter"):
        bucket_rows(days, bucket)


def main(events_per_year: int = 500_000) -> None:
    common.header(f"appversions server-free model, all {len(VERSIONS)} versions ({common.machine()})")
    events = generate_events(events_per_year, seed=42)
    cmd = "python benchmarks/bench_model.py"
    timing = common.best_of_cpu(lambda: collection_stats(events), repeat=2)
    stats = timing.result
    assert stats.height == len(VERSIONS) and (stats["events"] == events.height).all()
    # Where the time goes: the shared group-bys (per day, per key and month/quarter) vs the rest.
    shared_timing = common.best_of_cpu(lambda: _shared_group_bys(events), repeat=1)
    common.result(
        f"collection_stats, {len(VERSIONS)} versions, {events.height / 1e6:.0f} M events (CPU s)",
        timing.cpu_s,
        "s",
        10,
        at_least=False,
        note=f"{timing.wall_s:.1f} s wall; the shared group-bys alone: {shared_timing.wall_s:.1f} s wall / "
        f"{shared_timing.cpu_s:.1f} s CPU",
        command=cmd,
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 500_000)
