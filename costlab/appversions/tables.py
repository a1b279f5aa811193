"""Tables of the appversions study: collection stats beside the published ones, load-test
summaries, and published vs reproduced findings (the report's contract columns).
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable, Sequence

import polars as pl

from costlab.appversions.conformance import midday_findings
from costlab.appversions.load import COLLECTION_STATS_COLUMNS
from costlab.appversions.loadtest_plan import LoadTestPlan
from costlab.appversions.loadtest_summary import describe_shortfalls, summarize_bins, summarize_phases
from costlab.appversions.regime import FITS
from costlab.appversions.regime import UNKNOWN as UNKNOWN_REGIME
from costlab.appversions.registry import PUBLISHED_NAMES, in_order
from costlab.appversions.user_events import OWN_EVENTS_REASON
from costlab.appversions.variant_findings import model_variant_rows, server_variant_rows
from costlab.finding import (
    AT_THIS_SCALE,
    NOT_JUDGED,
    STAND_IN,
    Finding,
    judged,
    verdict_table,
)
from costlab.inputs import read_csv, read_parquet, require_values
from costlab.io import write_csv
from costlab.published import ToleranceError, Tolerances, read_tolerances, tolerances_or_published
from costlab.repeats import SERVER_REPEATS, over_repeat_findings
from costlab.server.provenance import read_provenance
from costlab.verdicts import Kind, Verdict, relative_within

GIB = 1024 ** 3   # the articles' "GB" are GiB (see resources/published/appversions_collection_stats.csv)
# Every tolerance: resources/published/appversions_tolerances.csv (finding id, rule, bounds, rationale).
STUDY = "appversions"
MODEL_OVERRIDE_KEY = "appversions.model_tolerance"
OPERATION_OF_KIND = {"upsert": "bulk_upsert", "report": "get_reports"}
# The published figure differs because of the scale, not the server or the method: the model at
# this scale shows the same gap and the model at the reference scale does not.
SCALE_REASON = f"{AT_THIS_SCALE}: the model shows the same gap here and none at the reference scale"
AUTHORS_DRIVER = "authors' closed-loop driver"


def server_kinds(provenance_paths: Iterable[str | Path], prefix: str) -> dict[str, str]:
    """{version: server_kind} from provenance files named <prefix><version>.json (or one repeat's,
    <prefix><version><mark>.json: appversions.repeats, costlab.repeats.SERVER_REPEATS)."""
    kinds = {}
    for path in map(Path, provenance_paths):
        version = SERVER_REPEATS.split_name(path.stem.removeprefix(prefix))[0]
        kinds[version] = read_provenance(path)["server_kind"]
    return kinds


# results/appversions/model/stats.csv (a contract, design.md)
MODEL_STATS_COLUMNS = ("version", "events", "documents", "avg_doc_bytes", "data_bytes")


def read_model_stats(path: str | Path, versions: Sequence[str]) -> pl.DataFrame:
    """model/stats.csv with a row for every one of `versions`, or InputError naming the file.

    A truncated file must not silently drop those versions' findings from the tables.
    """
    model = read_csv(path, columns=MODEL_STATS_COLUMNS, numeric=MODEL_STATS_COLUMNS[1:],
                     minimum={column: 0 for column in MODEL_STATS_COLUMNS[1:]})
    require_values(model, "version", versions, path)
    return model


def published_collection_stats(collection_csv: str | Path, event_csv: str | Path) -> pl.DataFrame:
    """Published collStats and Event Statistics per version, in bytes, columns prefixed published_."""
    stats = read_csv(collection_csv)
    events = read_csv(event_csv)
    stats = stats.select(
        "version",
        pl.col("documents").alias("published_documents"),
        (pl.col("data_size_gib") * GIB).alias("published_data_bytes"),
        pl.col("avg_doc_bytes").cast(pl.Float64).alias("published_avg_doc_bytes"),
        (pl.col("storage_size_gib") * GIB).alias("published_storage_bytes"),
        pl.col("indexes").alias("published_indexes"),
        (pl.col("index_size_gib") * GIB).alias("published_index_bytes"),
        (pl.col("documents") / pl.col("events")).alias("published_documents_per_event"),
    )
    events = events.select(
        "version",
        *[
            pl.col(c).cast(pl.Float64).alias(f"published_{c}")
            for c in (
                "data_bytes_per_event",
                "index_bytes_per_event",
                "total_bytes_per_event",
                "storage_bytes_per_event",
                "total_storage_bytes_per_event",
            )
        ],
    )
    return stats.join(events, on="version", how="left")


def collection_stats_table(
    collstats_paths: Sequence[str | Path],
    provenance_paths: Sequence[str | Path],
    published_collection_csv: str | Path,
    published_event_csv: str | Path,
) -> pl.DataFrame:
    """One row per loaded version: our collStats and per-event figures, the published ones, server_kind."""
    ours = pl.concat([read_parquet(p) for p in collstats_paths], how="vertical_relaxed")
    missing = [c for c in COLLECTION_STATS_COLUMNS if c not in ours.columns]
    if missing:
        raise ValueError(f"collstats files lack columns {missing}")
    kinds = server_kinds(provenance_paths, "load_")
    unknown = sorted(set(ours["version"]) - set(kinds))
    if unknown:
        raise ValueError(f"no load provenance for versions {unknown}")
    published = published_collection_stats(published_collection_csv, published_event_csv)
    # The compressor each collection really has (collStats creation string); older loads lack it.
    compressor = ["block_compressor"] if "block_compressor" in ours.columns else []
    table = (ours.select(COLLECTION_STATS_COLUMNS + compressor)
             .join(published, on="version", how="left")
             .with_columns(pl.col("version").replace_strict(kinds, default=None).alias("server_kind")))
    order = {name: i for i, name in enumerate(in_order(table["version"].to_list()))}   # the registry's order
    return table.sort(pl.col("version").replace_strict(order))


def loadtest_tables(raw_paths: Sequence[str | Path], provenance_paths: Sequence[str | Path],
                    plan: LoadTestPlan, bin_seconds: float | None, tolerance: float
                    ) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(per-bin summary, per-step summary) of every load-tested version, each with server_kind."""
    bins, steps = [], []
    for path in raw_paths:
        raw = read_parquet(path)
        bins.append(summarize_bins(raw, plan, bin_seconds, tolerance))
        steps.append(summarize_phases(raw, plan, tolerance, bin_seconds))
    labels = _loadtest_labels(provenance_paths, "loadtest_")
    return (pl.concat(bins, how="vertical_relaxed").with_columns(*labels),
            pl.concat(steps, how="vertical_relaxed").with_columns(*labels))


