"""The event generator: method facts from the series' Introduction (distribution, determinism, dates)."""
from __future__ import annotations

import math
import re
from datetime import date, datetime, timedelta, timezone

import numpy as np
import polars as pl
import pytest

from costlab.appversions.events import (
    EVENT_CODES_SCHEMA,
    STATUS_DTYPE,
    STATUSES,
    event_days,
    event_file_rows,
    generate_events,
    iter_event_chunks,
    iter_event_file,
    key_for,
    keys_for_users,
    read_events,
    span_in_years,
    users_for,
    with_keys,
    write_events,
)

EVENTS_PER_YEAR = 60_000  # 600,000 events over ten years, 1,000 users


@pytest.fixture(scope="module")
def events() -> pl.DataFrame:
    return generate_events(EVENTS_PER_YEAR, seed=3)


def _user_index(frame: pl.DataFrame) -> pl.Series:
    return frame["key"].str.slice(48).str.to_integer(base=16)


def test_schema_and_no_nulls(events):
    assert events.schema == pl.Schema({"key": pl.Utf8, "date": pl.Datetime("ms", "UTC"),
                                       "status": pl.Enum(["approved", "noFunds", "pending", "rejected"])})
    assert events.null_count().row(0) == (0, 0, 0)


def test_status_shares(events):
    shares = dict(events["status"].cast(pl.Utf8).value_counts(normalize=True).iter_rows())
    for status, published in {"approved": 0.80, "noFunds": 0.10, "pending": 0.075, "rejected": 0.025}.items():
        assert shares[status] == pytest.approx(published, abs=0.003), status


def test_users_and_events_per_user_per_year(events):
    assert users_for(EVENTS_PER_YEAR) == 1000
    assert users_for(50_000_000) == 833_334  # ceil(50,000,000 / 60)
    assert users_for(61) == 2
    assert events.height == 10 * EVENTS_PER_YEAR
    per_user_per_year = events.height / events["key"].n_unique() / 10
    assert per_user_per_year == pytest.approx(60, rel=0.01)


