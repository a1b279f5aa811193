"""Event generation (appversions): events/s on one core, and the speed-up over a per-event loop.

Target (issue 8): >= 10 M events/s on one core, and >= 10x a plain per-event Python loop that
draws the same distribution. The loop runs on fewer events and is scaled by its rate (it is linear).

    python benchmarks/bench_events.py [events_per_year]   # default 500000 -> 5 M events over 10 years
"""
from __future__ import annotations

import common

common.one_core()

import bisect  # noqa: E402
import math  # noqa: E402
import random  # noqa: E402
import sys  # noqa: E402
from datetime import date  # noqa: E402

import polars as pl  # noqa: E402

from costlab.appversions import events as ev  # noqa: E402

BASELINE_EVENTS = 200_000


def baseline_loop(n_events: int, users: int, seed: int, start: date = ev.DEFAULT_START,
                  end: date = ev.DEFAULT_END) -> pl.DataFrame:
    """The same distribution, one event per Python iteration (what the vectorised code replaces)."""
    rnd = random.Random(seed)
    thresholds = list(ev.STATUS_THRESHOLDS)
    start_ms = (start - date(1970, 1, 1)).days * ev.MS_PER_DAY
    span_ms = (end - start).days * ev.MS_PER_DAY
    keys, days, statuses = [], [], []
    for i in range(n_events):
        if rnd.random() < ev.UNIFORM_KEY_SHARE:
            x = rnd.random()
        else:
            x = abs(rnd.gauss(0.0, ev.DENSE_KEY_SIGMA))
        user = min(max(math.ceil(users * x), 1), users)
        keys.append(format(user, "064X"))
        days.append(start_ms + (i * span_ms // n_events) // ev.MS_PER_DAY * ev.MS_PER_DAY)
        statuses.append(ev.STATUSES[bisect.bisect_right(thresholds, rnd.random())])
    return pl.DataFrame({
        "key": keys,
        "date": pl.Series(days, dtype=pl.Int64).cast(pl.Datetime("ms")).dt.replace_time_zone("UTC"),
        "status": pl.Series(statuses, dtype=ev.STATUS_DTYPE),
    })


def main(events_per_year: int = 500_000) -> None:
    common.header(f"Event generation, one core ({common.machine()})")
    timing = common.best_of_cpu(lambda: ev.generate_events(events_per_year, seed=1), repeat=3)
    frame = timing.result
    n_events = frame.height
    rate = n_events / timing.cpu_s
    users = ev.users_for(events_per_year)

    base = common.best_of_cpu(lambda: baseline_loop(BASELINE_EVENTS, users, seed=1), repeat=2)
    base_frame = base.result
    assert base_frame.schema == frame.schema, (base_frame.schema, frame.schema)
    # Same distribution: the status shares and the dense-key share agree (a sanity check, not a test).
    for name, sample in (("vectorised", frame), ("loop", base_frame)):
        shares = sample["status"].value_counts(normalize=True, sort=True)
        print(f"  {name:<10} status shares: " + ", ".join(
            f"{row['status']} {row['proportion']:.3f}" for row in shares.iter_rows(named=True)))
    base_rate = BASELINE_EVENTS / base.cpu_s

    cmd = "python benchmarks/bench_events.py"
    common.result(
        "generate_events (events/s per core)",
        rate,
        "events/s",
        10e6,
        note=f"{n_events:,} events, {timing.cpu_s:.2f} s CPU, {timing.wall_s:.2f} s wall",
        command=cmd,
    )
    common.result("per-event Python loop (events/s per core)", base_rate, "events/s", None,
                  note=f"{BASELINE_EVENTS:,} events, {base.cpu_s:.2f} s CPU", command=cmd)
    common.result("speed-up over the per-event loop", rate / base_rate, "x", 10, command=cmd)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 500_000)
