"""Tables the report shows, from raw rows + provenance + the article's numbers.

Tables are for reading: a counter the server did not report is written as the text
"not reported by this server" (raw parquet keeps it as null), never as 0.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable, Sequence

import polars as pl

from costlab.arraygrowth.element_findings import server_element_rows
from costlab.arraygrowth.fit import FitError, PowerLawFit, fit_power_law
from costlab.arraygrowth.published import read_published_cursor_calls, read_published_log_bytes
from costlab.arraygrowth.run import NOT_REPORTED
from costlab.finding import AT_THIS_SCALE, NOT_JUDGED, STAND_IN, Finding, judged, verdict_table
from costlab.inputs import read_csv, read_parquet
from costlab.io import write_csv
from costlab.published import Tolerances, read_tolerances, tolerances_or_published
from costlab.server.provenance import read_provenance
from costlab.verdicts import NOT_MEASURED, Verdict

FIT_LABEL = "wiredTiger.log"   # what the fit step names when log bytes are missing
# Verdict thresholds: resources/published/arraygrowth_tolerances.csv (each with its rationale;
# docs/arraygrowth.md).
STUDY = "arraygrowth"


def read_raw(paths: Iterable[str | Path]) -> pl.DataFrame:
    frames = [read_parquet(p) for p in paths]
    if not frames:
        raise ValueError("no raw arraygrowth files given")
    return pl.concat(frames, how="vertical")


def with_provenance_kind(raw: pl.DataFrame, provenance_paths: Iterable[str | Path]) -> pl.DataFrame:
    """Replace server_kind by the one each job's provenance records (the contract's source)."""
    kinds = {}
    for path in provenance_paths:
        record = read_provenance(path)
        kinds[record.get("job") or Path(path).stem] = record.get("server_kind", "unknown")
    missing = sorted(set(raw["job"].unique()) - set(kinds))
    if missing:
        raise ValueError(f"no provenance for arraygrowth jobs {missing}; have {sorted(kinds)}")
    return raw.with_columns(pl.col("job").replace_strict(kinds, return_dtype=pl.Utf8).alias("server_kind"))


def kind_of(frame: pl.DataFrame) -> str:
    kinds = sorted(frame["server_kind"].unique().drop_nulls().to_list()) if frame.height else []
    return "+".join(kinds) if kinds else "unknown"


def per_op(raw: pl.DataFrame) -> pl.DataFrame:
    """Counters divided by the write commands of the run (null stays null)."""
    return raw.with_columns(
        (pl.col("log_bytes") / pl.col("operations")).alias("log_bytes_per_op"),
        (pl.col("cursor_insert_calls") / pl.col("operations")).alias("cursor_insert_per_op"),
        (pl.col("cursor_modify_calls") / pl.col("operations")).alias("cursor_modify_per_op"),
    )


def present(frame: pl.DataFrame, columns: Sequence[str], digits: int = 3) -> pl.DataFrame:
    """Numbers as text for reading; null -> 'not reported by this server'."""
    exprs = []
    for column in columns:
        value = pl.col(column)
        if frame.schema[column].is_float():
            value = (
                value.round_sig_figs(digits) if hasattr(pl.Expr, "round_sig_figs") else value.round(digits)
            )
        exprs.append(value.cast(pl.Utf8).fill_null(NOT_REPORTED).alias(column))
    return frame.with_columns(exprs)


# ---- runs ----------------------------------------------------------------------------------

RUN_COLUMNS = ["profile", "workload", "n", "wall_s", "log_bytes", "log_bytes_per_op", "cursor_insert_calls",
               "cursor_modify_calls", "cursor_update_calls", "cursor_remove_calls", "cursor_insert_per_op",
               "cursor_modify_per_op", "max_doc_bytes_after", "topology", "backend", "server_kind"]


def runs_table(raw: pl.DataFrame) -> pl.DataFrame:
    frame = per_op(raw).sort("profile", "workload", "n").select(RUN_COLUMNS)
    return present(frame, [c for c in RUN_COLUMNS[3:12]])


# ---- fit -----------------------------------------------------------------------------------

def fit_one(frame: pl.DataFrame) -> PowerLawFit:
    frame = frame.sort("n")
    return fit_power_law(frame["n"].to_list(), frame["log_bytes"].to_list(), label=FIT_LABEL)


def published_exponent(published: pl.DataFrame, profile: str, workload: str) -> float | None:
    """Exponent fitted through the article's own points when it gives >= 2 N for the pair."""
    rows = published.filter((pl.col("profile") == profile) & (pl.col("workload") == workload)
                            & (pl.col("experiment") == "quadratic"))
    if rows["n"].n_unique() < 2:
        return None
    return fit_power_law(
        rows["n"].to_list(), rows["log_bytes"].to_list(), label="published log bytes"
    ).exponent