def authors_loadtest_steps(raw_paths: Sequence[str | Path], provenance_paths: Sequence[str | Path],
                           plan: LoadTestPlan, tolerance: float) -> pl.DataFrame:
    """Per step (the published 5-minute step) of every version the authors' driver tested
    (closedloop.closed_loop_bins: rates by start time, latency percentiles), with server_kind and regime."""
    from costlab.appversions.closedloop import closed_loop_bins  # noqa: PLC0415  heavy: the load test's workers: tables and figures read its plan and summaries without them

    steps = [closed_loop_bins(read_parquet(path), plan, None, tolerance) for path in raw_paths]
    return pl.concat(steps, how="vertical_relaxed").with_columns(
        *_loadtest_labels(provenance_paths, "loadtest_authors_"))


def _loadtest_labels(provenance_paths: Sequence[str | Path], prefix: str) -> list[pl.Expr]:
    """server_kind and regime columns by version, from provenance files named <prefix><version>.json."""
    kinds = server_kinds(provenance_paths, prefix)
    regimes = loadtest_regimes(provenance_paths, prefix)
    return [pl.col("version").replace_strict(kinds, default=None).alias("server_kind"),
            pl.col("version").replace_strict(regimes, default=UNKNOWN_REGIME).alias("regime")]


def loadtest_regimes(provenance_paths: Iterable[str | Path], prefix: str = "loadtest_") -> dict[str, str]:
    """{version: regime} recorded by each load test (provenance extra.regime; older runs: unknown), of one
    repeat's provenance files."""
    regimes = {}
    for path in map(Path, provenance_paths):
        record = read_provenance(path).get("extra") or {}
        version = SERVER_REPEATS.split_name(path.stem.removeprefix(prefix))[0]
        regimes[version] = (record.get("regime") or {}).get("regime", UNKNOWN_REGIME)
    return regimes


