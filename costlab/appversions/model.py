"""Server-free reference model: what each version's collection holds, and the expected reports.

Document sizes follow the BSON rules (bsonspec.org), per element `type byte + name + NUL + value`:
int32 4 bytes, date 8, ObjectId 12, string 4 + bytes + NUL, binary 4 + subtype byte + bytes,
embedded document / array 4 + elements + NUL (array element names are "0", "1", ...). Counters
are int32 (`$inc` by the int 1 keeps int32). Everything is computed with polars group-bys, one row
per document, never by encoding documents one by one; tests check the formulas against `bson`
encodings of the documents a server actually holds after the versions' own Bulk Upserts.
"""
from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Iterable

import numpy as np
import polars as pl

from costlab.appversions.bsonsize import INT32_BYTES, document, element
from costlab.appversions.buckets import bucket_named
from costlab.appversions.events import STATUS_DTYPE, STATUSES, iter_event_chunks
from costlab.appversions.versions import VERSIONS, AppVersion, Bucket, get_version, report_windows

STATS_COLUMNS = ["version", "events", "documents", "avg_doc_bytes", "data_bytes"]


# ---- integer codes: what the model groups on ---------------------------------------------------------
# Status counts travel packed in one UInt64, 16 bits per status (approved lowest): one sum per group
# adds all four. One key has about 3.5 events a day at any scale (60 per user per year, the densest
# user's share does not depend on the count), far below the 65,535 a field holds; a group that
# reaches it is refused (`day_rows`), never wrapped.
FIELD_BITS = 16
FIELD_MAX = (1 << FIELD_BITS) - 1
_PACKED_ONE = [1 << (FIELD_BITS * i) for i in range(len(STATUSES))]
# Group keys: code * 2**16 + day (days since 1970-01-01) or + month / quarter since 1970-01.
CODE_SHIFT = 1 << 16
FIRST_DAY, LAST_DAY = date(1970, 1, 1), date(1970, 1, 1) + timedelta(days=CODE_SHIFT - 1)
# ~160 B per event of a chunk while it is grouped (2 M events: about 630 MB peak, whatever the total).
DEFAULT_CHUNK_ROWS = 2_000_000


