"""Figures of the appversions study (altair): storage per event, document size, load tests.

Load-test figures follow the comparisons the articles draw; a comparison is drawn when all its
versions were load tested. Published load tests exist only as prose (no series), so published
numbers appear as marks only where the articles give one (peak latencies, peak rates).
"""
from __future__ import annotations

import json
from pathlib import Path

import altair as alt
import polars as pl

from costlab.appversions.loadtest_plan import LoadTestPlan, segments
from costlab.appversions.names import (
    figure_names,  # noqa: F401 (re-exported: one source)
    loadtest_figures,
)
from costlab.appversions.registry import in_order
from costlab.inputs import read_csv, read_parquet
from costlab.repeats import repeat_values
from costlab.report.charts import (
    ENGINE_LABEL,
    PUBLISHED_COLOR,
    app_version_colors,
    coincidence_note,
    coincident_series,
    color_scale,
    compressor_text,
    save_chart,
    source_shape_scale,
    titled,
)

OPERATION_TITLES = {"report": "Get Reports (requests/s)", "upsert": "Bulk Upsert (events/s)"}


def _version_scale(versions) -> alt.Scale:
    """Each version's colour (report/palette.py), in registry order."""
    return color_scale(app_version_colors(in_order(versions)))


NOT_PUBLISHED = "not published"


def storage_per_event_frames(stats: pl.DataFrame, parts: tuple[str, ...] = ("data", "index"),
                             ours: str = "reproduced") -> tuple[pl.DataFrame, pl.DataFrame]:
    """(bar parts, not-published marks) of the storage-per-event chart.

    A bar stacks data and index bytes per event, so it is drawn only when both parts are known:
    a published bar with a missing part (appV6R4's data per event is not published) would read as
    the other part alone. Such a bar becomes a "not published" mark (version, source, missing).
    """
    rows, missing = [], []
    for rec in stats.iter_rows(named=True):
        for source, prefix in ((ours, ""), ("published", "published_")):
            values = {c: rec[f"{prefix}{c}_bytes_per_event"] for c in parts}
            absent = [c for c, v in values.items() if v is None]
            if absent and source == "published":
                missing.append({"version": rec["version"], "source": source,
                                "missing": f"{' and '.join(absent)} per event {NOT_PUBLISHED}"})
                continue
            rows += [{"version": rec["version"], "source": source, "component": c, "bytes_per_event": v}
                      for c, v in values.items() if v is not None]
    return (pl.DataFrame(rows, schema={"version": pl.Utf8, "source": pl.Utf8, "component": pl.Utf8,
                                        "bytes_per_event": pl.Float64}),
            pl.DataFrame(missing, schema={"version": pl.Utf8, "source": pl.Utf8, "missing": pl.Utf8}))


