"""The appversions study end to end on config/smoke.yaml against the test server (the stand-in in CI)."""
import json

import polars as pl
import pytest
import yaml
from known import ARTICLE_VERSIONS

from costlab.appversions.loadtest_plan import RAW_COLUMNS
from costlab.appversions.names import figure_names
from costlab.appversions.regime import FITS
from costlab.appversions.tables import SCALE_REASON
from costlab.config import ROOT
from costlab.finding import COLUMNS as PVR_COLUMNS

SMOKE = yaml.safe_load((ROOT / "config" / "smoke.yaml").read_text())["appversions"]
LOADED = SMOKE["load_versions"]
TESTED = SMOKE["loadtest"]["versions"]
TABLES = ["collection_stats", "loadtest_bins", "loadtest_steps", "published_vs_reproduced"]


@pytest.fixture(scope="module")
def smoke_run(smoke_all, server_uri):
    """The session's one smoke run; every table and figure of the study is among what it built."""
    out = smoke_all.results("appversions")
    targets = [out / "tables" / f"{t}.csv" for t in TABLES]
    targets += [
        out / "figures" / f"{name}.{ext}"
        for name in figure_names(TESTED)
        for ext in ("png", "svg", "vl.json")
    ]
    assert [p for p in targets if not p.exists()] == []
    return out, server_uri


def test_smoke_config_is_small_and_consistent():
    assert set(TESTED) <= set(LOADED)
    assert SMOKE["loadtest"]["phase_seconds"] <= 5 and SMOKE["loadtest"]["upsert_workers"] <= 4


def test_collection_stats_rows_and_labels(smoke_run):
    results, _ = smoke_run
    stats = pl.read_csv(results / "tables" / "collection_stats.csv")
    assert stats["version"].to_list() == LOADED
    for column in ("documents", "data_bytes", "avg_doc_bytes", "storage_bytes", "indexes", "index_bytes",
                   "data_bytes_per_event", "index_bytes_per_event", "total_bytes_per_event",
                   "published_documents", "published_avg_doc_bytes", "server_kind"):
        assert column in stats.columns, column
    events = pl.read_parquet(results / "events.parquet").height
    assert (stats["events"] == events).all()
    # appV4 holds one document per (key, day); the bucketed versions hold far fewer documents.
    docs = dict(zip(stats["version"], stats["documents"]))
    assert docs["appV6R3"] < docs["appV4"] / 5
    assert docs["appV6R3"] == docs["appV6R4"]                        # same quarter buckets, other compressor
    model = pl.read_csv(results / "model" / "stats.csv")
    model_docs = dict(zip(model["version"], model["documents"]))
    assert all(docs[v] == model_docs[v] for v in LOADED)             # the server holds what the model says
    for version in LOADED:
        marker = json.loads((results / "data" / version / "dataset.json").read_text())
        assert marker["documents"] == docs[version] and marker["database"].startswith("costlab_appversions_")


def test_loadtest_raw_and_summaries(smoke_run, real_mongod):
    results, _ = smoke_run
    for version in TESTED:
        raw = pl.read_parquet(results / "raw" / f"loadtest_{version}.parquet")
        assert raw.columns == RAW_COLUMNS
        assert set(raw["kind"]) == {"report", "upsert"}
        assert set(raw["status"]) <= {"ok", "error", "skipped"}
        ok = raw.filter(pl.col("status") == "ok")
        assert ok.height > 0
        # open loop: the latency from the intended start is never below the call's own duration
        assert (ok["from_intended_ms"] >= ok["call_ms"] - 1e-6).all()
        assert (raw.filter(pl.col("kind") == "upsert")["phase"] >= 1).all()
        assert set(raw.filter(pl.col("kind") == "report")["phase"]) >= {0, 1}   # warm-up, then phases
    steps = pl.read_csv(results / "tables" / "loadtest_steps.csv")
    # 4 phases x 10 steps of upserts, plus the same for reports and one warm-up step, per version
    assert steps.group_by("version", "kind").len().sort("version", "kind")["len"].to_list() == [41, 40] * len(
        TESTED
    )
    assert set(steps["behind"]) <= {"none", "server", "client"}
    assert ((steps["behind"] == "none") == steps["met"]).all()
    bins = pl.read_csv(results / "tables" / "loadtest_bins.csv")
    assert {"target_rate", "achieved_rate", "call_ms_p50", "call_ms_p99", "from_intended_ms_p50",
            "from_intended_ms_p99", "met", "ops_skipped", "server_kind"} <= set(bins.columns)
    assert {"call_ms_max", "from_intended_ms_max", "bins", "bins_met", "ops_skipped"} <= set(steps.columns)
    assert (steps["met"] == (steps["bins"] == steps["bins_met"])).all()   # a step is met when every bin is
    # the regime (working set against the cache) is recorded with every load-test result
    assert set(bins["regime"]) == set(steps["regime"]) and steps["regime"].null_count() == 0
    for version in TESTED:
        record = json.loads((results / "provenance" / f"loadtest_{version}.json").read_text())
        assert record["extra"]["regime"]["working_set_bytes"] > 0
        if not real_mongod:
            assert record["extra"]["regime"]["regime"] == "unknown (cache size not reported)"
    if not real_mongod:
        assert set(bins["server_kind"]) == {"stand-in"} and set(steps["server_kind"]) == {"stand-in"}


