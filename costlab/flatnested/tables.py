"""Timing summaries, the reproduced-vs-published table and the report's published_vs_reproduced.csv.

The article's times are for 100 queries in a row; reproduced times are scaled the same way
(mean per query x 100) so any configured `runs` compares. Improvement = (flat - structured) / flat.
"""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

import polars as pl

from costlab.finding import AT_THIS_SCALE, STAND_IN, Finding, interval_verdict, judged, verdict_table
from costlab.flatnested.model import example_document_row
from costlab.inputs import read_csv, read_parquet
from costlab.intervals import over_repeats
from costlab.measure import summarize
from costlab.published import Tolerances, read_tolerances, study_tolerances, tolerances_or_published
from costlab.server.provenance import is_stand_in, read_provenance
from costlab.verdicts import NOT_MEASURED, Rule, Verdict

PUBLISHED_QUERIES = 100
BSON_MODEL_KIND = "server-free (BSON model)"


def server_kind_of(provenance_paths: list[str | Path]) -> str:
    """'stand-in' if any job ran on the stand-in, else the one kind all jobs report (e.g. mongod)."""
    records = [read_provenance(p) for p in provenance_paths]
    if not records:
        raise ValueError("no provenance records given: cannot say which server measured")
    if any(is_stand_in(r) for r in records):
        return "stand-in"
    kinds = sorted({str(r.get("server_kind")) for r in records})
    return kinds[0] if len(kinds) == 1 else "mixed: " + ", ".join(kinds)


def timing_summary(raw: pl.DataFrame) -> pl.DataFrame:
    """Per shape: runs, client and server time quantiles, and the time of 100 queries."""
    keys = ["shape", "layout", "fields", "groups", "documents", "server_data_bytes", "server_storage_bytes",
            "storage_engine", "server_kind"]
    client = summarize(raw, keys, "client_ms")
    server = summarize(raw, ["shape"], "server_ms").drop("n")
    return (client.join(server, on="shape", how="left")
            .with_columns((pl.col("client_ms_mean") * PUBLISHED_QUERIES).alias("client_ms_per_100_queries"),
                          (pl.col("server_ms_mean") * PUBLISHED_QUERIES).alias("server_ms_per_100_queries"))
            .sort(["fields", "layout"]))


def _improvement(flat: pl.Expr, structured: pl.Expr) -> pl.Expr:
    return (flat - structured) / flat * 100


def comparison_table(summary: pl.DataFrame, sizes: pl.DataFrame, published: pl.DataFrame,
                     server_kind: str) -> pl.DataFrame:
    """One row per flat/structured pair: published and reproduced times, improvement %, BSON sizes."""
    def side(layout: str) -> pl.DataFrame:
        frame = summary.filter(pl.col("layout") == layout).join(
            sizes.select("shape", "data_bytes", "avg_doc_bytes"), on="shape", how="left")
        return frame.select(
            "fields", pl.col("shape").alias(f"{layout}_shape"),
            pl.col("n").alias(f"{layout}_runs"),
            pl.col("client_ms_per_100_queries").alias(f"reproduced_{layout}_ms"),
            pl.col("client_ms_p50").alias(f"reproduced_{layout}_p50_ms_per_query"),
            pl.col("server_ms_per_100_queries").alias(f"server_{layout}_ms"),
            pl.col("data_bytes").alias(f"{layout}_data_bytes"),
            pl.col("avg_doc_bytes").alias(f"{layout}_avg_doc_bytes"),
            pl.col("storage_engine").alias(f"{layout}_engine"),
            pl.col("documents").alias(f"{layout}_documents"))

    pairs = side("flat").join(side("structured"), on="fields", how="inner")
    pub = published.select(
        pl.col("flat_fields").alias("fields"),
        pl.col("flat_ms").alias("published_flat_ms"),
        pl.col("documents").alias("published_documents"),
        pl.col("structured_ms").alias("published_structured_ms"),
        pl.col("improvement_pct").alias("published_improvement_pct"),
        pl.col("storage_engine").alias("published_engine"),
    )
    engines = sorted(set(pairs["flat_engine"].to_list() + pairs["structured_engine"].to_list()))
    return (
        pairs.join(pub, on="fields", how="left")
        .with_columns(
            _improvement(pl.col("reproduced_flat_ms"), pl.col("reproduced_structured_ms")).alias(
                "reproduced_improvement_pct"
            ),
            _improvement(pl.col("server_flat_ms"), pl.col("server_structured_ms")).alias(
                "server_improvement_pct"
            ),
            _improvement(pl.col("flat_data_bytes"), pl.col("structured_data_bytes")).alias("size_saving_pct"),
            pl.lit(", ".join(str(e) for e in engines)).alias("reproduced_engine"),
            pl.lit(server_kind).alias("server_kind"),
        )
        .select(
            "fields",
            "flat_shape",
            "structured_shape",
            "flat_runs",
            "structured_runs",
            "published_flat_ms",
            "published_structured_ms",
            "published_improvement_pct",
            "reproduced_flat_ms",
            "reproduced_structured_ms",
            "reproduced_improvement_pct",
            "reproduced_flat_p50_ms_per_query",
            "reproduced_structured_p50_ms_per_query",
            "server_flat_ms",
            "server_structured_ms",
            "server_improvement_pct",
            "published_engine",
            "reproduced_engine",
            pl.col("flat_documents").alias("documents"),
            "published_documents",
            "flat_data_bytes",
            "structured_data_bytes",
            "flat_avg_doc_bytes",
            "structured_avg_doc_bytes",
            "size_saving_pct",
            "server_kind",
        )
        .sort("fields")
    )


