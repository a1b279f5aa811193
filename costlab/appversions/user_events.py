"""Your own events (`appversions.events`): a Parquet or CSV file of yours in place of the generator.

The file holds one event a row: `key` (a string or an integer: whose event it is, e.g. a device or an
account), `time` (when: a timestamp, a date, or an ISO 8601 string such as 2024-03-01T10:15:00Z or
2024-03-01; a time without an offset is UTC), `status` (approved, noFunds, pending or rejected) and,
optionally, `amount` (a number; the published versions store no amount, so it is checked, not used).
Other columns are ignored.

What a version is built from is what the generator gives (costlab/appversions/events.py): each event a
key, a UTC day and one status. So each time is kept to its UTC day, as the articles' events are, and each
distinct key becomes one 64-hex-digit key (its rank among your keys, 1 = the smallest), as the generator's
keys are its users' indexes: which events share a key, and on which days, is what every schema's cost
depends on; the key's own characters are not (every version stores a key in the same 32 or 64 bytes).

`events_problem` checks the file when the rules are read (costlab.config's check, through the study's
config problem), before any job, and says the first thing wrong in one line; own_events.convert_events
writes the integer-coded events.parquet every appversions step reads (results/appversions/events.parquet),
in date order. Everything is polars expressions over whole columns: no loop over rows.
"""
from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import polars as pl

from costlab.appversions.registry import STATUSES
from costlab.paths import CHECKOUT, snakemake_path_problem, user_file_path
from costlab.suggest import did_you_mean

KEY = "appversions.events"
REQUIRED = ("key", "time", "status")
OPTIONAL = ("amount",)
FORMATS = (".parquet", ".csv")
# The span the model codes days in (costlab/appversions/model.py: 16-bit days since 1970-01-01).
FIRST_DAY, LAST_DAY = date(1970, 1, 1), date(1970, 1, 1) + timedelta(days=(1 << 16) - 1)
# A key's day holds fewer events of one status than the model's 16-bit counters take.
MAX_PER_KEY_DAY_STATUS = (1 << 16) - 1
TIME_EXAMPLES = "an ISO 8601 date or time, e.g. 2024-03-01T10:15:00Z, 2024-03-01 10:15:00 or 2024-03-01"


# Why a published number does not judge a value measured on your events (the verdict `not comparable`).
OWN_EVENTS_REASON = "your events (appversions.events), not the article's: no published number for them"


STATUS_DTYPE = pl.Enum(list(STATUSES))   # as events.STATUS_DTYPE (this module must not import events.py: the
# config check imports it, and events.py's writer reaches costlab.config)


class EventsFileError(ValueError):
    """The events file cannot be used; the message is one line naming the config key, the file and what is
    wrong."""


def _fail(path: Any, problem: str) -> EventsFileError:
    return EventsFileError(f"invalid config key {KEY}: {path}: {problem}")


def events_path(path: str | Path) -> Path:
    """Where a configured events file is: a relative path from the working directory (where results/ is
    written), else from costlab's checkout (the sample it ships): costlab.paths.user_file_path."""

    return user_file_path(path)


def configured(section: dict) -> str | None:
    """The events file the config's appversions section names (None: the generator's events)."""
    value = (section or {}).get("events")
    return value if isinstance(value, str) and value else None


# ---- reading -------------------------------------------------------------------------------------------

def _read(path: str, resolved: Path) -> pl.DataFrame:
    """The file as a frame (CSV: every column a string, parsed below, so a bad value is named by its row)."""
    suffix = resolved.suffix.lower()
    try:
        if suffix == ".csv":
            return pl.read_csv(resolved, infer_schema=False)
        return pl.read_parquet(resolved)
    except pl.exceptions.NoDataError:
        raise _fail(path, "the file is empty: a header (key, time, status[, amount]) and one row an event "
                          "are needed") from None
    except Exception as err:  # noqa: BLE001  any reader error of the user's file, in one line
        text = " ".join(str(err).split())[:200]
        kind = "CSV" if suffix == ".csv" else "Parquet"
        raise _fail(path, f"cannot be read as {kind}: {text}") from None


def _row_label(index: int, csv: bool) -> str:
    """A row as the user finds it: a CSV's line (the header is line 1), a Parquet file's row (from 1)."""
    return f"line {index + 2}" if csv else f"row {index + 1}"


def _first_bad(frame: pl.DataFrame, bad: pl.Expr, column: str) -> tuple[int, Any, int] | None:
    """(row index, value, how many rows) of the first row where `bad` holds, or None."""
    found = frame.with_row_index("_row").filter(bad)
    if found.height == 0:
        return None
    return int(found["_row"][0]), found[column][0], found.height


