"""Correctness before timing: every version's Get Reports must equal the reference model's reports.

`sample_report_requests` picks (key, end date) pairs that stress the versions' edges: keys from the
dense and the sparse part of the key distribution (plus one key without events) and end dates at,
just before and just after month, quarter and year starts (and 29 February), where bucket ids and
item-name bounds are cut. `check_reports` raises `ReportMismatch` naming version, key, date,
window, status and both values at the first difference; otherwise it returns the replies it compared
(each sample's Get Reports is sent once: the correctness job writes these rows).

End times with a time of day (the authors' load test asks for such ends) are recorded, not failed:
there the versions count different days by design (versions.DayRule). `midday_reports` sends Get
Reports at such ends and records each reply beside whether it counts what the version's rule says;
the table step compares the versions with each other (tables.midday_findings).
"""
from __future__ import annotations

from datetime import date, datetime, timedelta, timezone

import numpy as np
import polars as pl
from pymongo.collection import Collection
from pymongo.database import Database

from costlab.appversions.events import STATUSES, key_for, read_events
from costlab.appversions.model import expected_reports
from costlab.appversions.params import CorrectnessParams
from costlab.appversions.statements import iter_statement_batches, send_update_statements
from costlab.appversions.versions import AppVersion, as_report_end, get_version, report_windows
from costlab.io import write_csv
from costlab.jobs import RunFacts
from costlab.progress import progress
from costlab.server import measuring_job
from costlab.server.provenance import read_provenance

# Always checked first: the end of the data (every window full), leap days, a quarter start.
FIXED_END_DATES = (date(2020, 1, 1), date(2016, 2, 29), date(2013, 4, 1), date(2011, 1, 1))


# The checked reports (check_reports' rows, the job's CSV before server_kind).
CHECKED_SCHEMA = {"version": pl.Utf8, "key": pl.Utf8, "end_date": pl.Date, "window_years": pl.Int64,
                  **{status: pl.Int64 for status in STATUSES}}


# Get Reports at end times with a time of day (midday_reports' rows, the job's second CSV).
MIDDAY_SCHEMA = {"version": pl.Utf8, "day_rule": pl.Utf8, "key": pl.Utf8, "end": pl.Datetime("ms", "UTC"),
                 "window_years": pl.Int64, **{status: pl.Int64 for status in STATUSES},
                 "as_day_rule": pl.Boolean}
MS_PER_DAY = 86_400_000
MIDDAY_FIRST, MIDDAY_LAST = date(2011, 1, 1), date(2020, 1, 1)


class ReportMismatch(AssertionError):
    """Get Reports of a version differs from the reference model."""


def edge_end_dates(first: date = date(2010, 1, 1), last: date = date(2020, 1, 1)) -> list[date]:
    """Month starts in [first, last] with the day before and after each (kept inside [first, last]).

    The default `last` is the end of the initial data: windows then never reach the 2020 events a
    load test adds, so the check also holds on a data directory after its load test.
    """
    dates = {date(2012, 2, 29), date(2016, 2, 29)}
    month = date(first.year, first.month, 1)
    while month <= last:
        dates.update({month - timedelta(days=1), month, month + timedelta(days=1)})
        month = (month + timedelta(days=32)).replace(day=1)
    return sorted(d for d in dates if first <= d <= last)


def sample_report_requests(events: pl.DataFrame, samples: int, seed: int) -> list[tuple[str, datetime]]:
    """`samples` (key, end date) pairs: alternately a dense and a sparse key, edge end dates.

    Keys are ranked by event count (ties by key). Dense keys: the top 5 % (at least one); sparse
    keys: the lower half. The last pair uses a key without any event (every window must be zeros).
    """
    if samples < 4:
        raise ValueError(f"correctness samples must be >= 4, got {samples}")
    if events.height == 0:
        raise ValueError("no events to sample report requests from")
    dense, sparse, keys = _ranked_keys(events)
    absent_key = key_for(max(int(k, 16) for k in keys) + 1)

    rng = np.random.default_rng(seed)
    first, last = data_span(events)
    edges = edge_end_dates(first, last)
    fixed = FIXED_END_DATES if (first, last) == GENERATED_SPAN else (last, first + (last - first) / 2, first)
    end_dates = list(fixed) + [edges[i] for i in rng.integers(0, len(edges), samples)]
    pairs = []
    for i in range(samples - 1):
        pool = dense if i % 2 == 0 else sparse
        key = pool[int(rng.integers(0, len(pool)))]
        pairs.append((key, _utc(end_dates[i])))
    pairs.append((absent_key, _utc(end_dates[samples - 1])))
    return pairs