# --- published vs reproduced ------------------------------------------------------------------

def relative(finding: str, metric: str, unit: str, published, reproduced, fraction: float, server_kind: str,
             tolerance: str | None = None) -> Finding:
    """A row judged by |reproduced / published - 1| <= fraction (a published 0 holds only an exact 0)."""
    return judged(finding, metric, unit, published, reproduced, relative_within(published, fraction),
                  server_kind=server_kind, tolerance=tolerance)


def stand_in_or(row: Finding, stand_in: bool) -> Finding:
    return row.but(Verdict.NOT_COMPARABLE, STAND_IN) if stand_in else row


def relative_fraction(tolerances: Tolerances | None, finding_id: str) -> float:
    """A relative tolerance's fraction (|this run / published - 1| <= it) from appversions_tolerances.csv."""

    tolerance = tolerances_or_published(tolerances, STUDY)[finding_id]
    if tolerance.rule != "relative":
        raise ToleranceError(
            f"costlab: {tolerance.source} ({finding_id}): rule {tolerance.rule!r} is not allowed "
            "here (allowed: relative, a distance from the published value)"
        )
    return float(tolerance.high)


def relative_text(fraction: float) -> str:
    return str(relative_within(None, fraction))


def model_fraction(tolerances: Tolerances | None, override: float | None = None) -> tuple[float, str]:
    """The model's tolerance and its words: the published one, or the config key's override when set."""
    if override is not None:
        return float(override), f"{relative_text(float(override))} ({MODEL_OVERRIDE_KEY} override)"
    fraction = relative_fraction(tolerances, "model")
    return fraction, relative_text(fraction)


def _per_event(model: pl.DataFrame) -> dict[str, dict]:
    """{version: {documents_per_event, avg_doc_bytes, events}} of a model stats frame."""
    return {
        rec["version"]: {
            "documents_per_event": rec["documents"] / rec["events"] if rec["events"] else None,
            "avg_doc_bytes": rec["avg_doc_bytes"],
            "events": rec["events"],
        }
        for rec in model.iter_rows(named=True)
    }


def _gap(published: float | None, value: float | None) -> float:
    """Relative distance of value from published; infinite when either is missing."""
    if published in (None, 0) or value is None:
        return float("inf")
    return abs(value / published - 1)


def scale_explained(model_here: pl.DataFrame | None, model_reference: pl.DataFrame | None,
                    published: pl.DataFrame, tolerance: float | None = None) -> dict[str, bool]:
    """{version: True} where the scale explains a gap to the published per-event figures.

    True when the server-free model at this scale is off the published documents per event or
    average document size by more than `tolerance`, and by more than `tolerance` beyond the model
    at the reference scale (where per-event figures no longer move with the scale): the collection
    at this scale has another shape than the published one, whatever the server does. A gap the
    model keeps at the reference scale is the method's, and its reference-scale row shows it.
    """
    if model_here is None or model_reference is None:
        return {}
    tolerance = model_fraction(None)[0] if tolerance is None else tolerance
    here, reference = _per_event(model_here), _per_event(model_reference)
    explained = {}
    for rec in published.iter_rows(named=True):
        version = rec["version"]
        if version not in here or version not in reference:
            continue
        pairs = (("documents_per_event", rec["published_documents_per_event"]),
                 ("avg_doc_bytes", rec["published_avg_doc_bytes"]))
        gaps = [(_gap(pub, here[version][m]), _gap(pub, reference[version][m])) for m, pub in pairs]
        explained[version] = any(gap_here != float("inf") and gap_here > tolerance + gap_reference
                                 for gap_here, gap_reference in gaps)
    return explained


