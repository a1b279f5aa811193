"""Load-test schedule, open-loop math and per-bin summaries (no server needed)."""
import numpy as np
import polars as pl
import pytest
from known import UNKNOWN_VERSION

from costlab.appversions.loadtest_plan import (
    LoadTestPlan,
    assign_workers,
    intended_starts,
    schedule,
    segments,
)
from costlab.appversions.loadtest_summary import step_bins, summarize_bins, summarize_phases
from costlab.appversions.loadtest_workers import lateness


def published_plan(**overrides):
    values = dict(phase_seconds=3000.0, warmup_seconds=300.0)
    values.update(overrides)
    return LoadTestPlan(**values)


def _done_in_5_ms(ops: pl.DataFrame, status: pl.Expr | None = None,
                  queue_wait_ms: float = 1.0) -> pl.DataFrame:
    """Scheduled operations (kind, events set) as a load test's raw rows: each started on time and done in
    5 ms, `status` (ok by default), `queue_wait_ms` queued, no client lag."""
    return ops.with_columns(
        pl.lit("appVX").alias("version"), (pl.lit("ok") if status is None else status).alias("status"),
        pl.col("intended_s").alias("start_s"), (pl.col("intended_s") + 0.005).alias("end_s"),
        pl.lit(5.0).alias("call_ms"), pl.lit(5.0).alias("from_intended_ms"),
        pl.lit(queue_wait_ms).alias("queue_wait_ms"), pl.lit(0.0).alias("client_lag_ms"))


def _both_kinds(sched: dict[str, pl.DataFrame]) -> pl.DataFrame:
    """The schedule's reports (1 event each) and upserts (batches of 10 events) in one frame."""
    return pl.concat([sched["report"].with_columns(pl.lit("report").alias("kind")),
                      sched["upsert"].with_columns(pl.lit("upsert").alias("kind"))]).with_columns(
        pl.when(pl.col("kind") == "upsert").then(10).otherwise(1).cast(pl.Int64).alias("events"))


def test_published_targets_per_phase_and_step():
    segs = segments(published_plan())
    upserts = segs.filter(pl.col("kind") == "upsert")
    # Four phases of ten steps; 250/500/750/1000 events/s = 1/2/3/4 batches of 250 per second.
    assert upserts.height == 40
    per_phase = (
        upserts.group_by("phase")
        .agg(pl.col("events_per_s").unique(), pl.col("ops_per_s").unique())
        .sort("phase")
    )
    assert per_phase["events_per_s"].to_list() == [[250.0], [500.0], [750.0], [1000.0]]
    assert per_phase["ops_per_s"].to_list() == [[1.0], [2.0], [3.0], [4.0]]
    reports = segs.filter(pl.col("kind") == "report")
    warmup = reports.filter(pl.col("phase") == 0)
    assert warmup.rows() == [("report", 0, 0, 0.0, 300.0, 25.0, 25.0)]
    phase3 = reports.filter(pl.col("phase") == 3).sort("step")
    assert phase3["ops_per_s"].to_list() == [25.0 * k for k in range(1, 11)]
    # A step is five minutes (a tenth of a 50-minute phase); phase 3 starts after warm-up + 2 phases.
    assert phase3["start_s"].to_list()[:2] == [300.0 + 6000.0, 300.0 + 6000.0 + 300.0]
    assert published_plan().total_seconds == 300.0 + 4 * 3000.0


def test_rate_scale_and_batch_size_scale_targets():
    segs = segments(published_plan(rate_scale=0.1, batch_size=25, warmup_seconds=0))
    first = segs.filter((pl.col("phase") == 1) & (pl.col("step") == 1)).sort("kind")
    assert first["events_per_s"].to_list() == [2.5, 25.0]           # report 25*0.1, upsert 250*0.1
    assert first["ops_per_s"].to_list() == [2.5, 1.0]               # 25 events/s in batches of 25
    assert not segs.filter(pl.col("phase") == 0).height             # no warm-up segment


def test_intended_starts_constant_rate_are_evenly_spaced_midpoints():
    segs = pl.DataFrame({"phase": [1], "step": [1], "start_s": [10.0], "end_s": [12.0], "ops_per_s": [4.0]},
                        schema_overrides={"phase": pl.Int32, "step": pl.Int32})
    starts = intended_starts(segs)
    assert starts["intended_s"].to_list() == pytest.approx([10.125, 10.375, 10.625, 10.875,
                                                            11.125, 11.375, 11.625, 11.875])
    assert starts["op_index"].to_list() == list(range(8))


