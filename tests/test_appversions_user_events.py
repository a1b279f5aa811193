"""Your own events (appversions.events): the file checked before any job, each malformed one refused in one
line; the shipped sample through the model and the engine lab for the 14 published versions
(costlab/appversions/user_events.py). Expected counts are worked out here from the CSV with the standard
library (csv, datetime), never by the code under test."""
from __future__ import annotations

import csv
from datetime import date, datetime, timezone
from pathlib import Path

import polars as pl
import pytest

from costlab.appversions.registry import PUBLISHED_NAMES
from costlab.config import ROOT, ConfigError, load_config

SAMPLE = "examples/events/terminals.csv"
UTC = timezone.utc


def _rows(path: Path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _day(text: str) -> date:
    """The UTC day of an ISO 8601 time, by the standard library."""
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC).date()


def _refusal(path: Path | str) -> str:
    with pytest.raises(ConfigError) as err:
        load_config(overrides={"appversions": {"events": str(path)}})
    message = str(err.value)
    assert "\n" not in message, message
    return message


def test_the_shipped_sample_is_what_its_command_writes(tmp_path):
    """examples/events/terminals.csv: 4,000 events of 120 terminals over 2023-2024, written by the documented
    command (deterministic), small enough for the repository."""
    from costlab.appversions.own_events import write_sample

    shipped = ROOT / SAMPLE
    assert write_sample(tmp_path / "again.csv") == 4000
    assert (tmp_path / "again.csv").read_bytes() == shipped.read_bytes()
    rows = _rows(shipped)
    assert len(rows) == 4000 and list(rows[0]) == ["key", "time", "status", "amount"]
    assert len({r["key"] for r in rows}) <= 120 and shipped.stat().st_size < 250_000
    days = sorted(_day(r["time"]) for r in rows)
    assert date(2023, 1, 1) <= days[0] and days[-1] <= date(2024, 12, 31)


def test_the_sample_becomes_the_integer_coded_events_in_date_order(tmp_path):
    from costlab.appversions.events import read_events
    from costlab.appversions.own_events import convert_events

    held = convert_events(SAMPLE, tmp_path / "events.parquet")
    rows = _rows(ROOT / SAMPLE)
    keys = sorted({r["key"] for r in rows})
    assert held["events"] == len(rows) and held["keys"] == len(keys)
    assert held["statuses"] == {s: sum(r["status"] == s for r in rows)
                                for s in ("approved", "noFunds", "pending", "rejected")}
    events = read_events(tmp_path / "events.parquet")
    assert events["date"].is_sorted()
    # each key its rank among the keys (term-0001 the first: 64 hex digits ending 1); each time its UTC day
    rank = {k: i + 1 for i, k in enumerate(keys)}
    mine = sorted((format(rank[r["key"]], "064X"), _day(r["time"]), r["status"]) for r in rows)
    got = sorted((k, d.date(), s) for k, d, s in events.iter_rows())
    assert got == mine


def test_times_with_offsets_naive_times_and_dates_are_kept_to_their_utc_day(tmp_path):
    from costlab.appversions.user_events import validated_events

    path = tmp_path / "mine.csv"
    path.write_text("key,time,status\n"
                    "a,2024-03-01T23:30:00-02:00,approved\n"   # 01:30 UTC on 2 March
                    "a,2024-03-01 10:15,noFunds\n"             # no offset: UTC
                    "b,2024-03-01,pending\n"                    # a date: its UTC midnight
                    "7,2024-02-29T00:00:00.250Z,rejected\n")    # an integer-looking key: a key like any
    events = validated_events(str(path))
    assert [d.date() for d in events["date"]] == [date(2024, 3, 2), date(2024, 3, 1), date(2024, 3, 1),
                                                   date(2024, 2, 29)]
    assert events["key"].to_list() == ["a", "a", "b", "7"]
    # Parquet: a timestamp with a zone, and integer keys
    parquet = tmp_path / "mine.parquet"
    pl.DataFrame({"key": [5, 5], "time": [datetime(2024, 1, 1, 23, 0), datetime(2024, 1, 2, 1, 0)],
                  "status": ["approved", "approved"], "amount": [1, 2]}).with_columns(
        pl.col("time").dt.replace_time_zone("Europe/Paris")).write_parquet(parquet)
    events = validated_events(str(parquet))
    assert [d.date() for d in events["date"]] == [date(2024, 1, 1), date(2024, 1, 2)]   # 22:00 and 00:00 UTC


