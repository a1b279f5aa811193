"""docsize on the engine lab: the fetch/covered split and the per-shape block protocol."""
from __future__ import annotations

import polars as pl
import pytest

from costlab.docsize.engine import (QUERY_COLUMNS, engine_runs, measure_size, small_cache_mb, summarize)
from costlab.engine.connection import EngineSettings

SETTINGS = EngineSettings(journal_compressor="lz4", block_compressor="lz4")
STUDY = {"seed": 42, "customers": 20}
# 2,000 orders of 16 KB (33 MB) and an 8 MB small cache: the small cache holds a quarter of the data
ENGINE_DOCSIZE = {"docs_per_collection": 2000, "window_minutes": 100, "warmups": 3, "queries": 5,
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
    table = summarize(queries, SETTINGS, "11.2.0", "snappy", "snappy")
    small = {r["shape"]: r for r in table.filter(pl.col("run") == "small_cache").iter_rows(named=True)}
    window_bytes = 100 * 16 * 1024
    assert small["whole"]["bytes_read_into_cache_median"] > 0.5 * window_bytes
    assert 0.7 < small["projection"]["bytes_read_into_cache_median"] / small["whole"]["bytes_read_into_cache_median"] < 1.4
    assert small["covered"]["bytes_read_into_cache_median"] * 20 < small["projection"]["bytes_read_into_cache_median"]
    assert (queries["n_returned"] == 100).all()
    assert set(table["windows"]) <= {"same", "random"} and set(table["shape"]) == {"whole", "projection", "covered"}
    assert set(table["journal_compressor_wanted"]) == {"snappy"} and set(table["server_kind"]) == {"engine"}


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