def storage_per_event_chart(
    stats: pl.DataFrame,
    stand_in: bool,
    parts: tuple[str, ...] = ("data", "index"),
    ours: str = "reproduced",
    title: str = "Storage per event by version (collStats size / events)",
    subtitle: str = "left bar: this run; right bar (faded): published, 500 million events",
    x_label: dict[str, str] | None = None,
    repeats: pl.DataFrame | None = None,
) -> alt.TopLevelMixin:
    """Bytes per event by version in stacked `parts` (columns <part>_bytes_per_event), ours beside the
    published.

    `x_label` optionally relabels versions on the axis (the engine lab adds each one's compressor).
    `repeats` (version, repeat, bytes_per_event): each repeat's first part, drawn as points on our bar, whose
    first part is their median (none, or an empty frame: the bars alone).
    """
    frame, missing = storage_per_event_frames(stats, parts, ours)
    order = in_order(stats["version"])
    axis = (
        alt.Axis(labelExpr=f"{json.dumps(x_label, ensure_ascii=False)}[datum.value] || datum.value")
        if x_label
        else alt.Axis()
    )
    x = alt.X("version:N", sort=order, title="app version", axis=axis)
    x_offset = alt.XOffset("source:N", sort=[ours, "published"], scale=alt.Scale(domain=[ours, "published"]))
    chart = alt.Chart(frame).mark_bar().encode(
        x=x, xOffset=x_offset,
        y=alt.Y("sum(bytes_per_event):Q", title=f"bytes per event ({' + '.join(parts)})"),
        color=alt.Color("component:N", scale=color_scale(dict(zip(parts, ("#4c78a8", "#f58518")))),
                        title="part"),
        # no legend: its black squares looked like no bar drawn; the subtitle says which bar is which
        opacity=alt.Opacity("source:N", scale=alt.Scale(domain=[ours, "published"], range=[1.0, 0.45]),
                            legend=None),
        tooltip=["version", "source", "component", alt.Tooltip("bytes_per_event:Q", format=".1f")],
    )
    if repeats is not None and repeats.height:
        points = alt.Chart(repeats.with_columns(pl.lit(ours).alias("source"))).mark_point(
            filled=True, size=28, color="#000000", opacity=0.8).encode(
            x=x, xOffset=x_offset, y=alt.Y("bytes_per_event:Q"),
            tooltip=["version", "repeat", alt.Tooltip("bytes_per_event:Q", format=".2f")])
        chart = alt.layer(chart, points)
    if missing.height:
        marks = (
            alt.Chart(missing)
            .mark_text(text="n/p", baseline="bottom", dy=-2, color=PUBLISHED_COLOR)
            .encode(x=x, xOffset=x_offset, y=alt.datum(0), tooltip=["version", "source", "missing"])
        )
        chart = alt.layer(chart, marks)
    if missing.height:
        subtitle += "; n/p: " + ", ".join(
            f"{r['version']} {r['missing']}" for r in missing.iter_rows(named=True)
        )
    return titled(chart.properties(width=alt.Step(18), height=280), title, stand_in, subtitle)


def document_size_chart(stats: pl.DataFrame, stand_in: bool) -> alt.TopLevelMixin:
    """Average document size by version: our bars, published diamonds on the same axis."""
    order = in_order(stats["version"])
    frame = pl.concat([
        stats.select("version", pl.col("avg_doc_bytes").cast(pl.Float64).alias("bytes"),
                     pl.lit("reproduced").alias("source")),
        stats.select("version", pl.col("published_avg_doc_bytes").cast(pl.Float64).alias("bytes"),
                     pl.lit("published").alias("source")),
    ]).drop_nulls("bytes")
    base = alt.Chart(frame).encode(x=alt.X("version:N", sort=order, title="app version"))
    bars = base.transform_filter(alt.datum.source == "reproduced").mark_bar().encode(
        y=alt.Y("bytes:Q", title="average document size (bytes)"),
        color=alt.Color("version:N", scale=_version_scale(order), legend=None),
        tooltip=["version", "source", alt.Tooltip("bytes:Q", format=".1f")])
    points = base.mark_point(filled=True, size=90, color=PUBLISHED_COLOR).encode(
        y="bytes:Q", shape=alt.Shape("source:N", scale=source_shape_scale(), title="source"),
        tooltip=["version", "source", alt.Tooltip("bytes:Q", format=".1f")])
    chart = alt.layer(bars, points).properties(width=alt.Step(28), height=280)
    return titled(chart, "Average document size by version", stand_in,
                  "bars and circles: this run (collStats avgObjSize); diamonds: published")


def _time_unit(total_seconds: float) -> tuple[str, float]:
    """Minutes for tests of ten minutes or more (the published 200), else seconds (smoke runs)."""
    return ("minutes", 60.0) if total_seconds >= 600 else ("seconds", 1.0)


def target_steps(plan: LoadTestPlan, divisor: float) -> pl.DataFrame:
    """The schedule's target rates as step lines: (kind, time, target_rate) incl. each step's end."""
    segs = segments(plan)
    starts = segs.select(
        "kind", (pl.col("start_s") / divisor).alias("time"), pl.col("events_per_s").alias("target_rate")
    )
    last = (
        segs.sort("end_s")
        .group_by("kind")
        .agg(pl.col("end_s").last(), pl.col("events_per_s").last())
        .select(
            "kind", (pl.col("end_s") / divisor).alias("time"), pl.col("events_per_s").alias("target_rate")
        )
    )
    upsert_warmup = (pl.DataFrame({"kind": ["upsert"], "time": [0.0], "target_rate": [0.0]})
                     if plan.warmup_seconds > 0 else None)
    parts = [starts, last] + ([upsert_warmup] if upsert_warmup is not None else [])
    return pl.concat(parts, how="vertical_relaxed").sort(["kind", "time"])