def collection_findings(stats: pl.DataFrame, model_here: pl.DataFrame | None = None,
                        explained: dict[str, bool] | None = None, tolerances: Tolerances | None = None
                        ) -> list[Finding]:
    """Per version: documents per event (a count: comparable on any server), sizes per event
    (MongoDB's sizes: not comparable on the stand-in); and two cross-version findings.

    With the model at this scale, each version first gets the check of the server: its documents
    per event and average document size against the model's at the same scale. A gap to the
    published value that the scale explains (`explained`, from scale_explained) is "not comparable"
    (SCALE_REASON) instead of "not reproduced".
    Tolerances: appversions_tolerances.csv's documents_per_event, server_vs_model, sizes_per_event and
    cross_version_ratio (or `tolerances`).
    """
    tol = tolerances_or_published(tolerances, STUDY)
    count, server_model, sizes, index_count = (relative_fraction(tol, f) for f in (
        "documents_per_event", "server_vs_model", "sizes_per_event", "index_count"))
    direction = tol["cross_version_ratio"].holds()
    rows = []
    model = _per_event(model_here) if model_here is not None else {}
    explained = explained or {}

    def against_published(version: str, row: Finding) -> Finding:
        # The scale explains the gap only where the server holds what the model says at this scale.
        on_server = by_version[version]["documents_per_event"]
        server_as_model = (
            version in model
            and on_server is not None
            and relative_within(model[version]["documents_per_event"], server_model)(on_server)
        )
        if row.verdict is Verdict.NOT_REPRODUCED and explained.get(version) and server_as_model:
            return row.but(Verdict.NOT_COMPARABLE, SCALE_REASON)
        return row

    by_version = {rec["version"]: rec for rec in stats.iter_rows(named=True)}
    for rec in stats.iter_rows(named=True):
        kind, version = rec["server_kind"], rec["version"]
        stand_in = kind == "stand-in"
        if version in model:
            expected = model[version]
            first = len(rows)
            scale = f"{expected['events']:,} events"
            rows.append(
                relative(
                    f"{version}: documents per event, server vs model at this scale ({scale})",
                    "documents_per_event vs model",
                    "documents/event",
                    expected["documents_per_event"],
                    rec["documents_per_event"],
                    server_model,
                    kind,
                    relative_text(server_model),
                )
            )
            rows.append(
                stand_in_or(
                    relative(
                        f"{version}: average document size, server vs model at this scale ({scale})",
                        "avg_doc_bytes vs model",
                        "B",
                        expected["avg_doc_bytes"],
                        rec["avg_doc_bytes"],
                        server_model,
                        kind,
                        relative_text(server_model),
                    ),
                    stand_in,
                )
            )
            if version not in PUBLISHED_NAMES:   # a user's version: checked, never counted as published
                rows[first:] = [row.with_(kind=Kind.USER_VARIANT) for row in rows[first:]]
        if rec.get("published_documents_per_event") is None:
            continue   # a version of one's own: no published number (its rows: variant_findings.py)
        rows.append(
            against_published(
                version,
                relative(
                    f"{version}: documents per event (bucketing)",
                    "documents_per_event",
                    "documents/event",
                    rec["published_documents_per_event"],
                    rec["documents_per_event"],
                    count,
                    kind,
                    relative_text(count),
                ),
            )
        )
        if (
            rec.get("published_indexes") is not None and "indexes" in rec
        ):  # its own indexes: exact on any server
            rows.append(relative(f"{version}: indexes on the collection", "indexes", "indexes",
                                 rec["published_indexes"], rec["indexes"], index_count, kind,
                                 relative_text(index_count)))
        for metric, unit in (
            ("avg_doc_bytes", "B"),
            ("data_bytes_per_event", "B/event"),
            ("index_bytes_per_event", "B/event"),
            ("total_bytes_per_event", "B/event"),
            ("storage_bytes_per_event", "B/event"),
            ("total_storage_bytes_per_event", "B/event"),
        ):
            published = rec.get(f"published_{metric}")
            if published is None or metric not in rec:
                continue
            row = relative(
                f"{version}: {metric.replace('_', ' ')}",
                metric,
                unit,
                published,
                rec[metric],
                sizes,
                kind,
                relative_text(sizes),
            )
            rows.append(stand_in_or(row, True) if stand_in else against_published(version, row))

    def ratio_finding(finding, metric, num, den, published_num, published_den, expect_below_one=True,
                      compressors=None):
        if num not in by_version or den not in by_version:
            return
        a, b = by_version[num], by_version[den]
        kind = (
            a["server_kind"]
            if a["server_kind"] == b["server_kind"]
            else f"{a['server_kind']}/{b['server_kind']}"
        )
        published = published_num / published_den
        reproduced = a[metric] / b[metric] if a[metric] and b[metric] else None
        # The compressors the server reports (load.collection_stats); a server configured with another
        # default compressor would compare something else than the article did.
        found = (a.get("block_compressor"), b.get("block_compressor"))
        tolerance = str(direction) if expect_below_one else f"not {direction}"
        row = judged(
            finding,
            f"{metric} {num}/{den}",
            "ratio",
            published,
            reproduced,
            lambda value: direction(value) == expect_below_one,
            server_kind=kind,
            tolerance=tolerance,
        )
        if "stand-in" in kind:
            row = row.but(Verdict.NOT_COMPARABLE, STAND_IN)
        elif compressors and None not in found and "not reported" not in found and found != compressors:
            row = row.but(Verdict.NOT_COMPARABLE,
                          f"the collections use {found[0]} and {found[1]}, not {' and '.join(compressors)}")
        rows.append(row)

    ratio_finding("zstd (appV6R4) stores the same data in less space than snappy (appV6R3)", "storage_bytes",
                  "appV6R4", "appV6R3", 1.47, 2.56, compressors=("zstd", "snappy"))
    ratio_finding("quarter buckets (appV5R1) shrink the index per event against one document per day (appV4)",
                  "index_bytes_per_event", "appV5R1", "appV4", 2.3, 20.4)
    ratio_finding("dynamic schema (appV6R1) shrinks data per event against arrays (appV5R3)",
                  "data_bytes_per_event", "appV6R1", "appV5R3", 17.6, 25.7)
    return rows


