"""Presenting the report: a study's collected files as plain values for the page's template.

The page's HTML is costlab/report/templates/report.html.j2; these functions turn sections
(costlab.report.collect) into values for it (text the template escapes; Markup only for HTML
built here on purpose). Nothing here reads a study's results folder.
"""
from __future__ import annotations

import base64
import json
import os
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

import altair as alt
import polars as pl
import vl_convert as vlc
from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup

from costlab.config import config_hash, study_config_hash
from costlab.engine.provenance import LABEL
from costlab.io import atomic_path
from costlab.report.charts import STAND_IN_LABEL
from costlab.report.collect import (
    ENGINE_PUBLISHED_TABLE,
    MAX_TABLE_ROWS,
    MODEL_PUBLISHED_TABLE,
    PUBLISHED_TABLE,
    RUN_COMMAND,
    FigureItem,
    StudySection,
    TableItem,
)
from costlab.report.findings import published_rows, verdict_counts
from costlab.report.headlines import beyond_articles, did_not_hold, judge_claims
from costlab.report.settings import concerns, config_differences, flatten
from costlab.report.studies import STUDIES
from costlab.report.yours import figure_spec, study_view
from costlab.server.provenance import is_stand_in, server_label
from costlab.summary import vs_mongod_text
from costlab.verdicts import OTHER, Kind, Verdict, verdict_class, verdict_text

TEMPLATES_DIR = Path(__file__).with_name("templates")


@dataclass
class Cell:
    text: str
    css_class: str | None = None
    missing: bool = False         # shown greyed (a null or NaN)


@dataclass
class TableView:
    columns: list[str]
    rows: list[list[Cell]]
    total_rows: int
    css_class: str = "data"


def format_cell(value: Any) -> Cell:
    """One value as the page shows it: thousands separators, 4 significant digits, — for null."""
    if value is None:
        return Cell("—", missing=True)
    if isinstance(value, bool):
        return Cell(str(value).lower())
    if isinstance(value, int):
        return Cell(f"{value:,}")
    if isinstance(value, float):
        if value != value:
            return Cell("NaN", missing=True)
        if value.is_integer() and abs(value) >= 1e4:
            return Cell(f"{value:,.0f}")
        return Cell(f"{value:.4g}")
    return Cell(str(value))


def table_view(frame: pl.DataFrame, css_class: str = "data") -> TableView:
    shown = frame.head(MAX_TABLE_ROWS)
    verdict_at = shown.columns.index("verdict") if "verdict" in shown.columns else None
    rows = []
    for row in shown.iter_rows():  # at most MAX_TABLE_ROWS rows
        cells = []
        for i, value in enumerate(row):
            cell = format_cell(value)
            if i == verdict_at and value is not None:
                cell.css_class = f"verdict {verdict_css(str(value))}"
            elif isinstance(value, (int, float)) and not isinstance(value, bool):
                cell.css_class = "num"
            cells.append(cell)
        rows.append(cells)
    return TableView(list(shown.columns), rows, frame.height, css_class)


VERDICT_CSS = {Verdict.REPRODUCED.value: "v-yes", Verdict.NOT_REPRODUCED.value: "v-no",
               Verdict.INCONCLUSIVE.value: "v-maybe", Verdict.NOT_COMPARABLE.value: "v-na",
               Verdict.NOT_RUN.value: "v-na", OTHER: "v-other"}


def verdict_css(verdict: str) -> str:
    """The cell's colour class, from the verdict member the cell holds (one rule for page and counts); a
    member with no colour of its own yet is drawn as "other"."""
    return VERDICT_CSS.get(verdict_class(verdict), VERDICT_CSS[OTHER])


def _distinct(values: Iterable[Any]) -> str:
    seen = [v for v in dict.fromkeys(values) if v not in (None, "")]
    return ", ".join(map(str, seen)) if seen else "—"


def _gib(value: Any) -> str | None:
    return f"{value / 2**30:.1f} GiB" if isinstance(value, (int, float)) else None


def _when(iso: str) -> str:
    """An ISO timestamp to the second, in UTC when it carries a zone."""
    try:
        moment = datetime.fromisoformat(iso)
    except ValueError:
        return iso
    if moment.tzinfo is not None:
        moment = moment.astimezone(timezone.utc)
        return moment.strftime("%Y-%m-%d %H:%M:%S UTC")
    return moment.strftime("%Y-%m-%d %H:%M:%S")


def _server_version(record: dict, server: dict) -> str | None:
    # The stand-in answers buildInfo with a MongoDB version number; say what it really is.
    if is_stand_in(record):
        answered = f", answers as MongoDB {server['version']}" if server.get("version") else ""
        return f"SecantusDB stand-in (a test server, not MongoDB{answered})"
    return server_label(server.get("version"), (record.get("applied_options") or {}).get("mongod_source"))


