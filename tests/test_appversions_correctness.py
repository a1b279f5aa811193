"""Correctness before timing, against the test server (the stand-in unless COSTLAB_TEST_URI is set).

Every version is loaded through its own Bulk Upsert (unordered bulk_write, batches of 250); its Get
Reports must equal the model's reports for dense and sparse keys and end dates at bucket edges, and
the documents it holds must have the model's count and BSON sizes.
"""
from __future__ import annotations

from datetime import date, datetime, timedelta, timezone

import polars as pl
import pytest
from bson.codec_options import CodecOptions
from bson.raw_bson import RawBSONDocument

from costlab.appversions.correctness import (
    FIXED_END_DATES,
    ReportMismatch,
    check_reports,
    edge_end_dates,
    load_events,
    midday_reports,
    sample_midday_requests,
    sample_report_requests,
)
from costlab.appversions.events import STATUSES, generate_events, users_for
from costlab.appversions.model import document_sizes, expected_reports
from costlab.appversions.versions import VERSIONS, get_version
from tests.conftest import each_version

# Ten sparse years (120 events/year: fewer than one event per day, so no two share a day) plus a
# dense last quarter of 2019 (3,650 events/year: ~10 a day, user 1 gets ~3 a day), so same-day
# increments of one document/item, several statuses per day and dense and sparse keys all occur.
BACKGROUND_PER_YEAR = 120
BURST_PER_YEAR = 3_650
SEED = 11
# The stand-in does not use the _id index for appV1's embedded-document _id equality (a collection
# scan per upsert, see docs/appversions.md), so appV1 gets every 4th event to stay fast.
APPV1_STRIDE = 3


@pytest.fixture(scope="module")
def events() -> pl.DataFrame:
    background = generate_events(BACKGROUND_PER_YEAR, SEED)
    burst = generate_events(BURST_PER_YEAR, SEED, start=date(2019, 10, 1), end=date(2020, 1, 1))
    combined = pl.concat([background, burst]).sort("date", maintain_order=True)
    assert combined.group_by("key", "date").len()["len"].max() >= 3  # the merge paths are exercised
    return combined


def _events_for(name: str, events: pl.DataFrame) -> pl.DataFrame:
    return events.gather_every(APPV1_STRIDE) if name == "appV1" else events


@pytest.mark.parametrize("name", each_version(VERSIONS))
def test_get_reports_equal_the_model(name, events, test_db):
    version = get_version(name)
    loaded = _events_for(name, events)
    collection = version.prepare_collection(test_db)
    load_events(collection, version, loaded, batch_size=250)

    samples = sample_report_requests(loaded, samples=10, seed=SEED)
    checked = check_reports(test_db, version, loaded, samples)
    # The rows returned are the compared replies: the model's reports, sample by sample, in order.
    assert checked.columns == ["version", "key", "end_date", "window_years", *STATUSES]
    assert checked.to_dicts() == [{"version": name, "key": key, "end_date": end.date(), **window}
                                  for key, end in samples for window in expected_reports(loaded, key, end)]

    # At end times with a time of day the version counts the days its rule says (as the authors' one):
    # appV4 / appV6 [start day, end day), the others (start day, end day]; both samples part the rules.
    midday = sample_midday_requests(loaded, 2, seed=SEED)
    at_times_of_day = midday_reports(test_db, version, loaded, midday)
    assert at_times_of_day.height == 2 * 5 and at_times_of_day["as_day_rule"].all()
    assert set(at_times_of_day["day_rule"]) == {version.day_rule}

    # What the server holds is what the model says, byte for byte.
    raw = collection.with_options(codec_options=CodecOptions(document_class=RawBSONDocument))
    held = sorted(len(doc.raw) for doc in raw.find())
    assert held == sorted(document_sizes(version, loaded).to_list())


def test_mismatch_names_version_key_date_window_and_values(events, test_db):
    version = get_version("appV4")
    collection = version.prepare_collection(test_db)
    dense_key = events.group_by("key").len().sort("len", descending=True)["key"][0]
    one_key = events.filter(pl.col("key") == dense_key)
    load_events(collection, version, one_key)
    # One extra approved on 2019-06-03: inside the 1-year window ending 2020-01-01.
    collection.update_one({"_id": bytes.fromhex(dense_key + "20190603")}, {"$inc": {"a": 1}}, upsert=True)
    with pytest.raises(ReportMismatch) as error:
        check_reports(test_db, "appV4", one_key, [(dense_key, date(2020, 1, 1))])
    expected = one_key.filter((pl.col("date") >= datetime(2019, 1, 1, tzinfo=timezone.utc))
                              & (pl.col("status") == "approved")).height
    message = str(error.value)
    for part in ("appV4", dense_key, "2020-01-01", "window 1 years", "[2019-01-01, 2020-01-01)",
                 f"approved = {expected + 1} from the server", f"{expected} in the model"):
        assert part in message


