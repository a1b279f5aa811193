"""Figures: log bytes vs N, bytes per operation vs N, the fallback sweep.

A counter the server did not report is left out of the marks (never drawn as 0) and the
chart says "not reported by this server"; the article's points are always drawn, so a
stand-in run still shows what the reproduction is compared with.
"""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

import altair as alt
import polars as pl

from costlab.arraygrowth.run import NOT_REPORTED
from costlab.arraygrowth.tables import per_op, read_raw, with_provenance_kind
from costlab.inputs import read_csv
from costlab.report.charts import (
    ENGINE_LABEL,
    PROFILE_COLORS,
    coincidence_note,
    coincident_series,
    color_scale,
    compressor_text,
    save_chart,
    titled,
)

WORKLOAD_TITLES = {"insert": "insert N documents (one timestamp each)",
                   "push": "$push N timestamps into one document"}
SOURCE_SHAPES = {"reproduced": "circle", "published (article)": "diamond"}
TOPOLOGY_COLORS = {"standalone": PROFILE_COLORS["standalone"], "replica set": PROFILE_COLORS["replset-1"]}


def _data(frame: pl.DataFrame) -> alt.Data:
    return alt.Data(values=frame.to_dicts())


def growth_points(raw: pl.DataFrame, published: pl.DataFrame) -> pl.DataFrame:
    """Reproduced (non-null only) and published points: profile, workload, n, log_bytes, bytes_per_op,
    source."""
    reproduced = (
        per_op(raw)
        .filter(pl.col("log_bytes").is_not_null())
        .select(
            "profile",
            "workload",
            "n",
            pl.col("log_bytes").cast(pl.Float64),
            pl.col("log_bytes_per_op").alias("bytes_per_op"),
            pl.lit("reproduced").alias("source"),
        )
    )
    return _with_published(reproduced, published)


def _with_published(ours: pl.DataFrame, published: pl.DataFrame) -> pl.DataFrame:
    article = published.select(
        "profile",
        "workload",
        "n",
        pl.col("log_bytes").cast(pl.Float64),
        pl.col("bytes_per_op").cast(pl.Float64),
        pl.lit("published (article)").alias("source"),
    )
    points = pl.concat([ours, article], how="vertical")
    return points.with_columns(pl.col("workload").replace_strict(WORKLOAD_TITLES, default=pl.col("workload"))
                               .alias("workload_title"))


def growth_chart(points: pl.DataFrame, value: str, y_title: str, title: str, stand_in: bool,
                 missing_note: str | None, ours: str = "reproduced") -> alt.TopLevelMixin:
    """Log-log value vs N, one panel per workload, colour = profile, diamonds = the article.

    `ours` is the `source` value of this run's points (the engine lab labels its own). Both sources are drawn
    hollow, as the shared legend draws them; profiles that lie on top of each other are named in the subtitle.
    """
    n_low, n_high = float(points["n"].min()) / 1.5, float(points["n"].max()) * 1.5  # keep edge points visible
    # Ticks at the N values run or published only: a log axis's own ticks crowd ("7k 8k 9k10k").
    ns = sorted({int(n) for n in points["n"].to_list()})
    x = alt.X("n:Q", title="N (documents inserted or elements pushed)",
              scale=alt.Scale(type="log", domain=[n_low, n_high], nice=False),
              axis=alt.Axis(format="~s", values=ns, labelOverlap=True))
    y = alt.Y(f"{value}:Q", title=y_title, scale=alt.Scale(type="log"), axis=alt.Axis(format="~s"))
    profiles = {p: c for p, c in PROFILE_COLORS.items() if p in set(points["profile"].to_list())}
    color = alt.Color("profile:N", title="server profile", scale=color_scale(profiles))
    line = (alt.Chart().mark_line(strokeWidth=2).transform_filter(alt.datum.source == ours)
            .encode(x=x, y=y, color=color, detail="workload:N"))
    shapes = {ours: SOURCE_SHAPES["reproduced"], "published (article)": SOURCE_SHAPES["published (article)"]}
    shape = alt.Shape("source:N", title="source", scale=color_scale(shapes))
    tooltip = ["profile:N", "workload:N", "n:Q", alt.Tooltip(f"{value}:Q", format=",.0f"), "source:N"]
    reproduced = (alt.Chart().mark_point(filled=False, size=70, strokeWidth=2, opacity=0.95)
                  .transform_filter(alt.datum.source == ours)
                  .encode(x=x, y=y, color=color, shape=shape, tooltip=tooltip))
    # the article's points: large open diamonds drawn last, so a reproduced point never hides one
    article = (alt.Chart().mark_point(filled=False, size=220, strokeWidth=2.5)
               .transform_filter(alt.datum.source != ours)
               .encode(x=x, y=y, color=color, shape=shape, tooltip=tooltip))
    chart = (alt.layer(line, reproduced, article, data=_data(points)).properties(width=300, height=260)
             .facet(column=alt.Column("workload_title:N", title=None, sort=list(WORKLOAD_TITLES.values())))
             .resolve_scale(y="shared"))
    overlaps = [
        coincidence_note(
            coincident_series(
                points.filter(pl.col("source") == source), "profile", "n", value, "workload_title", "N = {}"
            ),
            f"{source}: ",
        )
        for source in (ours, "published (article)")
    ]
    subtitle = "; ".join(filter(None, [missing_note, *overlaps])) or None
    return titled(chart, title, stand_in=stand_in, subtitle=subtitle)


