"""Event generator of "The Cost of Not Knowing MongoDB" (method from the series' Introduction).

One event = one transaction of one user on one UTC day with exactly one status. The method:
- `events_per_year` events per year, spread evenly over [start, end) and truncated to the UTC day
  (dates are not random);
- 60 events per user per year on average: users = ceil(events_per_year / 60);
- key: with probability 0.6 draw x ~ U(0, 1), else x = |N(0, 0.015)|; user index = ceil(users * x)
  clamped to 1..users; the key is the index as 64 uppercase hex digits. So 60 % of events are
  spread over all users and 40 % pile onto the first ~4 % of them (dense keys);
- status: u ~ U(0, 1): approved if u < 0.8, noFunds if < 0.9, pending if < 0.975, else rejected.

Over a span other than whole years (e.g. the load test's 2020), `events_per_year` is a rate: the span
gets round(events_per_year * span_in_years) events, where span_in_years counts each calendar year's
covered fraction of its own length (2010-01-01..2020-01-01 is exactly 10, 2020-01-01..2021-01-01 is 1).
The number of users always comes from `events_per_year`, so the key space of new events matches the
initial data set's. That is the `calendar` window; `window="authors"` takes the span the authors'
generator covered instead (all of the end day and half an hour more: 500,390,000 events at the
published rate), see window.py.
"""
from __future__ import annotations

import math
from datetime import date, datetime
from pathlib import Path
from typing import Iterable, Iterator

import numpy as np
import polars as pl

from costlab.appversions.registry import STATUSES  # noqa: F401  re-exported: the registry declares them

# event_days, span_in_years: re-exported (the window module holds how events are spread over a span).
from costlab.appversions.window import MS_PER_DAY, event_days, event_window, span_in_years  # noqa: F401
from costlab.io import atomic_path

STATUS_DTYPE = pl.Enum(list(STATUSES))
# Cumulative status shares: 80 % approved, 10 % noFunds, 7.5 % pending, 2.5 % rejected.
STATUS_THRESHOLDS = np.array([0.8, 0.9, 0.975])
EVENTS_PER_USER_PER_YEAR = 60
UNIFORM_KEY_SHARE = 0.6
DENSE_KEY_SIGMA = 0.015
KEY_HEX_DIGITS = 64
DEFAULT_START = date(2010, 1, 1)
DEFAULT_END = date(2020, 1, 1)

EVENT_SCHEMA = {"key": pl.Utf8, "date": pl.Datetime("ms", "UTC"), "status": STATUS_DTYPE}
# What events.parquet holds: the key as its 1-based user index (the key string is built where a
# document is), written chunk by chunk, one parquet row group per chunk.
EVENT_CODES_SCHEMA = {"user": pl.UInt32, "date": pl.Datetime("ms", "UTC"), "status": STATUS_DTYPE}
# ~60 B per event while a chunk is generated: 4 M events stay near 250 MB whatever the total.
DEFAULT_CHUNK_EVENTS = 4_000_000


def users_for(events_per_year: int) -> int:
    """Number of distinct users (keys) for a rate of `events_per_year` (60 events per user per year)."""
    if not isinstance(events_per_year, (int, np.integer)) or events_per_year < 1:
        raise ValueError(f"events_per_year must be a positive integer, got {events_per_year!r}")
    return math.ceil(events_per_year / EVENTS_PER_USER_PER_YEAR)


def key_for(user_index: int) -> str:
    """The key of user `user_index` (1-based): 64 uppercase hex digits."""
    return format(int(user_index), f"0{KEY_HEX_DIGITS}X")


def _as_date(value: date | datetime, name: str) -> date:
    if isinstance(value, datetime):
        if (value.hour, value.minute, value.second, value.microsecond) != (0, 0, 0, 0):
            raise ValueError(f"{name} must be a whole UTC day, got {value!r}")
        return value.date()
    if isinstance(value, date):
        return value
    raise ValueError(f"{name} must be a date, got {value!r}")


def event_count(events_per_year: int, start: date, end: date, window: str = "calendar") -> int:
    """Events the `window` (calendar | authors) of [start, end] holds at `events_per_year`."""
    return event_window(window, events_per_year, start, end).events


def _check(
    events_per_year: int, seed: int, start: date | datetime, end: date | datetime
) -> tuple[int, date, date]:
    users = users_for(events_per_year)
    if users >= 2**32:
        raise ValueError(f"events_per_year must give fewer than 2**32 users, got {events_per_year!r}")
    if not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    start_day, end_day = _as_date(start, "start"), _as_date(end, "end")
    if end_day <= start_day:
        raise ValueError(f"end ({end_day}) must be after start ({start_day})")
    return users, start_day, end_day


