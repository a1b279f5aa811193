"""Your own events (appversions.events) written for the workflow: the events job's conversion of your file
(checked by costlab/appversions/user_events.py) into the integer-coded events.parquet every appversions step
reads, and the shipped sample.

The sample the docs and tests use, examples/events/terminals.csv, is written once by
`python -m costlab.appversions.own_events sample examples/events/terminals.csv` (seeded: the same file on
every machine).
"""
from __future__ import annotations

import sys
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import polars as pl

from costlab.appversions.events import DEFAULT_CHUNK_EVENTS, STATUSES, write_events
from costlab.appversions.user_events import as_codes, as_codes_in_chunks, validated_events


def convert_events(path: str, output: str | Path, chunk_rows: int = DEFAULT_CHUNK_EVENTS) -> dict:
    """The file `path` (as configured) as an integer-coded events.parquet at `output`, in date order;
    what it holds (events, keys, first and last day, events per status) for the job's log and provenance."""
    codes = as_codes(validated_events(path))
    rows = write_events(as_codes_in_chunks(codes, chunk_rows), output)
    mix = codes.group_by("status").len()
    return {"events_file": str(path), "events": rows, "keys": int(codes["user"].max()),
            "first_day": str(codes["date"].min().date()), "last_day": str(codes["date"].max().date()),
            "statuses": {str(s): int(n) for s, n in mix.sort("status").iter_rows()}}


# ---- the shipped sample --------------------------------------------------------------------------------

SAMPLE_SEED = 2024
SAMPLE_TERMINALS = 120
SAMPLE_EVENTS = 4000
SAMPLE_START = datetime(2023, 1, 1, tzinfo=timezone.utc)
SAMPLE_DAYS = 731   # 2023-01-01 .. 2024-12-31
SAMPLE_MIX = (0.9, 0.03, 0.05, 0.02)   # approved, noFunds, pending, rejected: not the article's 80/10/7.5/2.5


def sample_events() -> pl.DataFrame:
    """The shipped sample: 4,000 card payments of 120 terminals (a few busy, most quiet: a Zipf-like share)
    over 2023-2024, at random instants, with amounts; seeded, so the file is the same on every machine."""

    rng = np.random.default_rng(SAMPLE_SEED)
    weights = 1.0 / np.arange(1, SAMPLE_TERMINALS + 1) ** 1.1
    terminal = rng.choice(SAMPLE_TERMINALS, SAMPLE_EVENTS, p=weights / weights.sum()) + 1
    seconds = np.sort(rng.integers(0, SAMPLE_DAYS * 86_400, SAMPLE_EVENTS))
    status = rng.choice(len(STATUSES), SAMPLE_EVENTS, p=SAMPLE_MIX)
    amount = np.round(rng.lognormal(3.0, 1.0, SAMPLE_EVENTS), 2)
    start_ms = int(SAMPLE_START.timestamp() * 1000)
    drawn = pl.DataFrame({"terminal": terminal, "ms": seconds * 1000 + start_ms, "status": status,
                          "amount": amount})
    return drawn.select(
        key=pl.concat_str(pl.lit("term-"), pl.col("terminal").cast(pl.Utf8).str.pad_start(4, "0")),
        time=pl.col("ms").cast(pl.Datetime("ms")).dt.strftime("%Y-%m-%dT%H:%M:%SZ"),
        status=pl.col("status").replace_strict(list(range(len(STATUSES))), list(STATUSES),
                                               return_dtype=pl.Utf8),
        amount="amount",
    )


def write_sample(path: str | Path) -> int:
    """Write the sample (sample_events) as CSV at `path` (a file of the repository, not a result: no digest
    record beside it); its rows."""
    frame = sample_events()
    frame.write_csv(path)
    return frame.height


if __name__ == "__main__":   # python -m costlab.appversions.own_events sample examples/events/terminals.csv
    if len(sys.argv) != 3 or sys.argv[1] != "sample":
        sys.exit("usage: python -m costlab.appversions.own_events sample <path.csv>")
    print(f"{write_sample(sys.argv[2])} events written to {sys.argv[2]}")