def test_fractional_rates_carry_over_segment_boundaries():
    # 0.75 ops in each of two 1-second segments: 1.5 ops in total -> exactly one op, at cumulative 0.5,
    # which is reached at 0.5/0.75 s; then the second segment adds the op at cumulative 1.5 (t = 2.0 - 0).
    segs = pl.DataFrame({"phase": [1, 1], "step": [1, 2], "start_s": [0.0, 1.0], "end_s": [1.0, 2.0],
                         "ops_per_s": [0.75, 0.75]}, schema_overrides={"phase": pl.Int32, "step": pl.Int32})
    starts = intended_starts(segs)
    assert starts["intended_s"].to_list() == pytest.approx([0.5 / 0.75])
    assert starts["step"].to_list() == [1]
    # Over three such segments (2.25 ops): ops at cumulative 0.5 and 1.5 -> t = 0.667 and 2.0.
    segs3 = pl.concat([segs, pl.DataFrame({"phase": [1], "step": [3], "start_s": [2.0], "end_s": [3.0],
                                           "ops_per_s": [0.75]}, schema_overrides={"phase": pl.Int32,
                                                                                   "step": pl.Int32})])
    assert intended_starts(segs3)["intended_s"].to_list() == pytest.approx([0.5 / 0.75, 1.5 / 0.75])


def test_schedule_counts_match_published_totals():
    plan = published_plan(warmup_seconds=0)
    sched = schedule(plan)
    # Bulk Upsert: (1+2+3+4) batches/s * 3000 s = 30,000 batches = 7.5 million events.
    assert sched["upsert"].height == 30_000
    # Get Reports: mean of 25..250 = 137.5 req/s * 12,000 s = 1,650,000 requests.
    assert sched["report"].height == 1_650_000
    assert (np.diff(sched["report"]["intended_s"].to_numpy()) > 0).all()


def test_assign_workers_round_robin():
    assert assign_workers(7, 3).tolist() == [0, 1, 2, 0, 1, 2, 0]
    with pytest.raises(ValueError, match="workers"):
        assign_workers(3, 0)


def test_lateness_splits_queue_wait_from_client_lag():
    intended = np.array([1.0, 2.0, 3.0])
    previous_end = np.array([-np.inf, 2.5, 2.0])    # op 2: worker busy until 2.5; op 3: free since 2.0
    start = np.array([1.01, 2.6, 3.0])
    queue_wait, client_lag = lateness(intended, start, previous_end)
    assert queue_wait.tolist() == pytest.approx([0.0, 0.5, 0.0])
    assert client_lag.tolist() == pytest.approx([0.01, 0.1, 0.0])


def test_plan_rejects_bad_values_naming_them():
    with pytest.raises(ValueError, match="phase_seconds"):
        LoadTestPlan(phase_seconds=0)
    with pytest.raises(ValueError, match="batch_size"):
        LoadTestPlan(phase_seconds=1, batch_size=0)


def raw_rows(rows):
    """Synthetic raw load-test rows: (kind, intended_s, start_s, end_s, status, queue_wait_ms, client_lag_ms).

    Every row is phase 1, step 1 (the plans below have one step per kind)."""
    frame = pl.DataFrame(rows, orient="row", schema={
        "kind": pl.Utf8, "intended_s": pl.Float64, "start_s": pl.Float64, "end_s": pl.Float64,
        "status": pl.Utf8, "queue_wait_ms": pl.Float64, "client_lag_ms": pl.Float64})
    return frame.with_columns(
        pl.lit("appVX").alias("version"),
        pl.lit(1, pl.Int32).alias("phase"),
        pl.lit(1, pl.Int32).alias("step"),
        pl.when(pl.col("kind") == "upsert").then(10).otherwise(1).cast(pl.Int64).alias("events"),
        ((pl.col("end_s") - pl.col("start_s")) * 1000).alias("call_ms"),
        ((pl.col("end_s") - pl.col("intended_s")) * 1000).alias("from_intended_ms"),
    )


# One 2 s step per kind: 4 reports/s, 20 upsert events/s in batches of 10; two 1 s bins per step.
TWO_BIN_PLAN = LoadTestPlan(phase_seconds=2.0, upsert_rates=(20.0,), report_rates=(4.0,), batch_size=10)