def test_published_vs_reproduced_contract(smoke_run, real_mongod):
    results, _ = smoke_run
    pvr = pl.read_csv(results / "tables" / "published_vs_reproduced.csv")
    assert pvr.columns == PVR_COLUMNS
    assert pvr.height > 0
    # End times with a time of day: every loaded version counts the days its rule says (results, so
    # the stand-in counts); the smoke versions all compare day ids, so the cross-version finding
    # cannot part them and says so.
    midday = pvr.filter(pl.col("finding").str.contains("end times with a time of day"))
    assert midday.filter(pl.col("finding").str.starts_with("appV"))["verdict"].to_list() == [
        "reproduced"
    ] * len(LOADED)
    cross = midday.filter(pl.col("finding").str.starts_with("the versions disagree"))
    assert cross.select("verdict", "reason").rows() == [
        ("not comparable", f"only {', '.join(sorted(LOADED))} loaded, all of one day rule")]
    not_judged = pl.col("tolerance").str.starts_with("none: not judged")
    judged = pvr.join(midday, on="finding", how="anti").filter(~not_judged)
    assert set(judged["verdict"]) <= {"reproduced", "not reproduced", "not comparable"}
    # the stand-in's, the scale's, and on a real mongod the load test's regime (the smoke data fits its cache)
    reasons = set(judged.filter(pl.col("verdict") == "not comparable")["reason"])
    assert reasons <= {"stand-in", SCALE_REASON, FITS}
    # a published number no rule judges here says why, in its own row
    unjudged = pvr.filter(not_judged)
    assert unjudged.height > 0 and set(unjudged["verdict"]) == {"not comparable"}
    # At 6,000 events the per-event figures differ from the published 500 million because of the
    # scale: the server is checked against the model at this scale, the model at the reference
    # scale against the published figures, and nothing the scale explains is red.
    at_reference = pl.col("finding").str.contains("reference scale")
    per_event = pvr.filter((pl.col("unit").is_in(["documents/event", "B"])
                            | (pl.col("server_kind") == "model (no server)")) & ~at_reference)
    assert "not reproduced" not in set(per_event["verdict"])
    assert SCALE_REASON in set(per_event["reason"])
    # Where the scale no longer matters the method reproduces every version's documents per event
    # and average size (appV5R4 too, now that its totals hold only the statuses that occurred).
    reference = pvr.filter(at_reference)
    assert reference.height == 2 * len(ARTICLE_VERSIONS)   # each version with published figures, two each
    assert set(reference["verdict"]) == {"reproduced"}
    server_checks = pvr.filter(pl.col("metric") == "documents_per_event vs model")
    assert server_checks.height == len(LOADED) and set(server_checks["verdict"]) == {"reproduced"}
    if not real_mongod:
        measured = pvr.filter(pl.col("server_kind") != "model (no server)")
        sizes = measured.filter(pl.col("unit").is_in(["B", "B/event", "%"]))
        assert sizes.height > 0 and set(sizes.select("verdict", "reason").rows()) == {
            ("not comparable", "stand-in")
        }


def test_figures_exist_and_are_labelled_stand_in(smoke_run, real_mongod):
    results, _ = smoke_run
    names = figure_names(TESTED)
    # smoke tests exactly the pair appV6R3/appV6R4: its comparison figure, no duplicate "all" figure
    assert "loadtest_appV6R3_vs_appV6R4" in names and "loadtest_all" not in names
    assert not (results / "figures" / "loadtest_all.png").exists()
    for name in names:
        for ext in ("png", "svg", "vl.json"):
            assert (results / "figures" / f"{name}.{ext}").stat().st_size > 0
        spec = json.loads((results / "figures" / f"{name}.vl.json").read_text())
        subtitle = spec["title"].get("subtitle") or []
        assert ("stand-in server — not a MongoDB measurement" in subtitle) == (not real_mongod)
    # The server's metrics during each load test, on the figure's time axis; the stand-in has no
    # wiredTiger section, so its cache panel says "not reported" (a real mongod draws it).
    figure = (results / "figures" / "loadtest_appV6R3_vs_appV6R4.vl.json").read_text()
    assert "operations (opcounters, per s)" in figure
    assert ("WiredTiger cache (MB/s): not reported by this server" in figure) == (not real_mongod)
    for version in TESTED:
        metrics = pl.read_parquet(results / "raw" / f"server_metrics_{version}.parquet")
        assert metrics.filter(pl.col("metric") == "opcounters.update")["value"].drop_nulls().len() >= 5
        test = json.loads((results / "provenance" / f"loadtest_{version}.json").read_text())["extra"]
        assert metrics["t_s"].min() < 0.5 and metrics["t_s"].max() >= test["test_seconds"] - 1.5
        storage = test["storage"]
        assert storage["end"]["count"] >= storage["start"]["count"] > 0
    for version in LOADED:
        record = json.loads((results / "provenance" / f"load_{version}.json").read_text())
        assert record["extra"]["version"] == version
