"""arraygrowth workloads and measuring jobs against the test server (stand-in unless COSTLAB_TEST_URI)."""
import json

import polars as pl
import pytest
from bson import Int64

from costlab.arraygrowth.model import fallback_conditions
from costlab.arraygrowth.run import (
    COUNTERS,
    fallback_rows,
    fresh_collection,
    growth_rows,
    measure,
    run_fallback_job,
    run_growth_job,
)
from costlab.arraygrowth.workloads import (
    ARRAY_FIELD,
    BASE_TIMESTAMP,
    FallbackParams,
    WorkloadResult,
    insert_timestamps,
    prepare_push,
    push_timestamps,
)
from costlab.server.provenance import read_provenance


def test_n_inserts_make_n_documents_with_one_int64_each(test_db):
    result = insert_timestamps(test_db.ts, 25)
    assert result == WorkloadResult(operations=25, documents=25, elements=0)
    docs = list(test_db.ts.find({}, {"_id": 0}).sort("ts", 1))
    assert len(docs) == 25
    assert all(set(d) == {"ts"} and isinstance(d["ts"], Int64) for d in docs)
    assert [d["ts"] for d in docs] == [BASE_TIMESTAMP + i for i in range(25)]


def test_n_pushes_make_one_document_with_an_n_element_int64_array(test_db):
    job_id = prepare_push(test_db.jobs)
    result = push_timestamps(test_db.jobs, 30, job_id)
    assert result == WorkloadResult(operations=30, documents=1, elements=30)
    docs = list(test_db.jobs.find())
    assert len(docs) == 1
    array = docs[0][ARRAY_FIELD]
    assert len(array) == 30 and all(type(v) is Int64 for v in array)
    assert array == [BASE_TIMESTAMP + i for i in range(30)]
    assert docs[0]["command"] == "rsync /src /dest"


def test_bad_n_is_refused(test_db):
    with pytest.raises(ValueError, match="n must be a positive integer, got 0"):
        insert_timestamps(test_db.ts, 0)
    with pytest.raises(ValueError, match="allowed: insert, push"):
        growth_rows(test_db.client, "standalone", "pull", [10])
    with pytest.raises(ValueError, match="non-empty list of positive integers"):
        growth_rows(test_db.client, "standalone", "push", [])


def test_growth_rows_record_missing_counters_as_null_not_zero(mongo_client, real_mongod, tmp_path):
    frame = growth_rows(
        mongo_client, "standalone", "push", [40, 20], backend="external", job="standalone_push"
    )
    assert frame["n"].to_list() == [20, 40]
    assert frame["operations"].to_list() == [20, 40]
    assert frame["elements_after"].to_list() == [20, 40] and frame["documents_after"].to_list() == [1, 1]
    for column in COUNTERS:
        assert frame.schema[column] == pl.Int64
    if real_mongod:
        assert frame["log_bytes"].null_count() == 0 and (frame["log_bytes"] > 0).all()
    else:
        assert frame["server_kind"].to_list() == ["stand-in", "stand-in"]
        for column in COUNTERS:
            assert frame[column].null_count() == 2, column   # null, never 0
    # nulls survive the parquet round trip as nulls
    path = tmp_path / "raw.parquet"
    frame.write_parquet(path)
    assert pl.read_parquet(path)["log_bytes"].null_count() == frame["log_bytes"].null_count()


def test_measure_refuses_a_run_that_did_not_store_what_it_claims(mongo_client):
    collection = fresh_collection(mongo_client, "claims")

    def run(coll, prepared):
        coll.insert_one({"x": 1})
        return WorkloadResult(operations=2, documents=2, elements=0)

    with pytest.raises(
        RuntimeError, match="expected 2 documents with 0 array elements after the run, found 1"
    ):
        measure(mongo_client, collection, lambda coll: None, run)
    collection.drop()


def test_fallback_rows_store_what_the_model_says(mongo_client):
    params = FallbackParams(updates=60, elements_per_update=5, big_element_bytes=200, small_doc_elements=20,
                            slice_elements=25)
    frame = fallback_rows(mongo_client, "replset-1", params)
    model = fallback_conditions(params).filter(pl.col("topology") == "standalone")
    by_variant = {r["variant"]: r for r in frame.iter_rows(named=True)}
    assert by_variant["small_docs"]["documents_after"] == 3
    assert by_variant["push_many"]["elements_after"] == 300
    assert by_variant["push_slice"]["elements_after"] == 25
    assert by_variant["set_array"]["elements_after"] == 60
    # the server's stored BSON size equals the model's arithmetic for every variant
    for row in model.iter_rows(named=True):
        assert by_variant[row["variant"]]["max_doc_bytes_after"] == row["final_doc_bytes"], row["variant"]


def test_jobs_write_raw_and_provenance_with_the_backend_recorded(
    external_server_config, tmp_path, real_mongod
):
    from costlab.arraygrowth.params import FallbackSweepParams, RunParams
    from costlab.config import run_facts

    run = run_facts({"server": external_server_config}, "arraygrowth")
    raw, prov = tmp_path / "raw" / "replset-1_insert.parquet", tmp_path / "prov" / "replset-1_insert.json"
    frame = run_growth_job(RunParams(ns=[10, 20]), run, "replset-1", "insert", raw, prov)
    assert pl.read_parquet(raw).equals(frame)
    record = read_provenance(prov)
    assert record["job"] == "replset-1_insert" and record["backend"] == "external"
    assert frame["job"].unique().to_list() == ["replset-1_insert"]
    applied = json.loads(frame["profile_applied"][0])
    assert applied["replica_set"] == "as configured by the deployment"
    assert frame["topology"][0].startswith(("replica set", "standalone"))
    if not real_mongod:
        assert record["server_kind"] == "stand-in"

    fb_raw, fb_prov = (
        tmp_path / "raw" / "fallback_standalone.parquet",
        tmp_path / "prov" / "fallback_standalone.json",
    )
    fb = run_fallback_job(
        FallbackSweepParams(fallback={"updates": 12, "variants": ["push_one", "set_array"]}),
        run,
        "standalone",
        fb_raw,
        fb_prov,
    )
    assert fb["variant"].to_list() == ["push_one", "set_array"] and fb_prov.exists()
