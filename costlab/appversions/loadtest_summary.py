"""The load test's summaries: per time bin and per step, what the plan asked against what completed.

Whether a target was met is judged per time bin inside each step, from the operations that
completed within that bin; skipped operations count against the achieved rate. The per-bin
summary uses each operation's lateness split (queue_wait_ms, client_lag_ms; loadtest_workers.py)
to say whether the client or the server fell behind when a target was not met. No
multiprocessing here: tables.py reads only this and the plan.
"""
from __future__ import annotations

import numpy as np
import polars as pl

from costlab.appversions.loadtest_plan import LATENCIES, LoadTestPlan, segments


def step_bins(plan: LoadTestPlan, bin_seconds: float | None = None) -> pl.DataFrame:
    """Time bins inside every (kind, phase, step) of constant target rate.

    A step is cut into bins of bin_seconds from its own start (None: one bin per step; a bin
    never crosses a step boundary, the last one of a step may be shorter). Columns: kind, phase,
    step, bin (within the step), bin_start_s, bin_end_s, events_per_s (the step's target).
    """
    if bin_seconds is not None and not bin_seconds > 0:
        raise ValueError(f"bin_seconds must be > 0 or null, got {bin_seconds!r}")
    segs = segments(plan)
    length = (segs["end_s"] - segs["start_s"]).to_numpy()
    size = length if bin_seconds is None else np.minimum(length, float(bin_seconds))
    counts = np.maximum(1, np.ceil(length / size - 1e-9)).astype(np.int64)
    index = np.repeat(np.arange(segs.height), counts)
    within = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
    starts = segs["start_s"].to_numpy()[index] + within * size[index]
    ends = np.minimum(starts + size[index], segs["end_s"].to_numpy()[index])
    return segs[index].select("kind", "phase", "step", "events_per_s").with_columns(
        pl.Series("bin", within, dtype=pl.Int64), pl.Series("bin_start_s", starts),
        pl.Series("bin_end_s", ends)).sort("kind", "bin_start_s")


def in_bins(ops: pl.DataFrame, bins: pl.DataFrame, time_col: str) -> pl.DataFrame:
    """Each operation with the (phase, step, bin) whose [start, end) holds its time_col; others dropped."""
    keys = bins.select("kind", pl.col("phase").alias("bin_phase"), pl.col("step").alias("bin_step"), "bin",
                       "bin_start_s", "bin_end_s")
    # Both sides sorted by time (hence within each kind too), which polars cannot check with `by`.
    joined = (ops.filter(pl.col(time_col).is_not_null()).sort(time_col)
              .join_asof(keys.sort("bin_start_s"), left_on=time_col, right_on="bin_start_s", by="kind",
                         strategy="backward", check_sortedness=False))
    return joined.filter(pl.col(time_col) < pl.col("bin_end_s"))


def _latency_aggs(prefix_filter: pl.Expr, quantiles: tuple[float, ...]) -> list[pl.Expr]:
    aggs = []
    for value in LATENCIES:
        ok = pl.col(value).filter(prefix_filter)
        aggs += [
            ok.quantile(q, interpolation="linear").alias(f"{value}_p{round(q * 100)}") for q in quantiles
        ]
        aggs += [ok.mean().alias(f"{value}_mean"), ok.max().alias(f"{value}_max")]
    return aggs


def _operation_counts(ok: pl.Expr) -> list[pl.Expr]:
    """A group's operations: planned, ok, failed, skipped, and the time they queued and lagged."""
    return [pl.len().alias("ops_planned"), ok.sum().alias("ops_ok"),
            (pl.col("status") == "error").sum().alias("ops_error"),
            (pl.col("status") == "skipped").sum().alias("ops_skipped"),
            pl.col("queue_wait_ms").sum().alias("queue_wait_ms_total"),
            pl.col("client_lag_ms").sum().alias("client_lag_ms_total")]


