"""Dates, bucket codes and ids of the app versions (the articles' buildId and report windows).

Shared by the layouts (costlab/appversions/layouts.py), the Get Reports builders and the
statements; re-exported by costlab.appversions.versions.
"""
from __future__ import annotations

import re
from datetime import date, datetime, timezone

import polars as pl

from costlab.appversions.buckets import bucket_named
from costlab.appversions.registry import Bucket

REPORT_YEARS: tuple[int, ...] = (1, 3, 5, 7, 10)
# Field names compare as strings; "~" sorts after every digit, so it is an open upper bound.
OPEN_HIGH = "~"

_KEY_RE = re.compile(r"^[0-9A-Fa-f]{64}$")


# --------------------------------------------------------------------------------------------
# Dates, bucket codes and ids (buildId of the articles)
# --------------------------------------------------------------------------------------------

def as_report_end(end_date: date | datetime) -> datetime:
    """A report end as an aware UTC datetime, to the millisecond (a JavaScript Date, a BSON date).

    A date is its UTC midnight; a naive datetime is read as UTC; any time of day is accepted, as the
    authors' load test asks (uniform in milliseconds). At such an end the versions do not all count
    the same days: see DayRule and docs/appversions.md.
    """
    if isinstance(end_date, datetime):
        if end_date.tzinfo is not None:
            end_date = end_date.astimezone(timezone.utc).replace(tzinfo=None)
        return end_date.replace(microsecond=end_date.microsecond // 1000 * 1000, tzinfo=timezone.utc)
    if isinstance(end_date, date):
        return datetime(end_date.year, end_date.month, end_date.day, tzinfo=timezone.utc)
    raise ValueError(f"report end date must be a date or datetime, got {end_date!r}")


def years_before(day: datetime, years: int) -> datetime:
    """`years` earlier by JavaScript's rule (Date.setUTCFullYear): same month, day and time of day;
    29 February in a year without one overflows to 1 March, as in the authors' getReportsDates."""
    try:
        return day.replace(year=day.year - years)
    except ValueError:
        return day.replace(year=day.year - years, month=3, day=1)


def report_windows(end_date: date | datetime) -> list[tuple[int, datetime, datetime]]:
    """[(N, start, end)] for N = 1, 3, 5, 7, 10: the window [end - N years, end)."""
    end = as_report_end(end_date)
    return [(years, years_before(end, years), end) for years in REPORT_YEARS]


def bucket_code(day: date | datetime, bucket: Bucket) -> str:
    """The code of the bucket holding `day`: YYYYMMDD (day), YYYYMM (month), YYYYQQ (quarter, QQ = 01..04),
    or a declared bucket's (costlab/appversions/buckets.py)."""
    return bucket_named(bucket).code(day)


def build_id(key: str, day: date | datetime, bucket: Bucket) -> bytes:
    """The binary _id: hex key followed by the date's bucket code, read as hex (Buffer.from(.., 'hex'))."""
    return bytes.fromhex(check_key(key) + bucket_code(day, bucket))


def check_key(key: str) -> str:
    if not isinstance(key, str) or not _KEY_RE.match(key):
        raise ValueError(f"key must be 64 hexadecimal digits, got {key!r}")
    return key.upper()


def item_name(day: date | datetime, name_format: str) -> str:
    """Field name of a day in a dynamic `items` document: DD, MMDD or YYYYMMDD."""
    full = f"{day.year:04d}{day.month:02d}{day.day:02d}"
    return {"DD": full[6:], "MMDD": full[4:], "YYYYMMDD": full}[name_format]


def bucket_start(day: datetime, bucket: Bucket) -> datetime:
    """Midnight (UTC) of the first day of the bucket holding `day`."""
    return bucket_named(bucket).start(day)


def next_bucket(day: datetime, bucket: Bucket) -> datetime:
    """Start of the bucket after the one that contains `day`."""
    return bucket_named(bucket).next_start(day)


def full_bucket_bounds(key: str, start: datetime, end: datetime, bucket: Bucket) -> tuple[bytes, bytes]:
    """(_id of the first, _id of the last) bucket lying entirely inside [start, end).

    Used by the Computed Pattern versions to decide "documentQuarterWithinReportDateRange" by
    comparing `_id`s (all one length), instead of decoding the binary `_id` on the server.
    If no bucket fits, the first bound is above the last and nothing compares inside.
    """
    declared = bucket_named(bucket)
    first = start if declared.start(start) == start else declared.next_start(start)
    # the bucket holding `end` is not inside (end is exclusive): the last full one is the one before it
    last = declared.previous_start(end)
    return build_id(key, first, bucket), build_id(key, last, bucket)


ITEM_NAME_STRFTIME = {"DD": "%d", "MMDD": "%m%d", "YYYYMMDD": "%Y%m%d"}


def bucket_code_expr(bucket: Bucket) -> pl.Expr:
    """bucket_code of the `date` column, vectorised."""
    return bucket_named(bucket).code_expr()