def _bit_generator_at(origin: np.random.PCG64, draws: int) -> np.random.PCG64:
    """A copy of `origin` advanced by `draws` 64-bit outputs (one per float64 `random()` value)."""
    copy = np.random.PCG64()
    copy.state = origin.state
    copy.advance(draws)
    return copy


def iter_event_chunks(events_per_year: int, seed: int, start: date | datetime = DEFAULT_START,
                      end: date | datetime = DEFAULT_END, chunk_events: int = DEFAULT_CHUNK_EVENTS,
                      window: str = "calendar") -> Iterator[pl.DataFrame]:
    """The events over [start, end) as integer-coded chunks of at most `chunk_events` rows, in date order.

    window: `calendar` (exactly [start, end)) or `authors` (the span the authors' generator covered,
    window.py).

    Columns (EVENT_CODES_SCHEMA): user (UInt32, the 1-based user index; its key is `key_for(user)`),
    date (Datetime ms UTC, a UTC day), status (Enum). The concatenated chunks are the same whatever
    `chunk_events` is: the four draws per event (uniform-or-dense pick, uniform x, dense x, status)
    are four streams of one seeded PCG64, each chunk taking its next slice of every stream, in the
    order a single whole-length draw per stream takes them.
    """
    users, start_day, end_day = _check(events_per_year, seed, start, end)
    if not isinstance(chunk_events, (int, np.integer)) or chunk_events < 1:
        raise ValueError(f"chunk_events must be a positive integer, got {chunk_events!r}")
    span = event_window(window, events_per_year, start_day, end_day)
    n_events = span.events
    if n_events == 0:
        return
    origin = np.random.default_rng(seed).bit_generator
    pick_rng = np.random.Generator(_bit_generator_at(origin, 0))
    uniform_rng = np.random.Generator(_bit_generator_at(origin, n_events))
    dense_rng = np.random.Generator(_bit_generator_at(origin, 2 * n_events))
    # The status draws follow the dense ones, whose normal draws take a variable number of outputs:
    # run through them once (chunk by chunk, nothing kept) to find where the status stream starts.
    status_bits = _bit_generator_at(dense_rng.bit_generator, 0)
    skip_rng = np.random.Generator(status_bits)
    for offset in range(0, n_events, chunk_events):
        skip_rng.normal(0.0, DENSE_KEY_SIGMA, min(chunk_events, n_events - offset))
    status_rng = np.random.Generator(status_bits)

    for offset in range(0, n_events, chunk_events):
        n = min(chunk_events, n_events - offset)
        # Key: 60 % uniform over all users, 40 % |N(0, 0.015)| (the first few % of users are dense).
        uniform_pick = pick_rng.random(n) < UNIFORM_KEY_SHARE
        x = uniform_rng.random(n)
        dense_x = np.abs(dense_rng.normal(0.0, DENSE_KEY_SIGMA, n))
        np.copyto(x, dense_x, where=~uniform_pick)
        del uniform_pick, dense_x
        np.multiply(x, users, out=x)
        np.ceil(x, out=x)
        np.minimum(x, users, out=x)  # so that the cast below cannot wrap
        user_index = x.astype(np.uint32)
        del x
        np.clip(user_index, 1, users, out=user_index)
        status_u = status_rng.random(n)
        status_code = sum((status_u >= threshold).view(np.uint8) for threshold in STATUS_THRESHOLDS)
        del status_u
        yield pl.DataFrame({
            "user": pl.Series(user_index, dtype=pl.UInt32),
            "date": (pl.Series(span.days(offset, n) * MS_PER_DAY, dtype=pl.Int64)
                     .cast(pl.Datetime("ms"))
                     .dt.replace_time_zone("UTC")),
            "status": pl.Series(STATUSES, dtype=STATUS_DTYPE).gather(status_code),  # no Python str per event
        })


def generate_events(events_per_year: int, seed: int, start: date | datetime = DEFAULT_START,
                    end: date | datetime = DEFAULT_END, window: str = "calendar") -> pl.DataFrame:
    """Events over [start, end) in the article's form: key (Utf8), date (Datetime ms UTC, a UTC day), status.

    window: `calendar` or `authors` (window.py). Rows are in date order. Deterministic for
    (events_per_year, seed, start, end, window). In memory, whole: for large counts stream
    `iter_event_chunks` (integer keys) and `write_events` instead.
    """
    chunks = list(iter_event_chunks(events_per_year, seed, start, end, window=window))
    if not chunks:
        return pl.DataFrame(schema=EVENT_SCHEMA)
    return with_keys(pl.concat(chunks))