def _per_bin(
    raw: pl.DataFrame, plan: LoadTestPlan, bin_seconds: float | None, tolerance: float
) -> pl.DataFrame:
    """Every bin of every step: what the schedule asked, what completed in it, latencies, met, who fell
    behind."""
    bins = step_bins(plan, bin_seconds)
    version = raw["version"][0] if raw.height else None
    keys = ["kind", "bin_phase", "bin_step", "bin"]
    ok = pl.col("status") == "ok"
    # What the bin asked for: operations intended in it (the schedule's whole operations).
    asked = (
        in_bins(raw, bins, "intended_s")
        .group_by(keys)
        .agg(
            pl.col("events").sum().alias("target_events"),
            *_operation_counts(ok),
            pl.col("client_lag_ms").quantile(0.95).alias("client_lag_ms_p95"),
            *_latency_aggs(ok, (0.5, 0.9, 0.95, 0.99)),
        )
    )
    # What the bin achieved: successful operations that completed within it.
    done = (
        in_bins(raw.filter(ok), bins, "end_s")
        .group_by(keys)
        .agg(pl.col("events").sum().alias("achieved_events"), pl.len().alias("ops_completed"))
    )
    frame = (
        bins.rename({"phase": "bin_phase", "step": "bin_step"})
        .join(asked, on=keys, how="left")
        .join(done, on=keys, how="left")
        .rename({"bin_phase": "phase", "bin_step": "step"})
        .with_columns(
            pl.col(
                "target_events",
                "achieved_events",
                "ops_planned",
                "ops_ok",
                "ops_error",
                "ops_skipped",
                "ops_completed",
                "queue_wait_ms_total",
                "client_lag_ms_total",
            ).fill_null(0),
            (pl.col("bin_end_s") - pl.col("bin_start_s")).alias("bin_seconds"),
            pl.lit(version, dtype=pl.Utf8).alias("version"),
        )
    )
    met = pl.col("achieved_events") >= (1 - tolerance) * pl.col("target_events")
    return frame.with_columns(
        (pl.col("target_events") / pl.col("bin_seconds")).alias("target_rate"),
        (pl.col("achieved_events") / pl.col("bin_seconds")).alias("achieved_rate"),
        met.alias("met"),
        _behind(met, skipped_counts=True).alias("behind"),
    )


def _behind(met: pl.Expr, skipped_counts: bool) -> pl.Expr:
    """none when met; server for errors, skips after waiting on responses, or more waiting than lag; else
    client."""
    server_side = (pl.col("ops_error") > 0) | (pl.col("queue_wait_ms_total") >= pl.col("client_lag_ms_total"))
    if skipped_counts:
        server_side = server_side | (pl.col("ops_skipped") > 0) & (pl.col("queue_wait_ms_total") > 0)
    return (
        pl.when(met).then(pl.lit("none")).when(server_side).then(pl.lit("server")).otherwise(pl.lit("client"))
    )


LATENCY_COLUMNS = [f"{v}_{s}" for v in LATENCIES for s in ("p50", "p90", "p95", "p99", "mean", "max")]
BIN_COLUMNS = ["version", "kind", "phase", "step", "bin", "bin_start_s", "bin_seconds", "target_rate",
               "achieved_rate", "met", "behind", "ops_planned", "ops_completed", "ops_error", "ops_skipped",
               *LATENCY_COLUMNS, "queue_wait_ms_total", "client_lag_ms_total", "client_lag_ms_p95"]
STEP_COLUMNS = ["version", "kind", "phase", "step", "start_s", "step_seconds", "target_rate", "achieved_rate",
                "met", "bins", "bins_met", "behind", "ops_planned", "ops_ok", "ops_error", "ops_skipped",
                "call_ms_p50", "call_ms_p95", "call_ms_max", "from_intended_ms_p50", "from_intended_ms_p95",
                "from_intended_ms_max", "queue_wait_ms_total", "client_lag_ms_total"]


def summarize_bins(
    raw: pl.DataFrame, plan: LoadTestPlan, bin_seconds: float | None = None, tolerance: float = 0.05
) -> pl.DataFrame:
    """Per (version, kind, phase, step, bin inside the step): target vs achieved, latencies, met, who fell
    behind.

    target_rate: events/s (upserts) or requests/s (reports) of the operations intended in the bin.
    achieved_rate: events or requests of successful operations that completed within the bin.
    met: achieved >= (1 - tolerance) * target, in this bin. Latencies are over the successful
    operations intended in the bin: call_ms_* (each call's own duration, the primary latency) and
    from_intended_ms_* (from the intended start: includes waiting for a free worker). ops_skipped:
    operations of the bin that never started. When not met, `behind` says which side lost the
    time: "server" when the delay was mostly workers waiting on responses (or errors from the
    server), "client" when it was mostly workers starting late while free.
    """
    return (
        _per_bin(raw, plan, bin_seconds, tolerance)
        .select(BIN_COLUMNS)
        .sort(["version", "kind", "phase", "step", "bin"])
    )