def test_key_density_follows_the_60_40_mix(events):
    users = users_for(EVENTS_PER_YEAR)
    index = _user_index(events)
    assert index.min() >= 1 and index.max() <= users
    # First 4.5 % of users: 60 % * 0.045 of the uniform draws + 40 % * P(|N(0, 0.015)| <= 0.045).
    head = math.ceil(users * 0.045)
    expected_head = 0.6 * head / users + 0.4 * math.erf(0.045 / (0.015 * math.sqrt(2)))
    assert (index <= head).mean() == pytest.approx(expected_head, abs=0.005)
    # The upper half of the users only gets uniform draws: 60 % * 0.5.
    assert (index > users // 2).mean() == pytest.approx(0.30, abs=0.005)
    # Densest key vs a typical sparse one: the normal part piles onto user 1.
    per_user = events.group_by("key").len()["len"]
    assert per_user.max() > 20 * per_user.median()


def test_dates_are_evenly_spread_days_in_order(events):
    dates = events["date"]
    assert dates.is_sorted()
    assert (dates.dt.truncate("1d") == dates).all()
    assert dates.min() == datetime(2010, 1, 1, tzinfo=timezone.utc)
    assert dates.max() == datetime(2019, 12, 31, tzinfo=timezone.utc)
    per_day = events.group_by("date").len()["len"]
    # 600,000 events over 3,652 days: 164 or 165 per day, nothing random.
    assert per_day.n_unique() <= 2 and per_day.min() >= 164 and per_day.max() <= 165
    per_year = events.group_by(pl.col("date").dt.year()).len()["len"]
    assert per_year.min() >= EVENTS_PER_YEAR * 0.998 and per_year.max() <= EVENTS_PER_YEAR * 1.003


def test_keys_are_64_uppercase_hex_digits(events):
    assert events["key"].str.contains(r"^[0-9A-F]{64}$").all()
    assert key_for(1) == "0" * 63 + "1"
    assert key_for(255) == "0" * 62 + "FF"
    assert keys_for_users(300).to_list()[299] == "0" * 61 + "12C"


def test_deterministic_per_seed():
    first = generate_events(6_000, seed=9)
    assert first.equals(generate_events(6_000, seed=9))
    assert not first.equals(generate_events(6_000, seed=10))


def test_other_span_scales_events_per_year():
    new = generate_events(3_650, seed=1, start=date(2020, 1, 1), end=date(2021, 1, 1))
    assert new.height == 3_650
    assert new["date"].dt.year().unique().to_list() == [2020]
    assert new["date"].dt.date().n_unique() == 366  # every day of the leap year gets events
    half = generate_events(3_650, seed=1, start=date(2020, 1, 1), end=date(2020, 7, 1))
    assert half.height == round(3_650 * 182 / 366)
    assert span_in_years(date(2010, 1, 1), date(2020, 1, 1)) == 10


@pytest.mark.parametrize("kwargs, message", [
    ({"events_per_year": 0, "seed": 1}, "events_per_year"),
    ({"events_per_year": 100, "seed": -1}, "seed"),
    ({"events_per_year": 100, "seed": 1, "start": date(2020, 1, 1), "end": date(2020, 1, 1)}, "end"),
    ({"events_per_year": 100, "seed": 1, "start": datetime(2020, 1, 1, 12)}, "whole UTC day"),
])
def test_bad_arguments_are_named(kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        generate_events(**kwargs)


def _whole_array_method(events_per_year: int, seed: int) -> pl.DataFrame:
    """The method drawn the straightforward way: each of the four draws as one array of every event."""
    users = math.ceil(events_per_year / 60)
    n = 10 * events_per_year
    rng = np.random.default_rng(seed)
    pick = rng.random(n) < 0.6
    uniform_x, dense_x = rng.random(n), np.abs(rng.normal(0.0, 0.015, n))
    user = np.clip(np.ceil(np.where(pick, uniform_x, dense_x) * users), 1, users).astype(np.int64)
    status = np.searchsorted([0.8, 0.9, 0.975], rng.random(n), side="right")
    day0 = (date(2010, 1, 1) - date(1970, 1, 1)).days
    days = day0 + (np.arange(n) * 3652) // n
    return pl.DataFrame({
        "key": [format(int(u), "064X") for u in user],
        "date": [datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(days=int(d)) for d in days],
        "status": pl.Series([STATUSES[s] for s in status], dtype=STATUS_DTYPE)})


def test_chunks_are_the_same_events_whatever_the_chunk_size():
    # 6,000 events in 858 chunks of 7 (the last holds 1); 60,000 in chunks of 25,000 (the last holds 10,000)
    for events_per_year, chunk_events in ((600, 7), (6_000, 25_000)):
        whole = generate_events(events_per_year, seed=9)
        chunks = list(iter_event_chunks(events_per_year, seed=9, chunk_events=chunk_events))
        assert max(c.height for c in chunks) == chunk_events
        codes = pl.concat(chunks)
        assert codes.schema == pl.Schema(EVENT_CODES_SCHEMA)   # keys are integer codes in the data
        assert with_keys(codes).equals(whole)


def test_generator_draws_what_the_whole_array_method_draws():
    assert generate_events(2_000, seed=4).equals(
        _whole_array_method(2_000, 4).cast({"date": pl.Datetime("ms", "UTC")})
    )


def test_dates_of_the_published_scale_stay_exact():
    # 500 M events: i * span in milliseconds would overflow int64; the days must not.
    n = 500_000_000
    days = event_days(n - 3, 3, n, date(2010, 1, 1), date(2020, 1, 1))
    last = (date(2019, 12, 31) - date(1970, 1, 1)).days
    assert days.tolist() == [last] * 3
    assert event_days(0, 1, n, date(2010, 1, 1), date(2020, 1, 1)).tolist() == [
        (date(2010, 1, 1) - date(1970, 1, 1)).days
    ]
    # the day each event falls on, exactly: event i at i * 3652 / n days
    middle = n // 2
    assert event_days(middle, 1, n, date(2010, 1, 1), date(2020, 1, 1)).tolist() == [
        (date(2010, 1, 1) - date(1970, 1, 1)).days + middle * 3652 // n]


def test_event_file_one_row_group_per_chunk_and_read_back(tmp_path):
    import pyarrow.parquet as pq

    path = tmp_path / "events.parquet"
    rows = write_events(iter_event_chunks(600, seed=2, chunk_events=1_000), path)
    assert rows == 6_000 == event_file_rows(path)
    assert pq.ParquetFile(path).metadata.num_row_groups == 6
    assert pl.read_parquet(path).schema == pl.Schema(EVENT_CODES_SCHEMA)
    assert read_events(path).equals(generate_events(600, seed=2))
    assert [c.height for c in iter_event_file(path, chunk_rows=2_500)] == [2_500, 2_500, 1_000]
    # a file in the article's form (key strings) reads as the same codes
    legacy = tmp_path / "legacy.parquet"
    generate_events(600, seed=2).write_parquet(legacy)
    assert pl.concat(iter_event_file(legacy)).equals(pl.read_parquet(path))


def test_a_failed_write_leaves_no_file(tmp_path):
    path = tmp_path / "events.parquet"

    def failing():
        yield from iter_event_chunks(600, seed=2, chunk_events=1_000)
        raise RuntimeError("stopped")

    with pytest.raises(RuntimeError, match="stopped"):
        write_events(failing(), path)
    assert list(tmp_path.iterdir()) == []


def test_bad_chunk_size_is_named():
    with pytest.raises(ValueError, match="chunk_events must be a positive integer, got 0"):
        next(iter_event_chunks(600, seed=1, chunk_events=0))