def speed_verdict(improvement_pct: float | None, flat_p50: float | None, structured_p50: float | None,
                  server_kind: str, improved: Rule | None = None) -> tuple[Verdict, str | None]:
    """(verdict, reason): 'structured is faster' holds when its mean improves on flat's by `improved`
    (flatnested_tolerances.csv's improvement: above 0) and its median time is below flat's."""
    improved = improved if improved is not None else study_tolerances("flatnested")["improvement"].holds()
    if server_kind == "stand-in":
        return Verdict.NOT_COMPARABLE, STAND_IN
    if improvement_pct is None or flat_p50 is None or structured_p50 is None:
        return Verdict.NOT_RUN, NOT_MEASURED
    holds = improved(improvement_pct) and structured_p50 < flat_p50
    return (Verdict.REPRODUCED if holds else Verdict.NOT_REPRODUCED), None


def scale_note(documents: int | None, published_documents: int | None) -> str:
    """'; 500 documents per collection here, published 10,000' when the counts differ, else ''."""
    if documents is None or published_documents is None or int(documents) == int(published_documents):
        return ""
    return f"; {int(documents):,} documents per collection here, published {int(published_documents):,}"


REPEATED = ("reproduced_flat_ms", "reproduced_structured_ms", "reproduced_improvement_pct",
            "reproduced_flat_p50_ms_per_query", "reproduced_structured_p50_ms_per_query")
ONE_RUN = "one run: no interval"   # costlab.intervals.Interval.describe() of one repeat


def _over_repeats(pair: dict, repeats: Sequence[pl.DataFrame] | None) -> tuple[dict, dict]:
    """The pair's REPEATED values, each the median over the repeats' comparison rows (its value for one
    repeat), and the interval of each over the repeats (None where a repeat lacks the value)."""

    rows = [r.filter(pl.col("fields") == pair["fields"]).row(0, named=True) for r in repeats or ()] or [pair]
    values = {column: [row[column] for row in rows] for column in REPEATED}
    # a repeat with no value is left out and counted ("4 of 5 repeats"), never replaced by repeat 1's
    intervals = {column: over_repeats(v) if any(x is not None for x in v) else None
                 for column, v in values.items()}
    medians = {column: interval.estimate if interval is not None and len(rows) > 1 else pair[column]
               for column, interval in intervals.items()}
    return medians, intervals