def _not_the_articles(rows: list[Finding]) -> list[Finding]:
    """Rows measured on your own events (appversions.events): kept, `not comparable` to a published number."""

    return [row.but(Verdict.NOT_COMPARABLE, OWN_EVENTS_REASON) for row in rows]


def model_findings(model_stats: pl.DataFrame, published: pl.DataFrame,
                   tolerance: float | None = None, model_reference: pl.DataFrame | None = None,
                   tolerances: Tolerances | None = None, own_events: bool = False) -> list[Finding]:
    """The server-free model's documents per event and average document size vs published.

    own_events (appversions.events): this run's rows are your events' sizes, which no published number
    judges (`not comparable`, user_events.OWN_EVENTS_REASON); the reference rows (the generator at the
    reference scale) still check the method.

    Judged by appversions_tolerances.csv's `model` (or `tolerance`, the appversions.model_tolerance
    override). With model_reference (the model at the reference scale), its rows are the check of the
    method, and a gap of the model at this scale that the scale explains is "not comparable" (SCALE_REASON).
    """
    tolerance, tolerance_words = model_fraction(tolerances, tolerance)
    explained = scale_explained(model_stats, model_reference, published, tolerance)

    def rows_of(model: pl.DataFrame, label: str, scale_note: bool) -> list[Finding]:
        rows = []
        for rec in model.join(published, on="version", how="inner").iter_rows(named=True):
            docs_per_event = rec["documents"] / rec["events"] if rec["events"] else None
            for finding, metric, unit, pub, value in (
                    ("documents per event", "documents_per_event", "documents/event",
                     rec["published_documents_per_event"], docs_per_event),
                    ("average document size", "avg_doc_bytes", "B", rec["published_avg_doc_bytes"],
                     rec["avg_doc_bytes"])):
                row = relative(f"{rec['version']}: {finding} ({label})", metric, unit, pub, value, tolerance,
                               "model (no server)", tolerance_words)
                if scale_note and row.verdict is Verdict.NOT_REPRODUCED and explained.get(rec["version"]):
                    row = row.but(Verdict.NOT_COMPARABLE, SCALE_REASON)
                rows.append(row)
        return rows

    rows = rows_of(model_stats, "model", True)
    if own_events:
        rows = _not_the_articles(rows)
    if model_reference is not None:
        rate = (
            int(model_reference["events_per_year"][0])
            if "events_per_year" in model_reference.columns
            else None
        )
        label = "model at the reference scale" + (f", {rate:,} events/year" if rate else "")
        if "event_window" in model_reference.columns:
            label += f", {model_reference['event_window'][0]} event window"
        rows += rows_of(model_reference, label, False)
    return rows