def with_keys(codes: pl.DataFrame) -> pl.DataFrame:
    """Integer-coded events -> the article's form: the user index replaced by its key (64 hex digits)."""
    keys = keys_of(codes["user"].to_numpy())
    return codes.select(pl.Series("key", keys, dtype=pl.Utf8), pl.exclude("user"))


def keys_of(user_index: np.ndarray) -> pl.Series:
    """The keys of 1-based user indexes (< 2**32): 64 uppercase hex digits each, vectorised via nibble
    lookup."""
    index = np.asarray(user_index, dtype=np.uint32)
    shifts = np.arange(28, -4, -4, dtype=np.uint32)  # 8 nibbles, most significant first
    nibbles = ((index[:, None] >> shifts) & np.uint32(0xF)).astype(np.uint8)
    chars = np.frombuffer(b"0123456789ABCDEF", dtype=np.uint8)[nibbles]
    low8 = chars.view("S8").ravel().astype("U8")
    return pl.Series("key", low8, dtype=pl.Utf8).str.pad_start(KEY_HEX_DIGITS, "0")


def keys_for_users(users: int) -> pl.Series:
    """Keys of users 1..users (64 uppercase hex digits each)."""
    return keys_of(np.arange(1, users + 1, dtype=np.uint32))


def write_events(chunks: Iterable[pl.DataFrame], path: str | Path) -> int:
    """Write integer-coded event chunks to one parquet file, one row group per chunk; return the rows.

    The file appears under `path` only when every chunk is written (costlab.io.atomic_path).
    """
    import pyarrow.parquet as pq  # noqa: PLC0415  heavy: pyarrow (40 MiB): only where a job reads or writes a Parquet file; a parse that rehearses variants imports the events module

    rows = 0
    with atomic_path(path) as tmp:
        writer = None
        try:
            for chunk in chunks:
                table = chunk.select(list(EVENT_CODES_SCHEMA)).to_arrow()
                if writer is None:
                    writer = pq.ParquetWriter(tmp, table.schema, compression="zstd")
                writer.write_table(table, row_group_size=max(1, chunk.height))
                rows += chunk.height
            if writer is None:  # no events: an empty file with the schema
                pl.DataFrame(schema=EVENT_CODES_SCHEMA).write_parquet(tmp)
        finally:
            if writer is not None:
                writer.close()
    return rows


def _as_codes(frame: pl.DataFrame) -> pl.DataFrame:
    if "user" in frame.columns:
        return frame
    # A file in the article's form (key strings, as written from generate_events): key -> user index.
    return frame.select(pl.col("key").str.slice(-8).str.to_integer(base=16).cast(pl.UInt32).alias("user"),
                        pl.exclude("key"))


def iter_event_file(path: str | Path, chunk_rows: int = DEFAULT_CHUNK_EVENTS) -> Iterator[pl.DataFrame]:
    """The events of an events.parquet as integer-coded chunks of `chunk_rows` rows (the last fewer), in file
    order.

    Each chunk is its own slice of the file (polars reads only the row groups it overlaps), so
    nothing is held from one chunk to the next: memory stays flat over a 500-million-event file
    (pyarrow's iter_batches kept about 6 MB per 2-million-event batch alive).
    """
    if not isinstance(chunk_rows, (int, np.integer)) or chunk_rows < 1:
        raise ValueError(f"chunk_rows must be a positive integer, got {chunk_rows!r}")
    for offset in range(0, event_file_rows(path), chunk_rows):
        yield _as_codes(pl.scan_parquet(path).slice(offset, chunk_rows).collect())


def event_file_rows(path: str | Path) -> int:
    """Number of events in an events.parquet (from its footer; nothing else is read)."""
    import pyarrow.parquet as pq  # noqa: PLC0415  heavy: pyarrow (40 MiB): only where a job reads or writes a Parquet file; a parse that rehearses variants imports the events module

    with pq.ParquetFile(path) as parquet:
        return parquet.metadata.num_rows


def read_events(path: str | Path) -> pl.DataFrame:
    """A whole events.parquet in the article's form (key strings), in memory: for small files only."""
    chunks = [with_keys(chunk) for chunk in iter_event_file(path)]
    return pl.concat(chunks) if chunks else pl.DataFrame(schema=EVENT_SCHEMA)
