"""What one bucketed document holds: a day, a month, a quarter (the articles'), or any bucket of days a layout
file declares (a week, a year, ...). Each bucket is an object; the ids, the model, the statements and the
Get Reports builders ask it, and nothing tests a bucket's name.

A bucket says:
- `every`: the polars duration its documents' first days are truncated to (`dt.truncate`: "1d", "1w" (weeks
  start on Mondays), "1mo", "1q", "1y", "2w", ...): which days share a document;
- `code_format`: the strftime format of its code, an even number of digits that grows with time ("%Y%m",
  "%G%V" the ISO year and week): the binary `_id` is the key's 32 bytes followed by these digits read as hex
  (the articles' buildId), so ids sort by key, then time, and Get Reports selects a key's documents by an
  `_id` range;
- `within`: the calendar unit no bucket crosses ("month", "year" or None): what the dynamic layout's item
  names (DD, MMDD) need to tell two days of one document apart.

Built in: day, month, quarter. A layout file declares another by subclassing `Bucket` with a `name`
(docs/variants.md, examples/variants/week.py); costlab.appversions.variants registers it with the file's
layouts (`register_bucket`, which checks that its codes behave over every day the model dates), and a variant
names it (`bucket: week`). The events are dated to the UTC day (the articles' method), so a bucket is a whole
number of days: an hour bucket would hold one day's events in its first hour, and a bucket of a count of
events is not a function of the date at all; neither is expressible here.
"""
from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from typing import ClassVar

import numpy as np
import polars as pl

from costlab.appversions.bsonsize import BUCKET_CODE_BYTES
from costlab.appversions.registry import NAME_RE, register_bucket_name, unregister_bucket_name

EPOCH = date(1970, 1, 1)
# The days the model dates (16-bit days since 1970-01-01): a bucket's codes are checked over all of them.
MODEL_DAYS = 1 << 16


class Bucket:
    """A bucket of days. Subclasses set `name`, `every`, `code_format` (and `within`); the methods below
    follow from them, and a subclass may override them with faster or exact ones (the built-ins do)."""

    name: ClassVar[str] = ""
    every: ClassVar[str] = ""            # polars dt.truncate duration: "1w", "1y", ...
    code_format: ClassVar[str] = ""      # strftime of its code: an even number of digits, growing with time
    within: ClassVar[str | None] = None  # the calendar unit no bucket crosses: "month", "year" or None

    # -- one date (report windows, ids) ---------------------------------------------------------------
    def code(self, day: date | datetime) -> str:
        """The code of the bucket holding `day` (its digits: YYYYMM for a month, YYYYWW for an ISO week)."""
        return day.strftime(self.code_format)

    @property
    def code_bytes(self) -> int:
        """Bytes of the code in a binary `_id` (its digits read as hex)."""
        return len(self.code(datetime(2037, 11, 29, tzinfo=timezone.utc))) // 2

    def _truncated(self, day: datetime, after: bool) -> datetime:
        naive = day if day.tzinfo is None else day.astimezone(timezone.utc).replace(tzinfo=None)
        first = pl.DataFrame({"d": [naive]}, schema={"d": pl.Datetime("us")}).select(
            pl.col("d").dt.truncate(self.every).dt.offset_by(self.every if after else "0d"))["d"][0]
        # as `day` is: naive or UTC
        return first if day.tzinfo is None else first.replace(tzinfo=timezone.utc)

    def start(self, day: datetime) -> datetime:
        """Midnight (UTC) of the first day of the bucket holding `day`."""
        return self._truncated(day, after=False)

    def next_start(self, day: datetime) -> datetime:
        """Midnight (UTC) of the first day of the bucket after the one holding `day`."""
        return self._truncated(day, after=True)

    def previous_start(self, day: datetime) -> datetime:
        """Midnight (UTC) of the first day of the bucket before the one holding `day`."""
        return self.start(self.start(day) - timedelta(days=1))

    # -- whole columns (the model, the statements, the layouts' columns) ------------------------------
    def code_expr(self, column: str = "date") -> pl.Expr:
        """`code` of a Date / Datetime column, vectorised."""
        return pl.col(column).dt.strftime(self.code_format)

    def start_expr(self, column: str = "date") -> pl.Expr:
        """`start` of a Datetime column (its bucket's first day), vectorised."""
        return pl.col(column).dt.truncate(self.every)

    def ordinals(self, days: np.ndarray) -> np.ndarray:
        """A number per bucket, growing with time and below 2**16 (the model packs it beside the key), of each
        of `days` (days since 1970-01-01): here the bucket's first day (0 for the bucket holding 1970-01-01,
        which may start before it)."""
        frame = pl.DataFrame({"date": pl.Series(np.asarray(days, dtype=np.int32)).cast(pl.Date)})
        first = frame.select(self.start_expr().cast(pl.Int32).clip(lower_bound=0))["date"]
        return first.to_numpy().astype(np.int64)


