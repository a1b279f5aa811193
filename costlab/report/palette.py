"""One colour per recurring category, across all figures; how ours and the article's points look.

Standard library only: charts.py (altair) re-exports these. Colours only: the app versions'
order comes from their registry (costlab/appversions/registry.py), and a version without a colour
here gets one of the extra colours (`app_version_colors`), never drops out of a figure.
"""
from __future__ import annotations

PROFILE_COLORS = {"standalone": "#4c78a8", "standalone-small-cache": "#f58518", "replset-1": "#54a24b"}
PUBLISHED_COLOR = "#222222"
# A study's own categories (query shapes, field layouts) are coloured in its declaration (Study.colors).
# appversions: one hue family per generation (V1-V4 blues, V5 oranges, V6 greens), darker = later revision.
APP_VERSION_COLORS = {
    "appV1": "#c6dbef",
    "appV2": "#9ecae1",
    "appV3": "#6baed6",
    "appV4": "#2171b5",
    "appV5R0": "#fdd0a2",
    "appV5R1": "#fdae6b",
    "appV5R2": "#fd8d3c",
    "appV5R3": "#e6550d",
    "appV5R4": "#a63603",
    "appV6R0": "#c7e9c0",
    "appV6R1": "#a1d99b",
    "appV6R2": "#74c476",
    "appV6R3": "#31a354",
    "appV6R4": "#006d2c",
}
# Versions beyond the published ones (registered later), in the order they are drawn: greys and purples,
# apart from the published hue families; cycled when there are more.
EXTRA_VERSION_COLORS = ("#756bb1", "#9e9ac8", "#525252", "#969696", "#dadaeb", "#bcbddc")


def app_version_colors(versions: list[str]) -> dict[str, str]:
    """{version: colour} for `versions` in their order: a published version's own colour, others the
    extra colours in turn."""
    extra = iter(EXTRA_VERSION_COLORS * (1 + len(versions) // len(EXTRA_VERSION_COLORS)))
    return {v: APP_VERSION_COLORS[v] if v in APP_VERSION_COLORS else next(extra) for v in versions}


SERVER_KIND_COLORS = {"mongod": "#4c78a8", "mongos": "#72b7b2", "stand-in": "#b00020"}
# Published points are drawn as distinct marks on the same axes as ours.
REPRODUCED_SHAPE = "circle"
PUBLISHED_SHAPE = "diamond"
