"""The streaming model: the same numbers as the whole-table model it replaced, whatever the chunk size."""
from __future__ import annotations

from datetime import datetime, timezone

import appversions_model_reference as reference
import polars as pl
import pytest

from costlab.appversions.events import (
    STATUS_DTYPE,
    generate_events,
    iter_event_chunks,
    iter_event_file,
    write_events,
)
from costlab.appversions.model import ModelStream, collection_stats, document_sizes
from costlab.appversions.versions import VERSIONS

UTC = timezone.utc


_REFERENCE: dict[tuple[int, str], tuple[pl.DataFrame, pl.DataFrame]] = {}


def _reference(events_per_year: int, window: str = "calendar") -> tuple[pl.DataFrame, pl.DataFrame]:
    """The events in the article's form and the whole-table model's numbers for them (computed once)."""
    if (events_per_year, window) not in _REFERENCE:
        events = generate_events(events_per_year, seed=42, window=window)
        _REFERENCE[events_per_year, window] = events, reference.collection_stats(events)
    return _REFERENCE[events_per_year, window]


# Two scales, two chunk sizes each (6,000 in one chunk too). Chunks of 499 and 33,331 events cut
# days, months and quarters at their edges; test_a_quarter_split_over_chunks_is_one_document by hand.
@pytest.mark.parametrize(
    "events_per_year, chunk_events, window",
    [
        (600, 499, "calendar"),
        (600, 6_000, "calendar"),
        (20_000, 33_331, "calendar"),
        (20_000, 65_536, "calendar"),
        (600, 499, "authors"),
    ],
)
def test_chunked_model_equals_the_whole_table_model(events_per_year, chunk_events, window):
    _, expected = _reference(events_per_year, window)
    streamed = collection_stats(
        iter_event_chunks(events_per_year, seed=42, chunk_events=chunk_events, window=window)
    )
    assert streamed.equals(expected)


@pytest.mark.parametrize("events_per_year", [600, 20_000])
def test_model_of_the_event_file_equals_the_whole_table_model(events_per_year, tmp_path):
    events, expected = _reference(events_per_year)
    path = tmp_path / "events.parquet"
    write_events(iter_event_chunks(events_per_year, seed=42, chunk_events=50_000), path)
    assert collection_stats(iter_event_file(path, chunk_rows=70_001)).equals(expected)
    assert collection_stats(events).equals(expected)   # one frame in the article's form


@pytest.mark.parametrize("name", list(VERSIONS))
def test_document_sizes_equal_the_whole_table_model(name):
    # events of two spans, not in date order as one frame: document_sizes takes any order
    events = pl.concat(
        [
            generate_events(300, seed=5),
            generate_events(3_000, seed=6, start=datetime(2019, 10, 1), end=datetime(2020, 1, 1)),
        ]
    )
    expected = sorted(reference.document_sizes(VERSIONS[name], events).to_list())
    assert sorted(document_sizes(VERSIONS[name], events).to_list()) == expected


def _frame(rows):
    return pl.DataFrame(
        rows,
        schema={"user": pl.UInt32, "date": pl.Datetime("ms", "UTC"), "status": STATUS_DTYPE},
        orient="row",
    )


def test_a_quarter_split_over_chunks_is_one_document():
    first = _frame(
        [(1, datetime(2022, 1, 5, tzinfo=UTC), "approved"), (1, datetime(2022, 2, 7, tzinfo=UTC), "pending")]
    )
    second = _frame(
        [
            (1, datetime(2022, 2, 7, tzinfo=UTC), "approved"),
            (1, datetime(2022, 3, 30, tzinfo=UTC), "rejected"),
        ]
    )
    stream = ModelStream(["appV4", "appV5R0", "appV6R3"])
    stream.add(first)
    stream.add(second)
    stats = {row["version"]: row["documents"] for row in stream.finish().iter_rows(named=True)}
    # days 5 Jan, 7 Feb (split over both chunks), 30 Mar; months Jan, Feb, Mar; one quarter
    assert stats == {"appV4": 3, "appV5R0": 3, "appV6R3": 1}


def test_chunks_going_back_in_time_are_refused():
    stream = ModelStream(["appV4"])
    stream.add(
        _frame(
            [
                (1, datetime(2022, 1, 5, tzinfo=UTC), "approved"),
                (2, datetime(2022, 1, 9, tzinfo=UTC), "approved"),
            ]
        )
    )
    with pytest.raises(
        ValueError, match="not in date order: a chunk holds 2022-01-08 after events of 2022-01-09"
    ):
        stream.add(_frame([(1, datetime(2022, 1, 8, tzinfo=UTC), "approved")]))


def test_dates_the_codes_cannot_hold_are_named():
    with pytest.raises(ValueError, match="event date 1969-12-31 is outside"):
        collection_stats(_frame([(1, datetime(1969, 12, 31, tzinfo=UTC), "approved")]))