class Day(Bucket):
    name, every, code_format, within = "day", "1d", "%Y%m%d", "month"

    def start(self, day: datetime) -> datetime:
        return day.replace(hour=0, minute=0, second=0, microsecond=0)

    def next_start(self, day: datetime) -> datetime:
        return self.start(day) + timedelta(days=1)

    def code(self, day: date | datetime) -> str:
        return f"{day.year:04d}{day.month:02d}{day.day:02d}"

    def ordinals(self, days: np.ndarray) -> np.ndarray:
        return np.asarray(days, dtype=np.int64)


def _months(days: np.ndarray) -> np.ndarray:
    """Months since 1970-01 of days since 1970-01-01."""
    return np.asarray(days).astype("datetime64[D]").astype("datetime64[M]").astype(np.int64)


class Month(Bucket):
    name, every, code_format, within = "month", "1mo", "%Y%m", "month"
    months: ClassVar[int] = 1

    def code(self, day: date | datetime) -> str:
        return f"{day.year:04d}{day.month:02d}"

    def start(self, day: datetime) -> datetime:
        midnight = day.replace(hour=0, minute=0, second=0, microsecond=0)
        return midnight.replace(month=(day.month - 1) // self.months * self.months + 1, day=1)

    def next_start(self, day: datetime) -> datetime:
        start = self.start(day)
        month = start.month - 1 + self.months
        return start.replace(year=start.year + month // 12, month=month % 12 + 1)

    def previous_start(self, day: datetime) -> datetime:
        start = self.start(day)
        month = start.month - 1 - self.months
        return start.replace(year=start.year + month // 12, month=month % 12 + 1)

    def ordinals(self, days: np.ndarray) -> np.ndarray:
        return _months(days) // self.months


class Quarter(Month):
    name, every, code_format, within = "quarter", "1q", "", "year"
    months = 3

    def code(self, day: date | datetime) -> str:
        return f"{day.year:04d}{(day.month - 1) // 3 + 1:02d}"

    def code_expr(self, column: str = "date") -> pl.Expr:
        return pl.col(column).dt.strftime("%Y") + pl.lit("0") + pl.col(column).dt.quarter().cast(pl.Utf8)


class BucketError(ValueError):
    """A declared bucket that cannot be used; the message is one line naming it."""


def bucket_problem(bucket: Bucket) -> str | None:
    """Why `bucket` cannot be used (its codes over every day the model dates: an even number of digits,
    one per bucket, growing with time; its buckets whole days within `within`), or None."""
    name = f"bucket {bucket.name!r}"
    if bucket.within not in ("month", "year", None):
        return f"{name}: within {bucket.within!r} is not allowed (allowed: month, year, None)"
    try:
        days = pl.DataFrame({"date": pl.Series(np.arange(MODEL_DAYS, dtype=np.int32)).cast(pl.Date)})
        table = days.with_columns(code=bucket.code_expr(), start=bucket.start_expr(),
                                  ordinal=pl.Series(bucket.ordinals(np.arange(MODEL_DAYS))))
    except Exception as err:  # noqa: BLE001  the user's bucket code: any error, in one line
        return f"{name}: its codes cannot be computed: {type(err).__name__}: {str(err).splitlines()[0][:160]}"
    codes = table["code"]
    lengths = codes.str.len_bytes().unique()
    digits = codes.str.contains(r"^[0-9]+$").all()
    if codes.null_count() or lengths.len() != 1 or lengths[0] % 2 or not digits:
        return (f"{name}: its codes must be decimal digits, all of one even length (read as hex bytes in the "
                f"_id), got e.g. {codes.drop_nulls()[0]!r}"
                if codes.drop_nulls().len() else f"{name}: no code")
    if (table["start"] > table["date"]).any():
        return f"{name}: a bucket starts after one of its days"
    runs = table.select(pl.col("start").rle_id().alias("run"), pl.col("code").rle_id().alias("by_code"),
                        pl.col("ordinal").rle_id().alias("by_ordinal"))
    if not (runs["run"] == runs["by_code"]).all() or not (runs["run"] == runs["by_ordinal"]).all():
        return f"{name}: its codes (or ordinals) do not change exactly where its buckets do"
    if not (codes.cast(pl.Int64).diff().drop_nulls() >= 0).all() or not (
            table["ordinal"].diff().drop_nulls() >= 0).all():
        return (f"{name}: its codes must grow with time (Get Reports selects a key's documents by an _id "
                "range)")
    if (table["ordinal"] < 0).any() or (table["ordinal"] >= MODEL_DAYS).any():
        return f"{name}: its ordinals must lie in 0 .. {MODEL_DAYS - 1} (the model packs them beside the key)"
    if bucket.within is not None:
        unit = pl.col("date").dt.truncate("1mo" if bucket.within == "month" else "1y")
        crossing = table.with_columns(unit=unit).group_by("start").agg(pl.col("unit").n_unique() > 1)
        if crossing["unit"].any():
            return f"{name}: a bucket crosses a {bucket.within}, yet it says within {bucket.within!r}"
    return None


_BUCKETS: dict[str, Bucket] = {}


def register_bucket(bucket: Bucket) -> Bucket:
    """Make `bucket` available to versions by its name (registry.py learns the name); BucketError in one line
    when it cannot be used or its name is another bucket's."""
    if not isinstance(bucket, Bucket) or not bucket.name:
        raise BucketError(f"register_bucket takes a Bucket instance with a name, got {bucket!r}")
    known = _BUCKETS.get(bucket.name)
    if known is not None:
        if type(known) is type(bucket):
            return known
        raise BucketError(f"bucket {bucket.name!r} is already declared ({type(known).__name__}): give yours "
                          "another name")
    if not NAME_RE.match(bucket.name):
        raise BucketError(f"bucket name {bucket.name!r}: letters, digits, _ and -, starting with a letter")
    problem = bucket_problem(bucket) if bucket.name not in BUILT_IN else None
    if problem:
        raise BucketError(problem)
    _BUCKETS[bucket.name] = bucket
    BUCKET_CODE_BYTES[bucket.name] = bucket.code_bytes
    register_bucket_name(bucket.name)
    return bucket


def unregister_bucket(name: str) -> None:
    """Remove a bucket declared at run time (the built-in ones stay)."""
    if name in BUILT_IN:
        raise BucketError(f"{name!r} is a built-in bucket: it cannot be unregistered")
    _BUCKETS.pop(name, None)
    BUCKET_CODE_BYTES.pop(name, None)
    unregister_bucket_name(name)


def bucket_named(name: str) -> Bucket:
    """The bucket `name`; ValueError naming the declared buckets otherwise."""
    try:
        return _BUCKETS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown bucket {name!r}; allowed: {', '.join(_BUCKETS)}") from None


BUILT_IN: tuple[str, ...] = ("day", "month", "quarter")
for _bucket in (Day(), Month(), Quarter()):
    register_bucket(_bucket)