def _git_version(record: dict, server: dict) -> str | None:
    value = server.get("git_version")
    if is_stand_in(record) or (isinstance(value, str) and value and set(value) == {"0"}):
        return "none (not a MongoDB build)"
    return value


def provenance_rows(records: list[dict]) -> list[tuple[str, str]]:
    """The header's key facts, each the distinct values over the study's measuring jobs."""
    servers = [r.get("server") or {} for r in records]
    hosts = [r.get("host") or {} for r in records]
    starts = sorted(r["started_at"] for r in records if r.get("started_at"))
    ends = sorted(r["ended_at"] for r in records if r.get("ended_at"))
    host_text = _distinct(
        f"{h.get('cpu_model', '?')}, {h.get('cpu_cores_logical', '?')} logical cores, "
        f"{_gib(h.get('memory_bytes')) or '? memory'}, {h.get('os', '?')}"
        + (f" (host {h['hostname']})" if h.get("hostname") else "") for h in hosts)
    return [
        ("server kind", _distinct(r.get("server_kind") for r in records)),
        ("server version", _distinct(_server_version(r, s) for r, s in zip(records, servers))),
        ("git version", _distinct(_git_version(r, s) for r, s in zip(records, servers))),
        ("storage engine", _distinct(s.get("storage_engine") for s in servers)),
        ("backend", _distinct(r.get("backend") for r in records)),
        ("profiles", _distinct(r.get("profile") for r in records)),
        ("host", host_text),
        ("measured", f"{_when(starts[0])} … {_when(ends[-1])}" if starts and ends else "—"),
        ("costlab", _distinct(f"{r.get('costlab_version')} ({r.get('costlab_commit') or 'no git commit'})"
                              for r in records)),
    ]


def jobs_view(records: list[dict]) -> TableView:
    rows = []
    for r in records:
        applied = r.get("applied_options")
        applied_text = (
            ", ".join(f"{k}={v}" for k, v in applied.items()) if isinstance(applied, dict) else applied
        )
        rows.append({"job": r.get("job") or Path(r["_path"]).stem, "server_kind": r.get("server_kind"),
                     "profile": r.get("profile"), "backend": r.get("backend"),
                     "applied options": None if applied_text is None else str(applied_text),
                     "started_at": r.get("started_at"), "ended_at": r.get("ended_at"),
                     "config_hash": r.get("config_hash")})
    return table_view(pl.DataFrame(rows, schema={k: pl.Utf8 for k in rows[0]}), "data jobs")


def _value_text(value: Any) -> str:
    return "null" if value is None else json.dumps(value) if isinstance(value, (list, dict)) else str(value)


# Columns of the engine lab's tables that say at what scale and with what it ran (read from the results).
ENGINE_SCALE_COLUMNS = {
    "n": "N",
    "size_kb": "document sizes (KB)",
    "cache_mb": "WiredTiger cache (MB)",
    "events": "events",
    "documents": "documents",
    "queries": "queries per point",
    "block_compressor": "block compressor used",
    "journal_compressor": "journal compressor used",
}


def engine_scale_rows(tables: list[TableItem]) -> list[tuple[str, str]]:
    """What the engine lab ran with, from its own tables: every distinct N, size, cache, compressor."""
    rows: dict[str, list[Any]] = {}
    for table in tables:
        for column, label in ENGINE_SCALE_COLUMNS.items():
            if column in table.frame.columns:
                values = table.frame.get_column(column).drop_nulls().unique(maintain_order=True).to_list()
                rows.setdefault(label, [])
                rows[label] += [v for v in values if v not in rows[label]]
    def text(values: list[Any]) -> str:
        ordered = sorted(values) if all(isinstance(v, (int, float)) for v in values) else values
        return ", ".join(format_cell(v).text for v in ordered)
    return [(f"{label} (from the results)", text(values)) for label, values in rows.items() if values]


def config_view(study: str, config: dict, defaults: dict, records: list[dict]) -> dict[str, Any]:
    """The study's scale (keys, values, changed?), the config hashes and the keys that differ from the
    defaults."""
    # Per study: its own keys and the server's (records from before study hashes: the whole config).
    current_hash = study_config_hash(config, study)
    whole = config_hash(config)
    hashes = sorted({r["study_config_hash"] if r.get("study_config_hash") else
                     (current_hash if r.get("config_hash") == whole else r.get("config_hash"))
                     for r in records if r.get("study_config_hash") or r.get("config_hash")})
    default_scale = flatten(defaults.get(study) or {}) | flatten(
        {"engine": {study: ((defaults.get("engine") or {}).get(study) or {})}})
    mine = flatten(config.get(study) or {}) | flatten(
        {"engine": {study: ((config.get("engine") or {}).get(study) or {})}}
    )
    scale = [(k, _value_text(v), default_scale.get(k, v) != v) for k, v in mine.items()]
    diffs = [(k, _value_text(d), _value_text(v)) for k, d, v in config_differences(config, defaults)
             if concerns(k, study)]
    return {
        "current_hash": current_hash,
        "measured_hashes": hashes if hashes and hashes != [current_hash] else [],
        "scale": scale,
        "differences": diffs,
    }


