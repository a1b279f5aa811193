"""appversions on the engine lab: the stored documents are the model's, compressors never silently
replaced."""

from __future__ import annotations

from datetime import date

import bson
import polars as pl
import pytest

from costlab.appversions.engine import (
    measure_version,
    storage_table,
    verdicts,
    version_documents,
    wanted_compressor,
)
from costlab.appversions.events import generate_events
from costlab.appversions.model import document_sizes
from costlab.appversions.versions import VERSIONS, get_version
from costlab.config import ROOT
from costlab.engine.wt import available_compressors


@pytest.fixture(scope="module")
def events() -> pl.DataFrame:
    return generate_events(400, 3)


@pytest.fixture(scope="module")
def events_file(tmp_path_factory):
    """The same events as an events.parquet (what the engine run reads, chunk by chunk)."""
    from costlab.appversions.events import iter_event_chunks, write_events

    path = tmp_path_factory.mktemp("events") / "events.parquet"
    write_events(iter_event_chunks(400, 3), path)
    return path


@pytest.mark.parametrize("name", list(VERSIONS))
def test_documents_have_the_models_bson_sizes(events, name):
    version = get_version(name)
    sizes = sorted(len(bson.encode(doc)) for doc, _ in version_documents(version, events))
    assert sizes == sorted(document_sizes(version, events).to_list())


def test_documents_hold_every_event(events):
    # every event counted once: appV4's day documents' counters sum to the events
    total = sum(sum(v for k, v in doc.items() if k != "_id")
                for doc, _ in version_documents(get_version("appV4"), events))
    assert total == events.height


def _v6r3_v6r4(events_file, tmp_path):
    rows = [
        measure_version(name, events_file, tmp_path / name, grown_by="final_documents")
        for name in ("appV6R3", "appV6R4")
    ]
    table = storage_table(
        rows, pl.read_csv(ROOT / "resources/published/appversions_collection_stats.csv"), "11.2.0"
    )
    return table, table.row(0, named=True), table.row(1, named=True)


def test_compressor_wanted_and_used_are_both_recorded_without_the_extensions(
    events_file, tmp_path, no_extensions
):
    table, r3, r4 = _v6r3_v6r4(events_file, tmp_path)
    assert r3["storage_bytes"] > 0 and r4["index_bytes"] > 0 and r3["data_bytes"] == r4["data_bytes"]
    assert (r3["block_compressor"], r4["block_compressor"]) == ("lz4", "zlib")
    assert (
        "zstd not available in WiredTiger" in r4["compressor_note"] and "libzstd-dev" in r4["compressor_note"]
    )
    found = verdicts(table).filter(pl.col("metric") == "storage size appV6R4 / appV6R3")
    assert found["verdict"][0] == "not comparable"
    assert found["reason"][0].startswith("snappy and zstd not available here")
    assert set(table["server_kind"]) == {"engine"}


@pytest.mark.skipif(
    not {"snappy", "zstd"} <= set(available_compressors()), reason="compressor extensions not built"
)
def test_with_the_extensions_appv6r4_is_zstd_against_snappy_with_a_verdict(events_file, tmp_path):
    assert (
        wanted_compressor(get_version("appV6R4")) == "zstd"
        and wanted_compressor(get_version("appV6R3")) == "snappy"
    )
    table, r3, r4 = _v6r3_v6r4(events_file, tmp_path)
    assert (r3["block_compressor"], r4["block_compressor"]) == ("snappy", "zstd")
    assert r3["compressor_note"] is None and r4["compressor_note"] is None
    found = verdicts(table).filter(pl.col("metric") == "storage size appV6R4 / appV6R3")
    assert found["verdict"][0] in ("reproduced", "not reproduced")
    assert set(table["server_kind"]) == {"engine"}


