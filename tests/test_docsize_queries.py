"""docsize against the test server: load, the three query shapes, the identical-results check,
missing counters as null (never 0), the runs' rows, and the tables built from them."""
from __future__ import annotations

import json

import bson
import polars as pl
import pytest

from costlab.docsize import run as run_module
from costlab.docsize.datasets import parse_dataset
from costlab.docsize.generate import target_doc_bytes
from costlab.docsize.load import MARKER, load_dataset, read_marker
from costlab.docsize.run import (
    ResultsMismatch,
    check_identical,
    explain_shape,
    measure_dataset,
    timed_query,
    window_filter,
)
from costlab.docsize.tables import published_vs_reproduced, summary_table
from costlab.finding import COLUMNS

DOCS, WINDOW = 1200, 100
STUDY = {
    "docs_per_collection": DOCS,
    "sizes_kb": [1, 4],
    "seed": 42,
    "customers": 12,
    "window_minutes": WINDOW,
    "runs": {name: {"warmups": 1, "queries": 3} for name in ("same_window", "random_windows", "small_cache")},
    "variants": {"fields_after_history": False, "spread_customer": True, "split_history": False},
}
PUBLISHED_QUERIES = "resources/published/docsize_query_tables.csv"


@pytest.fixture
def loaded(test_db, tmp_path, mongo_client):
    dataset = parse_dataset("orders_4k")
    record = load_dataset(mongo_client, dataset, STUDY, tmp_path / "data", database=test_db.name)
    return dataset, test_db[dataset.collection], record, tmp_path / "data"


def test_load_writes_collection_index_and_marker_last(loaded):
    dataset, collection, record, data_dir = loaded
    assert collection.count_documents({}) == DOCS
    indexes = collection.index_information()
    assert indexes["createdAt_1_total_1"]["key"] == [("createdAt", 1), ("total", 1)]
    assert "customerId_1_createdAt_1_total_1" in indexes  # spread variant on
    marker = json.loads((data_dir / MARKER).read_text())
    assert marker["documents"] == DOCS and marker["collections"][0]["documents"] == DOCS
    assert read_marker(data_dir, dataset, STUDY)["dataset"] == "orders_4k"
    with pytest.raises(RuntimeError, match="docs_per_collection|documents=1200"):
        read_marker(data_dir, dataset, STUDY | {"docs_per_collection": 5000})
    (data_dir / MARKER).unlink()
    with pytest.raises(RuntimeError, match="incomplete"):
        read_marker(data_dir, dataset, STUDY)


def test_three_shapes_return_the_same_window(loaded):
    _, collection, _, _ = loaded
    filter_ = window_filter(500, WINDOW)
    assert check_identical(collection, filter_, expected=WINDOW) == WINDOW
    whole = list(collection.find(filter_).sort("createdAt", 1))
    projection = list(collection.find(filter_, run_module.PROJECTIONS["projection"]).sort("createdAt", 1))
    covered = list(collection.find(filter_, run_module.PROJECTIONS["covered"]).sort("createdAt", 1))
    assert len(whole) == WINDOW and "history" in whole[0]
    assert set(projection[0]) == {"_id", "createdAt", "total"}
    assert set(covered[0]) == {"createdAt", "total"}
    assert [d["createdAt"] for d in whole] == [d["createdAt"] for d in covered]


def test_check_fails_loudly_on_a_mismatch(loaded, monkeypatch):
    _, collection, _, _ = loaded
    with pytest.raises(ResultsMismatch, match="expected 99"):
        check_identical(collection, window_filter(0, WINDOW), expected=99)
    # A covered shape that forgot `total` must not pass as "the same results".
    monkeypatch.setitem(run_module.PROJECTIONS, "covered", {"_id": 0, "createdAt": 1})
    with pytest.raises(ResultsMismatch, match="covered"):
        check_identical(collection, window_filter(0, WINDOW), expected=WINDOW)