def figure_view(study: str, item: FigureItem, out_dir: Path, stand_in_shown: bool = False) -> dict[str, Any]:
    spec_json = None
    if item.spec is not None:
        # Nothing in the spec can close the script tag it sits in.
        spec_json = Markup(json.dumps(item.spec).replace("<", "\\u003c"))
    return {
        "study": study,
        "name": item.name,
        "stand_in": item.stand_in and not stand_in_shown,
        "element_id": f"fig-{study}-{re.sub(r'[^A-Za-z0-9_-]', '-', item.name)}",
        "spec_json": spec_json,
        "svg": Markup(item.svg) if item.svg is not None else None,
        "png_data": base64.b64encode(item.png.read_bytes()).decode()
        if item.png is not None and spec_json is None and item.svg is None
        else None,
        "links": [
            (suffix.lstrip("."), os.path.relpath(p, out_dir)) for suffix, p in sorted(item.files.items())
        ],
        "caption": Markup(item.caption) if item.caption else None,
    }


# Columns whose values summarise a long table (e.g. a correctness check's outcome per sample).
VERDICT_TABLES = (PUBLISHED_TABLE, ENGINE_PUBLISHED_TABLE, MODEL_PUBLISHED_TABLE)
SUMMARY_COLUMNS = ("verdict", "outcome", "status", "result", "match", "met", "correct", "ok", "passed")
COLLAPSE_ROWS = 12


def table_summary(frame: pl.DataFrame) -> str:
    """'N rows: 20 true, 4 false' by the first summarising column; 'N rows' when there is none."""
    rows = f"{frame.height:,} rows"
    column = next((c for c in SUMMARY_COLUMNS if c in frame.columns), None)
    if column is None:
        return rows
    counts = frame.get_column(column).cast(pl.Utf8).fill_null("null").value_counts(sort=True)
    parts = [f"{n:,} {value}" for value, n in counts.iter_rows()]
    return f"{rows}; {column}: " + ", ".join(parts)


def table_block_view(item: TableItem, out_dir: Path, heading: bool = True, stand_in_shown: bool = False) \
        -> dict[str, Any]:
    """stand_in_shown: the study's banner already says it, so the table carries no label of its own."""
    # A verdict table decides: always shown whole. Only long raw tables fold behind their summary.
    verdicts = item.name in VERDICT_TABLES
    collapsed = heading and item.frame.height > COLLAPSE_ROWS and not verdicts
    # each repeat's or query's value (`samples`, `*_samples`): in the CSV for compare.with; too long here
    frame = item.frame.drop([c for c in item.frame.columns
                             if c in ("samples", "band_low", "band_high") or c.endswith("_samples")])
    if verdicts and "verdict" in frame.columns and frame.columns[0] == "finding":
        # the verdict (and its reason) beside the finding it judges, inside the window at any width
        first = [c for c in ("finding", "verdict", "reason") if c in frame.columns]
        frame = frame.select(*first, *[c for c in frame.columns if c not in first])
    return {"name": item.name, "file_name": item.path.name, "href": os.path.relpath(item.path, out_dir),
            "heading": heading, "stand_in": item.stand_in and not stand_in_shown,
            "caption": Markup(item.caption) if item.caption else None, "table": table_view(frame),
            "collapsed": collapsed, "summary": table_summary(item.frame) if collapsed else None}


def not_run_view(section: StudySection, config: dict) -> dict[str, Any]:
    study = section.info.name
    if not section.enabled:
        enabled = [s for s in STUDIES if s in config.get("studies", []) or s == study]
        command = (".venv/bin/snakemake --profile profiles/default results/report.html "
                   f"--config 'studies={json.dumps(enabled)}'")
        why = Markup("{} is not in <code>studies</code> of this run's config.").format(study)
    elif not section.has_rules:
        command = RUN_COMMAND
        why = f"no workflow rules registered results for {study} in this checkout."
    elif section.not_run is not None:
        return {"mongod": mongod_not_run_view(section.not_run)}
    else:
        command = RUN_COMMAND
        why = f"{study} has no results yet."
    return {"why": why, "command": command, "mongod": None}