def _field(packed: str, index: int) -> pl.Expr:
    return (pl.col(packed) // (1 << (FIELD_BITS * index))) % (1 << FIELD_BITS)


def event_codes(events: pl.DataFrame) -> pl.DataFrame:
    """Events -> (code UInt32, day Int32 since 1970-01-01, one UInt64 with a 1 in the status's field).

    `code` is the user index of integer-coded events, or a dense rank of the key strings of events
    in the article's form (any one-to-one code serves: only which events share a key matters).
    """
    if "user" in events.columns:
        code = pl.col("user").cast(pl.UInt32)
    else:
        code = pl.col("key").rank("dense").cast(pl.UInt32)
    status = pl.col("status").cast(STATUS_DTYPE).to_physical()
    codes = events.select(
        code.alias("code"),
        day=pl.col("date").dt.epoch("d").cast(pl.Int32),
        packed=status.replace_strict(list(range(len(STATUSES))), _PACKED_ONE, return_dtype=pl.UInt64),
    )
    if codes.height:
        first, last = codes["day"].min(), codes["day"].max()
        if first < 0 or last >= CODE_SHIFT:
            bad = FIRST_DAY + timedelta(days=int(first if first < 0 else last))
            raise ValueError(f"event date {bad} is outside what the model codes: {FIRST_DAY} .. {LAST_DAY}")
    return codes


def _field_mask(index: int) -> int:
    return FIELD_MAX << (FIELD_BITS * index)


def day_rows(codes: pl.DataFrame) -> pl.DataFrame:
    """One row per (key, day): its key code, the day, `events` (how many) and `mask` (bit i set: the
    day holds an event of status i)."""
    days = codes.group_by(pl.col("code").cast(pl.UInt64) * CODE_SHIFT + pl.col("day").cast(pl.UInt64)).agg(
        pl.col("packed").sum(), events=pl.len().cast(pl.UInt32))
    if (
        days.height
        and days.select(
            pl.any_horizontal(
                (pl.col("packed") & _field_mask(i)) == _field_mask(i) for i in range(len(STATUSES))
            ).any()
        ).item()
    ):
        raise ValueError(
            f"a key's day holds {FIELD_MAX} or more events of one status: more than the model's "
            f"{FIELD_BITS}-bit counters take (the method gives about 3.5 events per key and day)"
        )
    mask = sum(
        ((pl.col("packed") & _field_mask(i)) != 0).cast(pl.UInt8) * (1 << i) for i in range(len(STATUSES))
    )
    return days.select(
        code=(pl.col("code") // CODE_SHIFT).cast(pl.UInt32),
        day=(pl.col("code") % CODE_SHIFT).cast(pl.Int32),
        events="events",
        mask=mask.cast(pl.UInt8),
    )


def _bucket_of_days(days: np.ndarray, bucket: Bucket) -> np.ndarray:
    """Each day's bucket as a number growing with time, below 2**16 (buckets.Bucket.ordinals: months since
    1970-01 for a month, quarters for a quarter, the first day for a declared bucket)."""
    return bucket_named(bucket).ordinals(days)


def bucket_rows(days: pl.DataFrame, bucket: Bucket) -> pl.DataFrame:
    """Partial sums per (key, bucket) over some complete days: `id` (code * 2**16 + bucket),
    `days` (days held), `events`, and per status the days holding it (packed). Sums of partials of
    the same `id` are the sums over all its days."""
    held = sum(((pl.col("mask") & (1 << i)) != 0).cast(pl.UInt64) * (1 << (FIELD_BITS * i))
               for i in range(len(STATUSES)))
    events = pl.col("events")
    bucket_code = pl.Series(_bucket_of_days(days["day"].to_numpy(), bucket), dtype=pl.UInt64)
    return (
        days.select(id=pl.col("code").cast(pl.UInt64) * CODE_SHIFT + bucket_code, held=held, events=events)
        .group_by("id")
        .agg(
            days=pl.len().cast(pl.Int64),
            events=pl.col("events").sum().cast(pl.Int64),
            held=pl.col("held").sum(),
        )
    )


def _combine(partials: pl.DataFrame) -> pl.DataFrame:
    return partials.group_by("id").agg(pl.col("days").sum(), pl.col("events").sum(), pl.col("held").sum())


# ---- sizes: one BSON size per document, from the rows above (the layout's formula) -------------------

def day_size_by_mask(version: AppVersion) -> list[int]:
    """BSON size of a day document of `version` (appV1-appV4) for each mask of statuses present (0-15)."""
    fixed = version.layout.day_document_bytes(version)
    return [document(fixed + sum(element(version.status_field(s), INT32_BYTES)
                                 for i, s in enumerate(STATUSES) if mask >> i & 1))
            for mask in range(1 << len(STATUSES))]


def _day_document_sizes(version: AppVersion, days: pl.DataFrame) -> pl.Series:
    return days["mask"].replace_strict(list(range(1 << len(STATUSES))), day_size_by_mask(version),
                                       return_dtype=pl.Int64).alias("size")


def _bucket_document_sizes(version: AppVersion, buckets: pl.DataFrame) -> pl.Series:
    held = [_field("held", i) for i in range(len(STATUSES))]   # per status: the days holding it
    return buckets.select(size=version.layout.bucket_document_bytes(version, held))["size"]


def _sizes(version: AppVersion, days: pl.DataFrame, buckets: dict[str, pl.DataFrame]) -> pl.Series:
    if version.layout.per_day:
        return _day_document_sizes(version, days)
    return _bucket_document_sizes(version, buckets[version.bucket])


def document_sizes(version: AppVersion, events: pl.DataFrame) -> pl.Series:
    """BSON size of every document `version` holds after upserting `events` (one value per document).

    All of `events` in one frame, in any order; for many events stream them (`ModelStream`).
    """
    days = day_rows(event_codes(events))
    buckets = (
        {} if version.layout.per_day else {version.bucket: _combine(bucket_rows(days, version.bucket))}
    )
    return _sizes(version, days, buckets)


def _version_names(versions: list[str] | None) -> list[str]:
    names = list(VERSIONS) if versions is None else list(versions)
    for name in names:
        get_version(name)   # ValueError naming the registered versions
    return names


class ModelStream:
    """Documents and BSON bytes per version, accumulated over event chunks that come in date order.

    Each chunk's events are grouped on integer keys: per (key, day), then per (key, month) and
    (key, quarter). A day, month or quarter still open at a chunk's end (the chunk's last day and
    the month and quarter holding it) is carried to the next chunk: the last day's events as they
    are, the open buckets as partial sums. So a document is sized only once all its events are in,
    whatever the chunk size, and memory is bounded by the chunk plus one day and one open bucket
    per key (a declared bucket, buckets.py, is grouped from the days the same way). Events of one chunk may
    come in any order; chunks must not go back in time.
    """

    def __init__(self, versions: list[str] | None = None) -> None:
        self.names = _version_names(versions)
        self.versions = [get_version(name) for name in self.names]
        self.buckets: list[Bucket] = sorted({v.bucket for v in self.versions if not v.layout.per_day})
        self.events = 0
        self.documents = dict.fromkeys(self.names, 0)
        self.data_bytes = dict.fromkeys(self.names, 0)
        self._last_day: pl.DataFrame | None = None          # codes of the open day's events
        self._open: dict[str, list[pl.DataFrame]] = {}       # partial sums of the open buckets, per chunk
        self._open_code: dict[str, int] = {}                 # which bucket is open (its code)

    def add(self, events: pl.DataFrame, final: bool = False) -> None:
        """Take one chunk of events (no earlier day than the previous chunk's last)."""
        codes = event_codes(events)
        self.events += codes.height
        if self._last_day is not None:
            open_day = self._last_day["day"][0]
            if codes.height and codes["day"].min() < open_day:
                raise ValueError(
                    "events are not in date order: a chunk holds "
                    f"{FIRST_DAY + timedelta(days=int(codes['day'].min()))} "
                    f"after events of {FIRST_DAY + timedelta(days=int(open_day))}"
                )
            codes = pl.concat([self._last_day, codes])
        if codes.height == 0 and not final:
            return
        if final:
            complete, self._last_day = codes, None
        else:
            last = codes["day"].max()
            complete, self._last_day = codes.filter(pl.col("day") < last), codes.filter(pl.col("day") == last)
        days = day_rows(complete)
        closed: dict[str, pl.DataFrame] = {}
        if {"month", "quarter"} & set(self.buckets):
            # Months from the days; quarters from the months once these are closed (a quarter's
            # partial sums are its months' sums: fewer rows to group than its days).
            closed["month"] = self._close("month", bucket_rows(days, "month"))
            if "quarter" in self.buckets:
                months = closed["month"]
                as_quarters = months.with_columns(
                    id=(pl.col("id") // CODE_SHIFT) * CODE_SHIFT + (pl.col("id") % CODE_SHIFT) // 3)
                closed["quarter"] = self._close("quarter", as_quarters)
        for bucket in self.buckets:   # any other bucket (a day, a week, a declared one): from the days
            if bucket not in ("month", "quarter"):
                closed[bucket] = self._close(bucket, bucket_rows(days, bucket))
        # Day documents: one per day row, its size set by which statuses it holds (16 cases).
        masks = days.group_by("mask").len()
        per_mask = dict(zip(masks["mask"].to_list(), masks["len"].to_list()))
        for name, version in zip(self.names, self.versions):
            if version.layout.per_day:
                sizes_by_mask = day_size_by_mask(version)
                self.documents[name] += days.height
                self.data_bytes[name] += sum(n * sizes_by_mask[mask] for mask, n in per_mask.items())
                continue
            sizes = _sizes(version, days, closed)
            self.documents[name] += len(sizes)
            self.data_bytes[name] += int(sizes.sum()) if len(sizes) else 0

    def _close(self, bucket: Bucket, partials_now: pl.DataFrame) -> pl.DataFrame:
        """Add partial sums of `bucket`; return the buckets that closed (one row each, combined)."""
        partials = self._open.setdefault(bucket, [])
        partials.append(partials_now)
        open_code = None if self._last_day is None else int(
            _bucket_of_days(self._last_day["day"][:1].to_numpy(), bucket)[0])
        if open_code is not None and open_code == self._open_code.get(bucket):
            # The bucket open before is open still: nothing closed (the partials wait, uncombined,
            # so that each is combined once, when its bucket closes: time linear in the events).
            return partials_now.clear()
        frame = pl.concat(partials)
        if open_code is None:   # the last chunk: everything closes
            partials[:] = []
            return _combine(frame)
        self._open_code[bucket] = open_code
        is_open = (pl.col("id") % CODE_SHIFT) >= open_code
        partials[:] = [frame.filter(is_open)]
        return _combine(frame.filter(~is_open))

    def finish(self) -> pl.DataFrame:
        """Close what is still open; one row per version (STATS_COLUMNS)."""
        if self._last_day is not None or any(
            frame.height for frames in self._open.values() for frame in frames
        ):
            self.add(
                pl.DataFrame(
                    schema={"user": pl.UInt32, "date": pl.Datetime("ms", "UTC"), "status": STATUS_DTYPE}
                ),
                final=True,
            )
        rows = [
            {
                "version": name,
                "events": self.events,
                "documents": self.documents[name],
                "avg_doc_bytes": self.data_bytes[name] / self.documents[name]
                if self.documents[name]
                else 0.0,
                "data_bytes": self.data_bytes[name],
            }
            for name in self.names
        ]
        return pl.DataFrame(rows, schema={"version": pl.Utf8, "events": pl.Int64, "documents": pl.Int64,
                                          "avg_doc_bytes": pl.Float64, "data_bytes": pl.Int64})


def collection_stats(
    events: pl.DataFrame | Iterable[pl.DataFrame], versions: list[str] | None = None
) -> pl.DataFrame:
    """One row per version: version, events, documents, avg_doc_bytes, data_bytes (BSON bytes).

    events: one frame (any order), or chunks in date order (e.g. `iter_event_file(path)`).
    """
    stream = ModelStream(versions)
    for chunk in ([events] if isinstance(events, pl.DataFrame) else events):
        stream.add(chunk)
    return stream.finish()


# The scale at which the model stands in for the published one (500 million events): events
# per user per year are fixed (60), so per-event figures depend on the scale only through how
# finely the dense keys are resolved, and they stop moving well below this rate (documents per
# event and average size change < 0.3 % from 20,000 to 200,000 events a year; see docs/appversions.md).
REFERENCE_EVENTS_PER_YEAR = 50_000


def reference_stats(events_per_year: int, seed: int, versions: list[str] | None = None,
                    stats_here: pl.DataFrame | None = None, window: str = "calendar") -> pl.DataFrame:
    """collection_stats at the reference scale (or at this one when it is larger), with
    events_per_year and event_window (the generator's window, window.py) as columns.

    stats_here (the model at events_per_year, same window) is reused when this scale is already the larger
    one.
    """

    rate = max(int(events_per_year), REFERENCE_EVENTS_PER_YEAR)
    if rate == events_per_year and stats_here is not None:
        stats = stats_here
    else:
        stats = collection_stats(iter_event_chunks(rate, seed, window=window), versions)
    return stats.with_columns(pl.lit(rate, dtype=pl.Int64).alias("events_per_year"),
                              pl.lit(window).alias("event_window"))


def _day_start(instant: datetime) -> datetime:
    return instant.replace(hour=0, minute=0, second=0, microsecond=0)


def expected_reports(
    events: pl.DataFrame, key: str, end_date: date | datetime, day_rule: str = "dates"
) -> list[dict]:
    """Status counts of `key`'s events in each window [end - N years, end), N = 1, 3, 5, 7, 10.

    Straight from the events (no version logic). day_rule (versions.DayRule) says which days a
    window with a time of day counts: "dates" the events at instants in [start, end), "day_ids" the
    events on days [day of start, day of end). At whole-day ends both give the one answer every
    version's Get Reports must give.
    """
    if day_rule not in ("dates", "day_ids"):
        raise ValueError(f"invalid day rule {day_rule!r}; allowed: dates, day_ids")
    mine = events.filter(pl.col("key") == key.upper())
    reports = []
    for years, start, end in report_windows(end_date):
        if day_rule == "day_ids":
            start, end = _day_start(start), _day_start(end)
        counts = mine.filter((pl.col("date") >= start) & (pl.col("date") < end)).select(
            **{s: (pl.col("status") == s).sum() for s in STATUSES}).row(0, named=True)
        reports.append({"window_years": years, **{s: int(counts[s]) for s in STATUSES}})
    return reports


def compare_with_published(model: pl.DataFrame, published: pl.DataFrame, tolerance: float = 0.015,
                           window: str | None = None) -> pl.DataFrame:
    """Model vs published documents per event and average document size, one row per version.

    `published` is resources/published/appversions_collection_stats.csv (500,000,000 events).
    The per-user density does not depend on events_per_year, so ratios per event are comparable.
    window: the event window the model's events were generated with, written as a column when given.
    """
    joined = model.join(published.select("version", "events", "documents", "avg_doc_bytes"),
                        on="version", how="left", suffix="_published")
    return joined.select(
        "version",
        model_docs_per_event=pl.col("documents") / pl.col("events"),
        published_docs_per_event=pl.col("documents_published") / pl.col("events_published"),
        model_avg_doc_bytes=pl.col("avg_doc_bytes"),
        published_avg_doc_bytes=pl.col("avg_doc_bytes_published").cast(pl.Float64),
    ).with_columns(
        docs_ratio=pl.col("model_docs_per_event") / pl.col("published_docs_per_event"),
        size_ratio=pl.col("model_avg_doc_bytes") / pl.col("published_avg_doc_bytes"),
    ).with_columns(
        within_tolerance=((pl.col("docs_ratio") - 1).abs() <= tolerance)
        & ((pl.col("size_ratio") - 1).abs() <= tolerance),
        **({} if window is None else {"event_window": pl.lit(window)}),
    )