def _csv(tmp_path: Path, text: str, name: str = "mine.csv") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("name, text, words", [
    ("mine.csv", "key,when,status\na,2024-01-01,approved\n",
     "no column 'time' (its columns: key, when, status; needed: key, time, status; optional: amount)"),
    ("mine.csv", "key,time,status\na,2024-01-01,approved\na,2024-13-45,approved\n",
     "line 3: time '2024-13-45' is not a date or time (1 such rows; allowed: an ISO 8601 date or time"),
    ("mine.csv", "key,time,status\na,2024-01-01,declined\n",
     "line 2: status 'declined' is not allowed (1 such rows; allowed: approved, noFunds, pending, rejected)"),
    ("mine.csv", "key,time,status\na,2024-01-01,aproved\n",
     "allowed: approved, noFunds, pending, rejected); did you mean 'approved'?"),
    ("mine.csv", "key,time,status,amount\na,2024-01-01,approved,12.5\na,2024-01-02,approved,ten\n",
     "line 3: amount 'ten' is not a number (1 such rows; allowed: a number, e.g. 12.50)"),
    ("mine.csv", "key,time,status\n,2024-01-01,approved\n",
     "line 2: no key (1 such rows; every event has a key)"),
    ("mine.csv", "",
     "the file is empty: a header (key, time, status[, amount]) and one row an event are needed"),
    ("mine.csv", "key,time,status\n", "no events: the file has its columns but no row"),
    ("mine.csv", "key,time,status\na,1969-12-31T23:00:00Z,approved\n",
     "line 2: time 1969-12-31T23:00:00+00:00 is outside what the versions date (1970-01-01 .. 2149-06-06"),
    ("mine.json", "[]", "not a Parquet or CSV file (allowed: a name ending .parquet or .csv)"),
])
def test_a_malformed_file_is_refused_in_one_line(tmp_path, name, text, words):
    path = _csv(tmp_path, text, name)
    message = _refusal(path)
    assert message.startswith(f"invalid config key appversions.events: {path}: "), message
    assert words in message, message


def test_a_parquet_column_of_the_wrong_type_is_refused_in_one_line(tmp_path):
    path = tmp_path / "mine.parquet"
    pl.DataFrame({"key": ["a"], "time": [1.7e9], "status": ["approved"]}).write_parquet(path)
    message = _refusal(path)
    assert "column 'time' is Float64, not a time (allowed: a timestamp, a date, or an ISO 8601" in message
    pl.DataFrame({"key": [[1]], "time": [date(2024, 1, 1)], "status": ["approved"]}).write_parquet(path)
    assert "column 'key' is List(Int64), not a key (allowed: a string or an integer)" in _refusal(path)
    pl.DataFrame({"key": ["a"], "time": [date(2024, 1, 1)], "status": ["approved"],
                  "amount": ["1"]}).write_parquet(path)
    assert "column 'amount' is String, not a number (allowed: an integer or a float)" in _refusal(path)


def test_a_missing_file_is_refused_in_one_line(tmp_path):
    message = _refusal(tmp_path / "nowhere.csv")
    where = tmp_path / "nowhere.csv"
    assert f"{where}: not a file (a relative path is read from the working directory" in message


def test_the_shipped_sample_passes_the_check_from_any_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)   # not in the checkout: read from costlab's checkout
    config = load_config(overrides={"appversions": {"events": SAMPLE}})
    assert config["appversions"]["events"] == SAMPLE