# The server metrics drawn under a load test (costlab.measure.sampler): panel title -> (metric, label, scale,
# rate).
METRIC_PANELS = {
    "WiredTiger cache (MB/s)": [
        ("wiredTiger.cache.bytes read into cache", "read into cache", 1e-6, True),
        ("wiredTiger.cache.bytes written from cache", "written from cache", 1e-6, True),
    ],
    "pages evicted (per s)": [
        ("wiredTiger.cache.modified pages evicted", "modified", 1.0, True),
        ("wiredTiger.cache.unmodified pages evicted", "unmodified", 1.0, True),
    ],
    "operations (opcounters, per s)": [
        ("opcounters.update", "update", 1.0, True),
        ("opcounters.command", "command", 1.0, True),
    ],
    "memory (MB)": [("mem.resident", "resident", 1.0, False), ("memory_bytes", "container", 1e-6, False)],
    "container CPU (cores) and block I/O (MB/s)": [
        ("cpu_seconds", "CPU", 1.0, True),
        ("block_read_bytes", "read", 1e-6, True),
        ("block_written_bytes", "written", 1e-6, True),
    ],
}
NOT_REPORTED = "not reported"


def read_server_metrics(paths: list[str | Path]) -> pl.DataFrame:
    """The load tests' server metrics (raw/server_metrics_<version>.parquet), with a version column."""

    frames = [
        read_parquet(path).with_columns(
            pl.lit(Path(path).stem.removeprefix("server_metrics_")).alias("version")
        )
        for path in paths
    ]
    return (
        pl.concat(frames, how="vertical_relaxed")
        if frames
        else pl.DataFrame(
            schema={
                "t_s": pl.Float64,
                "source": pl.Utf8,
                "metric": pl.Utf8,
                "value": pl.Float64,
                "version": pl.Utf8,
            }
        )
    )


def metric_series(metrics: pl.DataFrame, versions: tuple[str, ...]) -> pl.DataFrame:
    """(panel, series, version, t_s, value) for METRIC_PANELS: counters as per-second rates between
    samples, gauges as sampled; null where the server reports none."""
    parts = []
    for panel, series in METRIC_PANELS.items():
        for metric, label, scale, is_rate in series:
            rows = metrics.filter(pl.col("metric") == metric, pl.col("version").is_in(list(versions))).sort(
                "version", "t_s"
            )
            value = (
                (pl.col("value").diff() / pl.col("t_s").diff()).over("version")
                if is_rate
                else pl.col("value")
            )
            parts.append(
                rows.select(
                    pl.lit(panel).alias("panel"),
                    pl.lit(label).alias("series"),
                    "version",
                    "t_s",
                    (value * scale).alias("value"),
                )
            )
    return pl.concat(parts, how="vertical_relaxed") if parts else pl.DataFrame()


def metrics_row(metrics: pl.DataFrame, versions: tuple[str, ...], time_x: alt.X, divisor: float,
                scale: alt.Scale) -> alt.HConcatChart:
    """One panel per METRIC_PANELS entry on the load test's time axis; "not reported" where no value came."""
    series = metric_series(metrics, versions).with_columns((pl.col("t_s") / divisor).alias("time"))
    panels = []
    for panel in METRIC_PANELS:
        mine = series.filter(pl.col("panel") == panel).drop_nulls("value")
        if mine.height:
            chart = (
                alt.Chart(mine)
                .mark_line(clip=True)
                .encode(  # samples before and after the test: clipped
                    x=time_x,
                    y=alt.Y("value:Q", title=panel),
                    color=alt.Color("version:N", scale=scale, title="version"),
                    strokeDash=alt.StrokeDash("series:N", title="series"),
                    tooltip=[
                        "version",
                        "series",
                        alt.Tooltip("time:Q", format=".1f"),
                        alt.Tooltip("value:Q", format=".3g"),
                    ],
                )
            )
        else:
            chart = alt.Chart(pl.DataFrame({"text": [NOT_REPORTED]})).mark_text(size=14, color="#777").encode(
                text="text:N").properties(title=f"{panel}: {NOT_REPORTED} by this server")
        panels.append(chart.properties(width=170, height=150))
    return alt.hconcat(*panels)


