"""The study's figures: time by size per shape and cache setting, bytes read into cache, server vs client
time.

Reproduced medians are lines with filled points; published values are hollow diamonds of the
same colour on the same axes. Values the server did not report are left out (never drawn as 0)
and the subtitle says so.
"""
from __future__ import annotations

import math
from pathlib import Path

import altair as alt
import polars as pl

from costlab.docsize import SHAPE_COLORS
from costlab.docsize.engine import COLD_PER_SHAPE
from costlab.docsize.names import (
    FIGURES,  # noqa: F401 (re-exported: one source, tests/test_rule_imports.py)
    RUNS,
)
from costlab.docsize.run import SHAPES
from costlab.inputs import read_csv
from costlab.report.charts import (
    ENGINE_LABEL,
    coincidence_note,
    coincident_series,
    color_scale,
    compressor_text,
    save_chart,
    titled,
)

SHAPE_LABELS = {"whole": "whole documents", "projection": "projection, two fields", "covered": "covered"}
RUN_ORDER = [RUNS[name].label for name in RUNS]
SOURCE_SHAPES = {"reproduced (median)": "circle", "published": "diamond"}
_BYTES_LABEL = (
    "datum.value >= 1e9 ? datum.value / 1e9 + ' GB' : datum.value >= 1e6 ? datum.value / 1e6 + ' MB'"
    " : datum.value >= 1e3 ? datum.value / 1e3 + ' kB' : datum.value + ' B'"
)


def _long(summary: pl.DataFrame, published: pl.DataFrame, measure: str, metric: str) -> pl.DataFrame:
    mine = summary.filter((pl.col("variant") == "base") & (pl.col("family") == "window")).select(
        "run", "size_kb", "shape", pl.col(f"{measure}_p50").alias("value"),
        pl.lit("reproduced (median)").alias("source"))
    theirs = published.filter(pl.col("metric") == metric).select(
        "run", pl.col("size_kb").cast(pl.Int64), "shape", pl.col("value").cast(pl.Float64),
        pl.lit("published").alias("source"))
    labels = pl.DataFrame({"run": list(RUNS), "cache_setting": RUN_ORDER})
    frame = pl.concat([mine.with_columns(pl.col("size_kb").cast(pl.Int64)), theirs], how="vertical_relaxed")
    return frame.join(labels, on="run").with_columns(
        pl.col("shape").replace_strict(SHAPE_LABELS, default=pl.col("shape")).alias("query"))


def _missing_note(frame: pl.DataFrame, what: str) -> str | None:
    mine = frame.filter(pl.col("source") != "published")
    if len(mine) and mine["value"].null_count() == len(mine):
        return f"{what}: not reported by this server (missing, not 0) — only published points shown"
    return None


def _size_x() -> alt.X:
    return alt.X(
        "size_kb:Q",
        title="document size (KB, log scale)",
        scale=alt.Scale(type="log", base=2, nice=False),
        axis=alt.Axis(values=[1, 2, 4, 8, 16, 32, 64, 128]),
    )