def _parse_times(values: pl.Expr) -> pl.Expr:
    """ISO 8601 strings -> Datetime(ms, UTC): with an offset (or Z) converted to UTC, without one read as
    UTC; a date alone is its UTC midnight. Null where a value is none of these."""
    text = (values.str.strip_chars().str.replace(r"^(\d{4}-\d{2}-\d{2})[T ]", "${1} ")
            .str.replace(r"[Zz]$", "+00:00"))
    aware = [text.str.to_datetime(fmt, time_unit="ms", time_zone="UTC", strict=False)
             for fmt in ("%Y-%m-%d %H:%M:%S%.f%:z", "%Y-%m-%d %H:%M:%S%:z", "%Y-%m-%d %H:%M%:z")]
    naive = [text.str.to_datetime(fmt, time_unit="ms", strict=False).dt.replace_time_zone("UTC")
             for fmt in ("%Y-%m-%d %H:%M:%S%.f", "%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M")]
    day = text.str.to_date("%Y-%m-%d", strict=False).cast(pl.Datetime("ms")).dt.replace_time_zone("UTC")
    return pl.coalesce(*aware, *naive, day)


def _times(path: str, frame: pl.DataFrame, csv: bool) -> pl.Series:
    """The `time` column as Datetime(ms, UTC) instants, or EventsFileError naming the first bad value."""
    dtype = frame.schema["time"]
    column = pl.col("time")
    if isinstance(dtype, pl.Datetime):
        parsed = (column.dt.convert_time_zone("UTC") if dtype.time_zone
                  else column.dt.replace_time_zone("UTC"))
        return frame.select(parsed.dt.cast_time_unit("ms").alias("time"))["time"]
    if dtype == pl.Date:
        return frame.select(column.cast(pl.Datetime("ms")).dt.replace_time_zone("UTC"))["time"]
    if dtype in (pl.Utf8, pl.Categorical) or isinstance(dtype, pl.Enum):
        parsed = frame.select(_parse_times(column.cast(pl.Utf8)).alias("time"))["time"]
        bad = _first_bad(frame.with_columns(parsed.alias("_parsed")), pl.col("_parsed").is_null(), "time")
        if bad is not None:
            index, value, count = bad
            raise _fail(path, f"{_row_label(index, csv)}: time {value!r} is not a date or time "
                              f"({count:,} such rows; allowed: {TIME_EXAMPLES})")
        return parsed
    raise _fail(path, f"column 'time' is {dtype}, not a time (allowed: a timestamp, a date, or "
                      f"{TIME_EXAMPLES})")