def _rate_panel(
    part: pl.DataFrame, targets: pl.DataFrame, kind: str, time_x: alt.X, scale: alt.Scale
) -> alt.LayerChart:
    """Achieved rate per bin (lines) against the target (dashed steps) of one kind."""
    rates = part.select("time", "version", pl.col("achieved_rate").alias("rate"))
    rate_lines = alt.Chart(rates).mark_line(point=True).encode(
        x=time_x,
        y=alt.Y("rate:Q", title=OPERATION_TITLES[kind]),
        color=alt.Color("version:N", scale=scale, title="version"),
        tooltip=["version", alt.Tooltip("time:Q", format=".2f"), alt.Tooltip("rate:Q", format=".1f")])
    target_line = alt.Chart(targets.filter(pl.col("kind") == kind)).mark_line(
        color=PUBLISHED_COLOR, strokeDash=[4, 3], interpolate="step-after").encode(
        x=time_x, y="target_rate:Q", tooltip=[alt.Tooltip("target_rate:Q", title="target")])
    return alt.layer(target_line, rate_lines)


def rates_overlap_note(part: pl.DataFrame) -> str | None:
    """The versions whose achieved-rate lines lie on top of each other for most of the test (both kept up
    with the target, say), per operation; None when every version's line can be seen."""
    names = {kind: title.split(" (")[0] for kind, title in OPERATION_TITLES.items()}
    rates = part.with_columns(pl.col("kind").replace_strict(names, default=pl.col("kind")).alias("panel"))
    return coincidence_note(
        coincident_series(rates, "version", "time", "achieved_rate", "panel", min_share=0.5),
        "achieved rates: ",
    )


def authors_loadtest_chart(steps: pl.DataFrame, versions: tuple[str, ...], title: str, stand_in: bool,
                           plan: LoadTestPlan, metrics: pl.DataFrame | None = None) -> alt.TopLevelMixin:
    """The authors' closed-loop driver as their graphs show it: per kind, the rate by start time per
    step against the target, and latency per step as "mean" (the median, as their graphs label it),
    p90 and p95 (log); under them the server's metrics on the same time axis."""
    unit, divisor = _time_unit(plan.total_seconds)
    time_x = alt.X("time:Q", title=f"test time ({unit})",
                   scale=alt.Scale(domain=[0, plan.total_seconds / divisor], nice=False))
    mine = (steps.filter(pl.col("version").is_in(list(versions)))
            .with_columns(((pl.col("bin_start_s") + pl.col("bin_seconds") / 2) / divisor).alias("time")))
    targets, scale = target_steps(plan, divisor), _version_scale(versions)
    rows = []
    for kind in ("report", "upsert"):
        part = mine.filter(pl.col("kind") == kind)
        latency = (
            part.select(
                "time",
                "version",
                pl.col("mean_as_published_ms").alias("mean (median)"),
                pl.col("call_ms_p90").alias("p90"),
                pl.col("call_ms_p95").alias("p95"),
            )
            .unpivot(
                ["mean (median)", "p90", "p95"],
                index=["time", "version"],
                variable_name="statistic",
                value_name="latency_ms",
            )
            .drop_nulls("latency_ms")
            .filter(pl.col("latency_ms") > 0)
        )
        latency_lines = alt.Chart(latency).mark_line().encode(
            x=time_x, y=alt.Y("latency_ms:Q", scale=alt.Scale(type="log"),
                              title=f"{OPERATION_TITLES[kind].split(' (')[0]} latency (ms, log)"),
            color=alt.Color("version:N", scale=scale, title="version"),
            strokeDash=alt.StrokeDash("statistic:N", title="statistic"),
            tooltip=["version", "statistic", alt.Tooltip("latency_ms:Q", format=".1f")])
        rows.append(
            alt.hconcat(
                _rate_panel(part, targets, kind, time_x, scale).properties(width=330, height=200),
                latency_lines.properties(width=330, height=200),
            )
        )
    if metrics is not None:
        rows.append(metrics_row(metrics, versions, time_x, divisor, scale))
    subtitle = (
        "the authors' closed-loop driver (sleep 2·U·m − latency after each call): left, the rate of the "
        "calls "
        "started in each step vs the target (dashed); right, latency per step: 'mean' is the median, as "
        "the authors' graphs label it, with p90 and p95"
    )
    if metrics is not None:
        subtitle += (
            f"; bottom: the server's metrics during the test ('{NOT_REPORTED}' where the server gives none)"
        )
    overlap = rates_overlap_note(mine)
    subtitle += f"; {overlap}" if overlap else ""
    return titled(alt.vconcat(*rows).resolve_scale(color="shared"), title, stand_in, subtitle)


