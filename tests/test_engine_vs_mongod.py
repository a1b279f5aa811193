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