def test_plans(loaded, real_mongod):
    _, collection, _, _ = loaded
    filter_ = window_filter(10, WINDOW)
    projection = explain_shape(collection, "projection", filter_)
    assert projection["stages"][:2] == ["IXSCAN", "FETCH"]
    assert projection["docs_examined"] == WINDOW
    covered = explain_shape(collection, "covered", filter_)
    assert covered["stages"][0] == "IXSCAN"
    if real_mongod:  # the stand-in still shows FETCH under a covered query
        assert covered["stages"] == ["IXSCAN", "PROJECTION_COVERED"]
        assert covered["docs_examined"] == 0 and covered["covered"]


def test_missing_counters_are_null_never_zero(loaded, mongo_client, real_mongod):
    _, collection, _, _ = loaded
    row = timed_query(mongo_client, collection, "projection", window_filter(0, WINDOW))
    assert row["n_returned"] == WINDOW and row["client_ms"] > 0
    if real_mongod:
        assert row["bytes_read_into_cache"] is not None and row["server_ms"] is not None
    else:  # the stand-in has no wiredTiger section and no opLatencies
        assert row["bytes_read_into_cache"] is None
        assert row["server_ms"] is None and row["server_read_ops"] is None


def test_measure_dataset_rows_and_tables(loaded, mongo_client, real_mongod):
    dataset, _, _, _ = loaded
    raw, collections = measure_dataset(mongo_client, dataset, "random_windows", STUDY,
                                       database=loaded[1].database.name)
    # 3 queries x 3 shapes for the window family and again for one customer's orders (spread).
    assert raw.height == 18
    assert raw.group_by("family", "shape").len()["len"].to_list() == [3] * 6
    assert raw.filter(pl.col("family") == "window")["n_returned"].to_list() == [WINDOW] * 9
    assert raw.filter(pl.col("family") == "customer")["n_returned"].to_list() == [DOCS // 12] * 9
    assert len(set(raw.filter(pl.col("family") == "window")["query_param"].to_list())) > 1  # random windows
    whole = raw.filter(pl.col("shape") == "whole")["bytes_returned"].min()
    projection = raw.filter(pl.col("shape") == "projection")["bytes_returned"].max()
    assert whole > 10 * projection
    assert collections["documents"].to_list() == [DOCS]
    assert collections["index_bytes"][0] > 0
    if not real_mongod:
        assert raw["bytes_read_into_cache"].null_count() == raw.height
        assert collections["cache_max_bytes"].null_count() == 1
        assert set(raw["server_kind"]) == {"stand-in"}
    summary = summary_table(raw)
    if not real_mongod:  # a median of nothing stays missing
        assert summary["bytes_read_into_cache_p50"].null_count() == summary.height
        assert summary["server_ms_p50"].null_count() == summary.height
    assert summary.filter(pl.col("family") == "window")["n"].to_list() == [3, 3, 3]


def _in_run_order(raw: pl.DataFrame) -> pl.DataFrame:
    return raw.sort("family", "block", "block_query")


def test_random_windows_interleaved_each_shape_its_own_windows_none_shared_back_to_back(loaded, mongo_client):
    """Issue #12: each shape draws its own windows (not three shapes per window); issue #36: a warm run's
    queries run in one randomised interleaved order (RMIT), the one job_order gives, recorded per row."""
    from costlab.docsize.run import ORDER_INTERLEAVED, job_order

    dataset, _, _, _ = loaded
    raw, _ = measure_dataset(mongo_client, dataset, "random_windows", STUDY, database=loaded[1].database.name)
    assert set(raw["block_order"]) == {ORDER_INTERLEAVED}
    assert set(raw["cache_reset"]) == {"not required"} and set(raw["repeat"]) == {1}
    ordered = raw.sort("job_query")
    # the rows in job_order's measured order: 1 warm-up per shape and family (6) come first, then the 18
    steps = job_order(dataset, "random_windows", STUDY)
    measured = [(s.family, s.query.shape, s.query.window_start) for s in steps if s.query.phase == "measured"]
    assert ordered["job_query"].to_list() == [i for i, s in enumerate(steps) if s.query.phase == "measured"]
    assert ordered["job_query"].min() == 6
    # query_param: the window's first order, or the customer id (its position + 1)
    assert list(zip(ordered["family"], ordered["shape"], ordered["query_param"])) == [
        (f, shape, w if f == "window" else w + 1) for f, shape, w in measured]
    window = ordered.filter(pl.col("family") == "window")
    shapes = window["shape"].to_list()
    assert sum(a != b for a, b in zip(shapes, shapes[1:])) > 2   # not three blocks
    # block_query counts the block's warm-ups first (1 here), then its timed queries
    assert sorted(window["block_query"].to_list()) == [1, 1, 1, 2, 2, 2, 3, 3, 3]
    assert (window["window_end"] - window["window_start"]).to_list() == [WINDOW] * 9
    assert window["window_start"].to_list() == window["query_param"].to_list()
    rows = window.to_dicts()
    assert not any(
        a["shape"] != b["shape"] and a["window_start"] == b["window_start"] for a, b in zip(rows, rows[1:])
    )
    windows = {
        shape: window.filter(pl.col("shape") == shape).sort("block_query")["window_start"].to_list()
        for shape in ("whole", "projection")
    }
    assert windows["whole"] != windows["projection"]  # each shape draws its own windows
    customers = raw.filter(pl.col("family") == "customer")
    assert customers["window_start"].null_count() == customers.height  # a customer is not a window


def test_small_cache_starts_cold_once_and_warms_up_once(loaded, mongo_client):
    """The article's small-cache run: one start on the loaded data, then whole, projection and covered back to
    back after the 50 warm-ups, which come once (not a restart and warm-ups per shape)."""
    dataset, _, _, _ = loaded
    resets = []

    def reset_cache():
        resets.append(len(resets))
        return mongo_client, "restarted (test)"

    raw, _ = measure_dataset(mongo_client, dataset, "small_cache", STUDY, database=loaded[1].database.name,
                             reset_cache=reset_cache)
    assert len(resets) == 2  # one cold start for each of the two families, before its first shape
    first = raw.filter(pl.col("block") == 0)
    assert set(first["cache_reset"]) == {"restarted (test)"}
    assert set(raw.filter(pl.col("block") > 0)["cache_reset"]) == {run_module.CACHE_KEPT}
    # the warm-ups come before the first shape only: its timed queries follow them, the others' start at 0
    warmups = int(STUDY["runs"]["small_cache"]["warmups"])
    assert warmups > 0 and first["block_query"].min() == warmups
    assert raw.filter(pl.col("block") > 0)["block_query"].min() == 0
    nobody, _ = measure_dataset(mongo_client, dataset, "small_cache", STUDY, database=loaded[1].database.name)
    assert set(nobody.filter(pl.col("block") == 0)["cache_reset"]) == {
        "not reset: no control over the server"
    }


@pytest.mark.lifecycle   # a restart: make test-lifecycle
def test_small_cache_job_restarts_the_server_once(tmp_path, mongod_binary):
    """measure_job with the binary backend on the real mongod: one restart, before the first shape (the
    article's second server on the same volume), then the shapes on that one start."""
    from costlab.config import run_facts
    from costlab.docsize.load import load_job
    from costlab.docsize.params import LoadParams, MeasureParams

    server_config = {"backend": "binary", "mongod": mongod_binary, "startup_timeout_s": 60}
    study = STUDY | {"variants": STUDY["variants"] | {"spread_customer": False}}
    data_dir = tmp_path / "data"
    config = {"server": server_config, "docsize": study}
    run = run_facts(config, "docsize")
    load_job(LoadParams.from_config(config), run, "orders_1k", data_dir, tmp_path / "load.json")
    provenance = tmp_path / "small_cache__orders_1k.json"
    raw, _ = run_module.measure_job(MeasureParams.from_config(config), run, "small_cache", "orders_1k",
                                    str(data_dir), str(provenance))
    assert set(raw.filter(pl.col("block") == 0)["cache_reset"]) == {
        "restarted (binary backend; the OS file cache is not dropped)"}
    assert raw["block"].unique().sort().to_list() == [0, 1, 2]
    assert json.loads(provenance.read_text())["extra"]["cache_restarts"] == 1


def test_external_backend_records_that_the_cache_was_not_reset(external_server_config):
    from costlab.server import start_server

    with start_server(external_server_config, "standalone-small-cache") as server:
        client, note = run_module.cold_cache(server)
    assert client is server.client and note.startswith("not reset: external backend")


def test_bad_run_name_is_named():
    with pytest.raises(ValueError, match="same_window, random_windows, small_cache"):
        run_module.get_run("fast")


# --- verdicts (synthetic summaries: values chosen by hand, not computed by the code) -----------

def _summary(rows, kind):
    frame = pl.DataFrame(
        [
            {
                "run": r,
                "variant": "base",
                "family": "window",
                "size_kb": s,
                "shape": sh,
                "client_ms_p50": c,
                "server_ms_p50": sv,
                "bytes_read_into_cache_p50": b,
                "bytes_read_into_cache_mean": b,   # one value a cell here: its median and mean
                "plan": p,
                "plan_docs_examined": d,
                "server_kind": kind,
                # the article's: 48 KB for the projection at every size, 66 MB of whole 64 KB orders
                "bytes_returned_p50": {"projection": 48_000.0, "whole": 1030.0 * 1000 * s}.get(sh, 30_000.0),
            }
            for r, s, sh, c, sv, b, p, d in rows
        ],
        schema_overrides={"bytes_read_into_cache_p50": pl.Float64, "bytes_read_into_cache_mean": pl.Float64,
                          "server_ms_p50": pl.Float64},
    )
    return frame


def _model():
    return pl.DataFrame({"variant": ["base", "base"], "size_kb": [1, 64], "avg_doc_bytes": [1024.0, 65536.0],
                         "published_avg_doc_bytes": [1037.0, 65876.0]})


ROWS_LIKE_ARTICLE = [
    # run, size, shape, client ms, server ms, bytes read, plan, docs examined
    ("same_window", 1, "whole", 12.0, 0.9, 0.0, "IXSCAN > FETCH", 1000),
    ("same_window", 64, "whole", 550.0, 8.5, 0.0, "IXSCAN > FETCH", 1000),
    ("same_window", 1, "projection", 3.5, 0.8, 0.0, "IXSCAN > FETCH > PROJECTION_SIMPLE", 1000),
    ("same_window", 64, "projection", 3.4, 1.0, 0.0, "IXSCAN > FETCH > PROJECTION_SIMPLE", 1000),
    ("same_window", 1, "covered", 3.1, 0.5, 0.0, "IXSCAN > PROJECTION_COVERED", 0),
    ("same_window", 64, "covered", 2.6, 0.4, 0.0, "IXSCAN > PROJECTION_COVERED", 0),
    ("random_windows", 64, "projection", 3.3, 1.0, 0.0, "IXSCAN > FETCH > PROJECTION_SIMPLE", 1000),
    ("small_cache", 1, "covered", 2.7, 0.4, 0.0, "IXSCAN > PROJECTION_COVERED", 0),
    ("small_cache", 64, "covered", 2.3, 0.4, 13000.0, "IXSCAN > PROJECTION_COVERED", 0),
    ("small_cache", 64, "whole", 553.0, 20.0, 60e6, "IXSCAN > FETCH", 1000),
    ("small_cache", 64, "projection", 34.0, 30.0, 61e6, "IXSCAN > FETCH > PROJECTION_SIMPLE", 1000),
]


def test_verdicts_reproduced_when_the_findings_hold():
    pvr = published_vs_reproduced(_summary(ROWS_LIKE_ARTICLE, "mongod"), _model(), PUBLISHED_QUERIES, 1000)
    assert pvr.columns == COLUMNS
    assert pvr["tolerance"].null_count() == 0  # every row says what it was judged by
    cell = pl.col("finding").str.ends_with(": bytes read into cache per query")
    times = pl.col("finding").str.ends_with("published times)")
    verdicts = dict(zip(pvr.filter(~cell & ~times)["metric"], pvr.filter(~cell & ~times)["verdict"]))
    assert set(verdicts.values()) == {"reproduced"}, verdicts
    # the published time tables (same-window client and server, small-cache client): a row each saying why
    assert pvr.filter(times)["finding"].to_list() == [
        "the article's client ms per size and shape, same_window (12 published times)",
        "the article's server ms per size and shape, same_window (12 published times)",
        "the article's client ms per size and shape, small_cache (12 published times)"]
    assert (pvr.filter(times)["verdict"] == "not comparable").all()
    assert pvr.filter(times)["reason"].str.starts_with("absolute times").all()
    # every published small-cache cell (4 sizes x 3 shapes): judged where this run measured it, else says why
    cells = dict(zip(pvr.filter(cell)["finding"].str.split(":").list.first(), pvr.filter(cell)["verdict"]))
    assert len(cells) == 12
    assert {cells[f"64 KB, small cache, {shape}"] for shape in ("whole", "projection", "covered")} == {
        "reproduced"
    }
    assert cells["1 KB, small cache, covered"] == "reproduced"
    four = pvr.filter(pl.col("finding").str.starts_with("4 KB, small cache, whole")).row(0, named=True)
    assert (four["verdict"], four["reason"]) == (
        "not comparable",
        "at this scale: published for 4 KB orders; this run: 1 KB, 64 KB",
    )
    reads = pvr.filter(pl.col("finding") == "projection reads whole document at small cache")
    assert reads["reproduced"][0] == pytest.approx(61 / 60)


def test_verdicts_not_reproduced_and_missing():
    rows = [list(r) for r in ROWS_LIKE_ARTICLE]
    for r in rows:
        if r[0] == "small_cache" and r[2] == "projection":
            r[5] = 0.5e6       # projection read far less than whole documents
        if r[0] == "small_cache" and r[2] == "whole":
            r[5] = None  # not reported
    pvr = published_vs_reproduced(
        _summary([tuple(r) for r in rows], "mongod"), _model(), PUBLISHED_QUERIES, 1000
    )
    by_metric = dict(zip(pvr["metric"], pvr["verdict"]))
    assert (
        by_metric["projection bytes read into cache / (window x mean document), 64 KB, 256 MB cache"]
        == "not reproduced"
    )
    missing = pvr.filter(
        pl.col("metric") == "bytes read into cache, projection / whole documents, 64 KB, 256 MB cache"
    )
    assert missing.select("verdict", "reason").rows() == [("not run", "counter not reported by the server")]
    assert pvr.filter(pl.col("metric").str.contains("projection / whole"))["reproduced"][0] is None


def test_verdicts_on_the_stand_in_are_not_comparable():
    pvr = published_vs_reproduced(_summary(ROWS_LIKE_ARTICLE, "stand-in"), _model(), PUBLISHED_QUERIES, 1000)
    measured = pvr.filter(pl.col("server_kind") == "stand-in")
    assert measured.height >= 8 and set(measured.select("verdict", "reason").rows()) == {
        ("not comparable", "stand-in")
    }
    sizes = pvr.filter(pl.col("server_kind") != "stand-in")  # from the generator: comparable anywhere
    assert set(sizes["verdict"]) == {"reproduced"}


def test_tail_and_split_variants(test_db, mongo_client, tmp_path):
    from costlab.docsize.tables import variants_table

    study = STUDY | {
        "variants": {"fields_after_history": True, "spread_customer": False, "split_history": True}
    }
    frames = []
    for name in ("orders_1k_tail", "orders_1k_split"):
        dataset = parse_dataset(name)
        load_dataset(mongo_client, dataset, study, tmp_path / name, database=test_db.name)
        raw, collections = measure_dataset(mongo_client, dataset, "same_window", study, database=test_db.name)
        frames.append(raw)
        if name.endswith("_split"):
            assert collections["collection"].to_list() == ["orders_1k_split", "orders_1k_split_history"]
            history = test_db["orders_1k_split_history"].find_one()
            order = test_db["orders_1k_split"].find_one({"_id": history["_id"]})
            assert "history" not in order and order["createdAt"] is not None  # keyed by the order's _id
        else:
            assert list(test_db[name].find_one())[-2:] == ["createdAt", "total"]
    raw = pl.concat(frames)
    assert set(raw["n_returned"]) == {WINDOW}
    whole = raw.filter(pl.col("shape") == "whole").group_by("variant").agg(pl.col("bytes_returned").max())
    sizes = dict(zip(whole["variant"], whole["bytes_returned"]))
    assert (
        sizes["tail"] == WINDOW * target_doc_bytes(1) and sizes["split"] < WINDOW * 200
    )  # small orders only
    cases = set(variants_table(summary_table(raw))["case"])
    assert cases == {"fields after history, one window", "history in its own collection, one window"}


# --- seams only a real server exercises: counter paths and units, on serverStatus-shaped documents

def _server_status(latency_us, ops, bytes_read, scanned, scanned_objects, cache_max):
    # The shape MongoDB documents for serverStatus (WiredTiger keys contain spaces).
    return {
        "opLatencies": {"reads": {"latency": latency_us, "ops": ops}},
        "wiredTiger": {"cache": {"bytes read into cache": bytes_read, "maximum bytes configured": cache_max}},
        "metrics": {"queryExecutor": {"scanned": scanned, "scannedObjects": scanned_objects}},
    }


def test_counter_paths_and_units_on_a_mongod_shaped_status():
    from costlab.docsize.run import CACHE_MAX_PATH, COUNTERS, row_from_counters
    from costlab.measure import counter_delta, get_path

    before = _server_status(1_000, 10, 5_000, 100, 100, 268_435_456)
    after = _server_status(9_500, 12, 61_005_000, 1_100, 1_100, 268_435_456)
    delta = counter_delta({p: get_path(before, p) for p in COUNTERS.values()},
                          {p: get_path(after, p) for p in COUNTERS.values()})
    row = row_from_counters(delta, [{"createdAt": 1, "total": 2.5}] * 3, 0.0345)
    assert row["server_ms"] == 8.5              # 8,500 microseconds
    assert row["server_read_ops"] == 2          # find + getMore
    assert row["bytes_read_into_cache"] == 61_000_000
    assert row["keys_examined"] == 1_000 and row["docs_examined"] == 1_000
    assert row["client_ms"] == pytest.approx(34.5)
    assert row["n_returned"] == 3 and row["bytes_returned"] == 3 * len(
        bson.encode({"createdAt": 1, "total": 2.5})
    )
    assert get_path(after, CACHE_MAX_PATH) == 268_435_456


def test_counters_missing_from_status_stay_none():
    from costlab.docsize.run import COUNTERS, row_from_counters
    from costlab.measure import counter_delta, get_path

    status = {"opLatencies": {"reads": {"latency": 10, "ops": 1}}}  # no wiredTiger, no metrics
    delta = counter_delta({p: get_path(status, p) for p in COUNTERS.values()},
                          {p: get_path(status, p) for p in COUNTERS.values()})
    row = row_from_counters(delta, [], 0.001)
    assert row["server_ms"] == 0.0                # reported, and nothing happened
    assert row["bytes_read_into_cache"] is None   # not reported: None, never 0
    assert row["docs_examined"] is None and row["keys_examined"] is None


def test_small_cache_findings_not_comparable_when_the_cache_was_not_applied():
    from costlab.docsize.tables import NO_SMALL_CACHE, small_cache_applied

    def stats(cache):
        return pl.DataFrame({"run": ["same_window", "small_cache"], "cache_max_bytes": [16e9, cache]})

    assert small_cache_applied(stats(256 * 1024 * 1024)) is True
    assert small_cache_applied(stats(16e9)) is False           # e.g. an external deployment
    assert small_cache_applied(stats(None)) is None            # not reported: no claim either way
    pvr = published_vs_reproduced(_summary(ROWS_LIKE_ARTICLE, "mongod"), _model(), PUBLISHED_QUERIES, 1000,
                                  small_cache=False)
    small = pvr.filter(pl.col("metric").str.contains("256 MB cache"))
    assert small.height == 5 + 12  # findings, then cells
    assert set(small.select("verdict", "reason").rows()) == {("not comparable", NO_SMALL_CACHE)}
    others = pvr.filter(
        ~pl.col("metric").str.contains("256 MB cache") & ~pl.col("finding").str.contains("published times")
    )
    assert set(others["verdict"]) == {"reproduced"}
