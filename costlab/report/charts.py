"""Shared figure helpers: one look across studies, PNG+SVG export, the stand-in label.

Studies build their altair charts and call save_chart(); colours for recurring categories
come from the scales here so a query shape / profile / version has one colour everywhere.
"""
from __future__ import annotations

import math
import re
import textwrap
from pathlib import Path

import altair as alt
import polars as pl
import vl_convert

from costlab.io import atomic_path

# One colour per recurring category, across all figures: kept in palette.py (no altair) so light
# modules that rule files import at parse time can use them too; re-exported here.
from costlab.report.palette import (  # noqa: F401 (re-exported)
    APP_VERSION_COLORS,
    PROFILE_COLORS,
    PUBLISHED_COLOR,
    PUBLISHED_SHAPE,
    REPRODUCED_SHAPE,
    SERVER_KIND_COLORS,
    app_version_colors,
)

STAND_IN_LABEL = "stand-in server — not a MongoDB measurement"
# Every engine-lab figure (docs/engine-lab.md) says this in its subtitle, with the compressor used.
ENGINE_LABEL = "WiredTiger engine lab — not a mongod run"


def compressor_text(used: set[str], wanted: set[str], what: str) -> str:
    """'<what> lz4 (snappy wanted, not available here)': the compressor used, and the one asked for if it
    differs."""
    text = f"{what} {', '.join(sorted(used))}"
    return text + (f" ({', '.join(sorted(wanted))} wanted, not available here)" if wanted != used else "")


def color_scale(mapping: dict[str, str]) -> alt.Scale:
    """A scale fixing each category's value (colour or shape) so it is the same in every figure."""
    return alt.Scale(domain=list(mapping), range=list(mapping.values()))


def source_shape_scale(reproduced: str = "reproduced", published: str = "published") -> alt.Scale:
    """Shape scale for a `source` field: our values as circles, the article's as diamonds."""
    return color_scale({reproduced: REPRODUCED_SHAPE, published: PUBLISHED_SHAPE})


# Subtitle lines are at most this many characters (~600 px at 12 px: readable without a sideways scroll in an
# 800 px page, even on a wide figure); save_chart() narrows them to the width the figure has without its
# subtitle, so a long subtitle never sets the figure's width (appversions' PNG was 2,458 px wide with the plot
# half of it).
SUBTITLE_CHARS = 90
# Text sizes (px in the spec) of every figure: the page never draws a figure below its spec size (it scrolls
# in
# its frame), so this is the smallest text a reader sees at any page width (Vega's defaults went down to 10
# px).
FONT_SIZES = {"axis_label": 11, "axis_title": 12, "legend_label": 11, "legend_title": 12, "header": 12,
              "title": 15, "subtitle": 12}
# Widest average character of the subtitle font, in px per px of font size (Liberation Sans / Helvetica ~0.5;
# a margin for capitals and digits).
_CHAR_EM = 0.56
_PARAGRAPHS = "costlab_subtitle"   # usermeta key: the subtitle's paragraphs, unwrapped, for save_chart


def wrap_subtitle(text: str, width: int = SUBTITLE_CHARS) -> list[str]:
    """One subtitle as lines of at most `width` characters, broken at spaces (a longer word stays whole).
    The stand-in label is never broken: it is read as one line, on the figure and by whoever checks it."""
    if text == STAND_IN_LABEL:
        return [text]
    return textwrap.wrap(text, width=width, break_long_words=False, break_on_hyphens=False) or [text]


def legible(chart: alt.TopLevelMixin) -> alt.TopLevelMixin:
    """The chart with FONT_SIZES for its axes, legends, facet headers, title and subtitle."""
    return (
        chart.configure_axis(labelFontSize=FONT_SIZES["axis_label"], titleFontSize=FONT_SIZES["axis_title"])
        .configure_legend(labelFontSize=FONT_SIZES["legend_label"], titleFontSize=FONT_SIZES["legend_title"])
        .configure_header(labelFontSize=FONT_SIZES["header"], titleFontSize=FONT_SIZES["header"])
        .configure_title(fontSize=FONT_SIZES["title"], subtitleFontSize=FONT_SIZES["subtitle"])
    )


def titled(chart: alt.TopLevelMixin, title: str, stand_in: bool = False, subtitle: str | None = None):
    """Set the chart title and legible text sizes; a stand-in result always carries the label as its subtitle
    (lines wrapped; save_chart fits them to the figure's width)."""
    paragraphs = [s for s in (STAND_IN_LABEL if stand_in else None, subtitle) if s]
    lines = [line for s in paragraphs for line in wrap_subtitle(s)]
    # Vega-Lite rejects subtitle=None: leave it Undefined when there is no subtitle line.
    chart = chart.properties(title=alt.TitleParams(title, subtitle=lines or alt.Undefined,
                                                   subtitleColor="#b00020" if stand_in else "#555"))
    if paragraphs:
        chart = chart.properties(usermeta={_PARAGRAPHS: paragraphs})
    return legible(chart)


def _svg_width(spec: dict) -> float:
    svg = vl_convert.vegalite_to_svg(spec)
    return float(re.search(r'<svg[^>]*\swidth="([0-9.]+)"', svg).group(1))


