"""docsize on the engine lab: the fetch/covered split and the per-shape block protocol."""
from __future__ import annotations

import polars as pl
import pytest

from costlab.docsize.engine import (
    QUERY_COLUMNS,
    engine_runs,
    large_cache_mb,
    measure_size,
    small_cache_mb,
    summarize,
)
from costlab.engine.connection import EngineSettings

SETTINGS = EngineSettings(journal_compressor="lz4", block_compressor="lz4")
STUDY = {"seed": 42, "customers": 20}
# 2,000 orders of 16 KB (33 MB) and an 8 MB small cache: the small cache holds a quarter of the data
ENGINE_DOCSIZE = {"docs_per_collection": 2000, "window_minutes": 100, "warmups": 2, "same_window_warmups": 1,
                  "queries": 4, "default_cache_mb": 256, "small_cache_mb": 8}
STUDY["sizes_kb"] = [16]


@pytest.fixture(scope="module")
def queries(tmp_path_factory) -> pl.DataFrame:
    rows, facts = measure_size(16, STUDY, ENGINE_DOCSIZE, SETTINGS, tmp_path_factory.mktemp("ds") / "wt")
    assert facts["avg_doc_bytes"] == 16_403   # the article's mean 16 KB order
    return pl.DataFrame(rows).select(QUERY_COLUMNS)


def test_small_cache_scales_with_the_collection():
    assert small_cache_mb(50_000, None) == 256
    assert small_cache_mb(10_000, None) == 51
    assert small_cache_mb(10_000, 128) == 128
    assert [r.name for r in engine_runs(ENGINE_DOCSIZE, [16])] == [
        "same_window",
        "random_windows",
        "small_cache",
        "small_cache_cold_per_shape",
    ]


def test_the_large_cache_holds_the_largest_collection():
    # 50,000 orders of 64 KB are 3,125 MB of BSON: the cache holds them with room for WiredTiger's pages
    assert large_cache_mb(50_000, [1, 4, 16, 64], None) == int(3125 * 1.5) + 64
    assert large_cache_mb(50_000, [1, 64], 2048) == 2048


def test_projection_reads_whole_documents_covered_reads_the_index(queries):
    # In the per-shape variant each block starts cold, so its first query reads its whole window from
    # disk: what a shape reads then depends on the shape only, not on which windows the cache holds.
    cold = {r["shape"]: r["bytes_read_into_cache"] for r in queries.filter(
        pl.col("cold_start") & (pl.col("run") == "small_cache_cold_per_shape")).iter_rows(named=True)}
    window_bytes = 100 * 16 * 1024
    assert cold["whole"] > 0.9 * window_bytes
    assert 0.9 < cold["projection"] / cold["whole"] < 1.1
    assert cold["covered"] * 20 < cold["projection"]
    assert (queries["n_returned"] == 100).all()
    table = summarize(queries, SETTINGS, "11.2.0", "snappy", "snappy")
    assert set(table["windows"]) <= {"same", "random"} and set(table["shape"]) == {
        "whole",
        "projection",
        "covered",
    }
    assert set(table["journal_compressor_wanted"]) == {"snappy"} and set(table["server_kind"]) == {"engine"}
    assert (table["queries"] == 4).all()
    assert {"bytes_read_into_cache_mean", "bytes_read_into_cache_median"} <= set(table.columns)


def test_the_articles_small_cache_protocol_one_start_then_whole_projection_covered(queries):
    # the article: one server start with the small cache, the warm-ups once, then each shape in order;
    # the variant: every shape after a cold start and its own warm-ups
    for run, starts in (("small_cache", [1, 0, 0]), ("small_cache_cold_per_shape", [1, 1, 1]),
                        ("random_windows", [0, 0, 0]), ("same_window", [0, 0, 0])):
        group = queries.filter(pl.col("run") == run).sort("block", "query")
        blocks = group.group_by("block", maintain_order=True).agg(
            pl.col("shape").first(), pl.col("shape").n_unique().alias("shapes"),
            pl.col("cold_start").sum().alias("cold"), (pl.col("phase") == "warmup").sum().alias("warmups"),
            (pl.col("phase") == "measured").sum().alias("measured"))
        assert (
            blocks["shape"].to_list() == ["whole", "projection", "covered"] and (blocks["shapes"] == 1).all()
        )
        assert blocks["cold"].to_list() == starts, run
        warmups = 1 if run == "same_window" else 2
        assert blocks["warmups"].to_list() == (
            [warmups] * 3 if run == "small_cache_cold_per_shape" else [warmups, 0, 0]
        )
        assert (blocks["measured"] == 4).all()
        cold_rows = group.filter(pl.col("cold_start"))
        assert (
            cold_rows["phase"] == "warmup"
        ).all()  # a cold start comes before the warm-ups, never measured
    # the variant draws the small_cache run's windows: the same whole-document block, then each shape's
    # windows after its own warm-ups
    windows = {
        run: queries.filter((pl.col("run") == run) & (pl.col("shape") == "whole"))
        .sort("query")["window_start"]
        .to_list()
        for run in ("small_cache", "small_cache_cold_per_shape")
    }
    assert windows["small_cache"] == windows["small_cache_cold_per_shape"]