def mongod_not_run_view(record: dict) -> dict[str, str]:
    """The study's mongod part when this run had no server (results/<study>/not_run.json)."""
    return {
        "part": str(record.get("part", "mongod")),
        "reason": str(record.get("reason", "no MongoDB server")),
        "fix": str(record.get("fix", "")),
    }


def section_status(section: StudySection) -> str:
    return section.status


def engine_view(section: StudySection, out_dir: Path) -> dict[str, Any] | None:
    """The engine lab's block: its label, WiredTiger build and compressors, verdicts and tables."""
    if not section.engine:
        return None

    records = section.engine_provenance
    compressors = [r.get("compressors") or {} for r in records]

    def used(kind: str) -> str:
        return _distinct(
            f"{c.get(kind)} (wanted {c.get(kind + '_wanted')})"
            if c.get(kind) != c.get(kind + "_wanted")
            else c.get(kind)
            for c in compressors
        )

    rows = (
        [
            ("server kind", _distinct(r.get("server_kind") for r in records)),
            ("WiredTiger", _distinct((r.get("server") or {}).get("wiredtiger_version") for r in records)),
            (
                "built-in compressors",
                _distinct(
                    ", ".join((r.get("server") or {}).get("compressors_built_in", [])) for r in records
                ),
            ),
            ("journal compressor", used("journal_compressor")),
            ("block compressor", used("block_compressor")),
        ]
        if records
        else []
    )
    tables = [table_block_view(t, out_dir) for t in section.engine]
    rows += engine_scale_rows([t for t in section.engine if t.name != ENGINE_PUBLISHED_TABLE])
    return {"label": LABEL, "provenance_rows": rows,
            "published": tables[0] if section.engine[0].name == ENGINE_PUBLISHED_TABLE else None,
            "tables": [t for t in tables if t["name"] != ENGINE_PUBLISHED_TABLE]}


def vs_mongod_view(section: StudySection, out_dir: Path) -> dict[str, Any] | None:
    """The engine lab against mongod on the same work: the line (share within tolerance, each quantity
    outside it) and the table."""
    if section.vs_mongod is None:
        return None

    return {"line": vs_mongod_text(section.vs_mongod.path),
            "table": table_block_view(section.vs_mongod, out_dir)}


def section_view(section: StudySection, config: dict, defaults: dict, out_dir: Path) -> dict[str, Any]:
    info = section.info
    study = info.name
    view: dict[str, Any] = {
        "study": study,
        "title": info.title,
        "source": info.source,
        "measured": info.measured,
        "status": section_status(section),
        "stand_in": section.stand_in,
    }
    if not section.has_results:
        return view | {"not_run": not_run_view(section, config)}
    shown = section.stand_in  # one banner at the top of the study says it for every figure and table
    return view | {
        "not_run": None,
        "engine": engine_view(section, out_dir),
        "vs_mongod": vs_mongod_view(section, out_dir),
        "mongod_not_run": mongod_not_run_view(section.not_run) if section.not_run is not None else None,
        "compare_notes": section.compare_notes,
        "problems": section.problems,
        "missing": [str(p) for p in section.missing],
        "provenance_rows": provenance_rows(section.provenance) if section.provenance else [],
        "config": config_view(study, config, defaults, section.provenance),
        "jobs": jobs_view(section.provenance) if section.provenance else None,
        "jobs_count": len(section.provenance),
        "published": (table_block_view(section.published, out_dir, heading=False, stand_in_shown=shown)
                      if section.published else None),
        "figures": [figure_view(study, f, out_dir, stand_in_shown=shown) for f in section.figures],
        "tables": [table_block_view(t, out_dir, stand_in_shown=shown) for t in section.tables],
        "model_tables": [table_block_view(t, out_dir, stand_in_shown=shown) for t in section.model_tables],
    }


def _number_text(value: float | None, unit: str | None) -> str:
    if value is None or value != value:
        return "—"
    text = format_cell(value).text
    return f"{text} {unit}" if unit and unit not in ("1", "ratio") else text


JUDGED = (Verdict.REPRODUCED.value, Verdict.NOT_REPRODUCED.value)   # a value held to its rule


def _judged_by_rule_alone(row: dict) -> bool:
    """A judged row with no single published number: its rule is what it was compared with."""
    return row["published"] is None and bool(row["tolerance"]) and verdict_class(row["verdict"]) in JUDGED


def _published_text(row: dict) -> str:
    """The published value; for a row judged by a rule with no single published number, what the rule
    compares with (its bound), so both sides show."""
    if _judged_by_rule_alone(row):
        return f"no single published number; the rule: {row['tolerance']}"
    return _number_text(row["published"], row["unit"])


