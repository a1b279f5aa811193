"""The event window: the calendar span, or the span the authors' generator covered (window.py)."""
from __future__ import annotations

from datetime import date, datetime, timezone

import numpy as np
import polars as pl
import pytest

from costlab.appversions.events import generate_events
from costlab.appversions.window import MS_PER_DAY, authors_window, calendar_window, event_window


def _ms(day: date) -> int:
    return (day - date(1970, 1, 1)).days * MS_PER_DAY


def authors_generator_instants(start: date, end: date, delta_ms: int, workers: int, batch: int) -> list[int]:
    """The authors' generator run literally: each worker steps its own clock by delta before every
    event, makes batches, and keeps a batch unless its first event's UTC day is after end's day."""
    kept = []
    for _ in range(workers):
        clock = _ms(start)
        while True:
            instants = []
            for _ in range(batch):
                clock += delta_ms
                instants.append(clock)
            if instants[0] - instants[0] % MS_PER_DAY > _ms(end):
                break
            kept += instants
    return sorted(kept)


def test_authors_window_is_the_authors_generator_run_event_by_event():
    # a small generator: 3 workers, batches of 7, sized for 365 events a year over 40 days
    start, end = date(2019, 11, 22), date(2020, 1, 1)
    window = authors_window(365, start, end, workers=3, batch=7, published_events_per_year=365)
    expected = authors_generator_instants(start, end, window.authors_delta_ms, 3, 7)
    assert window.authors_delta_ms == 3 * MS_PER_DAY  # ceil(365 days x 3 workers / 365 events)
    assert window.events == len(expected)
    assert window.authors_instants_ms(0, window.events).tolist() == expected
    assert window.days(0, window.events).tolist() == [t // MS_PER_DAY for t in expected]
    # all of end's day is there, and the rest of the batches that started on it
    assert window.last_ms == expected[-1] and expected[-1] >= _ms(end)


def test_authors_window_at_the_published_rate():
    # The authors' program, run unmodified (issue 24), writes 500,390,000 events, not 500,000,000.
    window = authors_window(50_000_000, date(2010, 1, 1), date(2020, 1, 1))
    assert window.events == 500_390_000 and window.authors_delta_ms == 12_615
    last = datetime.fromtimestamp(window.last_ms / 1000, timezone.utc)
    assert last.date() == date(2020, 1, 2) and last.hour == 0 and 29 <= last.minute <= 35


def test_authors_window_at_another_rate_subsamples_the_same_instants():
    published = authors_window(365, date(2019, 11, 22), date(2020, 1, 1), workers=3, batch=7,
                               published_events_per_year=365)
    scaled = authors_window(100, date(2019, 11, 22), date(2020, 1, 1), workers=3, batch=7,
                            published_events_per_year=365)
    assert scaled.events == round(published.events * 100 / 365)
    instants = scaled.authors_instants_ms(0, scaled.events)
    assert set(instants.tolist()) <= set(published.authors_instants_ms(0, published.events).tolist())
    assert np.all(np.diff(instants) >= 0) and scaled.last_ms == published.last_ms


def test_calendar_window_is_exactly_the_span():
    window = calendar_window(600, date(2010, 1, 1), date(2020, 1, 1))
    assert window.events == 6000
    days = window.days(0, window.events)
    assert days.min() * MS_PER_DAY == _ms(date(2010, 1, 1)) and days.max() * MS_PER_DAY == _ms(
        date(2019, 12, 31)
    )


def test_generate_events_with_the_authors_window():
    authors = generate_events(600, 42, window="authors")
    calendar = generate_events(600, 42, window="calendar")
    assert calendar.height == 6000 and authors.height == round(600 * 500_390_000 / 50_000_000)
    assert calendar["date"].max() < datetime(2020, 1, 1, tzinfo=timezone.utc)
    assert authors["date"].max() == datetime(2020, 1, 2, tzinfo=timezone.utc)
    # per day (73,000 a year: 200 a day): the whole of 2020-01-01, and half an hour of 2020-01-02
    window = authors_window(73_000, date(2010, 1, 1), date(2020, 1, 1))
    days, counts = np.unique(window.days(0, window.events) * MS_PER_DAY, return_counts=True)
    per_day = dict(zip(days.tolist(), counts.tolist()))
    typical = np.median(counts)
    assert per_day[_ms(date(2020, 1, 1))] == pytest.approx(typical, abs=1)
    assert 0 < per_day[_ms(date(2020, 1, 2))] <= typical * 35 / 1440 + 1
    assert max(per_day) == _ms(date(2020, 1, 2)) and min(per_day) == _ms(date(2010, 1, 1))


def test_an_unknown_window_is_refused_naming_the_allowed_ones():
    with pytest.raises(ValueError, match=r"invalid event window 'julian'; allowed: authors, calendar"):
        event_window("julian", 600, date(2010, 1, 1), date(2020, 1, 1))


def test_the_model_check_names_its_window():
    from costlab.appversions.model import collection_stats, reference_stats
    from costlab.appversions.tables import model_findings, published_collection_stats
    from costlab.config import ROOT

    here = collection_stats(generate_events(600, 42, window="authors"), ["appV4"])
    reference = reference_stats(600, 42, ["appV4"], window="authors")
    assert reference["event_window"].to_list() == ["authors"]
    assert reference["events"][0] == round(50_000 * 500_390_000 / 50_000_000)
    published = published_collection_stats(ROOT / "resources/published/appversions_collection_stats.csv",
                                           ROOT / "resources/published/appversions_event_stats.csv")
    rows = model_findings(here, published, model_reference=reference)
    assert any(
        r.finding.endswith("(model at the reference scale, 50,000 events/year, authors event window)")
        for r in rows
    )


def test_authors_window_events_are_the_same_whatever_the_chunk_size():
    from costlab.appversions.events import iter_event_chunks

    whole = pl.concat(iter_event_chunks(600, 5, window="authors"))
    assert whole.height == 6005
    for chunk_events in (7, 1000, 4096):
        assert pl.concat(iter_event_chunks(600, 5, chunk_events=chunk_events, window="authors")).equals(whole)
    # one event a chunk, on a tenth of the events (each chunk is a frame of its own)
    tenth = pl.concat(iter_event_chunks(60, 5, window="authors"))
    assert pl.concat(iter_event_chunks(60, 5, chunk_events=1, window="authors")).equals(tenth)