def fit_table(raw: pl.DataFrame, published: pl.DataFrame) -> pl.DataFrame:
    """Exponent of log bytes vs N per (profile, workload); 'not fitted: <why>' instead of crashing."""
    rows = []
    for (profile, workload), group in raw.group_by(["profile", "workload"], maintain_order=True):
        row = {"profile": profile, "workload": workload, "points": group.height,
               "n_min": int(group["n"].min()), "n_max": int(group["n"].max()),
               "exponent": None, "coefficient": None, "r_squared": None}
        try:
            fit = fit_one(group)
            row.update(exponent=fit.exponent, coefficient=fit.coefficient, r_squared=fit.r_squared,
                       status="fitted")
        except FitError as err:
            row["status"] = f"not fitted: {err}"
        row["published_exponent"] = published_exponent(published, profile, workload)
        row["server_kind"] = kind_of(group)
        rows.append(row)
    schema = {
        "profile": pl.Utf8,
        "workload": pl.Utf8,
        "points": pl.Int64,
        "n_min": pl.Int64,
        "n_max": pl.Int64,
        "exponent": pl.Float64,
        "coefficient": pl.Float64,
        "r_squared": pl.Float64,
        "status": pl.Utf8,
        "published_exponent": pl.Float64,
        "server_kind": pl.Utf8,
    }
    frame = pl.DataFrame(rows, schema=schema).sort("profile", "workload")
    # A refused fit has no numbers: 'not fitted' (never 0), and `status` says why.
    return frame.with_columns(
        [pl.col(c).round(4).cast(pl.Utf8).fill_null("not fitted") for c in ("exponent", "r_squared")]
        + [pl.col("coefficient").round_sig_figs(4).cast(pl.Utf8).fill_null("not fitted")]
        + [pl.col("published_exponent").round(3).cast(pl.Utf8).fill_null("not published")])


# ---- insert vs modify ----------------------------------------------------------------------

def counts_table(raw: pl.DataFrame, published_calls: pl.DataFrame) -> pl.DataFrame:
    """WiredTiger insert vs modify calls per write command, beside the article's (its N=10,000)."""
    pub = published_calls.select(
        "profile", "workload", pl.col("n").alias("published_n"),
        (pl.col("cursor_insert_calls") / pl.col("n")).alias("published_insert_per_op"),
        (pl.col("cursor_modify_calls") / pl.col("n")).alias("published_modify_per_op"))
    frame = (per_op(raw).join(pub, on=["profile", "workload"], how="left")
             .sort("profile", "workload", "n")
             .select("profile", "workload", "n", "cursor_insert_calls", "cursor_modify_calls",
                     "cursor_insert_per_op", "cursor_modify_per_op", "published_n", "published_insert_per_op",
                     "published_modify_per_op", "topology", "server_kind"))
    frame = present(frame, ["cursor_insert_calls", "cursor_modify_calls", "cursor_insert_per_op",
                            "cursor_modify_per_op"])
    return frame.with_columns(
        pl.col("published_insert_per_op").round(4), pl.col("published_modify_per_op").round(4)
    )


# ---- fallback sweep ------------------------------------------------------------------------

