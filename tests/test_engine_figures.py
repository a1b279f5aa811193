"""The engine lab's figures: built by `all` with no server, shown in the report, encoding the right data."""
from __future__ import annotations

import json
import re

import polars as pl
import pytest

from costlab.report.charts import ENGINE_LABEL

ENGINE_FIGURES = {"arraygrowth": "engine_log_bytes", "docsize": "engine_cache_reads",
                  "appversions": "engine_storage_per_event"}


@pytest.fixture(scope="module")
def no_server_run(smoke_all):
    """The results of `snakemake all` on config/smoke.yaml with no server (the session's smoke tree
    before its server run: tests/conftest.py), as a directory holding results/."""
    if smoke_all.no_server_results is None:
        pytest.skip("a mongod on /usr/bin: `auto` would find a server")
    return smoke_all.no_server_results.parent


@pytest.mark.workflow
def test_all_without_a_server_draws_each_engine_figure(no_server_run):
    results = no_server_run / "results"
    for study, name in ENGINE_FIGURES.items():
        for ext in ("png", "svg", "vl.json"):
            path = results / study / "figures" / f"{name}.{ext}"
            assert path.stat().st_size > 0, path
        svg = (results / study / "figures" / f"{name}.svg").read_text()
        assert ENGINE_LABEL in svg, study
    assert not (results / "servers").exists()
    # the mongod figures are not drawn: only the engine lab's are in figures/
    drawn = {p.name.split(".")[0] for study in ENGINE_FIGURES for p in (results / study / "figures").iterdir()
             if p.is_file()}   # not figures/.digests/ (costlab/digests.py)
    assert drawn == set(ENGINE_FIGURES.values())


@pytest.mark.workflow
def test_the_no_server_report_shows_the_engine_figures(no_server_run):
    page = (no_server_run / "results" / "report.html").read_text()
    assert page.count("data-figure=") >= len(ENGINE_FIGURES)
    for study, name in ENGINE_FIGURES.items():
        section = re.search(rf'<section class="study" id="study-{study}".*?</section>', page, re.S).group(0)
        assert f'data-figure="fig-{study}-{name}"' in section, study
        assert "not run: no MongoDB server" in section   # the mongod part still says so
        # the only figure of the section is the engine lab's: no empty mongod figure
        assert re.findall(r'data-figure="([^"]+)"', section) == [f"fig-{study}-{name}"]
        spec = re.search(rf'data-figure="fig-{study}-{name}">(.*?)</script>', section, re.S).group(1)
        assert ENGINE_LABEL in " ".join(json.loads(spec)["title"]["subtitle"])


def _values(spec: dict) -> list[dict]:
    """Every data row of a Vega-Lite spec (inline data and named datasets)."""
    rows = list(spec.get("data", {}).get("values", []))
    for dataset in spec.get("datasets", {}).values():
        rows += dataset
    return rows


def test_arraygrowth_engine_chart_has_both_profiles_the_published_markers_and_the_exponents():
    from costlab.arraygrowth.figures import ENGINE_SOURCE, engine_log_bytes_chart
    log_bytes = pl.DataFrame({
        "profile": ["standalone"] * 4 + ["replset-1"] * 4,
        "workload": ["insert", "insert", "push", "push"] * 2,
        "n": [200, 400] * 4,
        "log_bytes": [25_600, 51_200, 1_000_000, 4_000_000, 76_800, 153_600, 76_800, 153_600],
        "journal_compressor": ["lz4"] * 8, "journal_compressor_wanted": ["snappy"] * 8})
    fit = pl.DataFrame({"profile": ["standalone", "standalone", "replset-1", "replset-1"],
                        "workload": ["insert", "push", "insert", "push"], "exponent": [1.0, 2.0, 1.0, 1.0]})
    published = pl.read_csv("resources/published/arraygrowth_log_bytes.csv")
    spec = engine_log_bytes_chart(log_bytes, fit, published).to_dict()
    rows = _values(spec)
    engine = [r for r in rows if r["source"] == ENGINE_SOURCE]
    assert {r["profile"] for r in engine} == {"standalone", "replset-1"}
    assert {(r["profile"], r["workload"], r["n"], r["log_bytes"]) for r in engine} == set(
        zip(*[log_bytes[c].to_list() for c in ("profile", "workload", "n")],
            map(float, log_bytes["log_bytes"].to_list())))
    article = [r for r in rows if r["source"] == "published (article)"]
    assert len(article) == published.height and {r["profile"] for r in article} == {"standalone", "replset-1"}
    text = json.dumps(spec, ensure_ascii=False)
    assert (
        '"diamond"' in text and f'"{ENGINE_SOURCE}"' in text
    )  # the shape scale maps the article to diamonds
    subtitle = " ".join(spec["title"]["subtitle"])
    assert ENGINE_LABEL in subtitle and "journal compressor lz4 (snappy wanted" in subtitle
    assert "standalone push N^2.00" in subtitle and "replset-1 push N^1.00" in subtitle


