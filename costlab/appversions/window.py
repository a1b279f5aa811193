"""Which instants the generated events take: the calendar window or the authors' one.

The generator (events.py) asks this module how many events a span holds and on which UTC day each
one falls (by event index, so the generator can produce them chunk by chunk); nothing here depends
on how the events are built or stored. All arithmetic is int64 and exact at 500 million events.

- `calendar`: round(events_per_year x span in years) events spread evenly over [start, end).
- `authors`: the span the authors' generator really covered (their published data set). It runs
  `workers` (20) generators, each starting its clock at `start` and adding `delta` =
  ceil(365 days x workers / published events per year) ms before every event (365-day years, no
  leap days); each makes batches of `batch` (250) events and keeps a batch unless its *first*
  event's UTC day is after `end`'s day. So the data holds all of `end`'s day and, per worker, the
  rest of the batch that started on it: for 2010-01-01..2020-01-01 at 50,000,000 events/year that
  is delta = 12,615 ms, 25,019,500 events per worker, 500,390,000 in all (not 500,000,000), the
  last one at 2020-01-02 00:29:52.5 UTC. At another rate the same instants are subsampled evenly
  (event i of n takes the authors' event floor((i + 1) x N / n) - 1 of N), so the span, its end
  and the events per day relative to the rate are the published data set's at any scale.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date
from typing import Literal

import numpy as np

EventWindowKind = Literal["authors", "calendar"]
EVENT_WINDOWS: tuple[str, ...] = ("authors", "calendar")
MS_PER_DAY = 86_400_000
YEAR_365_MS = 365 * MS_PER_DAY
# The authors' generator: 20 workers, batches of 250, sized for 50 million events a year.
AUTHORS_WORKERS = 20
AUTHORS_BATCH = 250
AUTHORS_EVENTS_PER_YEAR = 50_000_000


def _epoch_ms(day: date) -> int:
    return (day - date(1970, 1, 1)).days * MS_PER_DAY


def span_in_years(start: date, end: date) -> float:
    """Length of [start, end) in years, each calendar year weighted by its own length."""
    def year_position(day: date) -> float:
        year_days = (date(day.year + 1, 1, 1) - date(day.year, 1, 1)).days
        return day.year + (day - date(day.year, 1, 1)).days / year_days
    return year_position(end) - year_position(start)


def event_days(first: int, count: int, n_events: int, start: date, end: date) -> np.ndarray:
    """Days (since 1970-01-01) of events first .. first + count - 1 of n_events spread evenly over [start,
    end).

    Event i sits at start + i * span / n_events, truncated to the UTC day. floor(floor(i * span_ms /
    n) / day_ms) = floor(i * span_days / n): the same day, and within int64 at any event count.
    """
    index = np.arange(first, first + count, dtype=np.int64)
    return (start - date(1970, 1, 1)).days + (index * (end - start).days) // n_events


@dataclass(frozen=True)
class EventWindow:
    """How many events a span holds, and on which UTC day each one falls."""

    kind: str
    events: int
    start: date
    end: date             # calendar: [start, end); authors: the end date asked for (its day is covered)
    authors_events: int = 0   # authors: events of the published-scale stream being subsampled
    authors_delta_ms: int = 0
    authors_workers: int = 1

    def authors_instants_ms(self, first: int, count: int) -> np.ndarray:
        """authors: the instant (ms since the epoch, before truncation to the day) of events first..
        (count)."""
        index = np.arange(first, first + count, dtype=np.int64)
        picked = ((index + 1) * self.authors_events) // self.events - 1   # the authors' event picked
        return _epoch_ms(self.start) + (picked // self.authors_workers + 1) * self.authors_delta_ms

    @property
    def last_ms(self) -> int | None:
        """authors: the instant of the last event (None without events)."""
        return int(self.authors_instants_ms(self.events - 1, 1)[0]) if self.events else None

    def days(self, first: int, count: int) -> np.ndarray:
        """Days (since 1970-01-01, int64) of events first .. first + count - 1."""
        if self.kind == "calendar":
            return event_days(first, count, self.events, self.start, self.end)
        return self.authors_instants_ms(first, count) // MS_PER_DAY


def calendar_window(events_per_year: int, start: date, end: date) -> EventWindow:
    """round(events_per_year x span in years) events spread evenly over [start, end)."""
    events = int(round(events_per_year * span_in_years(start, end)))
    return EventWindow("calendar", events, start, end)


def authors_window(events_per_year: int, start: date, end: date, workers: int = AUTHORS_WORKERS,
                   batch: int = AUTHORS_BATCH, published_events_per_year: int = AUTHORS_EVENTS_PER_YEAR
                   ) -> EventWindow:
    """The span the authors' generator covered from `start` to `end`, at `events_per_year` (see module
    doc)."""
    delta_ms = math.ceil(YEAR_365_MS * workers / published_events_per_year)
    # A batch is kept while its first event's day is not after end's day: first instant < end + 1 day.
    kept_until_ms = _epoch_ms(end) + MS_PER_DAY - _epoch_ms(start)
    last_started = (kept_until_ms - 1) // delta_ms           # events k = 1.. with k * delta < that
    per_worker = -(-last_started // batch) * batch            # ... completed to whole batches
    authors_events = per_worker * workers
    events = int(round(authors_events * events_per_year / published_events_per_year))
    return EventWindow("authors", events, start, end, authors_events=authors_events,
                       authors_delta_ms=delta_ms, authors_workers=workers)


def event_window(kind: str, events_per_year: int, start: date, end: date) -> EventWindow:
    """The `kind` window (authors | calendar) of [start, end] at `events_per_year`."""
    if kind == "calendar":
        return calendar_window(events_per_year, start, end)
    if kind == "authors":
        return authors_window(events_per_year, start, end)
    raise ValueError(f"invalid event window {kind!r}; allowed: {', '.join(EVENT_WINDOWS)}")