def _layers(data: pl.DataFrame, y: alt.Y, color: alt.Color, detail: str, tooltip: list,
            shapes: dict[str, str] = SOURCE_SHAPES) -> alt.LayerChart:
    """Reproduced: lines with circles; published: diamonds of the same colour. Both are drawn hollow, as the
    shared legend draws them (a filled circle beside a hollow legend symbol read as another series);
    a `note` column, when there, is written beside its point (e.g. 'all 3 queries at 0 B here')."""
    shape = alt.Shape("source:N", title="values", scale=color_scale(shapes))
    base = alt.Chart(data)
    mine = base.transform_filter(alt.datum.source != "published")
    lines = mine.mark_line(opacity=0.8).encode(x=_size_x(), y=y, color=color, detail=detail)
    points = mine.mark_point(size=70, filled=False, strokeWidth=2, opacity=0.95).encode(
        x=_size_x(), y=y, color=color, shape=shape, tooltip=tooltip)
    published = (
        base.transform_filter(alt.datum.source == "published")
        .mark_point(size=130, filled=False, strokeWidth=2.2)
        .encode(x=_size_x(), y=y, color=color, shape=shape, tooltip=tooltip)
    )
    layers = [lines, points, published]
    if "low" in data.columns and data["low"].drop_nulls().len():
        # each point's interval (the mean's over its queries) as an error bar, its mean as a tick
        bars = base.transform_filter("isValid(datum.low)")
        interval_tooltip = ["cache_setting:N", "query:N", "size_kb:Q", alt.Tooltip("mean:Q", format=",.0f"),
                            alt.Tooltip("low:Q", format=",.0f"), alt.Tooltip("high:Q", format=",.0f")]
        layers += [bars.mark_rule(strokeWidth=1.5, opacity=0.7).encode(
                       x=_size_x(), y=alt.Y("low:Q"), y2="high:Q", color=color, tooltip=interval_tooltip),
                   bars.mark_tick(thickness=1.5, size=10, opacity=0.9).encode(
                       x=_size_x(), y=alt.Y("mean:Q"), color=color, tooltip=interval_tooltip)]
    if "note" in data.columns:
        layers.append(base.transform_filter("isValid(datum.note)").mark_text(
            align="left", dx=8, dy=-12, fontSize=11, color="#333").encode(x=_size_x(), y=y, text="note:N"))
    return alt.layer(*layers)


def _lines_and_points(frame: pl.DataFrame, y: alt.Y, tooltip_title: str,
                      shapes: dict[str, str] = SOURCE_SHAPES) -> alt.LayerChart:
    color = alt.Color(
        "query:N", title="query", scale=color_scale({SHAPE_LABELS[s]: SHAPE_COLORS[s] for s in SHAPES})
    )
    tooltip = [
        "cache_setting:N",
        "query:N",
        "source:N",
        "size_kb:Q",
        alt.Tooltip("value:Q", title=tooltip_title),
    ]
    return _layers(frame.filter(pl.col("value").is_not_null()), y, color, "query:N", tooltip, shapes)


def _subtitle(window_minutes: int | None, note: str | None) -> str | None:
    parts = []
    if window_minutes is not None:
        parts.append(f"{window_minutes:,} orders per query (published: 1,000)")
    if note:
        parts.append(note)
    return "; ".join(parts) or None


def overlap_subtitle(frame: pl.DataFrame, series: str, panel: str, subtitle: str | None,
                     noted: tuple[str, ...] = ()) -> str | None:
    """`subtitle` and, per source (but those in `noted`, whose points carry their own note), the series that
    lie on top of each other (e.g. 'published: projection, two fields and whole documents coincide at 64
    KB')."""
    notes = [coincidence_note(coincident_series(frame.filter(pl.col("source") == source), series, "size_kb",
                                                "value", panel, "{} KB"), f"{source}: ")
             for source in frame["source"].unique(maintain_order=True).to_list() if source not in noted]
    return "; ".join(filter(None, [subtitle, *notes])) or None


def _by_cache_setting(frame: pl.DataFrame, y: alt.Y, unit: str, title: str, stand_in: bool,
                      subtitle: str | None, shapes: dict[str, str] = SOURCE_SHAPES,
                      order: list[str] | None = None, noted: tuple[str, ...] = ()) -> alt.TopLevelMixin:
    """Lines and points per query shape, one panel per cache setting (in `order`, RUN_ORDER by default)."""
    chart = _lines_and_points(frame, y, unit, shapes).properties(width=220, height=220).facet(
        column=alt.Column("cache_setting:N", title=None, sort=order or RUN_ORDER))
    return titled(chart, title, stand_in, overlap_subtitle(frame, "query", "cache_setting", subtitle, noted))


