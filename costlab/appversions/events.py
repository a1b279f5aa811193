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
initial data set's.
"""
from __future__ import annotations

import math
from datetime import date, datetime

import numpy as np
import polars as pl

STATUSES: tuple[str, ...] = ("approved", "noFunds", "pending", "rejected")
STATUS_DTYPE = pl.Enum(list(STATUSES))
# Cumulative status shares: 80 % approved, 10 % noFunds, 7.5 % pending, 2.5 % rejected.
STATUS_THRESHOLDS = np.array([0.8, 0.9, 0.975])
EVENTS_PER_USER_PER_YEAR = 60
UNIFORM_KEY_SHARE = 0.6
DENSE_KEY_SIGMA = 0.015
KEY_HEX_DIGITS = 64
DEFAULT_START = date(2010, 1, 1)
DEFAULT_END = date(2020, 1, 1)
MS_PER_DAY = 86_400_000

EVENT_SCHEMA = {"key": pl.Utf8, "date": pl.Datetime("ms", "UTC"), "status": STATUS_DTYPE}


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


def span_in_years(start: date, end: date) -> float:
    """Length of [start, end) in years, each calendar year weighted by its own length."""
    def year_position(day: date) -> float:
        year_days = (date(day.year + 1, 1, 1) - date(day.year, 1, 1)).days
        return day.year + (day - date(day.year, 1, 1)).days / year_days
    return year_position(end) - year_position(start)


def event_count(events_per_year: int, start: date, end: date) -> int:
    return int(round(events_per_year * span_in_years(start, end)))


def generate_events(events_per_year: int, seed: int, start: date | datetime = DEFAULT_START,
                    end: date | datetime = DEFAULT_END) -> pl.DataFrame:
    """Events over [start, end): columns key (Utf8), date (Datetime ms UTC, a UTC day), status (Enum).

    Rows are in date order. Deterministic for (events_per_year, seed, start, end).
    """
    users = users_for(events_per_year)
    if not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    start_day, end_day = _as_date(start, "start"), _as_date(end, "end")
    if end_day <= start_day:
        raise ValueError(f"end ({end_day}) must be after start ({start_day})")
    n_events = event_count(events_per_year, start_day, end_day)
    if n_events == 0:
        return pl.DataFrame(schema=EVENT_SCHEMA)

    rng = np.random.default_rng(seed)
    # Key: 60 % uniform over all users, 40 % |N(0, 0.015)| (the first few % of users are dense).
    uniform_pick = rng.random(n_events) < UNIFORM_KEY_SHARE
    uniform_x = rng.random(n_events)
    dense_x = np.abs(rng.normal(0.0, DENSE_KEY_SIGMA, n_events))
    x = np.where(uniform_pick, uniform_x, dense_x)
    # In place, and comparisons instead of searchsorted: same values, half the time (benchmarks/bench_events.py).
    np.multiply(x, users, out=x)
    np.ceil(x, out=x)
    user_index = x.astype(np.int64)
    np.clip(user_index, 1, users, out=user_index)
    status_u = rng.random(n_events)
    status_code = sum((status_u >= threshold).view(np.uint8) for threshold in STATUS_THRESHOLDS)

    # Dates: event i sits at start + i * span / n, truncated to the UTC day.
    start_ms = (start_day - date(1970, 1, 1)).days * MS_PER_DAY
    span_ms = (end_day - start_day).days * MS_PER_DAY
    offsets_ms = (np.arange(n_events, dtype=np.int64) * span_ms) // n_events
    day_ms = start_ms + (offsets_ms // MS_PER_DAY) * MS_PER_DAY

    keys = keys_for_users(users).gather(user_index - 1)
    return pl.DataFrame({
        "key": keys,
        "date": pl.Series(day_ms, dtype=pl.Int64).cast(pl.Datetime("ms")).dt.replace_time_zone("UTC"),
        "status": pl.Series(STATUSES, dtype=STATUS_DTYPE).gather(status_code),  # no Python str per event
    })


def keys_for_users(users: int) -> pl.Series:
    """Keys of users 1..users (64 uppercase hex digits each), vectorised via nibble lookup."""
    index = np.arange(1, users + 1, dtype=np.uint64)
    shifts = np.arange(60, -4, -4, dtype=np.uint64)  # 16 nibbles, most significant first
    nibbles = (index[:, None] >> shifts) & np.uint64(0xF)
    chars = np.frombuffer(b"0123456789ABCDEF", dtype=np.uint8)[nibbles.astype(np.intp)]
    low16 = chars.view("S16").ravel().astype("U16")
    return pl.Series("key", low16, dtype=pl.Utf8).str.pad_start(KEY_HEX_DIGITS, "0")
