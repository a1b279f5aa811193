"""Time of 100 queries by field count, flat vs structured, with the published points on the same axes."""
from __future__ import annotations

import altair as alt
import polars as pl

from costlab.flatnested import LAYOUT_COLORS
from costlab.flatnested.tables import scale_note
from costlab.report.charts import (
    coincidence_note,
    coincident_series,
    color_scale,
    source_shape_scale,
    titled,
)

PUBLISHED_SOURCE = "published (in-memory engine)"


def time_chart(comparison: pl.DataFrame, stand_in: bool) -> alt.LayerChart:
    """Lines with hollow circles: reproduced; hollow diamonds: published (in-memory engine). Log y.

    Every point is hollow, as the shared shape legend draws it; layouts on top of each other are named."""
    long = pl.concat([
        comparison.select("fields", pl.lit(layout).alias("layout"), pl.lit(source).alias("source"),
                          pl.col(f"{prefix}_{layout}_ms").cast(pl.Float64).alias("ms"))
        for layout in ("flat", "structured")
        for source, prefix in (("reproduced", "reproduced"), (PUBLISHED_SOURCE, "published"))
    ]).drop_nulls("ms")
    engine = comparison["reproduced_engine"][0] if comparison.height else "?"
    base = alt.Chart(long).encode(
        x=alt.X("fields:Q", title="fields per document (flat N = structured N/5 x 5)",
                scale=alt.Scale(type="log", nice=False, padding=24),
                axis=alt.Axis(values=comparison["fields"].to_list())),
        y=alt.Y("ms:Q", title="time of 100 queries (ms, log)", scale=alt.Scale(type="log")),
        color=alt.Color("layout:N", title="schema", scale=color_scale(LAYOUT_COLORS)),
        tooltip=["layout:N", "source:N", "fields:Q", alt.Tooltip("ms:Q", format=".1f")])
    # shape on the point layers only: a line with a shape encoding draws filled points and legend symbols
    shape = alt.Shape("source:N", title="", scale=source_shape_scale(published=PUBLISHED_SOURCE))
    reproduced = base.transform_filter(alt.datum.source == "reproduced")
    chart = alt.layer(
        reproduced.mark_line(),
        reproduced.mark_point(size=60, filled=False, strokeWidth=2).encode(shape=shape),
        base.transform_filter(alt.datum.source == PUBLISHED_SOURCE).mark_point(size=110, filled=False,
                                                                              strokeWidth=2).encode(shape=shape),
    ).properties(width=420, height=300)
    subtitle = f"lines: reproduced on {engine}, cache warmed; diamonds: published, in-memory engine"
    if "documents" in comparison.columns and comparison.height:
        # Times scale with the documents walked: say so when the count is not the published one.
        subtitle += scale_note(comparison["documents"][0], comparison["published_documents"][0])
    for source in ("reproduced", PUBLISHED_SOURCE):
        note = coincidence_note(
            coincident_series(
                long.filter(pl.col("source") == source), "layout", "fields", "ms", x_text="{} fields"
            ),
            f"{source}: ",
        )
        subtitle += f"; {note}" if note else ""
    return titled(chart, "Query for an absent field: flat vs structured schema", stand_in=stand_in,
                  subtitle=subtitle)