def test_docsize_engine_chart_encodes_every_shape_and_run_with_the_compressor():
    from costlab.docsize.figures import ENGINE_SOURCE, engine_bytes_read_chart
    runs = ["same_window", "random_windows", "small_cache"]
    shapes = ["whole", "projection", "covered"]
    cache_reads = pl.DataFrame([{"size_kb": 4, "run": run, "shape": shape, "queries": 3,
                                 "bytes_read_into_cache_median": float(1000 * (i + 1) * (j + 1)),
                                 "block_compressor": "lz4", "block_compressor_wanted": "snappy"}
                                for i, run in enumerate(runs) for j, shape in enumerate(shapes)])
    spec = engine_bytes_read_chart(
        cache_reads, pl.read_csv("resources/published/docsize_query_tables.csv")
    ).to_dict()
    engine = [r for r in _values(spec) if r["source"] == ENGINE_SOURCE]
    assert len(engine) == 9
    assert {(r["run"], r["shape"], r["value"]) for r in engine} == {
        (r["run"], r["shape"], r["bytes_read_into_cache_median"]) for r in cache_reads.iter_rows(named=True)}
    assert any(r["source"] == "published" for r in _values(spec))
    subtitle = " ".join(spec["title"]["subtitle"])
    assert ENGINE_LABEL in subtitle and "block compressor lz4 (snappy wanted" in subtitle


def test_docsize_engine_chart_draws_the_cold_per_shape_variant_in_its_own_panel():
    """The variant's rows were in cache_reads.csv and the verdicts but not drawn (panels joined on the
    three mongod runs): it gets its own panel, named as a variant, with the article's small-cache points."""
    from costlab.docsize.figures import ENGINE_SOURCE, engine_bytes_read_chart
    runs = ["same_window", "random_windows", "small_cache", "small_cache_cold_per_shape"]
    cache_reads = pl.DataFrame(
        [
            {
                "size_kb": 1,
                "run": run,
                "shape": shape,
                "queries": 30,
                "cache_mb": 51,
                "windows": "same" if run == "same_window" else "random",
                "bytes_read_into_cache_median": float(100 * (i + 1) + j),
                "block_compressor": "snappy",
                "block_compressor_wanted": "snappy",
            }
            for i, run in enumerate(runs)
            for j, shape in enumerate(["whole", "projection", "covered"])
        ]
    )
    spec = engine_bytes_read_chart(
        cache_reads, pl.read_csv("resources/published/docsize_query_tables.csv")
    ).to_dict()
    values = _values(spec)
    variant = [r for r in values if r["run"] == "small_cache_cold_per_shape"]
    assert {(r["shape"], r["value"]) for r in variant if r["source"] == ENGINE_SOURCE} == {
        ("whole", 400.0), ("projection", 401.0), ("covered", 402.0)}
    panels = {r["cache_setting"] for r in variant}
    assert panels == {"51 MB cache, random windows, cold start per shape (variant)"}
    # the article's 256 MB-cache points are drawn in the variant's panel as in small_cache's
    published = pl.read_csv("resources/published/docsize_query_tables.csv").filter(
        (pl.col("run") == "small_cache") & (pl.col("metric") == "bytes_read_into_cache"))
    assert {(r["size_kb"], r["shape"]) for r in variant if r["source"] == "published"} == {
        (r["size_kb"], r["shape"]) for r in published.iter_rows(named=True)}


def test_appversions_engine_chart_shows_storage_beside_published_and_each_compressor():
    from costlab.appversions.figures import ENGINE_SOURCE, engine_storage_per_event_chart
    storage = pl.DataFrame({
        "version": ["appV1", "appV6R4"], "events": [500, 500],
        "storage_bytes_per_event": [12.0, 3.0], "index_bytes_per_event": [24.0, 1.0],
        "published_storage_bytes_per_event": [18.9, None], "published_index_bytes_per_event": [43.1, 2.9],
        "block_compressor_wanted": ["snappy", "zstd"], "block_compressor": ["lz4", "zlib"]})
    spec = engine_storage_per_event_chart(storage).to_dict()
    rows = _values(spec)
    assert {
        (r["version"], r["component"], r["bytes_per_event"]) for r in rows if r.get("source") == ENGINE_SOURCE
    } == {
        ("appV1", "storage", 12.0),
        ("appV1", "index", 24.0),
        ("appV6R4", "storage", 3.0),
        ("appV6R4", "index", 1.0),
    }
    assert {
        (r["version"], r["component"]) for r in rows if r.get("source") == "published" and "component" in r
    } == {("appV1", "storage"), ("appV1", "index")}  # appV6R4's published bar lacks a part: marked, not drawn
    assert [(r["version"], r["missing"]) for r in rows if "missing" in r] == [
        ("appV6R4", "storage per event not published")]
    text = json.dumps(spec, ensure_ascii=False)
    assert "appV1 (snappy→lz4)" in text and "appV6R4 (zstd→zlib)" in text
    assert ENGINE_LABEL in " ".join(spec["title"]["subtitle"])