def test_summarize_bins_known_answers():
    rows = [
        # bin 0 (0-1 s): 4 reports intended, all ok in the bin, latencies 10, 20, 30, 40 ms
        ("report", 0.1, 0.1, 0.11, "ok", 0.0, 0.0),
        ("report", 0.3, 0.3, 0.32, "ok", 0.0, 0.0),
        ("report", 0.5, 0.5, 0.53, "ok", 0.0, 0.0),
        ("report", 0.7, 0.7, 0.74, "ok", 0.0, 0.0),
        # bin 1 (1-2 s): 4 intended, 1 ok (sent 400 ms late: a 400 ms call, 800 ms from its intended
        # start), 1 error, 2 skipped; the workers waited on the server
        ("report", 1.1, 1.5, 1.9, "ok", 400.0, 0.0),
        ("report", 1.3, 1.9, 1.95, "error", 600.0, 0.0),
        ("report", 1.5, None, None, "skipped", None, None),
        ("report", 1.7, None, None, "skipped", None, None),
        # upserts, 10 events each: bin 0 two ok; bin 1 two intended, one ok, one started late by the client
        ("upsert", 0.2, 0.2, 0.4, "ok", 0.0, 0.0),
        ("upsert", 0.6, 0.6, 0.8, "ok", 0.0, 0.0),
        ("upsert", 1.2, 1.2, 1.4, "ok", 0.0, 0.0),
        ("upsert", 1.6, 2.05, None, "skipped", 0.0, 450.0),
    ]
    summary = summarize_bins(raw_rows(rows), TWO_BIN_PLAN, bin_seconds=1.0)
    reports = summary.filter(pl.col("kind") == "report").sort("bin")
    assert reports["bin_start_s"].to_list() == [0.0, 1.0] and reports["step"].to_list() == [1, 1]
    assert reports["target_rate"].to_list() == [4.0, 4.0]
    assert reports["achieved_rate"].to_list() == [4.0, 1.0]
    assert reports["met"].to_list() == [True, False]
    assert reports["behind"].to_list() == ["none", "server"]
    assert reports["ops_error"].to_list() == [0, 1]
    assert reports["ops_skipped"].to_list() == [0, 2]
    assert reports["call_ms_p50"][0] == pytest.approx(25.0)    # linear interpolation of 10..40
    assert reports["call_ms_p99"][0] == pytest.approx(39.7)
    assert reports["from_intended_ms_p50"][0] == pytest.approx(25.0)  # sent on time: the same
    assert reports["call_ms_p50"][1] == pytest.approx(400.0)   # only the ok op counts: its own duration
    assert reports["from_intended_ms_p50"][1] == pytest.approx(800.0)  # ... and from its intended start
    upserts = summary.filter(pl.col("kind") == "upsert").sort("bin")
    assert upserts["target_rate"].to_list() == [20.0, 20.0]       # events/s
    assert upserts["achieved_rate"].to_list() == [20.0, 10.0]
    assert upserts["behind"].to_list() == ["none", "client"]
    assert upserts["ops_skipped"].to_list() == [0, 1]


def test_met_counts_operations_completed_within_the_bin():
    """An operation intended in bin 0 that completes in bin 1 is bin 1's, not bin 0's (issue #12)."""
    rows = [("report", t, t, t + 0.01, "ok", 0.0, 0.0) for t in (0.1, 0.3, 0.5)]
    rows += [("report", 0.7, 0.7, 1.2, "ok", 0.0, 0.0)]   # a 500 ms call ending in the next bin
    rows += [("report", t, t, t + 0.01, "ok", 0.0, 0.0) for t in (1.1, 1.3, 1.5, 1.7)]
    summary = summarize_bins(raw_rows(rows), TWO_BIN_PLAN, bin_seconds=1.0).filter(pl.col("kind") == "report")
    assert summary["achieved_rate"].to_list() == [3.0, 5.0]
    assert summary["met"].to_list() == [False, True]
    steps = summarize_phases(raw_rows(rows), TWO_BIN_PLAN, bin_seconds=1.0).filter(pl.col("kind") == "report")
    assert steps["met"].to_list() == [False]        # every bin of the step must be met
    assert steps["bins"].to_list() == [2] and steps["bins_met"].to_list() == [1]
    assert steps["achieved_rate"].to_list() == [4.0]  # 8 requests completed in the 2 s step
    one_bin = summarize_phases(raw_rows(rows), TWO_BIN_PLAN).filter(pl.col("kind") == "report")
    assert one_bin["met"].to_list() == [True] and one_bin["bins"].to_list() == [1]