GENERATED_SPAN = (date(2010, 1, 1), date(2020, 1, 1))


def data_span(events: pl.DataFrame) -> tuple[date, date]:
    """(first day, the day after the last) the checks' end dates are drawn from: the generator's
    2010-2020 for events inside it (its authors' window ends half an hour into 2020-01-01's next day), else
    the span of your own events (appversions.events)."""
    first, last = events["date"].min().date(), events["date"].max().date()
    if GENERATED_SPAN[0] <= first and last <= GENERATED_SPAN[1] + timedelta(days=1):
        return GENERATED_SPAN
    return first, last + timedelta(days=1)


def _ranked_keys(events: pl.DataFrame) -> tuple[list[str], list[str], list[str]]:
    """(dense: the top 5 % of keys by events, at least one; sparse: the lower half; all keys), ties by key."""
    counts = events.group_by("key").len().sort(["len", "key"], descending=[True, False])
    keys = counts["key"].to_list()
    return keys[:max(1, len(keys) // 20)], keys[len(keys) // 2:] or keys[-1:], keys


def sample_midday_requests(events: pl.DataFrame, samples: int, seed: int) -> list[tuple[str, datetime]]:
    """`samples` (dense key, end with a time of day) pairs, ends in [2011-01-01, 2020-01-01).

    Even samples end on a day that holds one of the key's events, at a uniform millisecond of that
    day (where the versions' day rules can part); odd ones at a uniform millisecond of the span, as
    the authors' load test draws its ends (over its year). A key with no event there is skipped.
    """
    if samples < 0:
        raise ValueError(f"midday samples must be >= 0, got {samples}")
    if samples == 0 or events.height == 0:
        return []
    span = data_span(events)
    first, last = (_utc(MIDDAY_FIRST), _utc(MIDDAY_LAST)) if span == GENERATED_SPAN else map(_utc, span)
    inside = events.filter((pl.col("date") >= first) & (pl.col("date") < last))
    if inside.height == 0:
        return []
    dense, _, _ = _ranked_keys(inside)
    rng = np.random.default_rng(seed)
    first_ms = int(first.timestamp() * 1000)
    span_ms = int(last.timestamp() * 1000) - first_ms
    pairs = []
    for i in range(samples):
        key = dense[int(rng.integers(0, len(dense)))]
        if i % 2 == 0:
            days = inside.filter(pl.col("key") == key)["date"]
            day_ms = int(days[int(rng.integers(0, len(days)))].timestamp() * 1000)
            end_ms = day_ms + int(rng.integers(1, MS_PER_DAY))
        else:
            end_ms = first_ms + int(rng.integers(1, span_ms))
            end_ms += 1 if end_ms % MS_PER_DAY == 0 else 0   # a time of day, never a midnight
        pairs.append((key, datetime.fromtimestamp(end_ms / 1000, timezone.utc)))
    return pairs


def midday_reports(db: Database, version: AppVersion | str, events: pl.DataFrame,
                   samples: list[tuple[str, datetime]]) -> pl.DataFrame:
    """Get Reports at each (key, end with a time of day): one row per window (MIDDAY_SCHEMA), with
    `as_day_rule` = the reply counts what the model counts under the version's day rule."""
    version = get_version(version) if isinstance(version, str) else version
    collection = db[version.collection_name]
    rows = []
    for key, end in progress(samples, total=len(samples), desc=f"midday {version.name}", unit="report"):
        got = version.get_reports(collection, key, end)
        expected = expected_reports(events, key, end, version.day_rule)
        rows.extend(
            {
                "version": version.name,
                "day_rule": version.day_rule,
                "key": key,
                "end": as_report_end(end),
                **window,
                "as_day_rule": window == want,
            }
            for window, want in zip(got, expected)
        )
    return pl.DataFrame(rows, schema=MIDDAY_SCHEMA)


def _utc(day: date) -> datetime:
    return datetime(day.year, day.month, day.day, tzinfo=timezone.utc)


def check_reports(db: Database, version: AppVersion | str, events: pl.DataFrame,
                  samples: list[tuple[str, date | datetime]]) -> pl.DataFrame:
    """Compare Get Reports on db[version.collection_name] with the model for every sample pair.

    Each sample's Get Reports is sent once; its reply is compared, then kept: returns the checked
    reports as rows (version, key, end_date as a date, window_years, the four counts). Raises
    ReportMismatch at the first difference.
    """
    version = get_version(version) if isinstance(version, str) else version
    collection = db[version.collection_name]
    rows = []
    for key, end_date in progress(samples, total=len(samples), desc=f"check {version.name}", unit="report"):
        got = version.get_reports(collection, key, end_date)
        _compare(version.name, key, end_date, got, expected_reports(events, key, end_date))
        end_day = as_report_end(end_date).date()
        rows.extend({"version": version.name, "key": key, "end_date": end_day, **window} for window in got)
    return pl.DataFrame(rows, schema=CHECKED_SCHEMA)


def _compare(
    version_name: str, key: str, end_date: date | datetime, got: list[dict], expected: list[dict]
) -> None:
    windows = {years: (start, end) for years, start, end in report_windows(end_date)}
    if [g["window_years"] for g in got] != [e["window_years"] for e in expected]:
        raise ReportMismatch(f"{version_name}: key {key}, end date {end_date:%Y-%m-%d}: windows "
                             f"{[g['window_years'] for g in got]} != {[e['window_years'] for e in expected]}")
    for got_window, expected_window in zip(got, expected):
        for status in STATUSES:
            if got_window[status] != expected_window[status]:
                years = expected_window["window_years"]
                start, end = windows[years]
                raise ReportMismatch(
                    f"{version_name}: Get Reports differs from the model for key {key}, end date "
                    f"{end_date:%Y-%m-%d}, window {years} years [{start:%Y-%m-%d}, {end:%Y-%m-%d}): "
                    f"{status} = {got_window[status]} from the server, {expected_window[status]} in the model"
                )


def load_events(
    collection: Collection, version: AppVersion, events: pl.DataFrame, batch_size: int = 250
) -> None:
    """Load `events` with the version's own Bulk Upsert as the loader sends it: unordered `update`
    commands of `batch_size` pre-encoded statements (statements.py), every reply checked."""

    for statements in iter_statement_batches(version, events, batch_size):
        send_update_statements(collection, statements, version.name)


def correctness_job(
    params: CorrectnessParams,
    run: RunFacts,
    version_name: str,
    events_path: str,
    data_dir: str,
    output_path: str,
    provenance_path: str,
    midday_path: str | None = None,
) -> None:
    """Check one loaded version against the model on a server started on its data directory.

    Raises ReportMismatch (the job fails, no output) at the first difference; otherwise writes the
    checked reports with the server kind, and (midday_path) its Get Reports at end times with a time
    of day (`params.midday_samples` of them).
    """
    from costlab.appversions.load import read_marker  # noqa: PLC0415  heavy: multiprocessing (the load test's workers): a module that starts none stays without it

    version = get_version(version_name)
    read_marker(data_dir)  # a half-loaded directory must not be checked
    events = read_events(events_path)
    samples = sample_report_requests(events, params.samples, params.seed)
    midday = sample_midday_requests(events, params.midday_samples, params.seed) if midday_path else []
    extra = {"study": "appversions", "step": "correctness", "version": version_name, "samples": len(samples),
             "midday_samples": len(midday)}
    with measuring_job(run, params.profile, provenance_path, data_dir=data_dir,
                       job=f"appversions_correctness_{version_name}", extra=extra, study="appversions",
                       dataset=version_name, data=params.data) as server:
        checked = check_reports(server.client[server.database], version, events, samples)
        at_times_of_day = midday_reports(server.client[server.database], version, events, midday)
    kind = read_provenance(provenance_path)["server_kind"]
    if midday_path:
        write_csv(at_times_of_day.with_columns(server_kind=pl.lit(kind)), midday_path)
    write_csv(checked.with_columns(server_kind=pl.lit(kind)), output_path)