def _expected_documents(rows: list[dict]) -> dict[str, int]:
    """Documents each published version holds for these events, counted here: one per key and UTC day
    (appV1-appV4), per key and month (appV5R0, appV6R0), per key and quarter (the rest)."""
    days = {(r["key"], _day(r["time"])) for r in rows}
    months = {(k, d.year, d.month) for k, d in days}
    quarters = {(k, d.year, (d.month - 1) // 3) for k, d in days}
    per = {"appV1": days, "appV2": days, "appV3": days, "appV4": days, "appV5R0": months, "appV6R0": months}
    return {name: len(per.get(name, quarters)) for name in PUBLISHED_NAMES}


def test_the_sample_through_the_model_and_the_engine_lab_for_the_14_versions(tmp_path):
    """The first 1,000 events of the sample (make test stays fast; the workflow test runs all of it): the
    model's documents are the ones counted here, and the engine lab, growing each version by its own Bulk
    Upsert stream, holds exactly the model's documents and BSON bytes."""
    from costlab.appversions.engine import measure_version
    from costlab.appversions.events import iter_event_file
    from costlab.appversions.model import collection_stats
    from costlab.appversions.own_events import convert_events

    rows = _rows(ROOT / SAMPLE)[:1000]
    head = tmp_path / "head.csv"
    with open(head, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    events = tmp_path / "events.parquet"
    assert convert_events(str(head), events)["events"] == 1000
    model = {r["version"]: r for r in collection_stats(iter_event_file(events, 300)).iter_rows(named=True)}
    expected = _expected_documents(rows)
    assert {name: model[name]["documents"] for name in PUBLISHED_NAMES} == expected
    assert expected["appV1"] > expected["appV5R0"] > expected["appV5R1"]   # the buckets are told apart
    for name in PUBLISHED_NAMES:
        stored = measure_version(name, events, tmp_path / name, cache_mb=8, workers=2, checkpoint_every=0)
        assert (stored["events"], stored["documents"], stored["data_bytes"]) == (
            1000, model[name]["documents"], model[name]["data_bytes"]), name
        assert stored["storage_bytes"] > 0 and stored["index_bytes"] > 0


def test_the_engine_job_grows_your_events_not_generated_ones(tmp_path):
    """run_version_job with appversions.events: every version grows the events job's file (its rows are the
    row count), no day slice; without that file it refuses rather than generate."""
    from costlab.appversions.engine import run_version_job
    from costlab.appversions.own_events import convert_events
    from costlab.appversions.params import EngineVersionParams
    from costlab.config import run_facts

    config = load_config(overrides={"appversions": {"events": SAMPLE},
                                    "engine": {"appversions": {"topology": "standalone"}}})
    params = EngineVersionParams(**EngineVersionParams.declare(config) | {"declaration": None})
    assert params.events_file == SAMPLE
    events = tmp_path / "events.parquet"
    convert_events(SAMPLE, events)
    record = run_version_job(params, run_facts(config, "appversions"), "appV4", tmp_path / "row.json",
                             own_events=events)
    assert record["row"]["events"] == 4000 and record["row"]["slice_days"] == 0
    assert record["provenance"]["extra"]["events_file"] == SAMPLE
    with pytest.raises(ValueError, match="the engine job needs the events job's file"):
        run_version_job(params, run_facts(config, "appversions"), "appV4", tmp_path / "row2.json")


def test_on_your_events_no_published_number_judges_this_runs_rows():
    """The model's rows at this run are your events' (not comparable); the reference rows are the generator's
    at the reference scale and stay judged."""
    from costlab.appversions.model import collection_stats
    from costlab.appversions.tables import published_collection_stats, published_vs_model
    from costlab.appversions.user_events import OWN_EVENTS_REASON, as_codes, validated_events
    from costlab.verdicts import Verdict

    stats = collection_stats(as_codes(validated_events(SAMPLE)))
    published = published_collection_stats(ROOT / "resources/published/appversions_collection_stats.csv",
                                            ROOT / "resources/published/appversions_event_stats.csv")
    reference = stats.with_columns(pl.lit(50_000).alias("events_per_year"),
                                   pl.lit("authors").alias("event_window"))
    table = published_vs_model(stats, published, None, reference, own_events=True)
    mine = table.filter(pl.col("finding").str.contains(r"\(model\)$"))
    assert mine.height == 28   # 14 versions x (documents per event, average size)
    assert set(mine["verdict"]) == {Verdict.NOT_COMPARABLE.value}
    assert set(mine["reason"]) == {OWN_EVENTS_REASON}
    judged = table.filter(pl.col("finding").str.contains("reference scale"))
    assert judged.height == 28 and Verdict.NOT_COMPARABLE.value not in set(judged["verdict"])


def test_the_correctness_check_draws_its_end_dates_from_your_events_span():
    from costlab.appversions.correctness import data_span, sample_report_requests
    from costlab.appversions.events import with_keys
    from costlab.appversions.user_events import as_codes, validated_events

    events = with_keys(as_codes(validated_events(SAMPLE)))
    first, last = data_span(events)
    assert first >= date(2023, 1, 1) and last <= date(2025, 1, 1)
    ends = [end.date() for _, end in sample_report_requests(events, 24, 7)]
    assert all(first <= end <= last for end in ends)


@pytest.mark.parametrize("name", ["appV4", "appV5R4", "appV6R3"])
def test_your_events_loaded_into_mongod_give_the_models_reports(server_uri, name, tmp_path):
    """The sample as the load step sends it (each version's own raw statements) into the test's mongod; Get
    Reports at the correctness check's end dates (drawn from the sample's 2023-2024 span, dense, sparse and
    absent keys) equal the events' own counts (check_reports raises at the first difference)."""
    from pymongo import MongoClient

    from costlab.appversions.correctness import check_reports, load_events, sample_report_requests
    from costlab.appversions.events import read_events
    from costlab.appversions.own_events import convert_events
    from costlab.appversions.versions import get_version

    convert_events(SAMPLE, tmp_path / "events.parquet")
    events = read_events(tmp_path / "events.parquet")
    samples = sample_report_requests(events, 24, 7)
    assert all(date(2023, 1, 1) <= end.date() <= date(2025, 1, 1) for _, end in samples)
    version = get_version(name)
    client = MongoClient(server_uri)
    try:
        db = client[f"costlab_test_own_events_{name}"]
        load_events(version.prepare_collection(db), version, events)
        checked = check_reports(db, version, events, samples)
        assert checked.height == 24 * 5 and checked.select(pl.sum_horizontal(
            "approved", "noFunds", "pending", "rejected")).to_series().sum() > 0
    finally:
        client.drop_database(f"costlab_test_own_events_{name}")
        client.close()


def test_the_engine_labs_ceiling_counts_your_events(tmp_path, monkeypatch):
    """The engine lab grows every row of your file per version: a file past the ceiling on engine events per
    version is refused before any job, naming it (the ceiling lowered here to 5,000 to keep the file small;
    it is 5,000,000); the sample's 4,000 pass."""
    import dataclasses

    from costlab import plan
    from costlab.appversions.ceilings import own_event_rows

    monkeypatch.setitem(plan.CEILINGS, "engine_events", dataclasses.replace(plan.CEILINGS["engine_events"],
                                                                           limit=5_000))
    assert own_event_rows({"appversions": {"events": SAMPLE}}) == 4000
    load_config(overrides={"appversions": {"events": SAMPLE}})
    big = tmp_path / "big.parquet"
    rows = 5_001
    pl.DataFrame({"key": pl.int_range(rows, eager=True),
                  "time": pl.repeat(date(2024, 1, 1), rows, eager=True),
                  "status": pl.repeat("approved", rows, eager=True)}).write_parquet(big)
    assert own_event_rows({"appversions": {"events": str(big)}}) == rows
    message = _refusal(big)
    assert ("the plan asks for 5,001 engine events per version (engine.appversions.events_per_year x 10 "
            "years, or the rows of appversions.events)") in message, message