def fallback_table(raw: pl.DataFrame, model: pl.DataFrame) -> pl.DataFrame:
    """Measured per-update counters beside the model's eligible fraction for the observed topology."""
    measured = per_op(raw).with_columns(
        pl.when(pl.col("topology").str.starts_with("replica set")).then(pl.lit("replica set"))
        .otherwise(pl.lit("standalone")).alias("model_topology"))
    joined = measured.join(model.select("variant", pl.col("topology").alias("model_topology"),
                                        pl.col("final_doc_bytes").alias("model_final_doc_bytes"),
                                        "modify_eligible_fraction"),
                           on=["variant", "model_topology"], how="left")
    frame = joined.sort("variant", "profile").select(
        "variant",
        "profile",
        "updates",
        "wall_s",
        "log_bytes",
        pl.col("log_bytes_per_op").alias("log_bytes_per_update"),
        pl.col("cursor_insert_per_op").alias("cursor_insert_per_update"),
        pl.col("cursor_modify_per_op").alias("cursor_modify_per_update"),
        pl.col("modify_eligible_fraction").alias("model_modify_eligible_fraction"),
        "max_doc_bytes_after",
        "model_final_doc_bytes",
        "topology",
        "backend",
        "server_kind",
    )
    return present(frame, ["wall_s", "log_bytes", "log_bytes_per_update", "cursor_insert_per_update",
                           "cursor_modify_per_update"])


# ---- published vs reproduced ---------------------------------------------------------------

def _value_at(frame: pl.DataFrame, profile: str, workload: str, column: str, n: int | None = None
              ) -> tuple[float | None, int | None]:
    """Value of `column` at N (or the largest N measured); (None, None) if the pair was not run."""
    rows = frame.filter((pl.col("profile") == profile) & (pl.col("workload") == workload))
    if n is not None:
        rows = rows.filter(pl.col("n") == n)
    if rows.height == 0:
        return None, None
    row = rows.sort("n").row(-1, named=True)
    return row[column], row["n"]


def _largest_common_n(frame: pl.DataFrame, pairs: Sequence[tuple[str, str]], prefer: int) -> int | None:
    sets = [
        set(frame.filter((pl.col("profile") == p) & (pl.col("workload") == w))["n"].to_list())
        for p, w in pairs
    ]
    common = set.intersection(*sets) if sets else set()
    if not common:
        return None
    return prefer if prefer in common else max(common)


def published_vs_reproduced(raw: pl.DataFrame, fits: dict[tuple[str, str], PowerLawFit | None],
                            published: pl.DataFrame, published_calls: pl.DataFrame,
                            tolerances: Tolerances | None = None) -> pl.DataFrame:
    """The report's verdict table of published_findings (published and reproduced to 4 significant
    figures)."""
    return verdict_table(published_findings(raw, fits, published, published_calls, tolerances), rounded=True)