def summarize_phases(
    raw: pl.DataFrame, plan: LoadTestPlan, tolerance: float = 0.05, bin_seconds: float | None = None
) -> pl.DataFrame:
    """Per (version, kind, phase, step): target vs achieved, whether every bin met it, latencies, who fell
    behind.

    The step is the published unit of constant target rate (a tenth of a phase). met: every time
    bin of the step (summarize_bins, bin_seconds) met its target from the operations completed
    within it; bins / bins_met say how many. achieved_rate: events of the successful operations
    that completed within the step per second (None when the step asked for nothing and nothing
    completed in it). Latencies over the successful operations intended in the step.
    """
    per_bin = _per_bin(raw, plan, bin_seconds, tolerance)
    ok = pl.col("status") == "ok"
    steps_of = (
        raw.filter(pl.col("phase").is_not_null())
        .group_by(["kind", "phase", "step"])
        .agg(
            *_operation_counts(ok),
            *_latency_aggs(ok, (0.5, 0.95)),
        )
    )
    from_bins = per_bin.group_by(["kind", "phase", "step"]).agg(
        pl.len().alias("bins"),
        pl.col("met").sum().alias("bins_met"),
        pl.col("met").all().alias("met"),
        pl.col("achieved_events").sum().alias("achieved_events"),
        pl.col("ops_completed").sum().alias("ops_completed"),
    )
    version = raw["version"][0] if raw.height else None
    segs = segments(plan).with_columns((pl.col("end_s") - pl.col("start_s")).alias("step_seconds"))
    frame = (
        segs.join(from_bins, on=["kind", "phase", "step"], how="left")
        .join(steps_of, on=["kind", "phase", "step"], how="left")
        .with_columns(
            pl.lit(version, dtype=pl.Utf8).alias("version"),
            pl.col(
                "ops_planned",
                "ops_ok",
                "ops_error",
                "ops_skipped",
                "achieved_events",
                "ops_completed",
                "queue_wait_ms_total",
                "client_lag_ms_total",
            ).fill_null(0),
        )
        .with_columns(
            pl.when((pl.col("ops_planned") > 0) | (pl.col("ops_completed") > 0))
            .then(pl.col("achieved_events") / pl.col("step_seconds"))
            .otherwise(None)
            .alias("achieved_rate"),
            pl.col("events_per_s").alias("target_rate"),
        )
    )
    # A step that planned no operation measured nothing: neither met nor missed (null).
    frame = frame.with_columns(
        pl.when(pl.col("ops_planned") > 0).then(pl.col("met")).otherwise(None).alias("met")
    )
    frame = frame.with_columns(
        pl.when(pl.col("met").is_null())
        .then(pl.lit("none"))
        .otherwise(_behind(pl.col("met"), skipped_counts=False))
        .alias("behind")
    )
    return frame.select(STEP_COLUMNS).sort(["version", "kind", "phase", "step"])


def describe_operations(raw: pl.DataFrame) -> str:
    """What a load test ran, judged against nothing: its operations ok, failed and never started (the
    load-test job's log; whether each step met its target is describe_shortfalls', at the tables'
    tolerance)."""
    planned = raw.filter(pl.col("phase").is_not_null())
    counts = {status: planned.filter(pl.col("status") == status).height
              for status in ("ok", "error", "skipped")}
    version = raw["version"][0] if raw.height else "?"
    return (
        f"{version}: {counts['ok']} of {planned.height} operations ok, {counts['error']} errors, "
        f"{counts['skipped']} not started (steps at target: appversions_tables' log, judged at "
        "appversions.loadtest.tolerance and bin_seconds)\n"
    )


def describe_shortfalls(steps: pl.DataFrame) -> str:
    """One line per step whose target was not met, saying who fell behind; a summary line first."""
    missed = steps.filter(~pl.col("met"))
    planned = steps.filter(pl.col("met").is_not_null()).height
    empty = steps.height - planned
    lines = [
        f"{steps['version'][0] if steps.height else '?'}: {planned - missed.height} of {planned} "
        f"steps at target" + (f" ({empty} steps planned no operation)" if empty else "")
    ]
    for rec in missed.iter_rows(named=True):
        what = "events/s" if rec["kind"] == "upsert" else "requests/s"
        achieved = "none" if rec["achieved_rate"] is None else f"{rec['achieved_rate']:.1f}"
        lines.append(
            f"  {rec['kind']} phase {rec['phase']} step {rec['step']}: target {rec['target_rate']:.1f} "
            f"{what}, achieved {achieved} ({rec['ops_ok']} of {rec['ops_planned']} operations ok, "
            f"{rec['ops_error']} errors, {rec['ops_skipped']} not started) - the {rec['behind']} fell behind"
        )
    return "\n".join(lines) + "\n"
