"""Published vs engine lab, docsize: a finding published for 64 KB orders is not judged at other sizes."""
from __future__ import annotations

import polars as pl
import pytest

from costlab.docsize.engine_verdicts import docsize_verdicts


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
    assert (
        row["verdict"] == "not comparable"
        and row["reason"].startswith("at this scale")
        and "64 KB" in row["reason"]
    )


def test_window_fraction_at_64_kb_is_judged():
    low = window_row(
        docsize_verdicts(cache_reads(64, 10_000_000.0, 10_000_000.0), PUBLISHED, 1000, {64: 65876})
    )
    assert low["verdict"] == "not reproduced"
    high = window_row(
        docsize_verdicts(cache_reads(64, 65_000_000.0, 65_000_000.0), PUBLISHED, 1000, {64: 65876})
    )
    assert high["verdict"] == "reproduced"


def test_a_verdict_per_size_run_and_shape_with_its_tolerance():
    from costlab.docsize.engine_verdicts import docsize_cells
    reads = pl.DataFrame({
        "run": ["small_cache"] * 3 + ["small_cache_cold_per_shape"] + ["random_windows"] * 2,
        "size_kb": [64, 64, 64, 64, 64, 64], "cache_mb": [51] * 4 + [4864] * 2,
        "shape": ["whole", "projection", "covered", "whole", "whole", "covered"],
        # whole 70 MB vs 60 MB published (1.17: inside 0.8-1.25); projection 80 MB vs 61 MB (1.31: outside);
        # covered 70 KB vs 13 KB (57 KB apart: within 64 KB); variant whole 40 MB (0.67: outside);
        # the large cache: 0 and 100 KB read (next to nothing: within 64 KB, then not)
        "bytes_read_into_cache_mean": [70e6, 80e6, 70_000.0, 40e6, 0.0, 100_000.0],
        "bytes_read_into_cache_median": [1.0] * 6})
    cells = docsize_cells(reads, PUBLISHED, 1000)
    verdicts = {tuple(f.split(":")[0].split(", ")[1:]): v for f, v in zip(cells["finding"], cells["verdict"])}
    assert verdicts == {
        ("small_cache", "whole"): "reproduced",
        ("small_cache", "projection"): "not reproduced",
        ("small_cache", "covered"): "reproduced",
        ("small_cache_cold_per_shape", "whole"): "not reproduced",
        ("random_windows", "whole"): "reproduced",
        ("random_windows", "covered"): "not reproduced",
    }
    assert cells.filter(pl.col("metric").str.contains("random_windows"))["published"].is_null().all()
    assert cells["note"].str.contains("tolerance").all() and set(cells["server_kind"]) == {"engine"}


def _one_cell(mean: float, low: float | None, high: float | None, queries: int = 30,
              shape: str = "projection") -> dict:
    from costlab.docsize.engine_verdicts import docsize_cells
    reads = pl.DataFrame({"run": ["small_cache"], "size_kb": [4], "cache_mb": [256], "shape": [shape],
                          "queries": [queries], "bytes_read_into_cache_mean": [mean],
                          "bytes_read_into_cache_median": [0.0], "bytes_read_into_cache_std": [300_000.0],
                          "zero_read_share": [0.77], "bytes_read_into_cache_mean_low": [low],
                          "bytes_read_into_cache_mean_high": [high], "interval_confidence": [0.95]},
                         schema_overrides={"bytes_read_into_cache_mean_low": pl.Float64,
                                           "bytes_read_into_cache_mean_high": pl.Float64})
    return docsize_cells(reads, PUBLISHED, 1000).row(0, named=True)


def test_a_bimodal_cell_is_judged_by_its_interval_over_the_queries():
    # published 250 KB, band 0.8-1.25 x: [200 KB, 312.5 KB]
    # the interval [90 KB, 260 KB] around 150 KB straddles the lower edge 200 KB: inconclusive; the edge lies
    # above the value; the cell keeps no query values (samples), so no count can be suggested from a spread
    row = _one_cell(150_000.0, 90_000.0, 260_000.0)
    assert row["verdict"] == "inconclusive" and "values were not kept" in row["reason"]
    assert row["interval"].startswith("90,000 to 260,000 at 95.0% (mean of 30 queries")
    # the same mean from steady queries ([140 KB, 160 KB]) is a real miss
    assert _one_cell(150_000.0, 140_000.0, 160_000.0)["verdict"] == "not reproduced"
    # wholly inside the band: reproduced
    assert _one_cell(240_000.0, 210_000.0, 300_000.0)["verdict"] == "reproduced"
    # a cell with no interval (an older cache_reads.csv): the point verdict, and it says so
    point = _one_cell(240_000.0, None, None)
    assert point["verdict"] == "reproduced" and point["interval"] == "one run: no interval"


def test_inconclusive_is_a_verdict_of_its_own():
    from costlab.verdicts import VERDICT_CLASSES, Verdict, verdict_class
    assert Verdict.INCONCLUSIVE.value == "inconclusive" and verdict_class("inconclusive") == "inconclusive"
    assert VERDICT_CLASSES.index("inconclusive") == VERDICT_CLASSES.index("not reproduced") + 1


