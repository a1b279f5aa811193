"""What the plan ceilings (costlab/plan.py) are sized from: this machine's throughput for the work
they bound, on one core, and how long a plan at each ceiling would take at it.

    python benchmarks/bench_plan_ceilings.py [events_per_year]   # default 1,000,000 -> about 10 M events

Figures per CPU second of this process (common.one_core), so other work on the machine costs wall
time but changes them little.
"""

from __future__ import annotations

import common

common.one_core()

import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from costlab import plan  # noqa: E402


def main() -> None:
    from costlab.appversions.events import iter_event_chunks, write_events

    events_per_year = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "events.parquet"
        cpu0, wall0 = time.process_time(), time.perf_counter()
        rows = write_events(iter_event_chunks(events_per_year, 42, window="authors"), path)
        cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
        size = path.stat().st_size
    rate = rows / cpu
    print(
        f"events generated and written: {rows:,} in {cpu:.2f} CPU s ({wall:.2f} s wall): "
        f"{rate / 1e6:.1f} M events/s, "
        f"{size / rows:.2f} B/event on disk"
    )
    ceiling = plan.CEILINGS["events"]
    print(
        f"  the events ceiling, {ceiling.limit:,.0f} events: about {ceiling.limit / rate:,.0f} CPU s and "
        f"{ceiling.limit * size / rows / 1e9:.1f} GB of events.parquet"
    )


if __name__ == "__main__":
    main()
