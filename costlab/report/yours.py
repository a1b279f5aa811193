"""The page's "Your schema" block: the user's own variants' absolute costs, first after "What ran".

Each study that takes variants of the user's declares `Study.your_schema` (costlab.yourschema); this module
turns what it gives into the template's values: per study a table (per variant and measure: the evidence,
the variant's value, its compare_to's, "× compare_to" with the ratio's interval) and one figure drawing the
user's variants beside the published ones.
"""
from __future__ import annotations

from typing import Any

import altair as alt
import polars as pl

from costlab.report.charts import titled
from costlab.yourschema import CostRow, SchemaFigure, YourSchema, bytes_text

# the published versions, workloads and the orders in greys; the user's variants in strong colours
OTHERS_COLORS = ("#a8a8a8", "#6e6e6e", "#cfcfcf", "#4a4a4a")
YOUR_COLORS = ("#d62728", "#1f77b4", "#9467bd", "#ff7f0e", "#2ca02c", "#8c564b")
SCALES = {"linear": {}, "log": {"type": "log"}, "log2": {"type": "log", "base": 2},
          "symlog": {"type": "symlog", "constant": 1000}}


def value_text(value: float | None, unit: str) -> str:
    """A cost as a DBA reads it: bytes in kB / MB / GB where they are sizes, counts with 4 figures."""
    if value is None or value != value:
        return "—"
    if unit in ("B", "B/year"):
        return bytes_text(value) + ("/year" if unit == "B/year" else "")
    if unit.startswith("B/"):
        text = f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.4g}"
        return f"{text} {unit}"
    if unit == "k":
        return f"k = {value:.3g}"
    return f"{value:.4g} {unit}"


def ratio_text(row: CostRow) -> str:
    ratio = row.ratio
    return "—" if ratio is None else f"{ratio:.3g} × {row.compare_to}"


def row_view(row: CostRow) -> dict[str, Any]:
    return {"variant": row.variant, "measure": row.measure, "evidence": row.evidence,
            "value": value_text(row.value, row.unit), "value_interval": row.value_interval,
            "compared": value_text(row.compared, row.unit), "compare_to": row.compare_to,
            "ratio": ratio_text(row), "interval": row.interval}


def figure_spec(figure: SchemaFigure) -> dict | None:
    """Vega-Lite: bars (an ordinal x) or lines with points (a numeric x), the published ones grey, each of
    the user's variants in a colour of its own; one panel per facet."""
    points = [p for p in figure.points if p.y is not None and p.y == p.y]
    if not points:
        return None
    data = pl.DataFrame({"series": [p.series for p in points], "x": [p.x for p in points],
                         "y": [float(p.y) for p in points], "facet": [p.facet or "" for p in points],
                         "yours": [p.yours for p in points]}, strict=False)
    theirs = list(dict.fromkeys(p.series for p in points if not p.yours))
    yours = list(dict.fromkeys(p.series for p in points if p.yours))
    colors = [OTHERS_COLORS[i % len(OTHERS_COLORS)] for i in range(len(theirs))]
    colors += [YOUR_COLORS[i % len(YOUR_COLORS)] for i in range(len(yours))]
    color = alt.Color("series:N", title=None, scale=alt.Scale(domain=theirs + yours, range=colors),
                      legend=alt.Legend(orient="bottom", labelLimit=400))
    x_scale = alt.Scale(**SCALES[figure.scales[0]])
    y = alt.Y("y:Q", title=figure.y_title, scale=alt.Scale(**SCALES[figure.scales[1]]),
              axis=alt.Axis(format="~s"))
    tooltip = ["series:N", "x", alt.Tooltip("y:Q", format=",.4g")]
    if figure.x_type == "O":
        order = list(dict.fromkeys(str(p.x) for p in points))
        base = alt.Chart(data).encode(x=alt.X("x:O", title=figure.x_title, sort=order), y=y, color=color,
                                      tooltip=tooltip)
        chart = base.mark_bar()
    else:
        values = sorted({float(p.x) for p in points})
        base = alt.Chart(data).encode(
            x=alt.X("x:Q", title=figure.x_title, scale=x_scale, axis=alt.Axis(values=values)),
            y=y,
            color=color,
            tooltip=tooltip,
        )
        chart = alt.layer(base.mark_line(), base.mark_point(filled=True, size=50))
    width = 250 if figure.facet_title and figure.x_type == "Q" else 400
    chart = chart.properties(width=width, height=200)
    if figure.facet_title:
        chart = chart.facet(column=alt.Column("facet:N", title=figure.facet_title))
    return titled(chart, figure.title, subtitle=figure.subtitle).to_dict()


def study_view(schema: YourSchema) -> dict[str, Any]:
    return {"study": schema.study, "anchor": f"your-schema-{schema.study}", "scale": schema.scale,
            "rows": [row_view(r) for r in schema.rows], "notes": list(schema.notes),
            "variants": list(dict.fromkeys(r.variant for r in schema.rows))}