MISSING_TOLERANCE = "missing from its verdict table"


def _no_tolerance(verdict: str | None) -> str:
    """A judged row must carry its tolerance (every study's tables do): a table without one says so."""
    return MISSING_TOLERANCE if verdict_class(verdict) in JUDGED else "—"


def _sort_key(value: float | None) -> str:
    """A number the page's sort reads (data-sort); empty for none, sorted last."""
    return "" if value is None or value != value else repr(float(value))


def finding_row_view(row: dict) -> dict[str, Any]:
    """One finding as the page's tables show it (the audit table, what did not hold, beyond the articles)."""
    return {
        "study": row["study"],
        "anchor": f"study-{row['study']}",
        "finding": row["finding"] or "—",
        "metric": row["metric"],
        "published": _published_text(row),
        "published_is_rule": _judged_by_rule_alone(row),
        "this_run": _number_text(row["this_run"], row["unit"]),
        # where the value came from: its interval with the repeats or queries, or "one run: no interval"
        "interval": row.get("interval"),
        # a decided verdict's risk: the chance it is wrong if the truth sat on the band's edge
        "risk": (f"risk {row['risk']} if the truth sat on the band's edge"
                 if (row.get("risk") or "")[:1].isdigit() else row.get("risk")),
        "evidence": row["evidence"] or "—",
        "ratio": format_cell(row["ratio"]).text if row["ratio"] is not None else "—",
        "tolerance": row["tolerance"] or _no_tolerance(row["verdict"]),
        "verdict": verdict_text(row["verdict"], row.get("reason")),
        "verdict_class": verdict_class(row["verdict"]),
        "reason": row.get("reason"),
        "kind": row.get("kind") or Kind.PUBLISHED.value,
        "verdict_css": verdict_css(row["verdict"] or ""),
        "note": row["note"],
        "sort": {
            "published": _sort_key(row["published"]),
            "this_run": _sort_key(row["this_run"]),
            "ratio": _sort_key(row["ratio"]),
        },
    }


# The audit table's filters: one select per column, its options the values this run has.
FILTER_COLUMNS = (("study", "study"), ("verdict", "verdict_class"), ("evidence", "evidence"))


def audit_filters(rows: list[dict[str, Any]]) -> list[tuple[str, str, list[str]]]:
    """(label, the row attribute filtered on, its distinct values in the table's order) per filter."""
    return [(label, key, list(dict.fromkeys(str(r[key]) for r in rows))) for label, key in FILTER_COLUMNS]


CLAIM_VERDICT_CSS = {"not in this run": "v-na"}


def headlines_view(findings: pl.DataFrame) -> dict[str, Any]:
    """The articles' headline claims with their verdicts, per study, and every published finding that did
    not hold."""

    studies: dict[str, dict[str, Any]] = {}
    shown = set(findings["study"].to_list())
    for judged in judge_claims(findings):
        study = judged.claim.study
        if study not in shown:
            continue
        info = STUDIES[study]
        group = studies.setdefault(
            study, {"study": study, "anchor": f"study-{study}", "source": info.source, "claims": []}
        )
        counts = ", ".join(f"{n} {c}" for c, n in judged.counts.items())
        group["claims"].append(
            {
                "claim": judged.claim.claim,
                "verdict": judged.verdict,
                "verdict_css": CLAIM_VERDICT_CSS.get(judged.verdict)
                or VERDICT_CSS.get(judged.verdict, "v-other"),
                "counts": counts,
                "evidence": ", ".join(judged.evidence) or "—",
                "reason": judged.reason,
            }
        )
    failing = did_not_hold(findings)
    return {
        "studies": list(studies.values()),
        "did_not_hold": [finding_row_view(r) for r in failing.iter_rows(named=True)],
    }


def beyond_view(findings: pl.DataFrame) -> dict[str, list[dict[str, Any]]]:
    """costlab's own variants ("costlab") and a user's ("user": appversions.variants, arraygrowth.elements,
    docsize.documents; docs/variants.md): each in a section of its own, never counted as the articles'
    findings."""

    block: dict[str, list[dict[str, Any]]] = {"costlab": [], "user": []}
    for row in beyond_articles(findings).iter_rows(named=True):
        part = "user" if row.get("kind") == Kind.USER_VARIANT.value else "costlab"
        block[part].append(finding_row_view(row) | {"kind": row.get("kind")})
    return block


