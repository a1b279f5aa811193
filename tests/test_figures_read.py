"""Figures read right: tick labels, aligned load-test panels, no duplicate figure (issue 14, point 5)."""
from __future__ import annotations

import json
import math
from typing import Any, Iterator

import pytest

from costlab.appversions.names import loadtest_figures
from costlab.docsize.figures import symlog_axis_top


def encodings(spec: Any, channel: str) -> Iterator[dict]:
    """Every encoding of `channel` anywhere in a Vega-Lite spec."""
    if isinstance(spec, dict):
        enc = spec.get("encoding")
        if isinstance(enc, dict) and isinstance(enc.get(channel), dict):
            yield enc[channel]
        for value in spec.values():
            yield from encodings(value, channel)
    elif isinstance(spec, list):
        for value in spec:
            yield from encodings(value, channel)


def data_rows(spec: Any) -> list[dict]:
    """Rows of every dataset in a spec: top-level `datasets` and inline `data: {values: [...]}`."""
    rows: list[dict] = []
    if isinstance(spec, dict):
        for data in (spec.get("datasets") or {}).values():
            rows.extend(r for r in data if isinstance(r, dict))
        inline = spec.get("data")
        if isinstance(inline, dict) and isinstance(inline.get("values"), list):
            rows.extend(r for r in inline["values"] if isinstance(r, dict))
        for key, value in spec.items():
            if key not in ("datasets", "data"):
                rows.extend(data_rows(value))
    elif isinstance(spec, list):
        for value in spec:
            rows.extend(data_rows(value))
    return rows


def test_loadtest_all_is_not_a_copy_of_the_only_pair():
    assert [name for name, _ in loadtest_figures(["appV6R3", "appV6R4"])] == ["loadtest_appV6R3_vs_appV6R4"]
    three = [name for name, _ in loadtest_figures(["appV6R2", "appV6R3", "appV6R4"])]
    assert three == ["loadtest_appV6R3_vs_appV6R4", "loadtest_all"]
    assert [name for name, _ in loadtest_figures(["appV4"])] == ["loadtest_all"]


@pytest.mark.parametrize("largest, top", [(None, 1e4), (0.0, 1e4), (9_000.0, 1e4), (65_000_000.0, 1e8),
                                          (1e7, 1e7), (1.2e7, 1e8)])
def test_symlog_axis_ends_at_the_power_of_ten_above_the_data(largest, top):
    assert symlog_axis_top(largest) == top


def test_docsize_bytes_read_has_a_labelled_tick_above_every_value(smoke_all):
    spec = json.loads((smoke_all.results("docsize") / "figures" / "bytes_read.vl.json").read_text())
    ys = [y for y in encodings(spec, "y") if y.get("field") == "value"]
    assert ys
    for y in ys:
        top = y["scale"]["domain"][1]
        assert top == 10 ** round(math.log10(top)) and top in y["axis"]["values"]
    values = [float(row["value"]) for row in data_rows(spec) if row.get("value") not in (None, "")]
    assert values and max(values) <= min(y["scale"]["domain"][1] for y in ys)


def test_arraygrowth_ticks_only_at_the_ns_drawn(smoke_all):
    spec = json.loads((smoke_all.results("arraygrowth") / "figures" / "log_bytes_vs_n.vl.json").read_text())
    xs = [x for x in encodings(spec, "x") if x.get("field") == "n" and "axis" in x]
    assert xs
    drawn = sorted({int(row["n"]) for row in data_rows(spec) if row.get("n") is not None})
    assert {10000, 20000, 40000} <= set(drawn)  # the article's points are always drawn
    for x in xs:
        # ticks at the N values drawn (the stand-in's runs report no journal bytes, so only the
        # article's), not a log axis's own 7k 8k 9k10k
        assert x["axis"]["values"] == drawn


def test_loadtest_panels_share_one_time_axis(smoke_all):
    spec = json.loads((smoke_all.results("appversions") / "figures" / "loadtest_appV6R3_vs_appV6R4.vl.json")
                      .read_text())
    domains = [x.get("scale", {}).get("domain") for x in encodings(spec, "x") if x.get("field") == "time"]
    assert len(domains) >= 6  # rate, target, latency, skipped; two rows
    assert all(d == domains[0] for d in domains) and domains[0][0] == 0