def time_by_size_chart(summary: pl.DataFrame, published: pl.DataFrame, stand_in: bool,
                       window_minutes: int | None = None) -> alt.TopLevelMixin:
    frame = _long(summary, published, "client_ms", "client_ms")
    y = alt.Y("value:Q", title="client time per query, median (ms, log scale)", scale=alt.Scale(type="log"))
    return _by_cache_setting(frame, y, "ms", "Query time by document size, three query shapes", stand_in,
                             _subtitle(window_minutes, _missing_note(frame, "client time")))


def symlog_axis_top(largest: float | None, floor: float = 1e4) -> float:
    """The power of ten at or above the largest value (at least `floor`)."""
    if largest is None or not largest > floor:
        return floor
    return 10.0 ** math.ceil(math.log10(largest))


def bytes_read_chart(summary: pl.DataFrame, published: pl.DataFrame, stand_in: bool,
                     window_minutes: int | None = None) -> alt.TopLevelMixin:
    frame = _long(summary, published, "bytes_read_into_cache", "bytes_read_into_cache")
    return _by_cache_setting(
        frame,
        _bytes_read_y(frame),
        "bytes",
        "Bytes read into the cache by document size and query shape",
        stand_in,
        _subtitle(window_minutes, _missing_note(frame, "bytes read into cache")),
    )


def _bytes_read_y(frame: pl.DataFrame) -> alt.Y:
    # symlog keeps the published 0 KB (covered, 1 KB) on a log-like axis without inventing a value.
    # The axis ends at the power of ten above the largest value, so the top values have a labelled tick.
    # (a CSV column the server left empty reads as text: compare numbers)
    top = symlog_axis_top(frame["value"].cast(pl.Float64, strict=False).max() if frame.height else None)
    return alt.Y("value:Q", title="bytes read into cache per query (median, symlog)",
                 scale=alt.Scale(type="symlog", constant=1000, domain=[0, top], nice=False),
                 axis=alt.Axis(values=[0, *(10.0 ** k for k in range(3, int(math.log10(top)) + 1))],
                               labelExpr=_BYTES_LABEL))


def server_vs_client_chart(summary: pl.DataFrame, published: pl.DataFrame, stand_in: bool,
                           window_minutes: int | None = None) -> alt.TopLevelMixin:
    client = _long(summary, published, "client_ms", "client_ms").with_columns(
        pl.lit("client wall time").alias("timing")
    )
    server = _long(summary, published, "server_ms", "server_ms").with_columns(
        pl.lit("server time (opLatencies)").alias("timing")
    )
    frame = pl.concat([client, server], how="vertical_relaxed")
    note = _missing_note(server, "server time")
    data = frame.filter(pl.col("value").is_not_null())
    colors = {"client wall time": "#4c78a8", "server time (opLatencies)": "#f58518"}
    color = alt.Color("timing:N", title="timing", scale=color_scale(colors))
    y = alt.Y("value:Q", title="ms per query (median, log)", scale=alt.Scale(type="log"))
    tooltip = ["cache_setting:N", "query:N", "timing:N", "source:N", "size_kb:Q", "value:Q"]
    layers = _layers(data, y, color, "timing:N", tooltip)
    chart = layers.properties(width=180, height=160).facet(
        column=alt.Column("query:N", title=None, sort=[SHAPE_LABELS[s] for s in SHAPES]),
        row=alt.Row(
            "cache_setting:N",
            title=None,
            sort=RUN_ORDER,
            header=alt.Header(labelOrient="top", labelAngle=0, labelAnchor="start", labelFontWeight="bold"),
        ),
    )
    panels = data.with_columns(pl.format("{}, {}", "cache_setting", "query").alias("panel"))
    return titled(chart, "Server time vs client time (decoding included)", stand_in,
                  overlap_subtitle(panels, "timing", "panel", _subtitle(window_minutes, note)))