def published_findings(raw: pl.DataFrame, fits: dict[tuple[str, str], PowerLawFit | None],
                       published: pl.DataFrame, published_calls: pl.DataFrame,
                       tolerances: Tolerances | None = None) -> list[Finding]:
    """One row per finding of the article; verdicts judge the finding's shape, not absolute times, by the
    tolerances of resources/published/arraygrowth_tolerances.csv (or `tolerances`). A value the server did
    not report is "not run" saying so."""
    tol = tolerances_or_published(tolerances, STUDY)
    kind = kind_of(raw)
    stand_in = "stand-in" in kind
    measured = per_op(raw)
    rows: list[Finding] = []
    missing = NOT_REPORTED if measured["log_bytes"].null_count() == measured.height else NOT_MEASURED

    def add(finding, metric, unit, pub, rep, ok, unmeasured: str | None = None):
        """unmeasured: the reason (not comparable) when rep is None because this run did not measure at the
        published N."""
        row = judged(finding, metric, unit, pub, rep, ok, server_kind=kind, missing=missing)
        if stand_in:
            row = row.but(Verdict.NOT_COMPARABLE, STAND_IN)
        elif rep is None and unmeasured:
            row = row.but(Verdict.NOT_COMPARABLE, unmeasured)
        rows.append(row)

    def at_other_n(profile: str, workload: str, n: int) -> str | None:
        """'at this scale: ...' when the pair ran, but not at the published N."""
        ns = sorted(set(raw.filter((pl.col("profile") == profile) & (pl.col("workload") == workload))["n"]))
        if not ns or n in ns:
            return None
        return f"{AT_THIS_SCALE}: published N={n}; this run N={', '.join(map(str, ns))}"

    def exponent(profile, workload):
        fit = fits.get((profile, workload))
        return fit.exponent if fit is not None else None

    add("standalone $push: journal bytes grow quadratically with N",
        "exponent k of log bytes ~ N^k (standalone, $push)", "1",
        published_exponent(published, "standalone", "push"), exponent("standalone", "push"),
        tol["quadratic_exponent"].holds())
    add("replica set $push: journal bytes grow linearly with N",
        "exponent k of log bytes ~ N^k (replset-1, $push); published: the article's 'linear' at one N", "1",
        1.0, exponent("replset-1", "push"), tol["linear_exponent"].holds())

    pub_replica = published.filter(pl.col("experiment") == "replica")

    def pub_bytes(profile, workload):
        return pub_replica.filter((pl.col("profile") == profile) & (pl.col("workload") == workload))[
            "log_bytes"
        ][0]

    def profile_ratio(workload, numerator, denominator):
        """N used, published and reproduced log bytes numerator-profile / denominator-profile."""
        n = _largest_common_n(raw, [(numerator, workload), (denominator, workload)], 10_000)
        top, _ = _value_at(raw, numerator, workload, "log_bytes", n) if n else (None, None)
        bottom, _ = _value_at(raw, denominator, workload, "log_bytes", n) if n else (None, None)
        return (n, pub_bytes(numerator, workload) / pub_bytes(denominator, workload),
                top / bottom if top is not None and bottom else None)

    n_push, published_ratio, reproduced_ratio = profile_ratio("push", "standalone", "replset-1")
    add("a replica set writes far less journal for the same $push sequence",
        f"standalone / replset-1 log bytes, $push (published N=10000, reproduced N={n_push})", "ratio",
        published_ratio, reproduced_ratio, tol["standalone_over_replset"].holds())

    n_ins, published_ratio, reproduced_ratio = profile_ratio("insert", "replset-1", "standalone")
    add("inserting on a replica set writes ~4x the journal (the oplog is logged too)",
        f"replset-1 / standalone log bytes, insert (published N=10000, reproduced N={n_ins})", "ratio",
        published_ratio, reproduced_ratio, tol["replset_insert_factor"].holds())

    def pub_calls_per_op(profile, workload, column):
        row = published_calls.filter((pl.col("profile") == profile) & (pl.col("workload") == workload))
        return row[column][0] / row["n"][0]

    # at the published N when this run has it (the history store's share grows with N), else the largest
    rep, n_rs = _value_at(measured, "replset-1", "push", "cursor_modify_per_op", 10_000)
    if rep is None:
        rep, n_rs = _value_at(measured, "replset-1", "push", "cursor_modify_per_op")
    pub_modify = pub_calls_per_op("replset-1", "push", "cursor_modify_calls")
    add("on a replica set $push is stored as WiredTiger modify calls (deltas)",
        f"cursor modify calls per $push (replset-1, published N=10000, reproduced N={n_rs})", "calls/op",
        pub_modify, rep, tol["replset_modify_per_push"].holds(pub_modify))
    rep, n_sa = _value_at(measured, "standalone", "push", "cursor_modify_per_op")
    add("on a standalone $push rewrites the whole document (no modify calls)",
        f"cursor modify calls per $push (standalone, published N=10000, reproduced N={n_sa})", "calls/op",
        pub_calls_per_op("standalone", "push", "cursor_modify_calls"), rep,
        tol["standalone_modify_per_push"].holds())

    # every N the article printed (10,000, 20,000, 40,000): compared at that N only (bytes per $push grow
    # with N)
    quadratic = published.filter((pl.col("experiment") == "quadratic") & (pl.col("profile") == "standalone")
                                 & (pl.col("workload") == "push")).sort("n")
    for point in quadratic.iter_rows(named=True):
        n_pub, pub = int(point["n"]), float(point["bytes_per_op"])
        rep, _ = _value_at(measured, "standalone", "push", "log_bytes_per_op", n_pub)
        add(
            f"standalone $push journal bytes per update at N={n_pub} (~{pub / 1000:.0f} KB, the whole array "
            "each time)",
            f"log bytes per $push (standalone, N={n_pub})",
            "bytes/op",
            pub,
            rep,
            tol["bytes_per_push"].holds(pub),
            at_other_n("standalone", "push", n_pub),
        )

    # WiredTiger insert calls per write (the article's counter readings, N=10,000): every table's
    for calls in published_calls.sort("profile", "workload").iter_rows(named=True):
        profile, workload, n_pub = calls["profile"], calls["workload"], int(calls["n"])
        pub = calls["cursor_insert_calls"] / n_pub
        rep, _ = _value_at(measured, profile, workload, "cursor_insert_per_op", n_pub)
        add(f"{profile} {workload}: WiredTiger insert calls per write (every table mongod writes)",
            f"cursor insert calls per write ({profile}, {workload}, N={n_pub})", "calls/op", pub, rep,
            tol["insert_calls_per_write"].holds(pub), at_other_n(profile, workload, n_pub))

    # the article's wall times (its program's output): a row that says why they are not judged
    walls = published.filter(pl.col("wall_s").is_not_null())
    if walls.height:
        rows.append(
            Finding(
                f"the article's wall times per run ({walls.height} published)",
                "wall_s of the article's program runs",
                "s",
                None,
                None,
                Verdict.NOT_COMPARABLE,
                STAND_IN if stand_in else "times of the article's machine; the journal's bytes are judged",
                NOT_JUDGED,
                kind,
            )
        )
    return rows