def validated_events(path: str) -> pl.DataFrame:
    """The events of the file `path` (as configured): key (its original values), date (Datetime ms UTC, the
    UTC day), status (Enum), in file order; EventsFileError in one line for the first thing wrong."""
    if not isinstance(path, str) or not path:
        raise EventsFileError(f"invalid config key {KEY}: {path!r} is not a file's path "
                              "(e.g. examples/events/terminals.csv)")

    if snakemake_path_problem(path):
        raise _fail(path, snakemake_path_problem(path))
    if Path(path).suffix.lower() not in FORMATS:
        raise _fail(path, f"not a Parquet or CSV file (allowed: a name ending {' or '.join(FORMATS)})")
    resolved = events_path(path)
    if not resolved.is_file():
        raise _fail(path, f"not a file (a relative path is read from the working directory, {Path.cwd()}, "
                          f"else from costlab's checkout, {CHECKOUT})")
    csv = resolved.suffix.lower() == ".csv"
    frame = _read(path, resolved)
    missing = [c for c in REQUIRED if c not in frame.columns]
    if missing:
        near = did_you_mean(missing[0], [c for c in frame.columns if c not in REQUIRED])
        columns = ", ".join(frame.columns) or "none"
        raise _fail(path, f"no column {missing[0]!r} (its columns: {columns}; needed: "
                          f"{', '.join(REQUIRED)}; optional: {', '.join(OPTIONAL)})" + near)
    if frame.height == 0:
        raise _fail(path, "no events: the file has its columns but no row (one row an event is needed)")
    for column in (*REQUIRED, *(c for c in OPTIONAL if c in frame.columns)):
        empty = frame[column].is_null()
        if frame[column].dtype == pl.Utf8:
            empty = empty | (frame[column].str.strip_chars() == "")
        bad = _first_bad(frame.with_columns(empty.alias("_empty")), pl.col("_empty"), column)
        if bad is not None:
            raise _fail(path, f"{_row_label(bad[0], csv)}: no {column} ({bad[2]:,} such rows; every event "
                              f"has a {column})")
    key_type = frame.schema["key"]
    if not (key_type == pl.Utf8 or key_type.is_integer() or key_type == pl.Categorical):
        raise _fail(path, f"column 'key' is {key_type}, not a key (allowed: a string or an integer)")
    if "amount" in frame.columns:
        amount_type = frame.schema["amount"]
        if amount_type == pl.Utf8 and csv:   # CSV text: each value a number
            amounts = frame["amount"].str.strip_chars().cast(pl.Float64, strict=False)
            bad = _first_bad(frame.with_columns(amounts.alias("_a")), pl.col("_a").is_null(), "amount")
            if bad is not None:
                raise _fail(path, f"{_row_label(bad[0], csv)}: amount {bad[1]!r} is not a number "
                                  f"({bad[2]:,} such rows; allowed: a number, e.g. 12.50)")
        elif not amount_type.is_numeric():
            raise _fail(path, f"column 'amount' is {amount_type}, not a number (allowed: an integer or a "
                              "float)")
    status = frame["status"]
    if status.dtype != pl.Utf8 and status.dtype != pl.Categorical and not isinstance(status.dtype, pl.Enum):
        raise _fail(path, f"column 'status' is {status.dtype}, not a status (allowed: the strings "
                          f"{', '.join(STATUSES)})")
    status = status.cast(pl.Utf8)
    if csv:
        status = status.str.strip_chars()
    bad = _first_bad(frame.with_columns(status.alias("_s")), ~pl.col("_s").is_in(list(STATUSES)), "_s")
    if bad is not None:
        raise _fail(path, f"{_row_label(bad[0], csv)}: status {bad[1]!r} is not allowed ({bad[2]:,} such "
                          "rows; "
                          f"allowed: {', '.join(STATUSES)})" + did_you_mean(bad[1], STATUSES))
    times = _times(path, frame, csv)
    low, high = datetime.combine(FIRST_DAY, datetime.min.time(), timezone.utc), datetime.combine(
        LAST_DAY + timedelta(days=1), datetime.min.time(), timezone.utc)
    outside = (pl.col("_t") < low) | (pl.col("_t") >= high)
    bad = _first_bad(frame.with_columns(times.alias("_t")), outside, "_t")
    if bad is not None:
        raise _fail(path, f"{_row_label(bad[0], csv)}: time {bad[1].isoformat()} is outside what the "
                          "versions "
                          f"date ({FIRST_DAY} .. {LAST_DAY}; {bad[2]:,} such rows)")
    key = frame["key"].str.strip_chars() if csv else frame["key"]
    events = pl.DataFrame({"key": key, "date": times.dt.truncate("1d"), "status": status.cast(STATUS_DTYPE)})
    crowded = (events.group_by("key", "date", "status").len().filter(pl.col("len") >= MAX_PER_KEY_DAY_STATUS))
    if crowded.height:
        first = crowded.row(0, named=True)
        raise _fail(path, f"key {first['key']!r} has {first['len']:,} {first['status']} events on "
                          f"{first['date'].date()}: at most {MAX_PER_KEY_DAY_STATUS - 1:,} of one status a "
                          "key "
                          "and day are allowed (the model's 16-bit counters)")
    return events


def events_problem(section: dict) -> str | None:
    """The first thing wrong with the configured events file, as one line (None: no file, or a usable one)."""
    path = (section or {}).get("events")
    if path is None:
        return None
    try:
        validated_events(path)
    except EventsFileError as err:
        return str(err)
    return None


def as_codes(events: pl.DataFrame) -> pl.DataFrame:
    """Validated events -> integer-coded (events.EVENT_CODES_SCHEMA) in date order: each distinct key its
    rank among the keys (1 = the smallest) as the user index, whose key is 64 hex digits (events.key_for)."""
    return events.select(
        pl.col("key").rank("dense").cast(pl.UInt32).alias("user"), "date", "status"
    ).sort("date", maintain_order=True)


def as_codes_in_chunks(codes: pl.DataFrame, chunk_rows: int) -> list[pl.DataFrame]:
    """Integer-coded events as consecutive chunks of at most `chunk_rows` rows (events.write_events'
    input)."""
    return [codes.slice(offset, chunk_rows) for offset in range(0, codes.height, chunk_rows)]
