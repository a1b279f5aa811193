"""A study's engine keys belong to that study: on its page section, with the N the engine really ran
(the dry run that changes one and plans only that study's engine job is in tests/test_servers_workflow.py);
figure labels from the run's data."""
from __future__ import annotations

import json
import re

import polars as pl
from test_report import smoke_config

from costlab.report.page import build_report


def section_of(page: str, study: str) -> str:
    return re.search(rf'<section class="study" id="study-{study}".*?</section>', page, re.S).group(0)


def test_a_changed_engine_key_and_the_engines_n_are_on_the_page(tmp_path):
    results = tmp_path / "results"
    engine = results / "arraygrowth" / "engine"
    engine.mkdir(parents=True)
    pl.DataFrame(
        {
            "profile": ["standalone"] * 2,
            "workload": ["push"] * 2,
            "n": [150, 450],
            "log_bytes": [1000, 9000],
            "journal_compressor": ["lz4", "lz4"],
            "server_kind": ["engine"] * 2,
        }
    ).write_csv(engine / "log_bytes.csv")
    (engine / "provenance.json").write_text(
        json.dumps({"server_kind": "engine", "server": {"wiredtiger_version": "11.2.0"}})
    )
    (results / "docsize" / "model").mkdir(parents=True)
    pl.DataFrame(
        {"size_kb": [1], "documents": [5], "avg_doc_bytes": [1024.0], "data_bytes": [5120]}
    ).write_csv(results / "docsize" / "model" / "collections.csv")
    defaults = smoke_config()
    config = smoke_config(engine={"arraygrowth": {"ns": [150, 450]}})
    build_report(results, results / "report.html", config, defaults=defaults)
    page = (results / "report.html").read_text()
    arraygrowth, docsize = section_of(page, "arraygrowth"), section_of(page, "docsize")
    differences = arraygrowth[arraygrowth.index("Config values that differ"):]
    assert "<code>engine.arraygrowth.ns</code>" in differences and "[150, 450]" in differences
    assert "at their defaults" not in differences
    assert "engine.arraygrowth.ns" not in docsize   # another study's engine key leaves docsize alone
    assert "<dt>N (from the results)</dt><dd>150, 450</dd>" in arraygrowth
    assert "<dt>journal compressor used (from the results)</dt><dd>lz4</dd>" in arraygrowth


def _cache_reads(small_cache_mb: int) -> pl.DataFrame:
    rows = []
    for run, cache_mb, windows in (("same_window", 2048, "same"), ("random_windows", 2048, "random"),
                                   ("small_cache", small_cache_mb, "random")):
        for size_kb in (1, 4):
            for shape in ("whole", "projection", "covered"):
                value = (
                    0.0
                    if run != "small_cache"
                    else {"whole": 9e4, "projection": 8e4, "covered": 0.0}[shape] * size_kb
                )
                rows.append(
                    {
                        "size_kb": size_kb,
                        "run": run,
                        "cache_mb": cache_mb,
                        "windows": windows,
                        "shape": shape,
                        "queries": 3,
                        "bytes_read_into_cache_median": value,
                        "block_compressor": "lz4",
                        "block_compressor_wanted": "snappy",
                    }
                )
    return pl.DataFrame(rows)


def _marks(spec: dict) -> list[dict]:
    found = []

    def walk(node):
        if isinstance(node, dict):
            if "mark" in node:
                found.append(node["mark"] if isinstance(node["mark"], dict) else {"type": node["mark"]})
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)
    walk(spec)
    return found


def test_docsize_engine_panels_are_named_from_the_runs_cache_and_overlaps_are_said():
    """The third panel said '256 MB cache, random windows' whatever cache the engine lab ran with."""
    from costlab.docsize.figures import engine_bytes_read_chart

    published = pl.read_csv("resources/published/docsize_query_tables.csv")
    spec = engine_bytes_read_chart(_cache_reads(51), published).to_dict()
    text = json.dumps(spec)
    assert "51 MB cache, random windows" in text and "256 MB cache, random windows" not in text
    assert spec["facet"]["column"]["sort"] == [
        "2,048 MB cache, same window",
        "2,048 MB cache, random windows",
        "51 MB cache, random windows",
    ]
    # the default-cache panels' three lines all lie at 0 B: a note says so where they overlap
    data = next(iter(spec["datasets"].values()))
    notes = {(r["cache_setting"], r["size_kb"]): r["note"] for r in data if r.get("note")}
    assert notes == {("2,048 MB cache, same window", 1): "all 3 queries at 0 B here (lines overlap)",
                     ("2,048 MB cache, random windows", 1): "all 3 queries at 0 B here (lines overlap)"}
    # legend marks are the plotted marks: every point layer hollow, as the shared legend draws them
    points = [m for m in _marks(spec) if m.get("type") == "point"]
    assert points and all(m.get("filled") is False for m in points), points
    assert "51 MB" in json.dumps(engine_bytes_read_chart(_cache_reads(51), published).to_dict()["facet"])
    assert "3 MB cache" in json.dumps(engine_bytes_read_chart(_cache_reads(3), published).to_dict()["facet"])


def test_subtitles_wrap_to_the_plot():
    """A one-line subtitle set the PNG's width (appversions: 2,458 px, the plot half of it)."""
    import altair as alt

    from costlab.report.charts import SUBTITLE_CHARS, titled

    long = "WiredTiger engine lab — not a mongod run; " + "; ".join(
        f"note number {i} about a setting" for i in range(8)
    )
    spec = titled(
        alt.Chart(pl.DataFrame({"x": [1]})).mark_point().encode(x="x:Q"), "t", subtitle=long
    ).to_dict()
    lines = spec["title"]["subtitle"]
    assert len(lines) > 1 and all(len(line) <= SUBTITLE_CHARS for line in lines)
    assert " ".join(lines) == long