def fit_subtitle(chart: alt.TopLevelMixin) -> alt.TopLevelMixin:
    """The chart with its subtitle rewrapped to the width the figure has without it (SUBTITLE_CHARS at most,
    never narrower than 40 characters), so the plot, not the subtitle, sets the figure's width."""
    meta = chart.usermeta if chart.usermeta is not alt.Undefined else {}
    paragraphs = (meta or {}).get(_PARAGRAPHS)
    if not paragraphs:
        return chart
    spec = chart.to_dict()
    spec["title"] = {k: v for k, v in spec["title"].items() if k != "subtitle"}
    width = _svg_width(spec)
    chars = min(SUBTITLE_CHARS, max(40, int(width / (FONT_SIZES["subtitle"] * _CHAR_EM))))
    for _ in range(4):   # the estimate per character can be short for a line of capitals: check, narrow
        lines = [line for s in paragraphs for line in wrap_subtitle(s, chars)]
        spec["title"]["subtitle"] = lines
        if chars == 40 or _svg_width(spec) <= width + 0.5:
            break
        chars = max(40, int(chars * 0.92))
    title = chart.title.copy()
    title.subtitle = lines
    return chart.properties(title=title)


def save_chart(chart: alt.TopLevelMixin, *paths: str | Path, scale_factor: float = 2.0) -> None:
    """Save to each path by its suffix (.png, .svg, .html with inline JS), atomically; the subtitle fitted
    to the figure's width first."""
    chart = fit_subtitle(chart)
    for path in map(Path, paths):
        with atomic_path(path) as tmp:
            fmt = path.suffix.lstrip(".")
            if fmt == "png":
                chart.save(str(tmp), format="png", scale_factor=scale_factor)
            elif fmt == "html":
                chart.save(str(tmp), format="html", inline=True)
            else:
                chart.save(str(tmp), format=fmt)


def coincident_series(frame: pl.DataFrame, series: str, x: str, y: str, panel: str | None = None,
                      x_text: str = "{}", within: float = 0.1, min_share: float = 0.0) -> list[str]:
    """Sentences naming the series drawn on top of each other: in the same `panel` and at the same `x`, their
    `y` are within a factor 1 + `within` of each other (or both 0), so at the figures' marker sizes the one
    drawn last hides the others (e.g. 'standalone and replset-1 overlap at N = 200, 400 (insert)').
    Computed from the data, so a figure names the lines a reader cannot tell apart; x_text formats each x
    ('{} KB'). min_share: name only series that overlap at that share of the panel's x values or more (a
    noisy line crossing another now and then hides nothing)."""
    keys = [c for c in (panel,) if c]
    points = (
        frame.filter(pl.col(y).is_not_null())
        .select(
            *keys, pl.col(x), pl.col(series).cast(pl.Utf8).alias("_s"), pl.col(y).cast(pl.Float64).alias("_y")
        )
        .unique()
    )
    pairs = points.join(points, on=[*keys, x], suffix="_b").filter(
        (pl.col("_s") < pl.col("_s_b"))
        & (((pl.col("_y") == 0) & (pl.col("_y_b") == 0))
           | ((pl.col("_y") * pl.col("_y_b") > 0)
              & ((pl.col("_y").abs() / pl.col("_y_b").abs()).log().abs() <= math.log1p(within)))))
    if pairs.height == 0:
        return []
    together = (pl.concat([pairs.select(*keys, x, "_s"), pairs.select(*keys, x, pl.col("_s_b").alias("_s"))])
                .group_by(*keys, x).agg(pl.col("_s").unique().sort().alias("_group"))
                .with_columns(pl.col("_group").list.join("\x1f")))
    if keys:
        groups = (together.sort(x).group_by(*keys, "_group", maintain_order=True).agg(pl.col(x))
                  .join(points.group_by(*keys).agg(pl.col(x).n_unique().alias("_xs")), on=keys, how="left"))
    else:
        groups = (together.sort(x).group_by("_group", maintain_order=True).agg(pl.col(x))
                  .with_columns(pl.lit(points[x].n_unique()).alias("_xs")))
    found: dict[tuple[str, str], list[str]] = {}   # (who, where) -> panels, so one sentence names them all
    for row in groups.sort(*keys, "_group").iter_rows(named=True):   # a few rows: one per panel and group
        names, xs = row["_group"].split("\x1f"), row[x]
        if len(xs) < min_share * row["_xs"]:
            continue
        if any("," in name for name in names):   # 'projection, two fields' and 'whole documents'
            names = [f"'{name}'" for name in names]
        where = (
            "at every point"
            if len(xs) == row["_xs"] and len(xs) > 1
            else "at "
            + ", ".join(x_text.format(_number_text(v)) for v in xs[:6])
            + (", …" if len(xs) > 6 else "")
        )
        found.setdefault((f"{', '.join(names[:-1])} and {names[-1]}", where), []).append(
            str(row[panel]) if panel else "")
    return [f"{who} overlap {where}" + (f" ({'; '.join(panels)})" if panel else "")
            for (who, where), panels in found.items()]


def coincidence_note(sentences: list[str], what: str = "") -> str | None:
    """One subtitle sentence from coincident_series, prefixed with `what` and ending '(drawn on top of each
    other)'; None when nothing coincides."""
    return f"{what}{'; '.join(sentences)} (drawn on top of each other)" if sentences else None


def _number_text(value) -> str:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return (
        f"{value:,}" if isinstance(value, int) else f"{value:.3g}" if isinstance(value, float) else str(value)
    )
