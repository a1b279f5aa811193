"""Shared figure helpers: one look across studies, PNG+SVG export, the stand-in label.

Studies build their altair charts and call save_chart(); colours for recurring categories
come from the scales here so a query shape / profile / version has one colour everywhere.
"""
from __future__ import annotations

from pathlib import Path

import altair as alt

from costlab.io import atomic_path

STAND_IN_LABEL = "stand-in server — not a MongoDB measurement"

# One colour per recurring category, across all figures.
PROFILE_COLORS = {"standalone": "#4c78a8", "standalone-small-cache": "#f58518", "replset-1": "#54a24b"}
PUBLISHED_COLOR = "#222222"
# Query shapes of docsize (whole document / two-field projection / covered by the index).
QUERY_SHAPE_COLORS = {"whole": "#e45756", "projection": "#4c78a8", "covered": "#54a24b"}
# Field layouts of flatnested.
LAYOUT_COLORS = {"flat": "#e45756", "structured": "#4c78a8"}
# appversions: one hue family per generation (V1-V4 blues, V5 oranges, V6 greens), darker = later revision.
APP_VERSION_COLORS = {
    "appV1": "#c6dbef", "appV2": "#9ecae1", "appV3": "#6baed6", "appV4": "#2171b5",
    "appV5R0": "#fdd0a2", "appV5R1": "#fdae6b", "appV5R2": "#fd8d3c", "appV5R3": "#e6550d", "appV5R4": "#a63603",
    "appV6R0": "#c7e9c0", "appV6R1": "#a1d99b", "appV6R2": "#74c476", "appV6R3": "#31a354", "appV6R4": "#006d2c",
}
SERVER_KIND_COLORS = {"mongod": "#4c78a8", "mongos": "#72b7b2", "stand-in": "#b00020"}
# Published points are drawn as distinct marks on the same axes as ours.
REPRODUCED_SHAPE = "circle"
PUBLISHED_SHAPE = "diamond"


def color_scale(mapping: dict[str, str]) -> alt.Scale:
    """A scale fixing each category's value (colour or shape) so it is the same in every figure."""
    return alt.Scale(domain=list(mapping), range=list(mapping.values()))


def source_shape_scale(reproduced: str = "reproduced", published: str = "published") -> alt.Scale:
    """Shape scale for a `source` field: our values as circles, the article's as diamonds."""
    return color_scale({reproduced: REPRODUCED_SHAPE, published: PUBLISHED_SHAPE})


def titled(chart: alt.TopLevelMixin, title: str, stand_in: bool = False, subtitle: str | None = None):
    """Set the chart title; a stand-in result always carries the label as its subtitle."""
    lines = [s for s in (STAND_IN_LABEL if stand_in else None, subtitle) if s]
    # Vega-Lite rejects subtitle=None: leave it Undefined when there is no subtitle line.
    return chart.properties(title=alt.TitleParams(title, subtitle=lines or alt.Undefined,
                                                   subtitleColor="#b00020" if stand_in else "#555"))


def save_chart(chart: alt.TopLevelMixin, *paths: str | Path, scale_factor: float = 2.0) -> None:
    """Save to each path by its suffix (.png, .svg, .html with inline JS), atomically."""
    for path in map(Path, paths):
        with atomic_path(path) as tmp:
            fmt = path.suffix.lstrip(".")
            if fmt == "png":
                chart.save(str(tmp), format="png", scale_factor=scale_factor)
            elif fmt == "html":
                chart.save(str(tmp), format="html", inline=True)
            else:
                chart.save(str(tmp), format=fmt)
