"""uniqueidx: every step's outcome as the article reports it, fail/error recording, smoke run."""
from __future__ import annotations

from dataclasses import replace

import polars as pl
import pytest
from pymongo import MongoClient

from costlab.uniqueidx.check import ERROR, FAIL, PASS, published_vs_reproduced, run_conformance, run_step
from costlab.uniqueidx.steps import STEPS, select_steps
from tests.known import FINDINGS_COLUMNS

# The article's outcomes, written out here (not taken from the code under test).
ARTICLE = {
    1: ["inserted", "error 11000"],                                    # {null, null} duplicate
    2: ["inserted", "inserted"],                                       # partial index: not indexed
    3: ["matched 1 modified 1", "error 11000"],                        # same account, two users
    4: ["matched 1 modified 1", "matched 1 modified 1", "accounts 2"],  # same account, same user: allowed
    5: ["matched 1 modified 1", "matched 0 modified 0", "accounts 1"],  # $not $elemMatch guard
    6: ["matched 1 modified 1", "error 121"],                          # $expr validator
}


@pytest.mark.parametrize("number", sorted(ARTICLE))
def test_step_behaves_as_the_article_says(test_db, number):
    step = select_steps([number])[0]
    observed = step.run(test_db)
    assert [outcome.text for _, outcome in observed] == ARTICLE[number]
    assert run_step(step, test_db)["outcome"] == PASS


def test_duplicate_key_messages_name_the_index(test_db):
    step1 = run_step(select_steps([1])[0], test_db)
    assert "Unique Account" in step1["server_messages"] and "11000" in step1["server_messages"]
    step3 = run_step(select_steps([3])[0], test_db)
    assert "Unique Account V2" in step3["server_messages"]


def test_state_left_by_steps(test_db):
    select_steps([4])[0].run(test_db)
    user1 = test_db.users.find_one({"_id": 1})
    assert user1["accounts"] == [{"balance": 500, "bank": "abc", "number": "123"}] * 2
    select_steps([6])[0].run(test_db)
    assert len(test_db.users.find_one({"_id": 1})["accounts"]) == 1   # the rejected push changed nothing


def test_a_changed_behaviour_is_a_fail_not_a_crash(test_db):
    # Pretend the article had said both inserts succeed: the server's E11000 is then a fail.
    changed = replace(STEPS[0], expected=(("insert user1", "inserted"), ("insert user2", "inserted")))
    record = run_step(changed, test_db)
    assert record["outcome"] == FAIL
    assert "insert user2: expected inserted, observed error 11000" in record["detail"]


def test_a_step_that_cannot_run_is_an_error():
    client = MongoClient("mongodb://127.0.0.1:9/", serverSelectionTimeoutMS=200, connectTimeoutMS=200)
    try:
        record = run_step(STEPS[5], client["costlab_uniqueidx_unreachable"])
    finally:
        client.close()
    assert record["outcome"] == ERROR and record["observed"] == "not executed"
    assert "drop users failed" in record["detail"]


def test_conformance_table_and_verdicts(test_db):
    table = run_conformance(test_db, [1, 2, 3, 4, 5, 6])
    assert table["step"].to_list() == [1, 2, 3, 4, 5, 6]
    assert table["outcome"].to_list() == [PASS] * 6
    with pytest.raises(ValueError, match="7"):
        run_conformance(test_db, [7])
    base = table.head(4).with_columns(pl.Series("outcome", [PASS, FAIL, ERROR, PASS]),
                                      pl.Series("server_kind", ["mongod", "mongod", "mongod", "stand-in"]))
    pvr = published_vs_reproduced(base)
    assert pvr.columns == list(FINDINGS_COLUMNS)
    assert pvr["tolerance"].null_count() == 0  # every row says what it was judged by
    assert pvr["verdict"].to_list() == ["reproduced", "not reproduced", "not run", "not comparable"]
    assert pvr["reason"].to_list()[2:] == [f"step not executed: {base['detail'][2]}", "stand-in"]


def test_smoke_workflow(smoke_all, real_mongod):
    results = smoke_all.results("uniqueidx")
    table = pl.read_csv(results / "tables" / "conformance.csv")
    assert table["step"].to_list() == [1, 2, 3, 4, 5, 6]
    assert set(table["outcome"]) <= {PASS, FAIL, ERROR} and table["observed"].str.len_chars().min() > 0
    if not real_mongod:
        assert table["outcome"].to_list() == [PASS] * 6
        assert table["server_kind"].unique().to_list() == ["stand-in"]
    assert (results / "provenance" / "conformance.json").exists()
    assert (results / "tables" / "published_vs_reproduced.csv").exists()