def findings_view(findings: pl.DataFrame) -> dict[str, Any]:
    """The page's full audit table: one row per finding with its evidence, tolerance and verdict, then the
    counts. Your variants' rows are not in it: "Your schema" opens the page with them, "Your variants"
    lists every row."""
    audited = findings.filter(pl.col("kind").fill_null(Kind.PUBLISHED.value) != Kind.USER_VARIANT.value)
    rows = [finding_row_view(row) for row in audited.iter_rows(named=True)]
    counts = verdict_counts(findings)
    published = published_rows(findings)
    by_evidence = []
    for evidence in dict.fromkeys(published["evidence"].to_list()):
        part = verdict_counts(published.filter(pl.col("evidence") == evidence))
        by_evidence.append((evidence, ", ".join(f"{n} {c}" for c, n in part.items())))
    variants = verdict_counts(findings, (Kind.COSTLAB_VARIANT.value,))
    yours = verdict_counts(findings, (Kind.USER_VARIANT.value,))
    return {"rows": rows, "total": published.height,
            "counts": [(c, n, verdict_css(c)) for c, n in counts.items()],
            "variants_total": sum(variants.values()),
            "variant_counts": [(c, n, verdict_css(c)) for c, n in variants.items()],
            "user_variants_total": sum(yours.values()),
            "by_evidence": by_evidence, "filters": audit_filters(rows)}


def what_ran(sections: list[StudySection]) -> str:
    """'engine lab and models; no MongoDB server' or 'mongod 8.0.4, the WiredTiger engine lab and models'."""
    shown = [s for s in sections if s.enabled and s.has_results]
    records = [r for s in shown for r in s.provenance]
    versions = list(
        dict.fromkeys(
            server_label((r.get("server") or {}).get("version"),
                         (r.get("applied_options") or {}).get("mongod_source"))
            for r in records
            if not is_stand_in(r) and (r.get("server") or {}).get("version")
        )
    )
    parts = []
    if versions:
        parts.append(" / ".join(versions))
    if any(is_stand_in(r) for r in records):
        parts.append("the SecantusDB stand-in (a test server, not MongoDB)")
    if any(s.engine for s in shown):
        parts.append("the WiredTiger engine lab (mongod's storage calls, no server)")
    if any(s.model_tables for s in shown):
        parts.append("server-free models")
    text = ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1] if parts else "nothing"
    if not records:
        text += "; no MongoDB server"
    return text


@lru_cache(maxsize=1)
def template_environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(TEMPLATES_DIR),
        autoescape=True,
        undefined=StrictUndefined,
        keep_trailing_newline=True,
    )
    env.globals.update(stand_in_text=STAND_IN_LABEL, published_table=PUBLISHED_TABLE)
    return env


