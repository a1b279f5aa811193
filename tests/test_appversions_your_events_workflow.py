"""Through Snakemake, no server: the shipped sample of your own events (appversions.events) modelled and
stored by the engine lab for the 14 published versions and a week-bucket variant (examples/variants/week.py);
a malformed events file refused in one line before any job."""
from __future__ import annotations

import csv
from datetime import datetime, timezone

import polars as pl
import pytest
import yaml
from workflow import NO_SERVER, run_workflow

from costlab.appversions.registry import PUBLISHED_NAMES
from costlab.appversions.user_events import OWN_EVENTS_REASON
from costlab.config import ROOT

SAMPLE = "examples/events/terminals.csv"


def _config(tmp_path, events: str, **appversions) -> str:
    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump({
        "studies": ["appversions"],
        "appversions": {
            "events": events,
            "versions": [*PUBLISHED_NAMES, "appV5R3_week"],
            "variants": {"appV5R3_week": {"base": "appV5R3", "bucket": "week",
                                          "layout_file": "examples/variants/week.py"}},
            **appversions,
        },
        "engine": {"appversions": {"topology": "standalone"}},
    }))
    return str(path)


@pytest.mark.workflow
def test_the_sample_and_a_week_bucket_through_the_model_and_the_engine_lab(tmp_path):
    targets = ["results/appversions/model/published_vs_model.csv", "results/appversions/engine/storage.csv"]
    result = run_workflow(tmp_path, NO_SERVER, targets, configfiles=(_config(tmp_path, SAMPLE),))
    assert result.returncode == 0, result.stderr[-4000:]
    with open(ROOT / SAMPLE, newline="") as f:
        rows = list(csv.DictReader(f))
    days = {(r["key"], datetime.fromisoformat(r["time"].replace("Z", "+00:00")).astimezone(timezone.utc)
             .date()) for r in rows}
    weeks = {(k, d.isocalendar()[:2]) for k, d in days}
    model = pl.read_csv(tmp_path / "results/appversions/model/stats.csv")
    documents = dict(model.select("version", "documents").iter_rows())
    assert (model["events"] == len(rows)).all()
    assert documents["appV4"] == len(days) and documents["appV5R3_week"] == len(weeks)
    storage = pl.read_csv(tmp_path / "results/appversions/engine/storage.csv")
    assert storage.height == 15 and (storage["events"] == len(rows)).all()
    grown = storage.join(model, on="version", suffix="_model")
    assert (grown["documents"] == grown["documents_model"]).all()
    assert (grown["data_bytes"] == grown["data_bytes_model"]).all()
    # no published number judges your events' rows: the engine lab's and the model's at this run
    verdicts = pl.read_csv(tmp_path / "results/appversions/engine/published_vs_engine.csv")
    published = verdicts.filter(pl.col("kind") != "user variant")
    assert published.height and set(published["reason"]) == {OWN_EVENTS_REASON}
    model_rows = pl.read_csv(tmp_path / "results/appversions/model/published_vs_model.csv")
    this_run = model_rows.filter(pl.col("finding").str.ends_with("(model)"), pl.col("kind") != "user variant")
    assert this_run.height == 28 and set(this_run["reason"]) == {OWN_EVENTS_REASON}


@pytest.mark.workflow
def test_a_malformed_events_file_stops_the_plan_in_one_line(tmp_path):
    bad = tmp_path / "mine.csv"
    bad.write_text("key,time,status\na,2024-01-01,approved\nb,yesterday,approved\n")
    result = run_workflow(tmp_path, NO_SERVER, ["-n", "results/appversions/model/stats.csv"],
                          configfiles=(_config(tmp_path, str(bad)),))
    assert result.returncode != 0
    lines = [line for line in (result.stdout + result.stderr).splitlines() if "appversions.events" in line]
    expected = (f"invalid config key appversions.events: {bad}: line 3: time 'yesterday' is not a date or "
                "time (1 such rows; allowed: an ISO 8601 date or time, e.g. 2024-03-01T10:15:00Z, "
                "2024-03-01 10:15:00 or 2024-03-01)")
    assert len(lines) == 1 and lines[0].endswith(expected), result.stderr[-3000:]
    assert not (tmp_path / "results/appversions/events.parquet").exists()


@pytest.mark.workflow
def test_the_sample_loaded_into_mongod_passes_the_correctness_check(tmp_path, server_uri):
    """On a server: the load step sends the sample's events, the correctness check compares Get Reports with
    the model at end dates drawn from the sample's span (its CSV holds them), and the loaded data's database
    is named by the events file too (the provenance's data params)."""
    import json

    from workflow import external

    config = _config(tmp_path, SAMPLE, load_versions=["appV6R3"], loadtest={"versions": ["appV6R3"]})
    targets = ["results/appversions/tables/correctness_appV6R3.csv"]
    result = run_workflow(tmp_path, external(server_uri), targets, configfiles=(config,),
                          hide_local_servers=False)
    assert result.returncode == 0, result.stderr[-4000:]
    checked = pl.read_csv(tmp_path / targets[0], try_parse_dates=True)
    assert checked.height == 24 * 5 and (checked["end_date"].dt.year() >= 2023).all()
    load = json.loads((tmp_path / "results/appversions/provenance/load_appV6R3.json").read_text())
    with open(ROOT / SAMPLE, newline="") as f:
        rows = list(csv.DictReader(f))
    utc = [datetime.fromisoformat(r["time"].replace("Z", "+00:00")).astimezone(timezone.utc) for r in rows]
    quarters = {(r["key"], t.year, (t.month - 1) // 3) for r, t in zip(rows, utc)}   # appV6R3: one a quarter
    extra = load["extra"]
    assert extra["events_applied"] == len(rows) and extra["documents_upserted"] == len(quarters)
    assert extra["namespace"]["data_params"]["events"] == SAMPLE