def fits_by_pair(raw: pl.DataFrame) -> dict[tuple[str, str], PowerLawFit | None]:
    out: dict[tuple[str, str], PowerLawFit | None] = {}
    for (profile, workload), group in raw.group_by(["profile", "workload"], maintain_order=True):
        try:
            out[(profile, workload)] = fit_one(group)
        except FitError:
            out[(profile, workload)] = None
    return out


def element_table(raw: pl.DataFrame, element_raw_paths: Sequence[str | Path],
                  element_provenance_paths: Sequence[str | Path]) -> pl.DataFrame:
    """The rows of a user's elements measured on the server, beside what each is compared to (its
    declaration, from the job's provenance: what the server ran)."""

    elements = with_provenance_kind(read_raw(element_raw_paths), element_provenance_paths)
    pairs = {}
    for path in element_provenance_paths:
        extra = read_provenance(path).get("extra") or {}
        declared = extra.get("element") or {}
        if extra.get("workload") and declared.get("compare_to"):
            pairs[extra["workload"]] = declared["compare_to"]
    return verdict_table(server_element_rows(pl.concat([raw, elements], how="vertical"), pairs), rounded=True)


def build_tables(
    raw_paths: Sequence[str | Path],
    provenance_paths: Sequence[str | Path],
    outputs: dict[str, str | Path],
    fallback_raw_paths: Sequence[str | Path] = (),
    fallback_provenance_paths: Sequence[str | Path] = (),
    model_path: str | Path | None = None,
    published_log_bytes: str | Path | None = None,
    published_cursor_calls: str | Path | None = None,
    tolerances_path: str | Path | None = None,
    element_raw_paths: Sequence[str | Path] = (),
    element_provenance_paths: Sequence[str | Path] = (),
) -> None:
    """Write runs, fit, counts, published_vs_reproduced (and fallback when given) CSVs atomically. The runs
    of a user's elements (element_raw_paths: arraygrowth.elements listed in arraygrowth.workloads) add their
    rows of kind user variant to published_vs_reproduced, beside what each is compared to."""

    raw = with_provenance_kind(read_raw(raw_paths), provenance_paths)
    published = read_published_log_bytes(*([published_log_bytes] if published_log_bytes else []))
    calls = read_published_cursor_calls(*([published_cursor_calls] if published_cursor_calls else []))
    write_csv(runs_table(raw), outputs["runs"])
    write_csv(fit_table(raw, published), outputs["fit"])
    write_csv(counts_table(raw, calls), outputs["counts"])
    tolerances = read_tolerances(tolerances_path) if tolerances_path else None
    verdicts = published_vs_reproduced(raw, fits_by_pair(raw), published, calls, tolerances)
    if element_raw_paths:
        verdicts = pl.concat([verdicts, element_table(raw, element_raw_paths, element_provenance_paths)])
    write_csv(verdicts, outputs["published_vs_reproduced"])
    if "fallback" in outputs:
        if model_path is None or not fallback_raw_paths:
            raise ValueError(
                "the fallback table needs the fallback raw files and model/fallback_conditions.csv"
            )
        fallback_raw = with_provenance_kind(read_raw(fallback_raw_paths), fallback_provenance_paths)
        write_csv(fallback_table(fallback_raw, read_csv(model_path)), outputs["fallback"])
