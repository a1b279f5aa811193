"""Published vs engine lab for docsize: the bytes each query shape reads into the cache, per size, run and
shape, and the findings of the small-cache run; every threshold from docsize_tolerances.csv."""
from __future__ import annotations

import polars as pl

from costlab.engine.verdicts import engine_frame, engine_row
from costlab.finding import AT_THIS_SCALE, Finding, interval_verdict, read_samples
from costlab.intervals import Interval, over_samples, ratio_over_samples
from costlab.published import Tolerances, tolerances_or_published
from costlab.verdicts import Kind, Verdict


def docsize_verdicts(cache_reads: pl.DataFrame, published_queries: pl.DataFrame, window: int,
                     doc_bytes: dict[int, int], tolerances: Tolerances | None = None,
                     queries: pl.DataFrame | None = None) -> pl.DataFrame:
    """Bytes-read findings of the small-cache run at the largest size (timings and plans are not
    engine findings); tolerances: docsize_tolerances.csv's rows (read from resources/published when None).
    `queries` (engine/queries.csv's measured rows): the four findings on the cells' medians are judged by
    their bootstrap interval over the same queries (a shape's median, or the ratio of two shapes' medians,
    each shape's queries resampled on their own: costlab.intervals); without them, by their value."""
    tol = tolerances_or_published(tolerances, "docsize")
    rows: list[Finding] = []
    small = cache_reads.filter(pl.col("run") == "small_cache")
    if small.height == 0:
        return engine_frame(rows)
    cells = docsize_cells(cache_reads, published_queries, window, tol)
    large = int(small["size_kb"].max())
    cache_mb = int(small["cache_mb"][0])

    def engine(shape: str) -> float | None:
        r = small.filter((pl.col("size_kb") == large) & (pl.col("shape") == shape))[
            "bytes_read_into_cache_median"
        ]
        return float(r[0]) if len(r) else None

    def published(shape: str, size: int = large) -> float | None:
        r = published_queries.filter(
            (pl.col("run") == "small_cache")
            & (pl.col("size_kb") == size)
            & (pl.col("shape") == shape)
            & (pl.col("metric") == "bytes_read_into_cache")
        )
        return float(r["value"][0]) if len(r) else None

    def div(a, b):
        return a / b if a is not None and b not in (None, 0) else None

    def reads(shape: str) -> list[float] | None:
        """The measured queries' bytes read into the cache of the cell engine(shape) is the median of."""
        if queries is None:
            return None
        measured = queries.filter(pl.col("phase") == "measured") if "phase" in queries.columns else queries
        cell = measured.filter((pl.col("run") == "small_cache") & (pl.col("size_kb") == large)
                               & (pl.col("shape") == shape))
        return cell["bytes_read_into_cache"].cast(pl.Float64).to_list() or None

    def by_interval(row: Finding, rule, interval: Interval | None) -> Finding:
        return row if interval is None else interval_verdict(row, interval, rule)

    def median_of(shape: str, factor: float) -> Interval | None:
        values = reads(shape)
        return None if values is None else over_samples(values, statistic="median").scaled(factor)

    def ratio_of(top: str, bottom: str) -> Interval | None:
        a, b = reads(top), reads(bottom)
        if a is None or b is None or engine(bottom) in (None, 0):
            return None
        return ratio_over_samples(a, b, statistic="median")

    where = f"{large} KB, small cache ({cache_mb} MB here, 256 MB published), random windows"

    def ratio_row(finding: str, metric: str, top: str, bottom: str, tolerance: str) -> Finding:
        """The engine's top/bottom bytes read against the published ratio, judged by its interval."""
        rule = tol[tolerance].holds()
        row = engine_row(finding, f"{metric}, {where}", "ratio", div(published(top), published(bottom)),
                         div(engine(top), engine(bottom)), rule)
        return by_interval(row, rule, ratio_of(top, bottom))

    rows.append(ratio_row("projection reads whole document at small cache",
                          "bytes read into cache, projection / whole documents", "projection", "whole",
                          "projection_over_whole_bytes"))
    window_bytes = window * doc_bytes.get(large, large * 1024)
    rule = tol["projection_over_window_bytes"].holds()
    whole_window = by_interval(engine_row(
        "projection reads whole document at small cache",
        f"projection bytes read into cache / (window x document), {where}",
        "ratio",
        div(published("projection"), 1000 * 65876) if large == 64 else None,
        div(engine("projection"), window_bytes),
        rule,
        "published: 1,000-order window, 65,876-byte mean document (64 KB)",
    ), rule, median_of("projection", 1 / window_bytes))
    if large != 64 and whole_window.reproduced is not None:
        # published for 64 KB orders only; with smaller ones a small cache holds a larger share of the
        # collection, so part of a window is already in cache: not a verdict on the finding
        whole_window = whole_window.but(
            Verdict.NOT_COMPARABLE, f"{AT_THIS_SCALE}: published for 64 KB documents; largest here {large} KB"
        )
    rows.append(whole_window)
    rows.append(ratio_row("a covered query reads next to nothing into the cache",
                          "covered bytes read into cache / projection bytes read", "covered", "projection",
                          "covered_over_projection_bytes"))
    if large == 64:
        value = engine("projection")
        rule = tol["engine_bytes_read"].holds(published("projection"))
        rows.append(by_interval(
            engine_row(
                "to return two fields of 1,000 64 KB orders the projection reads ~61 MB",
                f"projection bytes read into cache per query, {where}",
                "bytes",
                published("projection"),
                value * 1000 / window if value is not None else None,
                rule,
                f"engine value scaled to a 1,000-order window (window here: {window})",
            ), rule, median_of("projection", 1000 / window)))
    return pl.concat([engine_frame(rows), cells])