def build_figures(summary_path: str | Path, published_queries: str | Path, stand_in: bool,
                  out_dir: str | Path, window_minutes: int | None = None) -> list[Path]:
    """Write <name>.png, .svg and .vl.json for every figure; return the paths written."""
    summary = read_csv(summary_path, infer_schema_length=None)
    published = read_csv(published_queries)
    charts = {"time_by_size": time_by_size_chart(summary, published, stand_in, window_minutes),
              "bytes_read": bytes_read_chart(summary, published, stand_in, window_minutes),
              "server_vs_client": server_vs_client_chart(summary, published, stand_in, window_minutes)}
    written = []
    for name, chart in charts.items():
        paths = [Path(out_dir) / f"{name}.{ext}" for ext in ("png", "svg", "vl.json")]
        save_chart(chart, *paths)
        written += paths
    return written


# ---- the engine lab (docs/engine-lab.md): WiredTiger driven like mongod, no server ------------------
ENGINE_SOURCE = "WiredTiger engine lab (median)"


def engine_run_labels(cache_reads: pl.DataFrame) -> dict[str, str]:
    """Each run's panel name from what the engine ran with ('51 MB cache, random windows'), in RUNS order,
    then the engine's own runs (the small_cache_cold_per_shape variant: '…, cold start per shape
    (variant)'); a table without cache_mb/windows keeps the run's own label."""

    present = list(dict.fromkeys(cache_reads["run"].to_list()))
    labels = {}
    for run in [r for r in RUNS if r in present] + [r for r in present if r not in RUNS]:
        rows = cache_reads.filter(pl.col("run") == run)
        if {"cache_mb", "windows"} <= set(rows.columns):
            megabytes = ", ".join(f"{int(v):,}" for v in sorted(set(rows["cache_mb"].drop_nulls().to_list())))
            windows = "same window" if set(rows["windows"].to_list()) == {"same"} else "random windows"
            labels[run] = f"{megabytes} MB cache, {windows}"
        else:
            labels[run] = RUNS[run].label if run in RUNS else run
        if run == COLD_PER_SHAPE:
            labels[run] += ", cold start per shape (variant)"
    return labels


def overlap_notes(frame: pl.DataFrame, source: str) -> pl.DataFrame:
    """frame with a `note` on one point per panel where every query shape has the same value at a size
    (e.g. all three at 0 B: the lines lie on top of each other, so only the last drawn would show)."""
    mine = frame.filter(pl.col("source") == source)
    same = (mine.group_by("cache_setting", "size_kb")
            .agg(pl.col("value").n_unique().alias("values"), pl.col("value").first().alias("at"),
                 pl.col("shape").n_unique().alias("shapes"))
            .filter((pl.col("values") == 1) & (pl.col("shapes") > 1))
            .sort("size_kb").group_by("cache_setting", maintain_order=True).first())
    if same.height == 0:
        return frame.with_columns(pl.lit(None, pl.Utf8).alias("note"))
    first_shape = mine["shape"].unique(maintain_order=True)[0]
    notes = same.with_columns(pl.lit(source).alias("source"), pl.lit(first_shape).alias("shape"),
                              pl.format("all {} queries at {} here (lines overlap)", pl.col("shapes"),
                                        pl.col("at").map_elements(_bytes_text, return_dtype=pl.Utf8))
                              .alias("note")).select("cache_setting", "size_kb", "source", "shape", "note")
    return frame.join(notes, on=["cache_setting", "size_kb", "source", "shape"], how="left")


def _bytes_text(value: float) -> str:
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if value >= size:
            return f"{value / size:.3g} {unit}"
    return f"{value:.0f} B"


