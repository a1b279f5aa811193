"""Raw rows -> summaries (median, p95), the article's tables with published beside reproduced, findings.

A counter the server did not report stays null through every table (shown as missing, not 0).
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Iterable, Sequence

import polars as pl

from costlab.docsize.engine_verdicts import bytes_read_rule
from costlab.docsize.names import QUERY_TABLES, RUNS, table_names
from costlab.docsize.run import SHAPES
from costlab.finding import (
    AT_THIS_SCALE,
    NOT_JUDGED,
    STAND_IN,
    Finding,
    interval_verdict,
    judged,
    verdict_table,
)
from costlab.inputs import read_csv, read_parquet
from costlab.intervals import over_repeats
from costlab.measure import summarize
from costlab.published import PUBLISHED_DIR, Tolerances, read_tolerances, tolerances_or_published
from costlab.verdicts import Rule, Verdict, at_least, relative_within

MEASURES = (
    "client_ms",
    "server_ms",
    "bytes_read_into_cache",
    "keys_examined",
    "docs_examined",
    "bytes_returned",
)
# Measures whose mean is kept too: the small-cache bytes per query are bimodal at 1 and 4 KB (a window read
# or not), so their median is 0 or a window while the article's figure is a mean (docs/engine-lab.md).
MEAN_MEASURES = ("bytes_read_into_cache",)
GROUP = ["run", "run_label", "profile", "dataset", "variant", "size_kb", "family", "shape"]
CASES = {  # (variant, family) -> how the variants table names it
    ("base", "window"): "published layout, one window",
    ("tail", "window"): "fields after history, one window",
    ("split", "window"): "history in its own collection, one window",
    ("base", "customer"): "one customer's orders (spread)",
}


def read_frames(paths: Iterable[str | Path]) -> pl.DataFrame:
    frames = [read_parquet(p) for p in paths]
    return pl.concat(frames, how="vertical_relaxed") if frames else pl.DataFrame()


def _summary(raw: pl.DataFrame, group: list[str]) -> pl.DataFrame:
    """One row per group: n, median and p95 of every measure (and the mean of the bytes read into the cache:
    the article's bytes-read figures are means), the plan."""
    out = None
    for measure in MEASURES:
        part = summarize(raw, group, measure, quantiles=(0.5, 0.95)).select(
            group
            + [pl.col(f"{measure}_p50"), pl.col(f"{measure}_p95")]
            + ([pl.col(f"{measure}_mean")] if measure in MEAN_MEASURES else [])
            + ([pl.col("n")] if out is None else [])
        )
        out = part if out is None else out.join(part, on=group, how="left", nulls_equal=True)
    plans = raw.group_by(group, maintain_order=True).agg(
        pl.col("plan").first(), pl.col("plan_docs_examined").first(), pl.col("plan_keys_examined").first(),
        pl.col("covered_plan").first(), pl.col("server_kind").first())
    return out.join(plans, on=group, how="left", nulls_equal=True)


def with_repeat(raw: pl.DataFrame) -> pl.DataFrame:
    """raw with its `repeat` column (a frame measured before repeats existed is repeat 1)."""
    return raw if "repeat" in raw.columns else raw.with_columns(pl.lit(1, pl.Int64).alias("repeat"))


def repeat_summaries(raw: pl.DataFrame) -> list[pl.DataFrame]:
    """summary_table of each repeat's rows on its own, in repeat order (one frame for one repeat)."""
    raw = with_repeat(raw)
    return [summary_table(raw.filter(pl.col("repeat") == r).drop("repeat"))
            for r in sorted(set(raw["repeat"].to_list()))] if raw.height else [summary_table(raw)]


def summary_table(raw: pl.DataFrame) -> pl.DataFrame:
    """One row per run, dataset, family and shape: n, median and p95 of every measure, the plan, and how many
    repeats (docsize.repeats) the row holds. Over several repeats each median and p95 is the median of the
    repeats' own (n counts every repeat's queries); one repeat is the summary a single run always had."""
    if "repeat" not in raw.columns or raw.height == 0 or raw["repeat"].n_unique() == 1:
        summary = _summary(raw.drop("repeat", strict=False), GROUP)
        return summary.with_columns(pl.lit(1, pl.Int64).alias("repeats")).sort(
            ["run", "variant", "family", "size_kb"])
    per_repeat = _summary(raw, GROUP + ["repeat"])
    values = [c for c in per_repeat.columns if c.endswith(("_p50", "_p95", "_mean"))]
    return per_repeat.group_by(GROUP, maintain_order=True).agg(
        pl.col("n").sum(), *[pl.col(c).median() for c in values],
        *[pl.col(c).first() for c in ("plan", "plan_docs_examined", "plan_keys_examined", "covered_plan",
                                      "server_kind")],
        pl.len().cast(pl.Int64).alias("repeats"),
    ).select([c for c in per_repeat.columns if c != "repeat"] + ["repeats"]).sort(
        ["run", "variant", "family", "size_kb"])


def _published_queries(path: str | Path) -> pl.DataFrame:
    return read_csv(path).with_columns(pl.col("size_kb").cast(pl.Int64))


def query_table(summary: pl.DataFrame, published: pl.DataFrame, run: str, measure: str,
                published_metric: str | None) -> pl.DataFrame:
    """Rows = document sizes, columns = shape x (published, reproduced median, reproduced p95)."""
    base = summary.filter(
        (pl.col("run") == run) & (pl.col("variant") == "base") & (pl.col("family") == "window")
    )
    sizes = sorted(set(base["size_kb"].to_list()))
    rows = []
    for size in sizes:
        row: dict = {"document": f"{size} KB", "size_kb": size}
        for shape in SHAPES:
            pub = published.filter(
                (pl.col("run") == run)
                & (pl.col("size_kb") == size)
                & (pl.col("shape") == shape)
                & (pl.col("metric") == (published_metric or ""))
            )
            mine = base.filter((pl.col("size_kb") == size) & (pl.col("shape") == shape))
            row[f"{shape}_published"] = pub["value"][0] if len(pub) else None
            row[f"{shape}_median"] = mine[f"{measure}_p50"][0] if len(mine) else None
            row[f"{shape}_p95"] = mine[f"{measure}_p95"][0] if len(mine) else None
        row["server_kind"] = base["server_kind"][0] if len(base) else None
        rows.append(row)
    schema = {"document": pl.Utf8, "size_kb": pl.Int64}
    for shape in SHAPES:
        schema |= {
            f"{shape}_published": pl.Float64,
            f"{shape}_median": pl.Float64,
            f"{shape}_p95": pl.Float64,
        }
    schema["server_kind"] = pl.Utf8
    return pl.DataFrame(rows, schema=schema)


def collections_table(collections: pl.DataFrame, published_collections: str | Path) -> pl.DataFrame:
    """The article's first table: mean document, data, on disk, plus index and the configured caches."""
    published = read_csv(published_collections).with_columns(pl.col("size_kb").cast(pl.Int64))
    caches = collections.group_by("run").agg(pl.col("cache_max_bytes").first())
    cache_of = {r["run"]: r["cache_max_bytes"] for r in caches.iter_rows(named=True)}
    # Sizes do not change between runs: take each collection once (the first run that measured it).
    mine = collections.sort("run").unique(subset=["collection"], keep="first", maintain_order=True)
    out = mine.join(published.select("size_kb", "mean_document_bytes", "data_mb", "on_disk_mb"),
                    on="size_kb", how="left").with_columns(
        pl.when(pl.col("variant") == "base").then(pl.col("mean_document_bytes")).alias("mean_document_bytes"),
        pl.when(pl.col("variant") == "base").then(pl.col("data_mb")).alias("data_mb"),
        pl.when(pl.col("variant") == "base").then(pl.col("on_disk_mb")).alias("on_disk_mb"))
    return out.select(
        "dataset", "variant", "collection", "size_kb", "documents",
        pl.col("mean_document_bytes").cast(pl.Float64).alias("mean_document_bytes_published"),
        pl.col("avg_obj_bytes").alias("mean_document_bytes_reproduced"),
        pl.col("data_mb").cast(pl.Float64).alias("data_mb_published"),
        (pl.col("size_bytes") / 1e6).alias("data_mb_reproduced"),
        pl.col("on_disk_mb").cast(pl.Float64).alias("on_disk_mb_published"),
        (pl.col("storage_bytes") / 1e6).alias("on_disk_mb_reproduced"),
        (pl.col("index_bytes") / 1e6).alias("index_mb_reproduced"),
        pl.lit(cache_of.get("same_window"), dtype=pl.Float64).alias("default_cache_bytes_configured"),
        pl.lit(cache_of.get("small_cache"), dtype=pl.Float64).alias("small_cache_bytes_configured"),
        "server_kind",
    ).sort(["variant", "size_kb", "collection"])


def variants_table(summary: pl.DataFrame) -> pl.DataFrame:
    """Beyond the published study: each case's median client time and bytes read, per run, size, shape."""
    cases = pl.DataFrame([{"variant": v, "family": f, "case": c} for (v, f), c in CASES.items()])
    rows = summary.join(cases, on=["variant", "family"], how="inner")
    return rows.select(
        "run",
        "run_label",
        "size_kb",
        "shape",
        "case",
        "dataset",
        "client_ms_p50",
        "server_ms_p50",
        "bytes_read_into_cache_p50",
        "docs_examined_p50",
        "plan",
        "server_kind",
    ).sort(["run", "size_kb", "shape", "case"])


# ---------------------------------------------------------------------------------------------
# Published vs reproduced: verdicts about findings, not absolute times.


def _value(summary: pl.DataFrame, run: str, size: int, shape: str, column: str):
    rows = summary.filter((pl.col("run") == run) & (pl.col("size_kb") == size) & (pl.col("shape") == shape)
                          & (pl.col("variant") == "base") & (pl.col("family") == "window"))
    return rows[column][0] if len(rows) else None


def _published(published: pl.DataFrame, run: str, size: int, shape: str, metric: str):
    rows = published.filter((pl.col("run") == run) & (pl.col("size_kb") == size) & (pl.col("shape") == shape)
                            & (pl.col("metric") == metric))
    return float(rows["value"][0]) if len(rows) else None


def _div(a, b):
    if a is None or b is None or b == 0 or (isinstance(a, float) and math.isnan(a)):
        return None
    return a / b


NO_SMALL_CACHE = "256 MB cache not applied"  # the reason (not comparable) when the server kept a larger cache


def small_cache_applied(collections: pl.DataFrame) -> bool | None:
    """False when the small_cache run's server reported a cache well above 256 MB (e.g. an external
    deployment, where profiles cannot be applied); None when it did not report one."""
    rows = (
        collections.filter(pl.col("run") == "small_cache")["cache_max_bytes"].drop_nulls()
        if len(collections)
        else []
    )
    if len(rows) == 0:
        return None
    return bool(max(rows) <= 1.1 * 256 * 1024 * 1024)


NOT_REPORTED = "counter not reported by the server"  # the reason (not run) of a value the server did not give


def _collection_tolerances(published_collections: str | Path | None) -> dict[int, float]:
    """{size_kb: tolerance_pct} beside each published mean size (docsize_collections.csv)."""

    published_collections = published_collections or PUBLISHED_DIR / "docsize_collections.csv"
    frame = read_csv(
        published_collections, columns=("size_kb", "tolerance_pct"), numeric=("size_kb", "tolerance_pct")
    )
    return {int(r["size_kb"]): float(r["tolerance_pct"]) for r in frame.iter_rows(named=True)}


def _facts(published_facts: str | Path | None) -> dict[str, float]:
    """{fact: value} of docsize_facts.csv."""

    frame = read_csv(published_facts or PUBLISHED_DIR / "docsize_facts.csv", columns=("fact", "value"),
                     numeric=("value",))
    return {r["fact"]: float(r["value"]) for r in frame.iter_rows(named=True)}


def _with_plan(rule: Rule, plan_of, operator: str) -> Rule:
    """rule, and the explain plan shows `operator`."""
    return Rule(lambda r: rule(r) and operator in (plan_of() or ""), f"{rule}, and the plan shows {operator}")


def published_vs_reproduced(summary: pl.DataFrame, model: pl.DataFrame, published_queries: str | Path,
                            window_minutes: int, small_cache: bool | None = None,
                            published_collections: str | Path | None = None,
                            tolerances: Tolerances | None = None,
                            published_facts: str | Path | None = None,
                            repeats: Sequence[pl.DataFrame] | None = None) -> pl.DataFrame:
    """The report's findings table; every rule from docsize_tolerances.csv (or `tolerances`), the mean
    document size within the `tolerance_pct` beside it in docsize_collections.csv.

    `repeats`: each repeat's own summary (repeat_summaries), when the runs were repeated (docsize.repeats).
    With several, each server row's value is the median of the repeats' values with its order-statistic
    interval (costlab.intervals.over_repeats), judged by that interval against the rule's band
    (costlab.finding.interval_verdict: reproduced, not reproduced or inconclusive); a row the stand-in or the
    scale makes not comparable stays so, with the median and its interval. One repeat (or None): each server
    row as one run gives it, "one run: no interval"."""

    args = (model, published_queries, window_minutes, small_cache, published_collections, tolerances,
            published_facts)
    if not repeats or len(repeats) == 1:
        rows, rules = _judged_rows(repeats[0] if repeats else summary, *args)
        return verdict_table([row.with_(interval=ONE_RUN) if i in rules and row.reproduced is not None
                              else row for i, row in enumerate(rows)])
    per_repeat = [_judged_rows(one, *args) for one in repeats]
    rules = per_repeat[0][1]
    out = []
    for i, cells in enumerate(zip(*[rows for rows, _ in per_repeat], strict=True)):
        first, rule = cells[0], rules.get(i)
        values = [cell.reproduced for cell in cells]
        if rule is None or all(v is None for v in values):   # not a server measurement, or none measured
            out.append(first)
            continue
        # a repeat with no value is left out and counted ("4 of 5 repeats"), never replaced by repeat 1's
        interval = over_repeats(values)
        point = judged(first.finding, first.metric, first.unit, first.published, interval.estimate, rule,
                       server_kind=first.server_kind, missing=NOT_REPORTED)
        if first.verdict is Verdict.NOT_COMPARABLE:   # the stand-in's, another scale's, a cache not applied
            out.append(point.but(first.verdict, first.reason).with_(interval=interval.describe()))
        else:
            out.append(interval_verdict(point, interval, rule))
    return verdict_table(out)


ONE_RUN = "one run: no interval"   # costlab.intervals.Interval.describe() of one repeat


def _judged_rows(summary: pl.DataFrame, model: pl.DataFrame, published_queries: str | Path,
                 window_minutes: int, small_cache: bool | None = None,
                 published_collections: str | Path | None = None,
                 tolerances: Tolerances | None = None,
                 published_facts: str | Path | None = None) -> tuple[list[Finding], dict[int, Rule]]:
    """published_vs_reproduced's rows from one summary, and the rule of each row that is a server
    measurement (by its position): what a median over repeats is judged by."""
    tol = tolerances_or_published(tolerances, "docsize")
    size_pct = _collection_tolerances(published_collections)
    pub = _published_queries(published_queries)
    kind = summary["server_kind"][0] if len(summary) else "unknown"
    sizes = sorted(set(summary.filter(pl.col("variant") == "base")["size_kb"].to_list()))
    rows: list[Finding] = []
    rules: dict[int, Rule] = {}

    def add(finding, metric, unit, published, reproduced, holds, server_kind=kind, measured=True):
        if measured:
            rules[len(rows)] = holds
        row = judged(finding, metric, unit, published, reproduced, holds, server_kind=server_kind,
                     missing=NOT_REPORTED)
        if server_kind == "stand-in":
            row = row.but(Verdict.NOT_COMPARABLE, STAND_IN)
        elif small_cache is False and "256 MB cache" in metric:
            row = row.but(Verdict.NOT_COMPARABLE, NO_SMALL_CACHE)
        rows.append(row)

    def at_this_scale(published_for: str) -> None:
        """The last row, published for orders this run did not measure: not comparable (unless the stand-in's
        or the cache's reason already says so)."""
        if rows[-1].reason not in (STAND_IN, NO_SMALL_CACHE):
            rows[-1] = rows[-1].but(
                Verdict.NOT_COMPARABLE,
                f"{AT_THIS_SCALE}: published for {published_for} orders; "
                f"this run: {', '.join(f'{s} KB' for s in sizes)}",
            )

    # Sizes come from the generator (server-free), so they are comparable even on the stand-in.
    for row in model.filter(pl.col("variant") == "base").iter_rows(named=True):
        pct = size_pct.get(int(row["size_kb"]))
        holds = (relative_within(row.get("published_avg_doc_bytes"), pct / 100) if pct is not None
                 else Rule(lambda r: False, "no tolerance published for this size"))
        add(
            "the generated orders have the published mean size",
            f"mean document, {row['size_kb']} KB",
            "bytes",
            row.get("published_avg_doc_bytes"),
            row["avg_doc_bytes"],
            holds,
            server_kind="generator (no server)",
            measured=False,
        )
    if not sizes:
        return rows, rules
    small, large = sizes[0], sizes[-1]
    span = f"{large} KB / {small} KB"
    growth = large / small

    def ratio_of(run, shape, column, metric):
        return (_div(_value(summary, run, large, shape, column), _value(summary, run, small, shape, column)),
                _div(_published(pub, run, large, shape, metric), _published(pub, run, small, shape, metric)))

    def large_ratio(numerator, denominator):
        """(published, reproduced) numerator / denominator, each (run, shape, metric) at the largest size."""
        (run_n, shape_n, metric_n), (run_d, shape_d, metric_d) = numerator, denominator
        return (
            _div(
                _published(pub, run_n, large, shape_n, metric_n),
                _published(pub, run_d, large, shape_d, metric_d),
            ),
            _div(
                _value(summary, run_n, large, shape_n, f"{metric_n}_p50"),
                _value(summary, run_d, large, shape_d, f"{metric_d}_p50"),
            ),
        )

    mine, theirs = ratio_of("same_window", "projection", "client_ms_p50", "client_ms")
    add("with everything in the cache, projection time does not grow with document size",
        f"projection median client time {span}, default cache, same window", "ratio", theirs, mine,
        tol["projection_time_flat"].holds())
    mine, theirs = ratio_of("same_window", "whole", "client_ms_p50", "client_ms")
    add("whole-document time grows with document size",
        f"whole-document median client time {span}, default cache, same window", "ratio", theirs, mine,
        at_least(growth ** tol["whole_time_growth"].low, f"ratio ({span} = {growth:g} to the power "
                                                          f"{tol['whole_time_growth'].low:g})"))
    add("the server's own time is a small part of a large whole-document query",
        f"whole-document server time / client time, {large} KB, default cache, same window", "ratio",
        *large_ratio(("same_window", "whole", "server_ms"), ("same_window", "whole", "client_ms")),
        tol["server_time_share"].holds())
    mine, theirs = ratio_of("small_cache", "covered", "client_ms_p50", "client_ms")
    add("a covered query stays flat at every size, even with the small cache",
        f"covered median client time {span}, 256 MB cache, random windows", "ratio", theirs, mine,
        tol["covered_time_flat"].holds())
    add("projection reads whole document at small cache",
        f"bytes read into cache, projection / whole documents, {large} KB, 256 MB cache", "ratio",
        *large_ratio(("small_cache", "projection", "bytes_read_into_cache"),
                     ("small_cache", "whole", "bytes_read_into_cache")),
        tol["projection_over_whole_bytes"].holds())
    large_model = model.filter((pl.col("variant") == "base") & (pl.col("size_kb") == large))
    doc_bytes, published_doc = large_model["avg_doc_bytes"], large_model["published_avg_doc_bytes"]
    published_window_bytes = _published(pub, "small_cache", large, "projection", "bytes_read_into_cache")
    add(
        "projection reads whole document at small cache",
        f"projection bytes read into cache / (window x mean document), {large} KB, 256 MB cache",
        "ratio",
        _div(published_window_bytes, 1000 * published_doc[0])
        if len(published_doc) and published_doc[0]
        else None,
        _div(
            _value(summary, "small_cache", large, "projection", "bytes_read_into_cache_p50"),
            window_minutes * doc_bytes[0],
        )
        if len(doc_bytes)
        else None,
        tol["projection_over_window_bytes"].holds(),
    )
    add("a covered query reads next to nothing into the cache",
        f"covered bytes read into cache / projection bytes read, {large} KB, 256 MB cache", "ratio",
        *large_ratio(("small_cache", "covered", "bytes_read_into_cache"),
                     ("small_cache", "projection", "bytes_read_into_cache")),
        tol["covered_over_projection_bytes"].holds())
    # Published against its same-window run; ours against random windows, like the small-cache run.
    add("the projection slows down when the documents no longer fit in the cache",
        f"projection median client time, 256 MB cache / default cache, {large} KB", "ratio",
        _div(_published(pub, "small_cache", large, "projection", "client_ms"),
             _published(pub, "same_window", large, "projection", "client_ms")),
        _div(_value(summary, "small_cache", large, "projection", "client_ms_p50"),
             _value(summary, "random_windows", large, "projection", "client_ms_p50")),
        tol["projection_slowdown_small_cache"].holds())
    add("the projected query fetches every document (IXSCAN > FETCH > PROJECTION_SIMPLE)",
        f"projection documents examined per returned order, {large} KB (explain)", "ratio", 1.0,
        _div(_value(summary, "same_window", large, "projection", "plan_docs_examined"), window_minutes),
        _with_plan(tol["projection_docs_examined"].holds(),
                   lambda: _value(summary, "same_window", large, "projection", "plan"), "FETCH"))
    # Every published cell of the small-cache bytes-read table, at every size this run measured (the same
    # rules as the engine lab's cells); a published size this run did not measure says so.
    scale = 1000 / window_minutes
    for cell in pub.filter((pl.col("run") == "small_cache") & (pl.col("metric") == "bytes_read_into_cache")) \
            .sort("size_kb", "shape").iter_rows(named=True):
        size, shape, expected = int(cell["size_kb"]), cell["shape"], float(cell["value"])
        value = (
            _value(summary, "small_cache", size, shape, "bytes_read_into_cache_mean")
            if size in sizes
            else None
        )
        add(f"{size} KB, small cache, {shape}: bytes read into cache per query",
            f"mean bytes read into cache per query, {size} KB, 256 MB cache, random windows, {shape} "
            f"(window {window_minutes} orders scaled to 1,000)", "bytes", expected,
            value * scale if value is not None else None, bytes_read_rule(expected, tol))
        if size not in sizes:
            at_this_scale(f"{size} KB")
    # What the queries return (the BSON of the returned documents): the article's 48 KB projection at every
    # size and 66 MB of whole 64 KB documents, per 1,000-order window.
    facts = _facts(published_facts)
    for size in sizes:
        value = _value(summary, "same_window", size, "projection", "bytes_returned_p50")
        add(
            "the projection returns the same 48 KB at every size",
            f"projection bytes returned per query, {size} KB (window {window_minutes} orders scaled to "
            "1,000)",
            "bytes",
            facts.get("projection_bytes_returned"),
            value * scale if value is not None else None,
            tol["bytes_returned"].holds(facts.get("projection_bytes_returned")),
        )
    value = _value(summary, "same_window", 64, "whole", "bytes_returned_p50") if 64 in sizes else None
    add(
        "whole 64 KB documents return 66 MB per query",
        f"whole-document bytes returned per query, 64 KB (window {window_minutes} orders scaled to 1,000)",
        "bytes",
        facts.get("whole_64k_bytes_returned"),
        value * scale if value is not None else None,
        tol["bytes_returned"].holds(facts.get("whole_64k_bytes_returned")),
    )
    if 64 not in sizes and rows[-1].reason != STAND_IN:
        at_this_scale("64 KB")
    # The published times no rule judges one by one: a row per table that says why (and where they stand).
    for stem, run, measure, metric in QUERY_TABLES:
        times = (
            pub.filter((pl.col("run") == run) & (pl.col("metric") == metric))
            if metric and "_ms" in metric
            else pub.clear()
        )
        if times.height:
            rows.append(
                Finding(
                    f"the article's {measure.replace('_', ' ')} per size and shape, {run} "
                    f"({times.height} published times)",
                    f"{measure} at {', '.join(f'{s} KB' for s in sorted(set(times['size_kb'])))}",
                    "ms",
                    None,
                    None,
                    Verdict.NOT_COMPARABLE,
                    STAND_IN
                    if kind == "stand-in"
                    else "absolute times of the article's machine; the ratios above judge them, and "
                    f"tables/{stem}.csv shows "
                    "them beside this run's",
                    NOT_JUDGED,
                    kind,
                )
            )
    add("the covered query examines no documents (PROJECTION_COVERED, no FETCH)",
        f"covered documents examined, {large} KB (explain)", "documents", 0.0,
        _value(summary, "same_window", large, "covered", "plan_docs_examined"),
        _with_plan(tol["covered_docs_examined"].holds(),
                   lambda: _value(summary, "same_window", large, "covered", "plan"), "PROJECTION_COVERED"))
    return rows, rules


def build_tables(
    raw_paths: Iterable[str | Path],
    collection_paths: Iterable[str | Path],
    model_path: str | Path,
    published_collections: str | Path,
    published_queries: str | Path,
    window_minutes: int,
    tolerances_path: str | Path | None = None,
    published_facts: str | Path | None = None,
) -> dict[str, pl.DataFrame]:
    raw = read_frames(raw_paths)
    summary = summary_table(raw)
    repeats = repeat_summaries(raw)
    published = _published_queries(published_queries)
    collections = read_frames(collection_paths)
    tables = {
        "summary": summary,
        "collections": collections_table(collections, published_collections),
        "variants": variants_table(summary),
        "published_vs_reproduced": published_vs_reproduced(
            summary,
            read_csv(model_path),
            published_queries,
            window_minutes,
            small_cache_applied(collections),
            published_collections,
            read_tolerances(tolerances_path) if tolerances_path else None,
            published_facts,
            repeats,
        ),
    }
    for stem, run, measure, metric in QUERY_TABLES:
        tables[stem] = query_table(summary, published, run, measure, metric)
    assert set(tables) == set(table_names())
    return tables


__all__ = ["build_tables", "summary_table", "published_vs_reproduced", "table_names", "RUNS"]