def test_storage_grown_by_upserts_is_not_storage_from_the_final_documents(events, events_file, tmp_path):
    grown = measure_version("appV5R3", events_file, tmp_path / "grown", checkpoint_every=1000)
    final = measure_version("appV5R3", events_file, tmp_path / "final", grown_by="final_documents")
    # the same documents in the end (the final ones built from the events, not by applying statements) ...
    assert (grown["documents"], grown["data_bytes"]) == (final["documents"], final["data_bytes"])
    assert grown["data_bytes"] == sum(
        len(bson.encode(d)) for d, _ in version_documents(get_version("appV5R3"), events)
    )
    assert grown["events"] == events.height
    assert grown["checkpoints"] == events.height // 1000 + 1 and final["checkpoints"] == 1
    # ... but rewritten records, split and partly filled pages: another file
    assert grown["storage_bytes"] != final["storage_bytes"]
    with pytest.raises(ValueError, match="allowed: upserts, final_documents"):
        measure_version("appV5R3", events_file, tmp_path / "x", grown_by="replay")


def test_the_engine_cache_keeps_the_articles_cache_to_events_ratio():
    from costlab.appversions.engine import engine_cache_mb

    assert engine_cache_mb(500_000_000, None) == 1536       # the article's 1.5 GB for its 500 M events
    assert engine_cache_mb(50_039_000, None) == 154         # a tenth of the events: 153.7 MB, rounded up
    assert engine_cache_mb(100_078, None) == 1              # 0.31 MB: WiredTiger's 1 MB minimum
    assert engine_cache_mb(100_078, 64) == 64               # engine.appversions.cache_mb wins


def _tiny_config(tmp_path, versions):
    import yaml

    from costlab.config import DEFAULT_CONFIG_PATH, validate

    config = validate(yaml.safe_load(DEFAULT_CONFIG_PATH.read_text()))
    config["appversions"]["versions"] = versions
    config["engine"]["appversions"]["events_per_year"] = 100
    config["engine"]["appversions"]["slice_days"] = 0   # every version scaled down (a day slice: below)
    config["engine"]["workdir"] = str(tmp_path / "scratch")
    return config


def _job_args(config: dict) -> tuple:
    """The run's facts and the version and merge jobs' params, as their rules give them on `config`."""
    from costlab.appversions.params import EngineParams, EngineVersionParams
    from costlab.config import run_facts

    return (
        run_facts(config, "appversions"),
        EngineVersionParams.from_config(config),
        EngineParams.from_config(config),
    )


def test_the_per_version_jobs_merge_into_the_one_process_table(tmp_path):
    """The workflow's jobs (one per version, any order, each its own process in the workflow) merged
    hold what one process measuring every version in turn holds, and every job's provenance."""
    from costlab.appversions.engine import (
        PUBLISHED_EVENTS,
        engine_cache_mb,
        merge_engine_job,
        run_version_job,
        write_engine_events,
    )
    from costlab.inputs import read_json

    names = ["appV1", "appV5R3", "appV6R3", "appV6R4"]
    config = _tiny_config(tmp_path, names)
    config["engine"]["appversions"]["topology"] = "standalone"   # as measure_version below: one run each
    run, version_params, merge_params = _job_args(config)
    paths = {name: tmp_path / "versions" / f"{name}.json" for name in names}
    for name in reversed(names):
        run_version_job(version_params, run, name, paths[name])
    out = tmp_path / "out"
    table = merge_engine_job(
        merge_params,
        run,
        [paths[n] for n in reversed(names)],
        out / "storage.csv",
        out / "verdicts.csv",
        out / "provenance.json",
        ROOT / "resources/published/appversions_collection_stats.csv",
    )

    events_path = tmp_path / "events.parquet"
    events = write_engine_events(
        100, int(config["appversions"]["seed"]), config["appversions"]["event_window"], events_path
    )
    assert events < PUBLISHED_EVENTS // 1536  # the article's ratio gives under 1 MB here: the floor
    one_process = [
        measure_version(name, events_path, tmp_path / "one" / name, cache_mb=engine_cache_mb(events, None))
        for name in names
    ]
    columns = ["version", "events", "documents", "data_bytes", "indexes", "block_compressor", "checkpoints"]
    assert table.select(columns).to_dicts() == [{c: row[c] for c in columns} for row in one_process]
    assert table["cache_mb"].to_list() == [1] * len(names)
    assert pl.read_csv(out / "storage.csv").height == len(names)
    assert pl.read_csv(out / "verdicts.csv")["finding"].to_list() == verdicts(table)["finding"].to_list()
    provenance = read_json(out / "provenance.json")
    jobs = provenance["extra"]["version_jobs"]
    assert [job["extra"]["version"] for job in jobs] == names
    assert all(job["extra"]["cpu_s"] > 0 for job in jobs)
    assert provenance["extra"]["cpu_s"] == pytest.approx(sum(job["extra"]["cpu_s"] for job in jobs), abs=0.02)
    assert provenance["started_at"] == min(job["started_at"] for job in jobs)
    assert provenance["server_kind"] == "engine"

    with pytest.raises(
        ValueError, match=r"appversions engine runs for \['appV1', 'appV6R3'\]; appversions.versions"
    ):
        merge_engine_job(
            merge_params,
            run,
            [paths["appV1"], paths["appV6R3"]],
            out / "s2.csv",
            out / "v2.csv",
            out / "p2.json",
            ROOT / "resources/published/appversions_collection_stats.csv",
        )
    assert not (out / "s2.csv").exists() and not (out / "v2.csv").exists()
    # the rule's wildcard admits the configured versions only; called directly, the registry's
    with pytest.raises(ValueError, match=r"unknown app version 'appV9'; allowed: appV1, appV2"):
        run_version_job(version_params, run, "appV9", tmp_path / "appV9.json")


