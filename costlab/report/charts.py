"""Shared figure helpers: one look across studies, PNG+SVG export, the stand-in label.

Studies build their altair charts and call save_chart(); colours for recurring categories
come from the scales here so a query shape / profile / version has one colour everywhere.
"""
from __future__ import annotations

import textwrap
from pathlib import Path

import altair as alt

from costlab.io import atomic_path
# One colour per recurring category, across all figures: kept in palette.py (no altair) so light
# modules that rule files import at parse time can use them too; re-exported here.
from costlab.report.palette import (APP_VERSION_COLORS, LAYOUT_COLORS, PROFILE_COLORS, PUBLISHED_COLOR,
                                    PUBLISHED_SHAPE, QUERY_SHAPE_COLORS, REPRODUCED_SHAPE, SERVER_KIND_COLORS)

STAND_IN_LABEL = "stand-in server — not a MongoDB measurement"
# Every engine-lab figure (docs/engine-lab.md) says this in its subtitle, with the compressor used.
ENGINE_LABEL = "WiredTiger engine lab — not a mongod run"


def compressor_text(used: set[str], wanted: set[str], what: str) -> str:
    """'<what> lz4 (snappy wanted, not available here)': the compressor used, and the one asked for if it differs."""
    text = f"{what} {', '.join(sorted(used))}"
    return text + (f" ({', '.join(sorted(wanted))} wanted, not available here)" if wanted != used else "")


def color_scale(mapping: dict[str, str]) -> alt.Scale:
    """A scale fixing each category's value (colour or shape) so it is the same in every figure."""
    return alt.Scale(domain=list(mapping), range=list(mapping.values()))


def source_shape_scale(reproduced: str = "reproduced", published: str = "published") -> alt.Scale:
    """Shape scale for a `source` field: our values as circles, the article's as diamonds."""
    return color_scale({reproduced: REPRODUCED_SHAPE, published: PUBLISHED_SHAPE})


# Subtitle lines are wrapped at this many characters: a one-line subtitle used to set the figure's width
# (appversions' PNG was 2,458 px wide with the plot half of it).
SUBTITLE_CHARS = 90


def wrap_subtitle(text: str, width: int = SUBTITLE_CHARS) -> list[str]:
    """One subtitle as lines of at most `width` characters, broken at spaces (a longer word stays whole)."""
    return textwrap.wrap(text, width=width, break_long_words=False, break_on_hyphens=False) or [text]


def titled(chart: alt.TopLevelMixin, title: str, stand_in: bool = False, subtitle: str | None = None):
    """Set the chart title; a stand-in result always carries the label as its subtitle (lines wrapped)."""
    lines = [line for s in (STAND_IN_LABEL if stand_in else None, subtitle) if s for line in wrap_subtitle(s)]
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