def loadtest_findings(steps: pl.DataFrame, facts: pl.DataFrame, tolerances: Tolerances | None = None
                      ) -> list[Finding]:
    """Load-test findings the articles state in relative terms, checked on our steps (by
    appversions_tolerances.csv's loadtest_* rules, or `tolerances`).

    They rest on the article's regime (a working set larger than the cache): where a version
    involved ran with its working set in cache (steps' `regime`), the verdict is "not comparable"
    (regime.FITS) instead.
    """
    tol = tolerances_or_published(tolerances, STUDY)
    all_met, reduced, short_of_target = (tol[f].holds() for f in (
        "loadtest_all_targets_met", "loadtest_peak_latency_reduction", "loadtest_first_step_rate"))
    rows = []
    tested = set(steps["version"].unique().to_list()) if steps.height else set()
    kinds = dict(steps.select("version", "server_kind").unique().iter_rows()) if steps.height else {}
    regimes = (dict(steps.select("version", "regime").unique().iter_rows())
               if steps.height and "regime" in steps.columns else {})

    def in_regime(row: Finding, *versions: str) -> Finding:
        """The stand-in's reason first; else a version that ran with its working set in cache."""
        if "stand-in" in row.server_kind:
            return row.but(Verdict.NOT_COMPARABLE, STAND_IN)
        if any(regimes.get(v) == FITS for v in versions):
            return row.but(Verdict.NOT_COMPARABLE, FITS)
        return row

    for fact in facts.iter_rows(named=True):
        version, other = fact["version"], fact["compared_with"]
        if version not in tested:
            continue
        kind = kinds[version]
        kind_of_op = {v: k for k, v in OPERATION_OF_KIND.items()}[fact["operation"]]
        mine = steps.filter(
            (pl.col("version") == version) & (pl.col("kind") == kind_of_op) & (pl.col("phase") > 0)
        )
        if fact["metric"] == "all_targets_met":
            share = float(mine["met"].mean()) if mine.height else None
            rows.append(
                in_regime(
                    judged(
                        f"{version}: {fact['statement']}",
                        f"{fact['operation']} share of steps at target",
                        "share",
                        1.0 if fact["value"] else None,
                        share,
                        lambda value, want=bool(fact["value"]): all_met(value) == want,
                        server_kind=kind,
                        tolerance=str(all_met) if fact["value"] else f"not {all_met}",
                    ),
                    version,
                )
            )
        elif fact["metric"] == "peak_latency_reduction" and other in tested:
            theirs = steps.filter((pl.col("version") == other) & (pl.col("kind") == kind_of_op)
                                  & (pl.col("phase") == int(fact["phase"])))
            ours = mine.filter(pl.col("phase") == int(fact["phase"]))
            # The article's peak latencies are of single calls: compare the calls' own durations.
            peak_mine, peak_other = ours["call_ms_max"].max(), theirs["call_ms_max"].max()
            reduction = (1 - peak_mine / peak_other) * 100 if peak_mine is not None and peak_other else None
            both_kind = kind if kinds[other] == kind else f"{kind}/{kinds[other]}"
            rows.append(in_regime(judged(
                f"{version} vs {other}: {fact['statement']}",
                f"{fact['operation']} peak latency reduction, phase {int(fact['phase'])}", "%",
                float(fact["value"]), reduction, reduced, server_kind=both_kind), version, other))
        elif fact["metric"] == "peak_rate" and fact["operation"] == "get_reports":
            first = mine.filter((pl.col("phase") == int(fact["phase"])) & (pl.col("step") == 1))
            share = float(first["achieved_rate"].max() / first["target_rate"].max()) if first.height else None
            rows.append(in_regime(judged(
                f"{version}: {fact['statement']}", "get_reports first-step rate / target", "share",
                float(fact["value"]) / 25.0, share, short_of_target, server_kind=kind), version))
        else:   # a published number no rule judges here: a row that says why
            rows.append(
                Finding(
                    f"{version}: {fact['statement']}",
                    _fact_metric(fact),
                    fact["unit"],
                    float(fact["value"]),
                    None,
                    Verdict.NOT_COMPARABLE,
                    STAND_IN if kind == "stand-in" else _unjudged_fact(fact, tested),
                    NOT_JUDGED,
                    kind,
                )
            )
    return rows