def test_bins_never_cross_a_step_and_the_last_one_is_partial():
    plan = LoadTestPlan(phase_seconds=3.0, warmup_seconds=0.5, upsert_rates=(0.0,), report_rates=(2.0, 4.0))
    bins = step_bins(plan, 1.0).filter(pl.col("kind") == "report")
    # warm-up [0, 0.5); step 1 [0.5, 2.0) in bins of 1 and 0.5; step 2 [2.0, 3.5) likewise
    assert bins["bin_start_s"].to_list() == [0.0, 0.5, 1.5, 2.0, 3.0]
    assert bins["bin_end_s"].to_list() == [0.5, 1.5, 2.0, 3.0, 3.5]
    assert bins["step"].to_list() == [0, 1, 1, 2, 2] and bins["bin"].to_list() == [0, 0, 1, 0, 1]
    rows = [("report", 1.6, 1.6, 1.7, "ok", 0.0, 0.0)]
    summary = summarize_bins(raw_rows(rows), plan, 1.0).filter(pl.col("kind") == "report")
    partial = summary.filter(pl.col("bin_start_s") == 1.5)
    assert partial["bin_seconds"].to_list() == [0.5] and partial["target_rate"].to_list() == [2.0]
    with pytest.raises(ValueError, match="bin_seconds must be > 0"):
        step_bins(plan, 0)


def test_summarize_phases_marks_unmet_steps():
    plan = LoadTestPlan(phase_seconds=2.0, warmup_seconds=0, upsert_rates=(10.0,), report_rates=(1.0, 2.0),
                        batch_size=10)
    sched = schedule(plan)
    # every report of step 2 skipped (server backlog), everything else ok in 5 ms
    skipped = (pl.col("kind") == "report") & (pl.col("step") == 2)
    raw = _done_in_5_ms(_both_kinds(sched),
                        status=pl.when(skipped).then(pl.lit("skipped")).otherwise(pl.lit("ok")))
    phases = summarize_phases(raw, plan)
    reports = phases.filter(pl.col("kind") == "report").sort("step")
    assert reports["ops_planned"].to_list() == [1, 2]
    assert reports["ops_skipped"].to_list() == [0, 2]
    assert reports["met"].to_list() == [True, False]
    assert reports["behind"].to_list() == ["none", "server"]
    assert reports["call_ms_p50"].to_list() == [5.0, None]
    upserts = phases.filter(pl.col("kind") == "upsert")
    assert upserts["target_rate"].to_list() == [10.0, 10.0]
    assert upserts["achieved_rate"].to_list() == [10.0, 10.0]
    assert upserts["met"].all()


def test_summarize_phases_lists_steps_without_operations():
    # 0.5 upsert batches per step: every other step has no operation, yet every step is listed.
    plan = LoadTestPlan(
        phase_seconds=2.0,
        warmup_seconds=0,
        upsert_rates=(25.0,),
        report_rates=(1.0, 2.0, 3.0, 4.0),
        batch_size=25,
    )
    sched = schedule(plan)
    assert sched["upsert"].height == 2
    raw = _done_in_5_ms(sched["upsert"].with_columns(pl.lit("upsert").alias("kind"),
                                                     pl.lit(25, pl.Int64).alias("events")), queue_wait_ms=0.0)
    upserts = summarize_phases(raw, plan).filter(pl.col("kind") == "upsert").sort("step")
    assert upserts["step"].to_list() == [1, 2, 3, 4]
    # 1 batch/s: operations at 0.5 s and 1.5 s, the starts of steps 2 and 4 (half-open steps)
    assert upserts["ops_planned"].to_list() == [0, 1, 0, 1]
    # 25 events completed within a 0.5 s step: 50 events/s there, nothing asked or done in the others
    assert upserts["achieved_rate"].to_list() == [None, 50.0, None, 50.0]
    assert upserts["met"].all()
    assert upserts["version"].to_list() == ["appVX"] * 4


