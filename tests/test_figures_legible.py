"""Figures a person can read, in every study: legend marks drawn as the plotted marks, series that lie on
top of each other named (from the data), the subtitle never widening the figure, fixed legible text sizes.

Light: small frames built here, one synthetic chart rendered; the smoke tree's specs when the session has it.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import altair as alt
import polars as pl

from costlab.report.charts import FONT_SIZES, SUBTITLE_CHARS, coincident_series, save_chart, titled


def _units(spec: dict):
    """Every unit spec (a mark with its encoding) of a Vega-Lite spec, through layers, facets and concats."""
    if "mark" in spec:
        yield spec
    for key in ("layer", "hconcat", "vconcat", "concat"):
        for child in spec.get(key, []):
            yield from _units(child)
    if "spec" in spec:
        yield from _units(spec["spec"])


def _filled(unit: dict) -> bool | None:
    """Whether a unit's points are drawn filled (Vega-Lite: a point mark is hollow unless filled; a line
    overlays filled points with point=true, and with a shape encoding — seen rendered: the flatnested figure's
    hollow circles came out filled, legend too); None for a plain line (it draws no shape)."""
    mark = unit["mark"] if isinstance(unit["mark"], dict) else {"type": unit["mark"]}
    if mark["type"] == "line":
        return True if mark.get("point") or "shape" in (unit.get("encoding") or {}) else None
    return bool(mark.get("filled", mark["type"] in ("circle", "square")))


def legend_mismatches(spec: dict) -> list[str]:
    """Shape legends whose layers draw their marks differently (filled in one, hollow in another): one legend
    symbol cannot look like both, so it differs from some plotted marks."""
    by_field: dict[str, set] = {}
    for unit in _units(spec):
        shape = (unit.get("encoding") or {}).get("shape")
        if shape and shape.get("field"):
            by_field.setdefault(shape["field"], set()).add(_filled(unit))
    return [field for field, fills in by_field.items() if len(fills - {None}) > 1]


def test_the_mismatch_check_sees_a_filled_circle_beside_hollow_diamonds():
    frame = pl.DataFrame({"x": [1, 2], "y": [1, 2], "source": ["ours", "theirs"]})
    base = alt.Chart(frame).encode(x="x:Q", y="y:Q", shape="source:N")
    assert legend_mismatches(
        alt.layer(base.mark_point(filled=True), base.mark_point(filled=False)).to_dict()
    ) == ["source"]
    assert legend_mismatches(alt.layer(base.mark_point(), base.mark_point(filled=False)).to_dict()) == []
    assert legend_mismatches(alt.layer(base.mark_line(), base.mark_point(filled=False)).to_dict()) == [
        "source"
    ]


def _growth_points(standalone: list[float], replset: list[float]) -> pl.DataFrame:
    from costlab.arraygrowth.figures import WORKLOAD_TITLES

    ns = [200, 400, 800]
    rows = [
        {
            "profile": profile,
            "workload": "push",
            "n": n,
            "log_bytes": value,
            "bytes_per_op": value / n,
            "source": "reproduced",
        }
        for profile, values in (("standalone", standalone), ("replset-1", replset))
        for n, value in zip(ns, values)
    ]
    rows.append(
        {
            "profile": "standalone",
            "workload": "push",
            "n": 10_000,
            "log_bytes": 3e8,
            "bytes_per_op": 3e4,
            "source": "published (article)",
        }
    )
    return pl.DataFrame(rows).with_columns(
        pl.col("workload").replace_strict(WORKLOAD_TITLES).alias("workload_title")
    )


def test_arraygrowth_legend_marks_are_the_plotted_marks_and_coinciding_profiles_are_named():
    from costlab.arraygrowth.figures import growth_chart

    same = growth_chart(
        _growth_points([1e5, 2e5, 4e5], [1e5, 2e5, 4e5]), "log_bytes", "bytes", "t", False, None
    )
    spec = same.to_dict()
    assert legend_mismatches(spec) == []
    subtitle = " ".join(spec["title"]["subtitle"])
    assert (
        "replset-1 and standalone overlap at every point ($push N timestamps into one document)" in subtitle
    )
    # apart by more than the markers' width: nothing named
    apart = growth_chart(
        _growth_points([1e5, 4e5, 1.6e6], [1e5 * 3, 2e5 * 3, 4e5 * 3]), "log_bytes", "bytes", "t", False, None
    ).to_dict()
    assert "overlap" not in " ".join(apart["title"].get("subtitle", []))


def test_flatnested_legend_marks_are_the_plotted_marks_and_equal_layouts_are_named():
    from costlab.flatnested.figures import time_chart

    comparison = pl.DataFrame(
        {
            "fields": [10, 25],
            "reproduced_flat_ms": [100.0, 200.0],
            "reproduced_structured_ms": [100.0, 201.0],
            "published_flat_ms": [487.0, 600.0],
            "published_structured_ms": [380.0, 420.0],
            "reproduced_engine": ["wiredTiger"] * 2,
        }
    )
    spec = time_chart(comparison, False).to_dict()
    assert legend_mismatches(spec) == []
    subtitle = " ".join(spec["title"]["subtitle"])
    assert "reproduced: flat and structured overlap at every point" in subtitle
    assert "published (in-memory engine): flat and structured" not in subtitle   # 487 vs 380: apart


def test_docsize_names_published_shapes_that_coincide():
    from costlab.docsize.figures import time_by_size_chart

    summary = pl.DataFrame({"run": ["same_window"] * 2, "variant": ["base"] * 2, "family": ["window"] * 2,
                            "size_kb": [1, 1], "shape": ["whole", "projection"], "client_ms_p50": [1.0, 5.0]})
    published = pl.DataFrame({"run": ["same_window"] * 2, "size_kb": [1, 1], "shape": ["whole", "projection"],
                              "metric": ["client_ms"] * 2, "value": [2.0, 2.04]})
    spec = time_by_size_chart(summary, published, False).to_dict()
    assert legend_mismatches(spec) == []
    subtitle = " ".join(spec["title"]["subtitle"])
    assert "published: 'projection, two fields' and 'whole documents' overlap at 1 KB" in subtitle
    assert "reproduced (median):" not in subtitle   # 1 ms and 5 ms can be told apart


def test_coincident_series_needs_most_points_when_asked():
    frame = pl.DataFrame({"t": [1, 2, 3, 4] * 2, "v": ["a"] * 4 + ["b"] * 4,
                          "rate": [0.0, 5.0, 7.0, 9.0, 0.0, 1.0, 2.0, 3.0]})
    assert coincident_series(frame, "v", "t", "rate") == ["a and b overlap at 1"]
    assert coincident_series(frame, "v", "t", "rate", min_share=0.5) == []


def _svg_width(path: Path) -> float:
    return float(re.search(r'<svg[^>]*\swidth="([0-9.]+)"', path.read_text()).group(1))


def test_a_long_subtitle_does_not_widen_the_figure(tmp_path):
    frame = pl.DataFrame({"x": [1, 2, 3], "y": [1, 4, 9]})
    plot = alt.Chart(frame).mark_line().encode(x="x:Q", y="y:Q").properties(width=400, height=100)
    save_chart(titled(plot, "t"), tmp_path / "bare.svg")
    save_chart(titled(plot, "t", stand_in=True, subtitle="a very long subtitle word after word " * 12),
               tmp_path / "long.svg", tmp_path / "long.vl.json")
    assert _svg_width(tmp_path / "long.svg") == _svg_width(tmp_path / "bare.svg")
    lines = json.loads((tmp_path / "long.vl.json").read_text())["title"]["subtitle"]
    assert lines[0] == "stand-in server — not a MongoDB measurement" and len(lines) > 4
    # a figure wider than a narrow page: its subtitle lines still read without a sideways scroll at 800 px
    save_chart(titled(plot.properties(width=1600), "t", subtitle="word " * 200), tmp_path / "wide.vl.json")
    lines = json.loads((tmp_path / "wide.vl.json").read_text())["title"]["subtitle"]
    assert max(map(len, lines)) <= SUBTITLE_CHARS and max(map(len, lines)) > SUBTITLE_CHARS - 10


def _smallest_text(spec: dict) -> float:
    config = spec.get("config", {})
    sizes = [config.get(part, {}).get(key, 0) for part, keys in
             (("axis", ("labelFontSize", "titleFontSize")), ("legend", ("labelFontSize", "titleFontSize")),
              ("header", ("labelFontSize", "titleFontSize")), ("title", ("fontSize", "subtitleFontSize")))
             for key in keys]
    marks = [u["mark"].get("fontSize", u["mark"].get("size")) for u in _units(spec)
             if isinstance(u["mark"], dict) and u["mark"]["type"] == "text"]
    return min(sizes + [m for m in marks if m is not None])


def test_titled_sets_every_text_size():
    spec = titled(alt.Chart(pl.DataFrame({"x": [1]})).mark_point().encode(x="x:Q"), "t").to_dict()
    assert _smallest_text(spec) == min(FONT_SIZES.values()) >= 11


def test_every_smoke_figure_has_matching_legends_and_legible_text(smoke_all):
    """Every figure the smoke DAG drew (all studies, server and engine lab)."""
    specs = sorted(smoke_all.results().glob("*/figures/*.vl.json"))
    assert {p.parent.parent.name for p in specs} >= {"docsize", "appversions", "arraygrowth", "flatnested"}
    for path in specs:
        spec = json.loads(path.read_text())
        assert legend_mismatches(spec) == [], path
        assert _smallest_text(spec) >= 11, path
