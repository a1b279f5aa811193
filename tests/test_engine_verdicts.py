"""Published vs engine lab, docsize: a finding published for 64 KB orders is not judged at other sizes."""
from __future__ import annotations

import polars as pl

from costlab.engine.verdicts import docsize_verdicts


def cache_reads(size_kb: int, projection: float, whole: float, covered: float = 0.0) -> pl.DataFrame:
    return pl.DataFrame({"run": ["small_cache"] * 3, "size_kb": [size_kb] * 3, "cache_mb": [3] * 3,
                         "shape": ["projection", "whole", "covered"],
                         "bytes_read_into_cache_median": [projection, whole, covered]})


PUBLISHED = pl.DataFrame({"run": ["small_cache"] * 6, "size_kb": [4, 4, 4, 64, 64, 64],
                          "shape": ["projection", "whole", "covered"] * 2,
                          "metric": ["bytes_read_into_cache"] * 6,
                          "value": [250_000.0, 410_000.0, 1_200.0, 61_000_000.0, 60_000_000.0, 13_000.0]})


def window_row(frame: pl.DataFrame) -> dict:
    return frame.filter(pl.col("metric").str.starts_with("projection bytes read into cache / (window"))\
        .row(0, named=True)


def test_window_fraction_at_a_size_the_article_did_not_publish_is_not_comparable():
    """Smoke scale (1 and 4 KB, a 3 MB cache): part of each window is already cached; this used to read
    'not reproduced' with no published value beside it."""
    row = window_row(docsize_verdicts(cache_reads(4, 112_200.0, 112_200.0), PUBLISHED, 100, {4: 4096}))
    assert row["published"] is None and row["reproduced"] is not None
    assert row["verdict"].startswith("not comparable at this scale") and "64 KB" in row["verdict"]


def test_window_fraction_at_64_kb_is_judged():
    low = window_row(docsize_verdicts(cache_reads(64, 10_000_000.0, 10_000_000.0), PUBLISHED, 1000, {64: 65876}))
    assert low["verdict"] == "not reproduced"
    high = window_row(docsize_verdicts(cache_reads(64, 65_000_000.0, 65_000_000.0), PUBLISHED, 1000, {64: 65876}))
    assert high["verdict"] == "reproduced"