def test_an_engine_figure_is_not_marked_stand_in_when_the_study_ran_on_the_stand_in(tmp_path):
    """A stand-in run's section banner stays; the engine lab's own figure carries no stand-in label."""
    from costlab.arraygrowth.figures import engine_log_bytes_chart
    from costlab.report.charts import save_chart
    from costlab.report.collect import collect_study
    from tests.test_report import smoke_config, write_study
    write_study(tmp_path, "arraygrowth", "stand-in", figure="spec")
    log_bytes = pl.DataFrame({"profile": ["standalone"] * 2, "workload": ["push"] * 2, "n": [200, 400],
                              "log_bytes": [1_000_000, 4_000_000], "journal_compressor": ["lz4"] * 2})
    fit = pl.DataFrame({"profile": ["standalone"], "workload": ["push"], "exponent": [2.0]})
    chart = engine_log_bytes_chart(
        log_bytes, fit, pl.read_csv("resources/published/arraygrowth_log_bytes.csv")
    )
    save_chart(chart, tmp_path / "results" / "arraygrowth" / "figures" / "engine_log_bytes.vl.json")
    section = collect_study("arraygrowth", tmp_path / "results", smoke_config(), None, None)
    marked = {item.name: item.stand_in for item in section.figures}
    assert marked == {"latency": True, "engine_log_bytes": False}


def _marks(spec: dict) -> list[str]:
    """Every layer's mark type, however deep (a faceted chart's spec, layers within layers)."""
    found = []

    def walk(node):
        if isinstance(node, dict):
            if "mark" in node:
                mark = node["mark"]
                found.append(mark if isinstance(mark, str) else mark["type"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)
    walk({k: v for k, v in spec.items() if k != "datasets"})
    return found


def test_appversions_engine_chart_draws_each_repeat_as_a_point_and_one_repeat_as_before():
    from costlab.appversions.figures import engine_storage_per_event_chart

    def storage(repeats: list[int]) -> pl.DataFrame:
        return pl.DataFrame({
            "version": ["appV1"], "events": [1000], "storage_bytes": [sorted(repeats)[len(repeats) // 2]],
            "storage_bytes_per_event": [sorted(repeats)[len(repeats) // 2] / 1000],
            "index_bytes_per_event": [64.0], "published_storage_bytes_per_event": [18.9],
            "published_index_bytes_per_event": [43.1], "block_compressor_wanted": ["snappy"],
            "block_compressor": ["snappy"], "repeats": [len(repeats)],
            "storage_bytes_repeats": ["; ".join(map(str, repeats))], "index_bytes": [64_000],
            "index_bytes_repeats": ["; ".join(["64000", "66000", "62000"][:len(repeats)])]})

    # 3 repeats of 18,000, 20,000 and 17,000 storage bytes and 64,000, 66,000 and 62,000 index bytes over
    # 1,000 events: points at the stacked bar's height in each repeat, 82, 86 and 79 bytes per event
    spec = engine_storage_per_event_chart(storage([18_000, 20_000, 17_000])).to_dict()
    points = [r for r in _values(spec) if "repeat" in r]
    assert sorted((r["repeat"], r["bytes_per_event"]) for r in points) == [(1, 82.0), (2, 86.0), (3, 79.0)]
    assert _marks(spec).count("point") == 1 and "bar" in _marks(spec)
    assert "dots: each of 3 repeats' storage + index per event" in " ".join(spec["title"]["subtitle"])
    # one repeat: the bars alone, as before repeats
    spec = engine_storage_per_event_chart(storage([18_000])).to_dict()
    assert "point" not in _marks(spec) and not [r for r in _values(spec) if "repeat" in r]
    assert "dots" not in " ".join(spec["title"]["subtitle"])


def test_docsize_engine_chart_draws_each_cells_interval_as_an_error_bar():
    from costlab.docsize.figures import ENGINE_SOURCE, engine_bytes_read_chart

    def cache_reads(queries: int, interval: bool) -> pl.DataFrame:
        return pl.DataFrame([{
            "size_kb": 4, "run": "small_cache", "shape": "whole", "queries": queries, "cache_mb": 1,
            "windows": "random", "bytes_read_into_cache_median": 4000.0, "bytes_read_into_cache_mean": 5000.0,
            "bytes_read_into_cache_mean_low": 3000.0 if interval else None,
            "bytes_read_into_cache_mean_high": 8000.0 if interval else None,
            "interval_confidence": 0.95 if interval else None,
            "block_compressor": "snappy", "block_compressor_wanted": "snappy"}])

    published = pl.read_csv("resources/published/docsize_query_tables.csv")
    spec = engine_bytes_read_chart(cache_reads(30, True), published).to_dict()
    engine = [r for r in _values(spec) if r["source"] == ENGINE_SOURCE]
    drawn = [(r["value"], r["mean"], r["low"], r["high"]) for r in engine]
    assert drawn == [(4000.0, 5000.0, 3000.0, 8000.0)]
    assert {"rule", "tick"} <= set(_marks(spec))
    assert "error bars: the mean's 95% BCa interval" in " ".join(spec["title"]["subtitle"])
    # 3 queries a cell: no interval, no error bar (the figure as before)
    spec = engine_bytes_read_chart(cache_reads(3, False), published).to_dict()
    assert not {"rule", "tick"} & set(_marks(spec))
    assert "error bars" not in " ".join(spec["title"]["subtitle"])