def fallback_chart(fallback: pl.DataFrame, model: pl.DataFrame, stand_in: bool) -> alt.TopLevelMixin:
    """Left: the source conditions' prediction (server-free). Right: measured modify calls and log bytes per
    update."""
    variants = model["variant"].unique(maintain_order=True).to_list()
    predicted = (alt.Chart(_data(model)).mark_bar().encode(
        x=alt.X("variant:N", sort=variants, title=None),
        xOffset="topology:N",
        y=alt.Y("modify_eligible_fraction:Q", title="updates eligible for a delta (fraction)",
                scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("topology:N", title="topology (model)", scale=color_scale(TOPOLOGY_COLORS)),
        tooltip=["variant:N", "topology:N", "modify_eligible_fraction:Q", "final_doc_bytes:Q"])
        .properties(width=300, height=220, title="model: size and logging conditions (upper bound)"))
    measured = per_op(fallback)
    panels = [predicted]
    for column, y_title in (("cursor_modify_per_op", "cursor modify calls per update"),
                            ("log_bytes_per_op", "journal bytes per update")):
        present_rows = measured.filter(pl.col(column).is_not_null())
        if present_rows.height == 0:
            panels.append(_not_reported_panel(f"{y_title}: {NOT_REPORTED}", y_title))
            continue
        # journal bytes span orders of magnitude: dots on a log axis (bars cannot start at log 0)
        log_axis = column == "log_bytes_per_op" and bool((present_rows[column] > 0).all())
        mark = alt.Chart(_data(present_rows.select("variant", "profile", column)))
        mark = mark.mark_point(filled=True, size=110) if log_axis else mark.mark_bar()
        profiles = {p: c for p, c in PROFILE_COLORS.items() if p in set(present_rows["profile"].to_list())}
        panels.append(mark.encode(
            x=alt.X("variant:N", sort=variants, title=None), xOffset="profile:N",
            y=alt.Y(f"{column}:Q", title=y_title,
                    scale=alt.Scale(type="log") if log_axis else alt.Scale(),
                    axis=alt.Axis(format="~s") if log_axis else alt.Axis()),
            color=alt.Color("profile:N", title="server profile", scale=color_scale(profiles)),
            tooltip=["variant:N", "profile:N", alt.Tooltip(f"{column}:Q", format=",.2f")])
            .properties(width=300, height=220, title=f"measured: {y_title}"))
    chart = alt.hconcat(*panels).resolve_scale(color="independent")
    return titled(chart, "Where the replica-set delta path falls back to full rewrites", stand_in=stand_in,
                  subtitle="model: MongoDB's record-store conditions (not logged, > 1 KB, grew <= 10 %); "
                           "WiredTiger's 16-change diff limit is only in the measurement")


def _not_reported_panel(text: str, title: str) -> alt.Chart:
    return (alt.Chart(alt.Data(values=[{"text": text}])).mark_text(fontSize=13, color="#b00020")
            .encode(text="text:N").properties(width=300, height=220, title=f"measured: {title}"))


def _missing_note(raw: pl.DataFrame) -> str | None:
    if raw["log_bytes"].null_count() == raw.height:
        return f"wiredTiger.log {NOT_REPORTED}: only the article's points are shown"
    if raw["log_bytes"].null_count():
        return f"wiredTiger.log {NOT_REPORTED} for some runs: those runs are not drawn"
    return None


def build_figures(
    raw_paths: Sequence[str | Path],
    provenance_paths: Sequence[str | Path],
    published_path: str | Path,
    outputs: dict[str, Sequence[str | Path]],
    fallback_raw_paths: Sequence[str | Path] = (),
    fallback_provenance_paths: Sequence[str | Path] = (),
    model_path: str | Path | None = None,
) -> None:
    """Write each figure in `outputs` (name -> [png, svg, vl.json]); names: log_bytes, bytes_per_op,
    fallback."""
    raw = with_provenance_kind(read_raw(raw_paths), provenance_paths)
    stand_in = "stand-in" in set(raw["server_kind"].to_list())
    points = growth_points(raw, read_csv(published_path))
    note = _missing_note(raw)
    if "log_bytes" in outputs:
        save_chart(
            growth_chart(
                points,
                "log_bytes",
                "journal bytes written (wiredTiger.log, bytes)",
                "Journal bytes vs N: $push grows quadratically on a standalone",
                stand_in,
                note,
            ),
            *outputs["log_bytes"],
        )
    if "bytes_per_op" in outputs:
        save_chart(growth_chart(points, "bytes_per_op", "journal bytes per operation (bytes)",
                                "Journal bytes per operation vs N", stand_in, note), *outputs["bytes_per_op"])
    if "fallback" in outputs:
        if model_path is None or not fallback_raw_paths:
            raise ValueError(
                "the fallback figure needs the fallback raw files and model/fallback_conditions.csv"
            )
        fallback = with_provenance_kind(read_raw(fallback_raw_paths), fallback_provenance_paths)
        fb_stand_in = "stand-in" in set(fallback["server_kind"].to_list())
        save_chart(fallback_chart(fallback, read_csv(model_path), fb_stand_in), *outputs["fallback"])


# ---- the engine lab (docs/engine-lab.md): WiredTiger driven like mongod, no server ------------------
ENGINE_SOURCE = "WiredTiger engine lab"


def engine_growth_points(log_bytes: pl.DataFrame, published: pl.DataFrame) -> pl.DataFrame:
    """The engine lab's sweep (engine/log_bytes.csv) and the article's points, in growth_chart's shape."""
    engine = log_bytes.select("profile", "workload", "n", pl.col("log_bytes").cast(pl.Float64),
                              (pl.col("log_bytes") / pl.col("n")).alias("bytes_per_op"),
                              pl.lit(ENGINE_SOURCE).alias("source"))
    return _with_published(engine, published)


def engine_subtitle(log_bytes: pl.DataFrame, fit: pl.DataFrame) -> str:
    """The label, the journal compressor used (and wanted, if it differs) and each fitted exponent."""
    used = set(log_bytes["journal_compressor"].cast(pl.Utf8).to_list())
    wanted = set(log_bytes["journal_compressor_wanted"].cast(pl.Utf8).to_list()) \
        if "journal_compressor_wanted" in log_bytes.columns else used
    exponents = "; ".join(
        f"{r['profile']} {r['workload']} N^{r['exponent']:.2f}" if r["exponent"] is not None
        else f"{r['profile']} {r['workload']}: no fit" for r in fit.iter_rows(named=True))
    compressors = compressor_text(used, wanted, 'journal compressor')
    return f"{ENGINE_LABEL}; {compressors}; fitted exponents: {exponents}"


def engine_log_bytes_chart(
    log_bytes: pl.DataFrame, fit: pl.DataFrame, published: pl.DataFrame
) -> alt.TopLevelMixin:
    """Journal bytes vs N on the engine lab, both profiles and workloads, the article's points as diamonds."""
    return growth_chart(
        engine_growth_points(log_bytes, published),
        "log_bytes",
        "journal bytes written (bytes)",
        "Journal bytes vs N on WiredTiger (engine lab)",
        False,
        engine_subtitle(log_bytes, fit),
        ours=ENGINE_SOURCE,
    )


def build_engine_figure(log_bytes_path: str | Path, fit_path: str | Path, published_path: str | Path,
                        outputs: Sequence[str | Path]) -> None:
    """Write the engine-lab figure to each of `outputs` (png, svg, vl.json)."""
    chart = engine_log_bytes_chart(
        read_csv(log_bytes_path, numeric=("n", "log_bytes"), minimum={"n": 1, "log_bytes": 0}),
        read_csv(fit_path),
        read_csv(published_path),
    )
    save_chart(chart, *outputs)
