import polars as pl
import pytest

from costlab.measure import counter_delta, get_path, plan_summary, snapshot, summarize


def test_get_path_reads_wiredtiger_keys_with_spaces():
    status = {"wiredTiger": {"log": {"log bytes written": 123}}, "opLatencies": {"reads": {"latency": 9}}}
    assert get_path(status, "wiredTiger.log.log bytes written") == 123
    assert get_path(status, "opLatencies.reads.latency") == 9
    assert get_path(status, "wiredTiger.cache.bytes read into cache") is None


def test_delta_is_none_not_zero_when_missing():
    before = {"a": 10, "b": None}
    after = {"a": 25, "b": None}
    assert counter_delta(before, after) == {"a": 15, "b": None}


def test_snapshot_against_server_records_missing_counters_as_none(mongo_client, real_mongod):
    paths = ["opcounters.insert", "wiredTiger.log.log bytes written", "no.such.counter"]
    snap = snapshot(mongo_client, paths)
    assert isinstance(snap["opcounters.insert"], (int, float))
    assert snap["no.such.counter"] is None
    if not real_mongod:
        assert snap["wiredTiger.log.log bytes written"] is None


SBE_EXPLAIN = {
    "queryPlanner": {"winningPlan": {"queryPlan": {
        "stage": "PROJECTION_SIMPLE", "inputStage": {"stage": "FETCH", "inputStage": {"stage": "IXSCAN"}}}}},
    "executionStats": {"totalKeysExamined": 1000, "totalDocsExamined": 1000, "nReturned": 1000},
}
COVERED_EXPLAIN = {
    "queryPlanner": {"winningPlan": {"stage": "PROJECTION_COVERED", "inputStage": {"stage": "IXSCAN"}}},
    "executionStats": {"totalKeysExamined": 1000, "totalDocsExamined": 0, "nReturned": 1000},
}


def test_plan_summary_walks_leaf_first():
    summary = plan_summary(SBE_EXPLAIN)
    assert summary["stages"] == ["IXSCAN", "FETCH", "PROJECTION_SIMPLE"]
    assert summary["plan"] == "IXSCAN > FETCH > PROJECTION_SIMPLE"
    assert summary["docs_examined"] == 1000 and not summary["covered"]
    covered = plan_summary(COVERED_EXPLAIN)
    assert covered["covered"] and covered["docs_examined"] == 0


def test_plan_summary_on_server_explain(test_db):
    test_db.c.create_index([("a", 1)])
    test_db.c.insert_many([{"a": i, "b": i} for i in range(20)])
    explain = test_db.c.find({"a": {"$gte": 5}}, {"a": 1}).explain()
    summary = plan_summary(explain)
    assert summary["stages"][0] == "IXSCAN"
    assert summary["n_returned"] == 15


def test_summarize_percentiles():
    raw = pl.DataFrame(
        {"shape": ["a"] * 101 + ["b"] * 3, "ms": [float(i) for i in range(101)] + [1.0, 2.0, None]}
    )
    out = summarize(raw, ["shape"], "ms").sort("shape")
    a = out.row(0, named=True)
    assert a["n"] == 101 and a["ms_p50"] == 50 and a["ms_p95"] == pytest.approx(95)
    b = out.row(1, named=True)
    assert b["n"] == 2 and b["ms_p50"] == pytest.approx(1.5)
