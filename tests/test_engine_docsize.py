"""docsize on the engine lab: the fetch/covered split and the per-shape block protocol."""
from __future__ import annotations

import polars as pl
import pytest

from costlab.docsize.engine import (QUERY_COLUMNS, engine_runs, measure_size, small_cache_mb, summarize)
from costlab.engine.connection import EngineSettings

SETTINGS = EngineSettings(journal_compressor="lz4", block_compressor="lz4")
STUDY = {"seed": 42, "customers": 20}
# 2,000 orders of 16 KB (33 MB) and an 8 MB small cache: the small cache holds a quarter of the data
ENGINE_DOCSIZE = {"docs_per_collection": 2000, "window_minutes": 100, "warmups": 0, "queries": 4,
                  "default_cache_mb": 256, "small_cache_mb": 8}


@pytest.fixture(scope="module")
def queries(tmp_path_factory) -> pl.DataFrame:
    rows, facts = measure_size(16, STUDY, ENGINE_DOCSIZE, SETTINGS, tmp_path_factory.mktemp("ds") / "wt")
    assert facts["avg_doc_bytes"] == 16 * 1024
    return pl.DataFrame(rows).select(QUERY_COLUMNS)


def test_small_cache_scales_with_the_collection():
    assert small_cache_mb(50_000, None) == 256
    assert small_cache_mb(10_000, None) == 51
    assert small_cache_mb(10_000, 128) == 128
    assert [r.name for r in engine_runs(ENGINE_DOCSIZE)] == ["same_window", "random_windows", "small_cache"]


def test_projection_reads_whole_documents_covered_reads_the_index(queries):
    # Each small-cache block starts cold, so its first query reads its whole window from disk:
    # what a shape reads then depends on the shape only, not on which windows the cache holds.
    cold = {r["shape"]: r["bytes_read_into_cache"]
            for r in queries.filter(pl.col("cold_start")).iter_rows(named=True)}
    window_bytes = 100 * 16 * 1024
    assert cold["whole"] > 0.9 * window_bytes
    assert 0.9 < cold["projection"] / cold["whole"] < 1.1
    assert cold["covered"] * 20 < cold["projection"]
    assert (queries["n_returned"] == 100).all()
    table = summarize(queries, SETTINGS, "11.2.0", "snappy", "snappy")
    assert set(table["windows"]) <= {"same", "random"} and set(table["shape"]) == {"whole", "projection", "covered"}
    assert set(table["journal_compressor_wanted"]) == {"snappy"} and set(table["server_kind"]) == {"engine"}
    assert (table["queries"] == 4).all()


def test_one_block_per_shape_and_cold_small_cache_blocks(queries):
    for run, group in queries.group_by("run"):
        blocks = group.group_by("block").agg(pl.col("shape").n_unique().alias("shapes"),
                                             pl.col("cold_start").sum().alias("cold"))
        assert (blocks["shapes"] == 1).all() and blocks.height == 3
        assert (blocks["cold"] == (1 if run[0] == "small_cache" else 0)).all()
    random_small = queries.filter(pl.col("run") == "small_cache")
    # no window is queried by two shapes back to back (each shape draws its own windows)
    starts = random_small["window_start"].to_list()
    shapes = random_small["shape"].to_list()
    assert not any(a == b and s != t for a, b, s, t in zip(starts, starts[1:], shapes, shapes[1:]))


def test_large_cache_runs_read_nothing_once_the_collection_is_in_cache(queries):
    large = queries.filter(pl.col("run").is_in(["same_window", "random_windows"]))
    assert large.height > 0 and (large["bytes_read_into_cache"] == 0).all()