def _bracket_table(no_windows: float, all_windows: float, headline: float,
                   published: float = 0.222) -> pl.DataFrame:
    """One appV1 storage row: data 1,000,000 B; storage / data of the headline and the two edges."""
    return pl.DataFrame([{
        "version": "appV1", "block_compressor": "snappy", "block_compressor_wanted": "snappy",
        "compressor_note": None, "published_storage_over_data": published, "storage_over_data": headline,
        "storage_bytes": int(headline * 1e6),
        "storage_over_data_no_time_windows": no_windows, "storage_over_data_all_time_windows": all_windows}])


@pytest.mark.parametrize("edges,verdict", [
    ((0.159, 0.262), "reproduced"),        # 0.222 inside [0.159, 0.262]
    ((0.159, 0.205), "reproduced"),        # above the bracket: 0.205 / 0.222 = 0.923, within [0.9, 1.11]
    ((0.159, 0.190), "not reproduced"),    # 0.190 / 0.222 = 0.856: outside
    ((0.250, 0.300), "not reproduced"),    # below: 0.250 / 0.222 = 1.126, outside [0.9, 1.11]
])
def test_appv1_to_appv4_are_judged_by_the_time_window_bracket(edges, verdict):
    table = _bracket_table(*edges, headline=edges[1])
    found = verdicts(table).filter(pl.col("finding").str.starts_with("appV1: storage size / data size"))
    row = found.row(0, named=True)
    assert row["verdict"] == verdict
    assert row["tolerance"].startswith(f"published in [{edges[0]:.3g}, {edges[1]:.3g}]")
    assert "a bracket" in row["note"] and "does not report" in row["note"]
    assert row["reason"].startswith("bracket: point rule")   # no band for an interval to be judged by


def test_without_the_bracket_a_version_keeps_the_compression_band():
    table = _bracket_table(None, None, headline=0.159)
    row = verdicts(table).filter(pl.col("finding").str.starts_with("appV1: storage size")).row(0, named=True)
    assert row["verdict"] == "not reproduced" and row["tolerance"] == "this run / published in [0.75, 1.33]"


def _run_version(config, name, path):
    from costlab.appversions.engine import run_version_job

    run, params, _ = _job_args(config)
    return run_version_job(params, run, name, path)