SMALL_RUNS = ("small_cache", "small_cache_cold_per_shape")
COSTLAB_VARIANT_RUNS = ("small_cache_cold_per_shape",)   # not the article's protocol (docs/engine-lab.md)


def docsize_cells(cache_reads: pl.DataFrame, published_queries: pl.DataFrame, window: int,
                  tolerances: Tolerances | None = None) -> pl.DataFrame:
    """A verdict per size x run x shape on bytes read into the cache per query (the mean of the
    measured queries, scaled to the article's 1,000-order window; the median and spread beside it).

    Tolerances (docsize_tolerances.csv): a published value of at least `engine_bytes_read_ratio_from`
    (100 KB) holds when engine / published is within `engine_bytes_read` (0.8-1.25); a smaller one
    (covered queries, 0-13 KB) when the engine is within `engine_bytes_read_small` (64 KB, four 16 KB
    index pages) of it. Small-cache runs compare with the article's
    small-cache table, in both protocols (the article's one start, and the per-shape cold start);
    the large-cache runs with the article's "everything in the cache": next to nothing read.
    Each cell is the mean of its queries, a skewed, often bimodal distribution (many queries read 0, some a
    whole window): it is judged by its bootstrap interval over those queries (cache_reads.csv's
    bytes_read_into_cache_mean_low/high, costlab.intervals): inside the tolerance band reproduced, outside
    not reproduced, straddling an edge inconclusive, with the queries likely to decide it."""
    tol = tolerances_or_published(tolerances, "docsize")
    published = published_queries.filter((pl.col("run") == "small_cache")
                                         & (pl.col("metric") == "bytes_read_into_cache"))
    pub = {(int(r["size_kb"]), r["shape"]): float(r["value"]) for r in published.iter_rows(named=True)}
    scale = 1000 / window
    rows = []
    for r in cache_reads.sort("run", "size_kb", "shape").iter_rows(named=True):
        repeats = int(r.get("repeats") or 1)
        # the mean of the queries, or (several repeats of the protocol) the median of the repeats' means
        value = r.get("bytes_read_into_cache_value")
        if value is None:
            value = r.get("bytes_read_into_cache_mean", r["bytes_read_into_cache_median"])
        mean = value * scale
        median = r["bytes_read_into_cache_median"] * scale
        std = (r.get("bytes_read_into_cache_std") or 0.0) * scale
        queries = int(r.get("queries") or 0)
        small_run = r["run"] in SMALL_RUNS
        expected = pub.get((int(r["size_kb"]), r["shape"])) if small_run else None
        if small_run and expected is None:
            continue
        holds = bytes_read_rule(expected, tol) if small_run else tol["engine_bytes_in_cache"].holds()
        spread = f"median {median:,.0f} B, sd {std:,.0f} B over {queries} queries" + (
            f" of {repeats} repeats (each from a cold start; the value: the median of their means)"
            if repeats > 1 else "")
        if r.get("zero_read_share") is not None:
            spread += f", {r['zero_read_share']:.0%} of them read 0"
        # costlab's own protocol (every shape from a cold cache) is a variant beyond the article
        kind = Kind.COSTLAB_VARIANT if r["run"] in COSTLAB_VARIANT_RUNS else Kind.PUBLISHED
        row = engine_row(
            f"{r['size_kb']} KB, {r['run']}, {r['shape']}: bytes read into cache per query",
            f"mean bytes read into cache per query, {r['size_kb']} KB, {r['run']} ({r['cache_mb']} MB), "
            f"{r['shape']}",
            "bytes",
            expected,
            mean,
            holds,
            f"tolerance: {holds}; {spread}; engine window {window} orders scaled to 1,000"
            + (
                "; published for the article's small-cache run (256 MB, 50,000 orders)"
                if small_run
                else "; the article's tables give times only for this run"
            ),
            kind,
        )
        low, high = r.get("bytes_read_into_cache_mean_low"), r.get("bytes_read_into_cache_mean_high")
        interval = Interval(mean, None if low is None else low * scale,
                            None if high is None else high * scale,
                            r.get("interval_confidence"), repeats if repeats > 1 else queries,
                            "repeats" if repeats > 1 else "queries", "median" if repeats > 1 else "mean",
                            values=tuple(v * scale
                                         for v in read_samples(r.get("bytes_read_into_cache_samples"))))
        row = interval_verdict(row, interval, holds)
        rows.append(row)
    return engine_frame(rows)


def bytes_read_rule(published: float, tolerances: Tolerances):
    """The rule for one published bytes-read-per-query cell (docsize_tolerances.csv): a ratio from
    `engine_bytes_read_ratio_from` (100 KB) up, an absolute distance below it (where a ratio says nothing)."""
    if tolerances["engine_bytes_read_ratio_from"].holds()(published):
        return tolerances["engine_bytes_read"].holds(published)
    return tolerances["engine_bytes_read_small"].holds(published)
