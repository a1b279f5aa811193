"""Shared figure style: titles with the stand-in label, fixed category scales, saved files."""
from __future__ import annotations

import json

import altair as alt
import polars as pl

from costlab.appversions.registry import PUBLISHED_NAMES
from costlab.registry import REGISTRY
from costlab.report.charts import (
    APP_VERSION_COLORS,
    PROFILE_COLORS,
    PUBLISHED_SHAPE,
    REPRODUCED_SHAPE,
    STAND_IN_LABEL,
    app_version_colors,
    color_scale,
    save_chart,
    source_shape_scale,
    titled,
)
from costlab.report.palette import EXTRA_VERSION_COLORS


def chart() -> alt.Chart:
    return alt.Chart(pl.DataFrame({"x": [1, 2], "y": [2.0, 4.0]})).mark_line().encode(x="x:Q", y="y:Q")


def test_titled_without_subtitle_is_a_valid_spec():
    spec = titled(chart(), "plain").to_dict()  # validates against the Vega-Lite schema
    assert spec["title"]["text"] == "plain" and "subtitle" not in spec["title"]


def test_titled_stand_in_puts_the_label_first():
    spec = titled(chart(), "t", stand_in=True, subtitle="detail").to_dict()
    assert spec["title"]["subtitle"] == [STAND_IN_LABEL, "detail"]


def test_app_version_colours_cover_every_published_version_once():
    assert set(APP_VERSION_COLORS) == set(PUBLISHED_NAMES)
    assert len(set(APP_VERSION_COLORS.values())) == len(PUBLISHED_NAMES)


def test_a_version_without_a_colour_gets_an_extra_one_and_keeps_its_place():
    colours = app_version_colors(["appV4", "mineA", "appV1", "mineB"])
    assert list(colours) == ["appV4", "mineA", "appV1", "mineB"]
    assert colours["appV4"] == APP_VERSION_COLORS["appV4"] and colours["appV1"] == APP_VERSION_COLORS["appV1"]
    assert (colours["mineA"], colours["mineB"]) == EXTRA_VERSION_COLORS[:2]
    assert not set(EXTRA_VERSION_COLORS) & set(APP_VERSION_COLORS.values())
    # more versions than extra colours: every one still gets a colour
    many = app_version_colors([f"v{i}" for i in range(len(EXTRA_VERSION_COLORS) + 2)])
    assert len(many) == len(EXTRA_VERSION_COLORS) + 2


def test_profiles_and_category_colours_are_distinct():
    study_colors = [mapping for study in REGISTRY.values() for mapping in study.colors.values()]
    assert len(study_colors) >= 2   # docsize's query shapes, flatnested's layouts
    for mapping in (PROFILE_COLORS, *study_colors):
        assert len(set(mapping.values())) == len(mapping)
    assert set(PROFILE_COLORS) == {"standalone", "standalone-small-cache", "replset-1"}


def test_scales_fix_domain_order_and_values():
    scale = color_scale(REGISTRY["docsize"].colors["shape"]).to_dict()
    assert scale == {"domain": ["whole", "projection", "covered"], "range": ["#e45756", "#4c78a8", "#54a24b"]}
    shapes = source_shape_scale("ours", "article").to_dict()
    assert shapes == {"domain": ["ours", "article"], "range": [REPRODUCED_SHAPE, PUBLISHED_SHAPE]}


def test_save_chart_writes_png_svg_and_spec(tmp_path):
    paths = [tmp_path / "f.png", tmp_path / "f.svg", tmp_path / "f.vl.json"]
    save_chart(titled(chart(), "saved", stand_in=True), *paths)
    assert paths[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "<svg" in paths[1].read_text() and STAND_IN_LABEL in paths[1].read_text()
    assert json.loads(paths[2].read_text())["title"]["text"] == "saved"
    assert not list(tmp_path.glob(".*.tmp"))  # no temporary files left behind


def test_a_narrow_figure_keeps_the_stand_in_label_on_one_line(tmp_path):
    # a 60-px plot rewraps its subtitle to the narrowest width (40 characters): the 42-character label
    # must still be one line, as the page and the tests look for it whole
    narrow = chart().properties(width=60, height=60)
    path = tmp_path / "f.vl.json"
    save_chart(titled(narrow, "narrow", stand_in=True, subtitle="a long detail " * 8), path)
    subtitle = json.loads(path.read_text())["title"]["subtitle"]
    assert subtitle[0] == STAND_IN_LABEL and len(subtitle) > 2