def test_a_scaled_run_keeps_the_windows_share_and_both_bracket_edges_are_measured(tmp_path):
    """Scaled down (1,001 events at 100 a year), the replica set's 300-s window at 1,000 statements a
    second keeps its share of the article's 500 M statements: 300 x 1,000 x 1,001 / 500,000,000 = 0.6,
    one write. So the run keeps some windows and both edges are runs of their own; the standalone has
    no bracket."""
    config = _tiny_config(tmp_path, ["appV1"])
    assert config["engine"]["appversions"]["topology"] == "replset"   # the default: the article's
    row = _run_version(config, "appV1", tmp_path / "appV1.json")["row"]
    assert row["topology"] == "replset" and row["load_rate"] == 1000 and row["events"] == 1001
    assert row["history_window_writes"] == 1 and row["time_windows"] == "partial"
    # (at this scale the file is a few 4 KB blocks, so the windows' bytes may round into the same count;
    # the growth per cell is measured in tests/test_engine.py)
    assert row["storage_bytes_no_time_windows"] <= row["storage_bytes_all_time_windows"]
    config["engine"]["appversions"]["topology"] = "standalone"
    standalone = _run_version(config, "appV1", tmp_path / "appV1-standalone.json")["row"]
    assert standalone["topology"] == "standalone" and standalone["storage_bytes_no_time_windows"] is None
    assert standalone["history_window_writes"] is None
    config["engine"]["appversions"]["topology"] = "sharded"
    with pytest.raises(ValueError, match="topology 'sharded'; allowed: replset, standalone"):
        _run_version(config, "appV1", tmp_path / "x.json")


def test_the_scaled_window_is_the_articles_share_of_its_statements():
    from costlab.appversions.engine import scaled_history_window

    assert scaled_history_window(300, 1000, 100_078) == 60    # 300,000 x 100,078 / 5e8 = 60.05
    assert scaled_history_window(300, 1000, 500_390) == 300   # 300.2 at full.yaml's 50,000 a year
    assert scaled_history_window(300, 1000, 500_000_000) == 300_000   # the article's own: 300 s at 1,000/s


def test_a_day_slice_is_the_articles_first_day_at_its_rate(tmp_path):
    """50,000,000 events a year: 50,000,000 / 365 = 136,986.3 -> 136,986 events on 2010-01-01, their users
    drawn from ceil(50,000,000 / 60) = 833,334 (60 % uniform: the largest index drawn is near the top)."""
    from costlab.appversions.engine import write_slice_events

    path = tmp_path / "slice.parquet"
    assert write_slice_events(1, 42, path) == 136_986
    codes = pl.read_parquet(path)
    assert codes["date"].dt.date().unique().to_list() == [date(2010, 1, 1)]
    assert 800_000 < codes["user"].max() <= 833_334


def test_per_day_versions_grow_a_day_slice_and_the_bucketed_ones_the_scaled_run(tmp_path, monkeypatch):
    """slice_days: 1 (the default): appV1 grows one day of events at the slice's rate (365,000 a year
    here, for speed: 1,000 events, users from ceil(365,000 / 60) = 6,084) by 20 workers in a 1,536 MB
    cache with the final checkpoint only; 1,000 statements at 1,000 a second is one second, inside the
    unscaled 300-s window, so the run keeps every window and is the bracket's upper edge. appV6R3 keeps
    the scaled run (1,001 events, 4 workers, 1 MB, the window's share: one write)."""
    import costlab.appversions.engine as engine

    monkeypatch.setattr(engine, "SLICE_EVENTS_PER_YEAR", 365_000)
    config = _tiny_config(tmp_path, ["appV1", "appV6R3"])
    config["engine"]["appversions"]["slice_days"] = 1
    day = _run_version(config, "appV1", tmp_path / "appV1.json")
    row = day["row"]
    assert (row["events"], row["slice_days"], row["load_workers"], row["cache_mb"]) == (1000, 1, 20, 1536)
    assert row["checkpoints"] == 1 and row["history_window_writes"] is None and row["time_windows"] == "all"
    assert row["storage_bytes_all_time_windows"] == row["storage_bytes"]
    assert day["provenance"]["extra"]["events_per_year"] == 365_000
    assert engine.slice_words(row) == ("1 day of the article's own events (1,000 statements over its 6,084 "
                                       "users, 20 load workers, a 1,536 MB cache)")
    bucketed = _run_version(config, "appV6R3", tmp_path / "appV6R3.json")["row"]
    assert (bucketed["events"], bucketed["slice_days"], bucketed["load_workers"], bucketed["cache_mb"]) == (
        1001, 0, 4, 1)
    assert bucketed["history_window_writes"] == 1 and bucketed["storage_bytes_no_time_windows"] is None