def test_sampler_mixes_dense_sparse_and_absent_keys_at_edges(events):
    samples = sample_report_requests(events, samples=12, seed=1)
    assert samples == sample_report_requests(events, samples=12, seed=1)
    assert len(samples) == 12
    counts = dict(events.group_by("key").len().iter_rows())
    ranked = sorted(counts, key=lambda key: (-counts[key], key))  # ties by key, as documented
    keys = [key for key, _ in samples]
    dense = ranked[:len(ranked) // 20]  # 61 users: the top 5 % are 3 keys
    assert all(key in dense for key in keys[0:11:2])
    assert all(ranked.index(key) >= len(ranked) // 2 for key in keys[1:11:2])  # the least active half
    assert min(counts[key] for key in keys[0:11:2]) > max(counts[key] for key in keys[1:11:2])
    assert keys[-1] not in counts and int(keys[-1], 16) == users_for(BURST_PER_YEAR) + 1
    ends = [end.date() for _, end in samples]
    assert ends[:4] == [date(2020, 1, 1), date(2016, 2, 29), date(2013, 4, 1), date(2011, 1, 1)]
    assert all(end.day in (1, 2, 28, 29, 30, 31) and end <= date(2020, 1, 1) for end in ends)
    with pytest.raises(ValueError, match="must be >= 4"):
        sample_report_requests(events, samples=2, seed=1)


def test_smoke_config_samples_every_kind_of_edge(events):
    """config/smoke.yaml checks fewer pairs than the default: still each kind of edge and key."""
    from costlab.config import load_config
    settings = load_config("config/smoke.yaml")["appversions"]
    assert settings["correctness_samples"] < 24   # what this test is about: a reduced smoke sample
    samples = sample_report_requests(events, settings["correctness_samples"], settings["correctness_seed"])
    ends = [end.date() for _, end in samples]
    assert set(FIXED_END_DATES) <= set(ends)
    assert any(end.day == 1 and end.month not in (1, 4, 7, 10) for end in ends)  # a month, not quarter, start
    assert any((end + timedelta(days=1)).day == 1 for end in ends)  # the day before a month start
    assert any(end.day == 2 for end in ends)  # the day after a month start
    counts = dict(events.group_by("key").len().iter_rows())
    keys = [key for key, _ in samples]
    assert keys[-1] not in counts and max(counts[k] for k in keys[:-1]) > 10 * min(
        counts[k] for k in keys[:-1]
    )


def test_edge_end_dates():
    edges = edge_end_dates(date(2019, 11, 1), date(2020, 1, 1))
    assert edges == [date(2019, 11, 1), date(2019, 11, 2), date(2019, 11, 30), date(2019, 12, 1),
                     date(2019, 12, 2), date(2019, 12, 31), date(2020, 1, 1)]


def _job_config(external_server_config) -> dict:
    from costlab.config import load_config
    return load_config(
        "config/config.yaml",
        overrides={
            "server": external_server_config,
            "appversions": {"correctness_samples": 6, "midday_samples": 2, "correctness_seed": 3},
        },
    )


def _job_args(external_server_config) -> tuple:
    """The correctness job's params and run facts, as its rule would give them on _job_config."""
    from costlab.appversions.params import CorrectnessParams
    from costlab.config import run_facts
    config = _job_config(external_server_config)
    return CorrectnessParams.from_config(config), run_facts(config, "appversions")


def _run_db(mongo_client, external_server_config):
    """This run's appversions database on the test deployment (costlab.namespaces)."""
    from costlab.namespaces import database_name
    return mongo_client[database_name(_job_config(external_server_config), "appversions")]


def _loaded_data_dir(tmp_path, mongo_client, events, name, external_server_config):
    """A 'data directory' of the external test deployment: the collection loaded, both markers written."""
    from costlab.appversions.load import write_marker
    from costlab.server.markers import write_marker as write_server_marker
    version = get_version(name)
    db = _run_db(mongo_client, external_server_config)
    load_events(version.prepare_collection(db), version, events)
    write_server_marker(db, name, "test-load", "test", {})
    data_dir = tmp_path / "data" / name
    data_dir.mkdir(parents=True)
    write_marker(
        data_dir, {"database": db.name, "load_id": "test-load", "version": name, "events": events.height}
    )
    events_path = tmp_path / "events.parquet"
    events.write_parquet(events_path)
    return data_dir, events_path


def test_correctness_job_writes_checked_reports(tmp_path, mongo_client, external_server_config, events):
    from costlab.appversions.correctness import correctness_job
    small = events.filter(pl.col("date") >= datetime(2019, 10, 1, tzinfo=timezone.utc))
    data_dir, events_path = _loaded_data_dir(tmp_path, mongo_client, small, "appV6R1", external_server_config)
    out, provenance, midday = tmp_path / "checked.csv", tmp_path / "provenance.json", tmp_path / "midday.csv"
    correctness_job(*_job_args(external_server_config), "appV6R1", str(events_path), str(data_dir),
                    str(out), str(provenance), str(midday))
    at_times_of_day = pl.read_csv(midday)
    assert at_times_of_day.height == 2 * 5 and at_times_of_day["as_day_rule"].all()
    assert set(at_times_of_day["day_rule"]) == {"day_ids"} and at_times_of_day["server_kind"].n_unique() == 1
    checked = pl.read_csv(out)
    assert checked.height == 6 * 5 and set(checked["version"]) == {"appV6R1"}
    assert checked["server_kind"].n_unique() == 1 and provenance.exists()
    first = checked.row(0, named=True)
    expected = expected_reports(small, first["key"], date.fromisoformat(first["end_date"]))[0]
    assert first["window_years"] == expected["window_years"] == 1
    assert {s: first[s] for s in ("approved", "noFunds", "pending", "rejected")} == {
        s: expected[s] for s in ("approved", "noFunds", "pending", "rejected")}


def test_correctness_job_fails_without_output_on_a_mismatch(
    tmp_path, mongo_client, external_server_config, events
):
    from costlab.appversions.correctness import correctness_job
    small = events.filter(pl.col("date") >= datetime(2019, 10, 1, tzinfo=timezone.utc))
    data_dir, events_path = _loaded_data_dir(tmp_path, mongo_client, small, "appV6R1", external_server_config)
    # Damage every 2019Q4 bucket: one more approved on 2 December.
    _run_db(mongo_client, external_server_config)["appV6R1"].update_many({}, {"$inc": {"items.1202.a": 1}})
    out, provenance = tmp_path / "checked.csv", tmp_path / "provenance.json"
    with pytest.raises(ReportMismatch, match="appV6R1: Get Reports differs from the model"):
        correctness_job(*_job_args(external_server_config), "appV6R1", str(events_path), str(data_dir),
                        str(out), str(provenance))
    assert not out.exists() and not provenance.exists()


def test_correctness_job_sends_get_reports_once_per_sample(
    tmp_path, mongo_client, external_server_config, events, monkeypatch
):
    """Each sample's Get Reports goes to the server once: compared with the model and written from that
    reply."""
    from pymongo import monitoring

    from costlab.appversions.correctness import correctness_job
    from costlab.server import connection

    class Aggregates(monitoring.CommandListener):
        def __init__(self):
            self.pipelines = []

        def started(self, event):
            if event.command_name == "aggregate" and event.command["aggregate"] == "appV6R1":
                self.pipelines.append(event.command["pipeline"])

        def succeeded(self, event):
            pass

        def failed(self, event):
            pass

    sent = Aggregates()
    job_client_options = connection.client_options
    # The job's own client (the external backend builds it from client_options) reports its commands here.
    monkeypatch.setattr(connection, "client_options", lambda server_config: {
        **job_client_options(server_config), "event_listeners": [sent]})
    small = events.filter(pl.col("date") >= datetime(2019, 10, 1, tzinfo=timezone.utc))
    data_dir, events_path = _loaded_data_dir(tmp_path, mongo_client, small, "appV6R1", external_server_config)
    out = tmp_path / "checked.csv"
    correctness_job(*_job_args(external_server_config), "appV6R1", str(events_path), str(data_dir),
                    str(out), str(tmp_path / "provenance.json"))
    checked = pl.read_csv(out, try_parse_dates=True)
    samples = checked.select("key", "end_date").unique(maintain_order=True).rows()
    assert len(samples) == 6   # correctness_samples of _job_config
    version = get_version("appV6R1")
    per_report = [p for key, end in samples for p in version.get_reports_pipelines(key, end)]
    assert len(per_report) == 6 * 5   # appV6R1: one pipeline per window
    assert len(sent.pipelines) == len(per_report)   # the old job sent every Get Reports twice
    assert sent.pipelines == per_report   # the written samples' Get Reports, in order, nothing else