def loadtest_findings_over_repeats(repeat_steps: Sequence[pl.DataFrame], facts: pl.DataFrame,
                                   tolerances: Tolerances | None = None) -> list[Finding]:
    """loadtest_findings of each repeat's steps (appversions.repeats; repeat 1 first) as one row per finding:
    its value the median over the repeats with the order-statistic interval, judged by that interval where
    the finding's rule has a band (costlab.repeats.over_repeat_findings). One repeat: each row as one run
    gives it, "one run: no interval". The stand-in's rows stay not comparable (the stand-in's)."""
    return over_repeat_findings([loadtest_findings(steps, facts, tolerances) for steps in repeat_steps])


def _fact_metric(fact: dict) -> str:
    phase = f", phase {int(fact['phase'])}" if fact.get("phase") is not None else ""
    return f"{fact['operation']} {fact['metric'].replace('_', ' ')}{phase}"


def _unjudged_fact(fact: dict, tested: set[str]) -> str:
    """Why a load-test fact has no verdict (the reason of a "not comparable"): the version it is relative to
    did not run, or it is an absolute time/rate of the article's machine and scale
    (resources/published/appversions_loadtest_method.csv)."""
    if fact["metric"] == "peak_latency_reduction":
        return f"{fact['compared_with']} was not load-tested in this run"
    return ("an absolute figure of the article's 200-minute load test (AWS c7a.large, "
            "500 million events); only its relative findings are judged")


def published_vs_reproduced(collection_stats: pl.DataFrame, steps: pl.DataFrame, facts: pl.DataFrame,
                            model_stats: pl.DataFrame | None, published: pl.DataFrame,
                            model_tolerance: float | None = None,
                            model_reference: pl.DataFrame | None = None,
                            midday: pl.DataFrame | None = None,
                            authors_steps: pl.DataFrame | None = None,
                            tolerances: Tolerances | None = None,
                            repeat_steps: Sequence[pl.DataFrame] | None = None,
                            own_events: bool = False) -> pl.DataFrame:
    """The report's table: one row per finding, verdict about the finding, server_kind of its data.

    own_events (appversions.events): the collection and load-test findings are measured on your events,
    which no published number judges: each `not comparable`, its value kept.

    midday: the loaded versions' Get Reports at end times with a time of day (conformance.py).
    authors_steps: the authors'-way load test's steps (authors_loadtest_steps): the load-test
    findings again, judged on it, each named "... (authors' closed-loop driver)"; one run.
    repeat_steps: each repeat's steps (appversions.repeats; repeat 1 first, `steps` when None): the
    load-test findings over them (loadtest_findings_over_repeats).
    tolerances: appversions_tolerances.csv's rows (read from resources/published when None);
    model_tolerance: the appversions.model_tolerance override of its `model` row (None: the published one)."""

    tol = tolerances_or_published(tolerances, STUDY)
    explained = scale_explained(
        model_stats, model_reference, published, model_fraction(tol, model_tolerance)[0]
    )
    rows = (collection_findings(collection_stats, model_stats, explained, tol)
            + loadtest_findings_over_repeats(repeat_steps or [steps], facts, tol))
    if own_events:
        rows = _not_the_articles(rows)
    if model_stats is not None:
        rows += model_findings(model_stats, published, model_tolerance, model_reference, tol, own_events)
        rows += model_variant_rows(model_stats)
    rows += server_variant_rows(collection_stats)   # a user's variants beside their compare_to
    if midday is not None:
        rows += midday_findings(midday, tol)
    if authors_steps is not None:
        rows += [row.with_(finding=f"{row.finding} ({AUTHORS_DRIVER})")
                 for row in loadtest_findings_over_repeats([authors_steps], facts, tol)]
    return verdict_table(rows)