def engine_bytes_read_frame(cache_reads: pl.DataFrame, published: pl.DataFrame) -> pl.DataFrame:
    """engine/cache_reads.csv and the article's bytes read into cache, in _long's shape; each panel named
    from the run's own cache and windows, the published points in the panel of the run they mirror. The
    engine's rows carry the mean over their queries and its interval (`mean`, `low`, `high`; empty where
    the cell has none: fewer than 10 queries)."""
    interval = [pl.col(column).cast(pl.Float64).alias(name) if column in cache_reads.columns
                else pl.lit(None, pl.Float64).alias(name)
                for column, name in (("bytes_read_into_cache_mean", "mean"),
                                     ("bytes_read_into_cache_mean_low", "low"),
                                     ("bytes_read_into_cache_mean_high", "high"))]
    engine = cache_reads.select("run", pl.col("size_kb").cast(pl.Int64), "shape",
                                pl.col("bytes_read_into_cache_median").cast(pl.Float64).alias("value"),
                                pl.lit(ENGINE_SOURCE).alias("source"), *interval)

    theirs = published.filter(pl.col("metric") == "bytes_read_into_cache").select(
        "run", pl.col("size_kb").cast(pl.Int64), "shape", pl.col("value").cast(pl.Float64),
        pl.lit("published").alias("source"))
    # the variant is judged against the article's small-cache table too: its points in that panel as well
    theirs = pl.concat([theirs, theirs.filter(pl.col("run") == "small_cache").with_columns(
        pl.lit(COLD_PER_SHAPE).alias("run"))])
    run_labels = engine_run_labels(cache_reads)
    labels = pl.DataFrame({"run": list(run_labels), "cache_setting": list(run_labels.values())})
    frame = pl.concat([engine, theirs], how="diagonal_relaxed").join(labels, on="run").with_columns(
        pl.col("shape").replace_strict(SHAPE_LABELS, default=pl.col("shape")).alias("query"))
    return overlap_notes(frame, ENGINE_SOURCE)


def engine_bytes_read_chart(cache_reads: pl.DataFrame, published: pl.DataFrame) -> alt.TopLevelMixin:
    """Bytes read into the cache per query on the engine lab, per size, shape and cache/windows run."""
    frame = engine_bytes_read_frame(cache_reads, published)
    order = list(engine_run_labels(cache_reads).values())
    compressor = compressor_text(set(cache_reads["block_compressor"].cast(pl.Utf8).to_list()),
                                 set(cache_reads["block_compressor_wanted"].cast(pl.Utf8).to_list()),
                                 "block compressor")
    queries = sorted(set(cache_reads["queries"].to_list()))
    subtitle = (f"{ENGINE_LABEL}; {compressor}; median of {', '.join(map(str, queries))} queries per point; "
                "projection reads what a FETCH reads; published: the article's default cache (15.7 GB) and "
                "256 MB cache, in the panel of the run each mirrors")
    confidence = sorted(set(frame.filter(pl.col("low").is_not_null()).join(
        cache_reads.select("run", pl.col("size_kb").cast(pl.Int64), "shape", "interval_confidence"),
        on=["run", "size_kb", "shape"], how="left")["interval_confidence"].drop_nulls().to_list())) \
        if "interval_confidence" in cache_reads.columns else []
    if confidence:
        subtitle += (f"; error bars: the mean's {' or '.join(f'{c:.0%}' for c in confidence)} BCa interval "
                     "over the queries, tick at the mean (the value each verdict judges)")
    return _by_cache_setting(
        frame,
        _bytes_read_y(frame),
        "bytes",
        "Bytes read into the cache per query on WiredTiger (engine lab)",
        False,
        subtitle,
        shapes={ENGINE_SOURCE: SOURCE_SHAPES["reproduced (median)"], "published": SOURCE_SHAPES["published"]},
        order=order,
        noted=(ENGINE_SOURCE,),
    )


def build_engine_figure(cache_reads_path: str | Path, published_queries: str | Path,
                        outputs: list[str | Path]) -> None:
    """Write the engine-lab figure to each of `outputs` (png, svg, vl.json)."""
    save_chart(engine_bytes_read_chart(read_csv(cache_reads_path), read_csv(published_queries)), *outputs)