def build_authors_figures(
    steps_csv: str | Path,
    loadtest_versions: list[str],
    stand_in: bool,
    out_dir: str | Path,
    loadtest_settings: dict,
    metrics_paths: list[str | Path],
) -> list[Path]:
    """authors_<name> for every load-test figure name: PNG, SVG and Vega-Lite JSON; the PNG paths."""
    out_dir = Path(out_dir)
    plan = LoadTestPlan.from_config(loadtest_settings)
    steps = read_csv(steps_csv)
    metrics = read_server_metrics(list(metrics_paths))
    metrics = metrics.with_columns(pl.col("version").str.strip_prefix("authors_"))
    written = []
    for name, versions in loadtest_figures(loadtest_versions):
        label = "all load-tested versions" if name == "loadtest_all" else " vs ".join(versions)
        chart = authors_loadtest_chart(
            steps, versions, f"Load test, the authors' driver: {label}", stand_in, plan, metrics
        )
        paths = [out_dir / f"authors_{name}.{ext}" for ext in ("png", "svg", "vl.json")]
        save_chart(chart, *paths)
        written.append(paths[0])
    return written


def loadtest_chart(
    bins: pl.DataFrame,
    versions: tuple[str, ...],
    title: str,
    stand_in: bool,
    plan: LoadTestPlan,
    published_points: pl.DataFrame | None = None,
    metrics: pl.DataFrame | None = None,
) -> alt.TopLevelMixin:
    """2 x 3: rows Get Reports / Bulk Upsert; columns rate vs target, call duration p50/p99 (log), skipped
    ops;
    with `metrics` (read_server_metrics), a third row of the server's metrics on the same time axis."""
    unit, divisor = _time_unit(plan.total_seconds)
    time_title = f"test time ({unit})"
    # Every panel spans the whole test on the same axis, so panels line up (a latency panel used to
    # cover only the bins that had latencies, 0.4-2.6 s of a 9 s test).
    time_x = alt.X(
        "time:Q", title=time_title, scale=alt.Scale(domain=[0, plan.total_seconds / divisor], nice=False)
    )
    mine = (bins.filter(pl.col("version").is_in(list(versions)))
            .with_columns(((pl.col("bin_start_s") + pl.col("bin_seconds") / 2) / divisor).alias("time")))
    targets = target_steps(plan, divisor)
    scale = _version_scale(versions)
    rows = []
    for kind in ("report", "upsert"):
        part = mine.filter(pl.col("kind") == kind)
        rate_panel = _rate_panel(part, targets, kind, time_x, scale)
        # The primary latency: each call's own duration (loadtest_bins.csv also has from_intended_ms_*).
        latency = (part.select("time", "version", "call_ms_p50", "call_ms_p99")
                   .unpivot(["call_ms_p50", "call_ms_p99"], index=["time", "version"],
                            variable_name="percentile", value_name="latency_ms")
                   .with_columns(pl.col("percentile").str.replace("call_ms_", ""))
                   .drop_nulls("latency_ms").filter(pl.col("latency_ms") > 0))
        latency_lines = (
            alt.Chart(latency)
            .mark_line()
            .encode(
                x=time_x,
                y=alt.Y(
                    "latency_ms:Q",
                    scale=alt.Scale(type="log"),
                    title=f"{OPERATION_TITLES[kind].split(' (')[0]} latency (ms, log)",
                ),
                color=alt.Color("version:N", scale=scale, title="version"),
                strokeDash=alt.StrokeDash(
                    "percentile:N",
                    scale=alt.Scale(domain=["p50", "p99"], range=[[1, 0], [5, 3]]),
                    title="percentile",
                ),
                tooltip=["version", "percentile", alt.Tooltip("latency_ms:Q", format=".1f")],
            )
        )
        latency_layer = latency_lines
        if published_points is not None and published_points.height:
            pts = published_points.filter(pl.col("kind") == kind).with_columns(
                (pl.col("time_s") / divisor).alias("time"))
            if pts.height:
                latency_layer = alt.layer(latency_lines, alt.Chart(pts).mark_point(
                    shape="diamond", filled=True, size=90, color=PUBLISHED_COLOR).encode(
                    x=time_x, y="latency_ms:Q",
                    tooltip=["label:N", alt.Tooltip("latency_ms:Q", format=".0f")]))
        # Operations that never started (the test ended first): counted per bin, shown, never hidden.
        skipped = part.select("time", "version", pl.col("ops_skipped").cast(pl.Int64).alias("skipped"))
        skipped_marks = (
            alt.Chart(skipped)
            .mark_line(point=True)
            .encode(
                x=time_x,
                y=alt.Y(
                    "skipped:Q",
                    title=f"{OPERATION_TITLES[kind].split(' (')[0]}: not started (skipped) per bin",
                ),
                color=alt.Color("version:N", scale=scale, title="version"),
                tooltip=["version", alt.Tooltip("time:Q", format=".2f"), "skipped:Q"],
            )
        )
        rows.append(alt.hconcat(rate_panel.properties(width=330, height=200),
                                latency_layer.properties(width=330, height=200),
                                skipped_marks.properties(width=220, height=200)))
    if metrics is not None:
        rows.append(metrics_row(metrics, versions, time_x, divisor, scale))
    chart = alt.vconcat(*rows).resolve_scale(color="shared")
    subtitle = (
        "left: achieved rate per bin (lines) vs target (dashed steps); middle: each call's own duration, "
        "p50 solid, p99 dashed (latency from the intended start: loadtest_bins.csv); right: operations "
        "that never started, per bin"
    )
    if metrics is not None:
        subtitle += ("; bottom: the server's metrics sampled during the test (serverStatus, docker stats; "
                     f"'{NOT_REPORTED}' where the server gives none)")
    if published_points is not None and published_points.height:
        subtitle += "; diamonds: published peak latency per phase"
    overlap = rates_overlap_note(mine)
    subtitle += f"; {overlap}" if overlap else ""
    return titled(chart, title, stand_in, subtitle)