def test_no_window_is_queried_by_two_shapes_back_to_back(queries):
    random_small = queries.filter(pl.col("run") == "small_cache")
    # each shape draws its own windows
    starts = random_small["window_start"].to_list()
    shapes = random_small["shape"].to_list()
    assert not any(a == b and s != t for a, b, s, t in zip(starts, starts[1:], shapes, shapes[1:]))


def test_large_cache_runs_read_nothing_once_the_collection_is_in_cache(queries):
    large = queries.filter(pl.col("run").is_in(["same_window", "random_windows"]))
    assert large.height > 0 and (large["bytes_read_into_cache"] == 0).all()


def test_repeats_run_the_small_cache_protocol_again_from_a_cold_start(tmp_path):
    """engine.docsize.repeats: each repeat of the small-cache run starts cold (the connection reopened) with
    the server's repeat-r windows (costlab.docsize.run.family_plan: seed + [r]); the large cache once. A cell
    is then the median of its repeats' means with the order-statistic interval over the repeats."""
    from costlab.docsize.datasets import Dataset
    from costlab.docsize.run import job_order

    engine_docsize = ENGINE_DOCSIZE | {"docs_per_collection": 600, "repeats": 3,
                                       "cold_per_shape_variant": False}
    rows, _ = measure_size(1, {**STUDY, "sizes_kb": [1]}, engine_docsize, SETTINGS, tmp_path / "wt")
    frame = pl.DataFrame(rows).select(QUERY_COLUMNS)
    assert frame.group_by("run").agg(pl.col("repeat").n_unique()).sort("run").rows() == [
        ("random_windows", 1), ("same_window", 1), ("small_cache", 3)]
    small = frame.filter(pl.col("run") == "small_cache")
    # each repeat: 2 warm-ups + 3 shapes x 4 queries, its first query a cold start
    for rep in (1, 2, 3):
        one = small.filter(pl.col("repeat") == rep).sort("block", "query")
        assert one.height == 14 and one["cold_start"].to_list() == [True] + [False] * 13
        server = [s.query.window_start for s in job_order(
            Dataset("orders_1k", 1, "base"), "small_cache",
            {"seed": 42, "docs_per_collection": 600, "window_minutes": 100, "customers": 20,
             "runs": {"small_cache": {"warmups": 2, "queries": 4}}}, rep=rep)]
        assert one["window_start"].to_list() == server
    # 600 1 KB orders fit the 8 MB cache: a cold start reads something in every repeat
    assert (small.filter(pl.col("block") == 0).group_by("repeat").agg(pl.col("bytes_read_into_cache").sum())
            ["bytes_read_into_cache"] > 0).all()
    table = summarize(frame, SETTINGS, "wt", "lz4", "lz4")
    cell = table.filter((pl.col("run") == "small_cache") & (pl.col("shape") == "whole")).row(0, named=True)
    means = (small.filter((pl.col("shape") == "whole") & (pl.col("phase") == "measured"))
             .group_by("repeat").agg(pl.col("bytes_read_into_cache").mean()).sort("repeat")
             ["bytes_read_into_cache"].to_list())
    assert cell["repeats"] == 3 and cell["queries"] == 12
    assert cell["bytes_read_into_cache_value"] == sorted(means)[1]   # the median of 3
    # 3 repeats: the order-statistic interval is [min, max] (coverage 1 - 2 / 2^3 = 75 %)
    assert (cell["bytes_read_into_cache_mean_low"], cell["bytes_read_into_cache_mean_high"]) == (
        min(means), max(means))
    assert cell["interval_confidence"] == pytest.approx(0.75)