CSS = """
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0 auto;max-width:1200px;
 padding:0 24px 48px;color:#222}
h1{margin:24px 0 4px}h2{border-top:3px solid #4c78a8;padding-top:12px;margin-top:40px}
h3{margin:20px 0 6px}h4{margin:14px 0 4px}
code,pre{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:13px}
pre{background:#f4f4f4;padding:8px 12px;overflow-x:auto}
.banner{background:#b00020;color:#fff;padding:12px 16px;font-weight:600;margin:12px 0;border-radius:4px}
.banner.small{font-weight:500}
.figbanner{background:#fde7ea;color:#b00020;border-left:4px solid #b00020;padding:4px 10px;font-weight:600;
 margin-bottom:6px}
.status{font-size:13px;padding:2px 8px;border-radius:10px;vertical-align:middle;background:#ddd}
.s-stand-in{background:#fde7ea;color:#b00020}.s-measured{background:#e3f1df;color:#2e6b22}
.s-not-run{background:#eee;color:#666}.s-server-free{background:#e8eef7;color:#2c4f7c}.s-engine-lab{background:#e4ecf7;color:#1f4e8c}
.engine-lab{border-left:4px solid #1f4e8c;background:#f5f8fc;padding:4px 12px;margin:12px 0}
.engine-label{font-weight:600;color:#1f4e8c}
.notrun{background:#f7f7f7;border:1px dashed #999;padding:8px 16px}
.compare-notes{background:#eef4fb;border-left:4px solid #4c78a8;padding:4px 12px;margin:8px 0}
.problems{background:#fff6e0;border-left:4px solid #f58518;padding:4px 12px;margin:8px 0}
.warn{color:#9a5b00}.note{color:#555;font-size:13px}.source{color:#555;margin-top:-6px}
.header-grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,360px),1fr));gap:24px}
.header-grid>div{min-width:0}
dl{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:2px 12px;margin:4px 0}dt{font-weight:600;color:#444}
dd{margin:0;min-width:0;overflow-wrap:anywhere}code{overflow-wrap:anywhere}
table.data{border-collapse:collapse;font-size:13px;margin:4px 0}
table.data th,table.data td{border:1px solid #ccc;padding:3px 8px;text-align:left}
table.data th{background:#f0f0f0}td.num{text-align:right;font-variant-numeric:tabular-nums}
.scroll{overflow-x:auto;max-width:100%}
table.data th:first-child,table.data td:first-child{position:sticky;left:0;z-index:1;background:#fff;
 box-shadow:1px 0 0 #ccc}
table.data th:first-child{background:#f0f0f0}
table.findings td{vertical-align:top;overflow-wrap:break-word}table.findings td.finding{min-width:14em}
table.findings td.num,table.findings td:first-child{white-space:nowrap}
table.findings td.verdict{min-width:8em}table.findings td.rule{min-width:9em;max-width:16em}
table.findings .metric{display:block;color:#555;font-size:12px}
.counts{display:flex;flex-wrap:wrap;gap:8px;margin:8px 0;padding:0;list-style:none}
.counts li{padding:4px 10px;border-radius:12px;font-weight:600}
.what-ran{font-size:16px;margin:6px 0}
.table-box,section.study,details{min-width:0;max-width:100%}
details.rows>summary{cursor:pointer;color:#333}
.verdict.v-yes,.counts .v-yes{background:#e3f1df}.verdict.v-no,.counts .v-no{background:#fde7ea;color:#8a0016}
.verdict.v-na,.counts .v-na{background:#eee;color:#555}.verdict.v-maybe,.counts .v-maybe{background:#fff1cc;color:#6b4a00}.counts .v-other{background:#fff6e0}
figure{margin:16px 0;padding:12px;border:1px solid #e3e3e3;border-radius:4px;overflow-x:auto}
.vega,.svg{text-align:center}.vega.vega-embed{display:block}.svg svg,figure img{max-width:100%;height:auto}
figcaption{margin-top:8px}figcaption p{margin:4px 0}.files{font-weight:normal;font-size:13px}
.na{color:#999}.changed{color:#9a5b00;font-size:12px}
nav ul{columns:2}
.claims h3{margin:14px 0 4px;font-size:15px}.claims h3 .source{font-weight:normal;color:#555;font-size:13px}
table.claims-table{border-collapse:collapse;font-size:14px;width:100%}
table.claims-table td{border-top:1px solid #ddd;padding:4px 8px;vertical-align:top}
table.claims-table td.verdict{white-space:nowrap;width:9em;font-weight:600}
table.claims-table td.evidence{color:#444;font-size:13px;width:14em}
.claims .reason{display:block;color:#8a0016;font-size:13px}.claims .counts-text{display:block;color:#555;font-size:12px}
.claims .reason.na{color:#555}
#your-schema h2{margin-top:16px}#your-schema h3{margin:12px 0 4px}#your-schema h3 .source{font-weight:normal;font-size:13px}
table.yours td{vertical-align:top;white-space:nowrap}table.yours td.cost,table.yours td.interval{white-space:normal}table.yours td.cost{min-width:17em}table.yours td.interval{min-width:16em}
table.yours .vi{color:#666;font-size:12px}table.yours td.interval{color:#444;font-size:12px}table.yours td.ratio{font-weight:600}
#audit-controls{display:flex;flex-wrap:wrap;gap:8px 16px;align-items:center;margin:8px 0;font-size:14px}
#audit-controls select{font-size:14px;max-width:18em}
table.findings th.sortable{cursor:pointer;user-select:none}
table.findings th[aria-sort=ascending]::after{content:" ▲"}table.findings th[aria-sort=descending]::after{content:" ▼"}
"""  # noqa: E501 (code in a string, kept as it runs)

SCRIPT = """
document.querySelectorAll('script[type="application/json"][data-figure]').forEach(function (el) {
  var target = document.getElementById(el.getAttribute('data-figure'));
  vegaEmbed(target, JSON.parse(el.textContent), {actions: false, renderer: 'svg'}).then(function () {
    // Fill the frame, up to 1.5 times the drawn size, but never below the drawn size: text keeps its
    // size at every page width, and a figure wider than a narrow window scrolls inside its frame.
    var svg = target.querySelector('svg');
    if (svg && svg.getAttribute('viewBox')) {
      var natural = parseFloat(svg.getAttribute('width'));
      var frame = target.clientWidth;
      svg.style.width = Math.round(Math.min(1.5 * natural, Math.max(natural, frame))) + 'px';
      svg.style.maxWidth = 'none';
      svg.style.height = 'auto';
    }
  }).catch(function (err) {
    target.textContent = 'This figure could not be drawn: ' + err;
  });
});
"""