def published_latency_points(facts: pl.DataFrame, versions: tuple[str, ...], warmup_seconds: float,
                             phase_seconds: float) -> pl.DataFrame:
    """Published peak latencies per phase (ms) placed at each phase's middle on our time axis (s)."""
    peaks = facts.filter((pl.col("metric") == "latency_max") & pl.col("phase").is_not_null()
                         & pl.col("version").is_in(list(versions)))
    return peaks.select(
        pl.when(pl.col("operation") == "bulk_upsert")
        .then(pl.lit("upsert"))
        .otherwise(pl.lit("report"))
        .alias("kind"),
        (warmup_seconds + (pl.col("phase") - 0.5) * phase_seconds).alias("time_s"),
        pl.col("value").cast(pl.Float64).alias("latency_ms"),
        (
            pl.col("version")
            + pl.lit(" published peak, phase ")
            + pl.col("phase").cast(pl.Int64).cast(pl.Utf8)
        ).alias("label"),
    )


def build_figures(collection_stats_csv: str | Path, bins_csv: str | Path, facts_csv: str | Path,
                  loadtest_versions: list[str], stand_in: bool, out_dir: str | Path,
                  loadtest_settings: dict, metrics_paths: list[str | Path] | None = None) -> list[Path]:
    """Write every figure as PNG, SVG and Vega-Lite JSON; return the PNG paths. metrics_paths: the load
    tests' server metrics, drawn under each load-test figure."""
    out_dir = Path(out_dir)
    plan = LoadTestPlan.from_config(loadtest_settings)
    stats = read_csv(collection_stats_csv)
    bins = read_csv(bins_csv)
    facts = read_csv(facts_csv)
    metrics = read_server_metrics(list(metrics_paths)) if metrics_paths is not None else None
    charts = {"storage_per_event": storage_per_event_chart(stats, stand_in),
              "document_size": document_size_chart(stats, stand_in)}
    for name, versions in loadtest_figures(loadtest_versions):
        label = "all load-tested versions" if name == "loadtest_all" else " vs ".join(versions)
        points = None if name == "loadtest_all" else published_latency_points(
            facts, versions, plan.warmup_seconds, plan.phase_seconds)
        charts[name] = loadtest_chart(bins, versions, f"Load test: {label}", stand_in, plan, points, metrics)
    written = []
    for name, chart in charts.items():
        paths = [out_dir / f"{name}.{ext}" for ext in ("png", "svg", "vl.json")]
        save_chart(chart, *paths)
        written.append(paths[0])
    return written