def test_new_events_continue_into_2020_with_the_same_key_space():
    from datetime import datetime, timezone

    from costlab.appversions.events import keys_for_users, users_for
    from costlab.appversions.loadtest_plan import loadtest_requests, new_events_2020

    events = new_events_2020(6_000, seed=1, needed=1_000)
    assert events.height >= 1_000
    assert events["date"].min() == datetime(2020, 1, 1, tzinfo=timezone.utc)
    # only the first ~62 days of 2020 (1,000 of 6,000 a year, one day spare), not the whole year
    assert events["date"].max() < datetime(2020, 3, 5, tzinfo=timezone.utc)
    assert events.height < 1_100
    assert set(events["key"]) <= set(keys_for_users(users_for(6_000)))
    plan = LoadTestPlan(phase_seconds=10.0, warmup_seconds=2.0, batch_size=10, rate_scale=0.1)
    keys = keys_for_users(users_for(6_000)).to_numpy()
    sched, upserts, reports = loadtest_requests(plan, events.head(50), keys, seed=3)
    assert upserts.height == sched["upsert"].height * 10          # 50 events cycled to fill every batch
    assert reports.height == sched["report"].height
    assert reports["end_date"].dt.year().unique().to_list() == [2020]
    assert (reports["end_date"].dt.hour() == 0).all()
    assert set(reports["key"]) <= set(keys)


def test_describe_shortfalls_names_missed_steps_and_side():
    from costlab.appversions.loadtest_summary import describe_shortfalls

    steps = pl.DataFrame(
        {
            "version": ["appVX"] * 3,
            "kind": ["report", "upsert", "report"],
            "phase": [1, 1, 2],
            "step": [1, 1, 3],
            "target_rate": [25.0, 250.0, 75.0],
            "achieved_rate": [25.0, 125.0, None],
            "met": [True, False, False],
            "behind": ["none", "server", "client"],
            "ops_ok": [25, 1, 0],
            "ops_planned": [25, 2, 3],
            "ops_error": [0, 0, 0],
            "ops_skipped": [0, 1, 3],
        }
    )
    text = describe_shortfalls(steps)
    assert text.splitlines()[0] == "appVX: 1 of 3 steps at target"
    assert (
        "upsert phase 1 step 1: target 250.0 events/s, achieved 125.0" in text
        and "the server fell behind" in text
    )
    assert (
        "report phase 2 step 3: target 75.0 requests/s, achieved none" in text
        and "the client fell behind" in text
    )
    assert "phase 1 step 1: target 25.0" not in text


@pytest.mark.parametrize("key, value, message", [
    ("phase_seconds", 0, "appversions.loadtest.phase_seconds"),
    ("upsert_workers", 0, "appversions.loadtest.upsert_workers"),
    ("versions", [UNKNOWN_VERSION], "appversions.loadtest.versions"),
    ("tolerance", 2, "appversions.loadtest.tolerance"),
])
def test_loadtest_config_rejects_bad_values_naming_the_key(key, value, message):
    from costlab.config import ConfigError, load_config

    with pytest.raises(ConfigError, match=message.replace(".", r"\.")):
        load_config(overrides={"appversions": {"loadtest": {key: value}}})


def test_loadtest_config_defaults_are_the_published_method():
    from costlab.config import load_config

    lt = load_config()["appversions"]["loadtest"]
    plan = LoadTestPlan.from_config(lt)
    assert plan.upsert_rates == (250.0, 500.0, 750.0, 1000.0)
    assert plan.report_rates == tuple(float(r) for r in range(25, 251, 25))
    assert plan.batch_size == 250 and lt["upsert_workers"] == lt["report_workers"] == 20
    from costlab.config import ROOT

    full = load_config(ROOT / "config" / "full.yaml")["appversions"]["loadtest"]
    assert full["phase_seconds"] == 3000                                # 4 x 50 minutes = 200 minutes