def published_vs_reproduced(comparison: pl.DataFrame, sample_sizes: pl.DataFrame,
                            tolerances: Tolerances | None = None,
                            repeats: Sequence[pl.DataFrame] | None = None) -> pl.DataFrame:
    """The report's contract table: per pair the flat time, structured time, improvement and size saving,
    judged by flatnested_tolerances.csv (or `tolerances`).

    `repeats`: each repeat's comparison table (repeat_comparisons) when the shapes were measured several
    times (flatnested.repeats). Each time and the improvement is then the median over the repeats with its
    order-statistic interval (costlab.intervals.over_repeats); the improvement is judged by its interval
    against the rule's band (costlab.finding.interval_verdict: reproduced, not reproduced or inconclusive)
    where the structured median (the median of the repeats' medians) is below flat's, and the times carry
    its verdict. One repeat: the verdict one run always gave, "one run: no interval"."""
    tol = tolerances_or_published(tolerances, "flatnested")
    improved, smaller = tol["improvement"].holds(), tol["size_saving"].holds()
    speed_words = f"{improved}, and the structured median below flat's"
    published_saving = float(sample_sizes.filter(pl.col("layout") == "structured")["saving_pct"][0])
    rows: list[Finding] = []
    for pair in comparison.iter_rows(named=True):
        label = f"{pair['fields']} vs {pair['structured_shape'].split('_', 1)[1]}"
        engines = f"published on {pair['published_engine']}, here on {pair['reproduced_engine']}"
        kind = pair["server_kind"]
        value, interval = _over_repeats(pair, repeats)
        flat_p50, structured_p50 = value["reproduced_flat_p50_ms_per_query"], \
            value["reproduced_structured_p50_ms_per_query"]
        verdict = speed_verdict(value["reproduced_improvement_pct"], flat_p50, structured_p50, kind, improved)
        finding = f"structured is faster to walk ({label})"
        # the improvement judged by its interval over the repeats, where the medians hold their side
        point = Finding(finding, "", "%", pair["published_improvement_pct"],
                        value["reproduced_improvement_pct"], verdict[0], verdict[1], speed_words, kind)
        spread = interval["reproduced_improvement_pct"]
        if (spread is not None and verdict[0] in (Verdict.REPRODUCED, Verdict.NOT_REPRODUCED)
                and structured_p50 < flat_p50):
            point = interval_verdict(point, spread, improved)
        verdict = (point.verdict, point.reason)
        # A query for an absent field walks every document: its time scales with the document
        # count, so absolute times at another count are not the published ones (the improvement,
        # a ratio, is compared at any count).
        scale = scale_note(pair.get("documents"), pair.get("published_documents"))
        time_verdict = (
            (Verdict.NOT_COMPARABLE, f"{AT_THIS_SCALE}: {scale[2:]}")
            if scale and verdict[1] != STAND_IN
            else verdict
        )
        for metric, unit, published, column, (row_verdict, reason) in (
                (f"time of 100 queries, flat ({engines}{scale})", "ms", pair["published_flat_ms"],
                 "reproduced_flat_ms", time_verdict),
                (f"time of 100 queries, structured ({engines}{scale})", "ms", pair["published_structured_ms"],
                 "reproduced_structured_ms", time_verdict),
                (f"improvement of structured over flat{' (' + scale[2:] + ')' if scale else ''}", "%",
                 pair["published_improvement_pct"], "reproduced_improvement_pct", verdict)):
            words = interval[column].describe() if interval[column] is not None else None
            rows.append(
                Finding(finding, metric, unit, published, value[column], row_verdict, reason, speed_words,
                        kind, interval=words,
                        # the improvement's verdict, carried by the times: its risk with it
                        risk=point.risk if (row_verdict, reason) == verdict else None)
            )
        # Sizes come from the server-free BSON model (exact for any server): the published figure
        # is the article's single example document, so only the direction is compared.
        rows.append(judged(f"structured is smaller ({label})",
                           "BSON data size saving of structured over flat (published: the article's example "
                           "document; reproduced: the generated collection)", "%", published_saving,
                           pair["size_saving_pct"], smaller, server_kind=BSON_MODEL_KIND))
    return pl.concat([verdict_table(rows), example_document_row(sample_sizes, BSON_MODEL_KIND)])


def with_repeat(raw: pl.DataFrame) -> pl.DataFrame:
    """raw with its `repeat` column (a frame measured before repeats existed is repeat 1)."""
    return raw if "repeat" in raw.columns else raw.with_columns(pl.lit(1, pl.Int64).alias("repeat"))


def repeat_comparisons(raw: pl.DataFrame, sizes: pl.DataFrame, published: pl.DataFrame,
                       server_kind: str) -> list[pl.DataFrame]:
    """comparison_table of each repeat's rows on its own, in repeat order."""
    raw = with_repeat(raw)
    return [comparison_table(timing_summary(raw.filter(pl.col("repeat") == r)), sizes, published, server_kind)
            for r in sorted(set(raw["repeat"].to_list()))]


def build_tables(raw_paths: list[str | Path], sizes_path: str | Path, published_timings_path: str | Path,
                 published_sizes_path: str | Path, provenance_paths: list[str | Path],
                 tolerances_path: str | Path | None = None) -> dict[str, pl.DataFrame]:
    """All flatnested tables from the raw parquet files, the BSON model and the published CSVs."""
    raw = with_repeat(pl.concat([read_parquet(p) for p in raw_paths], how="vertical_relaxed"))
    kind = server_kind_of(provenance_paths)
    summary = timing_summary(raw).with_columns(pl.lit(kind).alias("server_kind"))
    sizes, published = read_csv(sizes_path), read_csv(published_timings_path)
    comparison = comparison_table(summary, sizes, published, kind)
    return {"timings": summary, "comparison": comparison,
            "published_vs_reproduced": published_vs_reproduced(
                comparison, read_csv(published_sizes_path),
                read_tolerances(tolerances_path) if tolerances_path else None,
                repeat_comparisons(raw, sizes, published, kind))}