# The audit table's filters and sort, offline: rows carry data-filter-study / -verdict / -evidence, numeric
# cells data-sort. Without JavaScript the table shows every row and the controls stay hidden.
AUDIT_SCRIPT = """
(function () {
  var table = document.getElementById('audit-table'), controls = document.getElementById('audit-controls');
  if (!table || !controls) return;
  var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
  var selects = controls.querySelectorAll('select'), shown = document.getElementById('audit-shown');
  function apply() {
    var n = 0;
    rows.forEach(function (row) {
      var keep = Array.prototype.every.call(selects, function (s) {
        return !s.value || row.getAttribute('data-filter-' + s.name) === s.value;
      });
      row.hidden = !keep;
      if (keep) n += 1;
    });
    shown.textContent = n + ' of ' + rows.length + ' rows shown';
  }
  Array.prototype.forEach.call(selects, function (s) { s.addEventListener('change', apply); });
  Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, column) {
    th.classList.add('sortable');
    th.setAttribute('title', 'sort by ' + th.textContent);
    th.addEventListener('click', function () {
      var up = th.getAttribute('aria-sort') !== 'ascending';
      Array.prototype.forEach.call(th.parentNode.cells, function (c) { c.removeAttribute('aria-sort'); });
      th.setAttribute('aria-sort', up ? 'ascending' : 'descending');
      function key(row) {
        var cell = row.cells[column], n = cell.getAttribute('data-sort');
        return n === null ? cell.textContent.trim().toLowerCase() : (n === '' ? null : parseFloat(n));
      }
      var sorted = rows.slice().sort(function (a, b) {
        var x = key(a), y = key(b);
        if (x === y) return 0;
        if (x === null) return 1;
        if (y === null) return -1;
        return (x < y ? -1 : 1) * (up ? 1 : -1);
      });
      sorted.forEach(function (row) { body.appendChild(row); });
    });
  });
  controls.hidden = false;
  apply();
})();
"""


def bundle_cache_dir() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "costlab"


@lru_cache(maxsize=1)
def vega_bundle() -> str:
    """Vega, Vega-Lite and vega-embed as one script, from vl-convert (offline), matching altair's Vega-Lite.

    Bundling takes vl-convert 2-5 s, most of a report's rendering time; the result is kept in
    $XDG_CACHE_HOME/costlab/ under a name holding both versions, so reports after the first take well under
    one.
    """

    wanted = ".".join(alt.SCHEMA_VERSION.lstrip("v").split(".")[:2])
    version = wanted if wanted in vlc.get_vegalite_versions() else None
    cached = bundle_cache_dir() / f"vega-bundle-vlc{vlc.__version__}-vl{version or 'latest'}.js"
    try:
        return cached.read_text(encoding="utf-8")
    except OSError:
        pass
    bundle = vlc.javascript_bundle(vl_version=version).replace("</script", "<\\/script")
    try:
        with atomic_path(cached) as tmp:
            tmp.write_text(bundle, encoding="utf-8")
    except OSError:  # a read-only cache only costs time
        pass
    return bundle


def your_schema_view(sections: list[StudySection], out_dir: Path) -> list[dict[str, Any]]:
    """Per study with variants of the user's (Study.your_schema): its cost table and its figure."""

    blocks = []
    for section in sections:
        schema = section.your_schema
        if not section.enabled or schema is None or not schema.rows:
            continue
        view = study_view(schema)
        spec = figure_spec(schema.figure) if schema.figure is not None else None
        caption = ("<p>Your variants in colour beside the published ones, from the same results as the table "
                   "above.</p>")
        view["figure"] = (figure_view(schema.study, FigureItem("your_schema", caption, spec=spec), out_dir)
                          if spec is not None else None)
        blocks.append(view)
    return blocks


def render_page(
    sections: list[StudySection],
    findings: pl.DataFrame,
    config: dict,
    defaults: dict,
    out_dir: Path,
    generated_at: datetime,
) -> str:
    your_schema = your_schema_view(sections, out_dir)
    needs_js = any(f.spec is not None for s in sections for f in s.figures) or any(
        block["figure"] is not None for block in your_schema)
    studies_changed = any(key == "studies" for key, _, _ in config_differences(config, defaults))
    return (
        template_environment()
        .get_template("report.html.j2")
        .render(
            generated_at=generated_at.isoformat(timespec="seconds"),
            config_hash=config_hash(config),
            stand_in=any(s.stand_in for s in sections),
            studies=config.get("studies", []),
            studies_changed=studies_changed,
            sections=[section_view(s, config, defaults, out_dir) for s in sections],
            findings=findings_view(findings),
            headlines=headlines_view(findings),
            beyond=beyond_view(findings),
            what_ran=what_ran(sections),
            your_schema=your_schema,
            audit_script=Markup(AUDIT_SCRIPT),
            css=Markup(CSS),
            vega_bundle=Markup(vega_bundle()) if needs_js else None,
            script=Markup(SCRIPT),
        )
    )