def test_run_loadtest_fails_fast_naming_the_version_when_workers_cannot_start(tmp_path):
    from costlab.appversions.loadtest_plan import loadtest_requests
    from costlab.appversions.loadtest_workers import run_loadtest

    plan = LoadTestPlan(phase_seconds=0.5, warmup_seconds=0, batch_size=5, rate_scale=0.01,
                        upsert_rates=(500.0,), report_rates=(100.0,))
    events = pl.DataFrame({"key": ["0" * 63 + "1"] * 5}).with_columns(
        pl.lit(None, pl.Datetime("ms", "UTC")).alias("date"), pl.lit("approved").alias("status"))
    sched, upserts, reports = loadtest_requests(plan, events, ["0" * 63 + "1"], seed=1)
    # an unknown version: the workers exit at start-up (get_version raises), the parent says so
    with pytest.raises(RuntimeError, match="appVnope.*exited with an error"):
        run_loadtest("mongodb://127.0.0.1:9/?serverSelectionTimeoutMS=200", "db", "coll", "appVnope", plan,
                     upserts, reports, sched, upsert_workers=1, report_workers=1, start_timeout_s=60)


def test_load_test_figure_shows_skipped_operations_and_call_durations():
    import json

    from costlab.appversions.figures import loadtest_chart

    rows = [("report", 0.1, 0.1, 0.11, "ok", 0.0, 0.0), ("report", 1.5, None, None, "skipped", None, None),
            ("upsert", 0.2, 0.2, 0.4, "ok", 0.0, 0.0), ("upsert", 1.6, None, None, "skipped", 0.0, 0.0)]
    bins = summarize_bins(raw_rows(rows), TWO_BIN_PLAN, bin_seconds=1.0)
    chart = loadtest_chart(bins, ("appVX",), "t", False, TWO_BIN_PLAN).to_dict()
    spec = json.dumps(chart)
    assert "not started (skipped) per bin" in spec
    assert '"skipped": 1' in spec.replace('"skipped":1', '"skipped": 1')
    assert "each call's own duration" in " ".join(
        chart["title"]["subtitle"]
    )  # the subtitle is wrapped in lines


def test_a_load_test_whose_phases_round_to_no_operation_is_refused_naming_the_key():
    from costlab.appversions.loadtest_plan import schedule as plan_schedule
    from costlab.config import ROOT, ConfigError, load_config

    with pytest.raises(
        ConfigError,
        # 25 reports/s x 0.0001 x the 30-s warm-up given here = 0.075
        match=r"appversions\.loadtest\.rate_scale: the warm-up Get Reports would plan 0\.075 operations",
    ):
        load_config(overrides={"appversions": {"loadtest": {"rate_scale": 0.0001, "warmup_seconds": 30}}})
    # the smoke config's phases plan operations (some of its steps none): accepted
    smoke = load_config(ROOT / "config" / "smoke.yaml")["appversions"]["loadtest"]
    sched = plan_schedule(LoadTestPlan.from_config(smoke))
    assert sched["upsert"]["phase"].unique().sort().to_list() == [1, 2, 3, 4]
    # just at the bound: one expected operation in the phase is planned
    at_bound = LoadTestPlan(phase_seconds=1.0, warmup_seconds=0, upsert_rates=(10.0,), report_rates=(1.0,),
                            batch_size=10)
    assert plan_schedule(at_bound)["upsert"].height == 1


def test_a_step_that_planned_no_operation_is_never_met():
    from costlab.appversions.loadtest_summary import describe_shortfalls

    # two report steps of 0.5 s at 1 request/s: the first plans none, the second one
    plan = LoadTestPlan(phase_seconds=1.0, warmup_seconds=0, upsert_rates=(10.0,), report_rates=(1.0, 1.0),
                        batch_size=10)
    sched = schedule(plan)
    raw = _done_in_5_ms(_both_kinds(sched))
    steps = summarize_phases(raw, plan)
    reports = steps.filter(pl.col("kind") == "report").sort("step")
    assert reports["ops_planned"].to_list() == [0, 1]
    assert reports["met"].to_list() == [None, True]
    text = describe_shortfalls(steps)
    assert text.startswith("appVX: 2 of 2 steps at target (2 steps planned no operation)")


def test_plan_and_summaries_import_no_worker_code():
    """The load test's roles: tables and figures read the plan and the summaries, which need neither
    the worker processes' module nor multiprocessing (checked in a fresh interpreter)."""
    import subprocess
    import sys

    code = ("import sys\nimport costlab.appversions.loadtest_plan, costlab.appversions.loadtest_summary\n"
            "print('multiprocessing' in sys.modules)\n"
            "import costlab.appversions.tables, costlab.appversions.figures\n"
            "print('costlab.appversions.loadtest_workers' in sys.modules)\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.split() == ["False", "False"]