def _queries(projection: list[float], whole: list[float], covered: list[float]) -> pl.DataFrame:
    """Measured small-cache queries at 64 KB, per shape (engine/queries.csv's columns the verdicts read)."""
    shapes = [("projection", projection), ("whole", whole), ("covered", covered)]
    return pl.DataFrame({"run": "small_cache", "size_kb": 64, "phase": "measured",
                         "shape": [s for s, values in shapes for _ in values],
                         "bytes_read_into_cache": [float(v) for _, values in shapes for v in values]})


def _aggregate_rows(queries: pl.DataFrame) -> dict[str, dict]:
    medians = {s: float(queries.filter(pl.col("shape") == s)["bytes_read_into_cache"].median())
               for s in ("projection", "whole", "covered")}
    table = docsize_verdicts(cache_reads(64, medians["projection"], medians["whole"], medians["covered"]),
                             PUBLISHED, 1000, {64: 65876}, queries=queries)
    return {r["metric"].split(",")[0]: r for r in table.iter_rows(named=True) if "KB, small_cache" not in
            r["finding"]}


def test_docsize_aggregate_rows_from_queries_that_all_read_the_same_say_the_rule_of_three():
    """Every query of a shape reads the same bytes: no bootstrap and no zero-width interval, but the rule of
    three's bound (at most 1 - 0.05^(1/12) = 22.1 % of such queries differ) and the point verdict, its risk
    not known.
    projection / whole = 61,000,000 / 60,000,000 = 1.0167 (at least 0.5: reproduced); covered / projection =
    13,000 / 61,000,000 = 0.000213 (at most 0.05); 61,000,000 B a query against the published 61 MB
    (0.8-1.25 x); 61,000,000 / (1,000 x 65,876) = 0.926 of the window (at least 0.5)."""
    rows = _aggregate_rows(_queries([61e6] * 12, [60e6] * 12, [13e3] * 12))
    assert len(rows) == 4, rows
    expected = {"bytes read into cache": 61 / 60, "covered bytes read into cache / projection bytes read":
                13e3 / 61e6, "projection bytes read into cache per query": 61e6,
                "projection bytes read into cache / (window x document)": 61e6 / (1000 * 65876)}
    for metric, value in expected.items():
        row = rows[metric]
        assert row["verdict"] == "reproduced", row
        assert row["reproduced"] == pytest.approx(value, rel=1e-3), row
        assert "in all 12 queries: at most 22.1% of such queries differ" in row["interval"], row


def test_docsize_aggregate_rows_of_bimodal_queries_straddling_the_band_are_inconclusive():
    """Half the projection queries read nothing, half the whole 61 MB window (11 each; the median of 22 is
    the mean of the middle two, 30.5 MB): a resample's median is 0, 30.5 or 61 MB, 0 and 61 MB each about
    42 % of the time, so the 95 % interval of projection / whole runs from 0 to 61 / 60 = 1.017 and crosses
    0.5 (the estimate 30.5 / 60 = 0.508 sits just above it): inconclusive; likewise 30.5 MB a query against
    the published 61 MB's band [48.8, 76.25] MB."""
    rows = _aggregate_rows(_queries([0.0] * 11 + [61e6] * 11, [60e6] * 22, [13e3] * 22))
    ratio = rows["bytes read into cache"]
    assert ratio["reproduced"] == pytest.approx(30.5 / 60, rel=1e-3)
    assert ratio["verdict"] == "inconclusive", ratio
    assert ratio["interval"].startswith("0 to 1.017 at 95.0% (ratio of medians of 22 queries"), ratio
    per_query = rows["projection bytes read into cache per query"]
    assert per_query["verdict"] == "inconclusive" and per_query["interval"].startswith("0 to 61,000,000"), \
        per_query


def test_a_cells_row_keeps_its_queries_scaled_to_the_articles_window():
    """The verdict row's `samples` are the cell's queries (cache_reads.csv's bytes_read_into_cache_samples)
    scaled as its mean is (here a 500-order window to the article's 1,000: x 2), for compare.with."""
    from costlab.docsize.engine_verdicts import docsize_cells
    reads = pl.DataFrame({"run": ["small_cache"], "size_kb": [4], "cache_mb": [256], "shape": ["projection"],
                          "queries": [3], "bytes_read_into_cache_mean": [200.0],
                          "bytes_read_into_cache_median": [100.0], "bytes_read_into_cache_std": [100.0],
                          "zero_read_share": [0.33], "bytes_read_into_cache_mean_low": [None],
                          "bytes_read_into_cache_mean_high": [None], "interval_confidence": [None],
                          "bytes_read_into_cache_samples": ["0.0; 100.0; 500.0"]},
                         schema_overrides={c: pl.Float64 for c in ("bytes_read_into_cache_mean_low",
                                                                   "bytes_read_into_cache_mean_high",
                                                                   "interval_confidence")})
    row = docsize_cells(reads, PUBLISHED, 500).row(0, named=True)
    assert row["samples"] == "0.0; 200.0; 1000.0" and row["reproduced"] == 400.0
