"""Time of 100 queries by field count, flat vs structured, with the published points on the same axes."""
from __future__ import annotations

import altair as alt
import polars as pl

from costlab.report.charts import titled

LAYOUT_COLORS = {"flat": "#e45756", "structured": "#4c78a8"}


def time_chart(comparison: pl.DataFrame, stand_in: bool) -> alt.LayerChart:
    """Lines+dots: reproduced; hollow diamonds: published (in-memory engine)."""
    long = pl.concat([
        comparison.select("fields", pl.lit(layout).alias("layout"), pl.lit(source).alias("source"),
                          pl.col(f"{prefix}_{layout}_ms").cast(pl.Float64).alias("ms"))
        for layout in ("flat", "structured")
        for source, prefix in (("reproduced", "reproduced"), ("published (in-memory engine)", "published"))
    ]).drop_nulls("ms")
    engine = comparison["reproduced_engine"][0] if comparison.height else "?"
    base = alt.Chart(long).encode(
        x=alt.X("fields:Q", title="fields per document (flat N = structured N/5 x 5)",
                scale=alt.Scale(type="log", nice=False, padding=24),
                axis=alt.Axis(values=comparison["fields"].to_list())),
        y=alt.Y("ms:Q", title="time of 100 queries (ms, log)", scale=alt.Scale(type="log")),
        color=alt.Color("layout:N", title="schema",
                        scale=alt.Scale(domain=list(LAYOUT_COLORS), range=list(LAYOUT_COLORS.values()))),
        tooltip=["layout:N", "source:N", "fields:Q", alt.Tooltip("ms:Q", format=".1f")])
    reproduced = base.transform_filter(alt.datum.source == "reproduced")
    published = base.transform_filter(alt.datum.source != "reproduced")
    chart = alt.layer(
        reproduced.mark_line(point=True),
        published.mark_point(shape="diamond", size=110, filled=False, strokeWidth=2).encode(
            shape=alt.Shape("source:N", title="", scale=alt.Scale(range=["diamond"]))),
    ).properties(width=420, height=300)
    return titled(chart, "Query for an absent field: flat vs structured schema", stand_in=stand_in,
                  subtitle=f"lines: reproduced on {engine}; diamonds: published, in-memory engine")