def published_vs_model(model_stats: pl.DataFrame, published: pl.DataFrame, tolerance: float | None = None,
                       model_reference: pl.DataFrame | None = None,
                       tolerances: Tolerances | None = None, own_events: bool = False) -> pl.DataFrame:
    """The server-free model's findings alone (model/published_vs_model.csv), with the tolerance they were
    judged by: what a run with no server has to show for this study."""
    return verdict_table(model_findings(model_stats, published, tolerance, model_reference, tolerances,
                                        own_events)
                         + model_variant_rows(model_stats))


def write_tables(
    inputs, outputs, loadtest_settings: dict, model_tolerance: float | None = None, own_events: bool = False
) -> tuple[pl.DataFrame, str]:
    """The table step: read every input named in the rule, write each table atomically.

    Returns the count of findings per verdict and server kind, and which load-test steps missed their
    target per version at appversions.loadtest.tolerance and bin_seconds (loadtest_shortfalls): the log."""

    plan = LoadTestPlan.from_config(loadtest_settings)
    stats = collection_stats_table(inputs.collstats, inputs.load_provenance, inputs.published_collection,
                                   inputs.published_events)
    # each repeat's load tests (appversions.repeats): the bins and steps tables are repeat 1's, the findings
    # the median over the repeats
    raws = SERVER_REPEATS.paths_by_repeat(inputs.loadtest_raw) or [[]]
    provenances = SERVER_REPEATS.paths_by_repeat(inputs.loadtest_provenance) or [[]]
    tables = [loadtest_tables(raw, provenance, plan, loadtest_settings.get("bin_seconds"),
                              loadtest_settings["tolerance"])
              for raw, provenance in zip(raws, provenances, strict=True)]
    bins, steps = tables[0]
    repeat_steps = [one for _, one in tables]
    published = published_collection_stats(inputs.published_collection, inputs.published_events)
    model = (
        read_model_stats(inputs.model, stats["version"].to_list()) if getattr(inputs, "model", None) else None
    )
    reference = read_csv(inputs.model_reference) if getattr(inputs, "model_reference", None) else None
    midday_paths = list(getattr(inputs, "midday", None) or [])
    midday = (
        pl.concat([read_csv(path) for path in midday_paths], how="diagonal_relaxed") if midday_paths else None
    )
    authors_raw = list(getattr(inputs, "loadtest_authors_raw", None) or [])
    authors_steps = (authors_loadtest_steps(authors_raw, inputs.loadtest_authors_provenance, plan,
                                            loadtest_settings["tolerance"]) if authors_raw else None)
    tolerances = read_tolerances(inputs.tolerances) if getattr(inputs, "tolerances", None) else None
    pvr = published_vs_reproduced(stats, steps, read_csv(inputs.facts), model, published, model_tolerance,
                                  reference, midday, authors_steps, tolerances, repeat_steps, own_events)
    if authors_steps is not None:
        write_csv(authors_steps, outputs.loadtest_authors_steps)
    write_csv(stats, outputs.collection_stats)
    write_csv(bins, outputs.loadtest_bins)
    write_csv(steps, outputs.loadtest_steps)
    write_csv(pvr, outputs.published_vs_reproduced)
    counts = pvr.group_by("server_kind", "verdict").len().sort("server_kind", "verdict")
    return counts, loadtest_shortfalls(steps)


def loadtest_shortfalls(steps: pl.DataFrame) -> str:
    """Per load-tested version, its steps at target and those that missed it, saying who fell behind
    (describe_shortfalls). Judged here, by the job whose params hold the tolerance and binning, not by the
    load test (another tolerance must not rerun one)."""
    versions = list(dict.fromkeys(steps["version"].to_list())) if steps.height else []
    return "".join(describe_shortfalls(steps.filter(pl.col("version") == version)) for version in versions)