# ---- the engine lab (docs/engine-lab.md): each version stored by WiredTiger, no server --------------
ENGINE_SOURCE = "WiredTiger engine lab"


def engine_storage_per_event_chart(storage: pl.DataFrame) -> alt.TopLevelMixin:
    """Collection storage + index bytes per event by version (engine/storage.csv) beside the published.

    Each version's axis label names its block compressor (used, and wanted where that was not available).
    """
    labels = {
        r["version"]: (
            f"{r['version']} ({r['block_compressor']})"
            if r["block_compressor"] == r["block_compressor_wanted"]
            else f"{r['version']} ({r['block_compressor_wanted']}→{r['block_compressor']})"
        )
        for r in storage.iter_rows(named=True)
    }
    compressor = compressor_text(
        set(storage["block_compressor"].cast(pl.Utf8).to_list()),
        set(storage["block_compressor_wanted"].cast(pl.Utf8).to_list()),
        "block compressor",
    )
    events = sorted(set(storage["events"].to_list()))
    subtitle = (
        f"{ENGINE_LABEL}; {compressor} (per version on the axis: wanted→used); left bar: engine lab, "
        f"{', '.join(f'{e:,}' for e in events)} events; right bar (faded): published, 500 million events"
    )
    repeats = storage_repeats(storage)
    if repeats.height:
        counts = sorted(set(repeats.group_by("version").len()["len"].to_list()))
        subtitle += (f"; dots: each of {' or '.join(map(str, counts))} repeats' storage + index per event "
                     "(each part of the bar: the repeats' median)")
    return storage_per_event_chart(storage, False, parts=("storage", "index"), ours=ENGINE_SOURCE,
                                   title="Storage per event by version on WiredTiger (engine lab)",
                                   subtitle=subtitle, x_label=labels, repeats=repeats)


def storage_repeats(storage: pl.DataFrame) -> pl.DataFrame:
    """(version, repeat, bytes_per_event): each repeat's storage + index bytes per event
    (storage_bytes_repeats and index_bytes_repeats over the version's events; without the index's: its median)
    for the versions measured more than once, where the bar's top is; empty for one repeat (and a table
    from before repeats)."""

    rows = []
    for r in storage.iter_rows(named=True):
        stored = repeat_values(r, "storage_bytes")
        if not r.get("events") or len(stored) < 2:
            continue
        index = repeat_values(r, "index_bytes")
        index = index if len(index) == len(stored) else [float(r.get("index_bytes") or 0.0)] * len(stored)
        rows += [{"version": r["version"], "repeat": i, "bytes_per_event": (s + x) / r["events"]}
                 for i, (s, x) in enumerate(zip(stored, index, strict=True), start=1)]
    return pl.DataFrame(rows, schema={"version": pl.Utf8, "repeat": pl.Int64, "bytes_per_event": pl.Float64})


def build_engine_figure(storage_csv: str | Path, outputs: list[str | Path]) -> None:
    """Write the engine-lab figure to each of `outputs` (png, svg, vl.json)."""
    save_chart(engine_storage_per_event_chart(read_csv(storage_csv)), *outputs)
