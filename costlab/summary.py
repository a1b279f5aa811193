"""The few lines that end a run: per study the verdict counts and what did not run, and the report's path.

Called by the Snakefile's `onsuccess:` handler (so `make all` and `snakemake all` end with it) and
by `python -m costlab.summary` on an existing results/ folder. Reads only small files: results/findings.csv
(every verdict row of every study, the rows the report opens with: counted per study and evidence), or,
in a tree without it, each study's tables/published_vs_reproduced.csv and engine/published_vs_engine.csv
(their `verdict`, `kind` and `server_kind` columns); and not_run.json
({"part", "reason", "fix"}, one object or a list of them) when a part of the study could not run; and
engine_vs_mongod.csv (costlab.engine.vs_mongod), the engine lab against mongod on the same work: one line,
the share of quantities within tolerance and each one outside it.
It counts the Verdict members of the published findings' rows (costlab.verdicts): costlab's own variants
get a line of their own and are never counted among the published findings.
"""
from __future__ import annotations

import argparse
import csv
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any, Iterable

from costlab import STUDIES
from costlab.digests import EDITED, EDITED_TEXT, check
from costlab.targets import VS_MONGOD_FILE
from costlab.verdicts import OTHER, VERDICT_CLASSES, Kind, counted, verdict_class

PUBLISHED_TABLE = Path("tables") / "published_vs_reproduced.csv"
ENGINE_TABLE = Path("engine") / "published_vs_engine.csv"
ENGINE_LABEL = "engine lab (WiredTiger, not a mongod run)"
NOT_RUN_FILE = "not_run.json"
OUTSIDE_SHOWN = 3   # quantities outside tolerance named on the summary's line; the rest are in the file
REPORT = "report.html"
FINDINGS = "findings.csv"
NOT_RUN_EVIDENCE = (
    "none (not run)"  # costlab.report.findings: a part that could not run (not_run.json says why)
)   # costlab.report.findings: a part that could not run (not_run.json says why)


VARIANTS_LABEL = "costlab's variants beyond the article (not counted)"
USER_VARIANTS_LABEL = "your variants (declared in your config; not counted)"


def verdict_counts(table: Path) -> tuple[Counter, bool]:
    """Verdict -> rows of the published findings, and whether any row came from the stand-in (server_kind)."""
    counts: Counter = Counter()
    stand_in = False
    with table.open(newline="") as handle:
        for row in csv.DictReader(handle):
            if counted(row.get("kind")):
                counts[_label(row.get("verdict"))] += 1
            stand_in = stand_in or (row.get("server_kind") or "").strip() == "stand-in"
    return counts, stand_in


def not_run_parts(path: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as err:
        return [{"part": path.parent.name, "reason": f"{path} unreadable ({err})", "fix": ""}]
    items = data if isinstance(data, list) else [data]
    return [item for item in items if isinstance(item, dict)]


def _label(verdict: str | None) -> str:
    """The Verdict member a cell holds; a cell holding none is counted under its own words (an edited table's
    "edited after the run", an older costlab's sentence), never as a verdict."""
    member = verdict_class(verdict)
    return member if member != OTHER else ((verdict or "").strip() or "no verdict")


def _counts_text(counts: Counter) -> str:
    # The enum's order, then any other words by name, so the line reads the same run after run.
    others = sorted(k for k in counts if k not in VERDICT_CLASSES)
    return ", ".join(f"{counts[v]} {v}" for v in (*VERDICT_CLASSES, *others) if counts[v])


def _table_text(table: Path) -> str:
    """A verdict table's counts in one line (the stand-in named), or why it could not be read or
    counted (changed after its step wrote it: costlab/digests.py)."""
    from costlab.inputs import rebuild_command  # noqa: PLC0415  heavy: polars; the rule files import this module

    if check(table) == EDITED:
        return (f"{table.name} {EDITED_TEXT}: its verdicts are not counted; rebuild it: "
                f"{rebuild_command(table)}")
    try:
        counts, stand_in = verdict_counts(table)
    except (OSError, csv.Error, UnicodeDecodeError) as err:
        return f"{table} unreadable: {err}"
    return (_counts_text(counts) or "no findings") + (" (stand-in server: not a MongoDB measurement)"
                                                     if stand_in else "")


def vs_mongod_text(path: Path) -> str:
    """The line: "engine lab vs mongod 6.0.5 on the same work: 24 of 24 quantities within tolerance", and
    each quantity outside it."""
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
    except (OSError, csv.Error, UnicodeDecodeError) as err:
        return f"engine lab vs mongod: {path} unreadable ({err})"
    within = [row.get("within") == "true" for row in rows]
    versions = ", ".join(sorted({row.get("mongod_version") or "?" for row in rows})) or "?"
    text = (f"engine lab vs mongod {versions} on the same work: {sum(within)} of {len(rows)} quantities "
            f"within tolerance ({path})")
    outside = [f"{row.get('quantity')} {row.get('profile')} {row.get('workload')} N={row.get('n')} "
               f"(lab {row.get('engine')}, mongod {row.get('mongod')})"
               for row, ok in zip(rows, within) if not ok]
    shown = outside[:OUTSIDE_SHOWN] + ([f"and {len(outside) - OUTSIDE_SHOWN} more in the file"]
                                       if len(outside) > OUTSIDE_SHOWN else [])
    return text + (f"; outside: {'; '.join(shown)}" if outside else "")


def read_findings_rows(path: Path) -> list[dict[str, str]]:
    """findings.csv's rows; if it was changed after its step wrote it, every verdict reads
    "edited after the run" (counted as that, never as the verdict it shows)."""

    with path.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    if check(path) == EDITED:
        rows = [row | {"verdict": EDITED_TEXT} for row in rows]
    return rows


def _published(rows: list[dict[str, str]]) -> list[dict[str, str]]:
    return [row for row in rows if counted(row.get("kind"))]


def findings_texts(rows: list[dict[str, str]], study: str) -> list[str]:
    """'<evidence>: 7 reproduced, 2 not reproduced' per evidence kind of the study's published findings, in
    the
    table's order; then one line for costlab's own variants and one for a user's, if the study has any."""
    by_evidence: dict[str, Counter] = {}
    risks: dict[str, list[str]] = {}
    variants: Counter = Counter()
    user_variants: Counter = Counter()
    for row in rows:
        if row.get("study") != study or row.get("evidence") == NOT_RUN_EVIDENCE:
            continue
        verdict = _label(row.get("verdict"))
        if not counted(row.get("kind")):
            (user_variants if row.get("kind") == Kind.USER_VARIANT.value else variants)[verdict] += 1
            continue
        by_evidence.setdefault(row.get("evidence") or "evidence not stated", Counter())[verdict] += 1
        if row.get("risk"):
            risks.setdefault(row.get("evidence") or "evidence not stated", []).append(row["risk"])
    texts = []
    for evidence, counts in by_evidence.items():
        label = f"{evidence} (not a mongod run)" if evidence.startswith("WiredTiger engine lab") else evidence
        texts.append(f"{label}: {_counts_text(counts)}{_risk_text(risks.get(evidence, []))}")
    if variants:
        texts.append(f"{VARIANTS_LABEL}: {_counts_text(variants)}")
    if user_variants:
        texts.append(f"{USER_VARIANTS_LABEL}: {_counts_text(user_variants)}")
    return texts


def _risk_text(risks: list[str]) -> str:
    """'; risk if the truth sat on the band's edge: up to 12.5%, 2 not known (one run)' for the decided
    verdicts' risks (findings.csv's `risk`: '3.1%' or words saying it is not known); '' for none."""
    known = [float(r.rstrip("%")) for r in risks if r[:1].isdigit() and r.endswith("%")]
    unknown = len(risks) - len(known)
    parts = ([f"up to {max(known):.1f}%"] if known else []) + ([f"{unknown} not known (one run)"] if unknown
                                                              else [])
    return f"; risk if the truth sat on the band's edge: {', '.join(parts)}" if parts else ""


def _findings_total(rows: list[dict[str, str]]) -> str:
    return _counts_text(Counter(_label(row.get("verdict")) for row in rows))


def summary_lines(results_dir: str | Path = "results", studies: Iterable[str] | None = None,
                  log: str | Path | None = None) -> list[str]:
    results = Path(results_dir)
    names = list(studies) if studies is not None else list(STUDIES)
    width = max((len(s) for s in names), default=0)
    findings_path = results / FINDINGS
    findings: list[dict[str, str]] | None = None
    if findings_path.is_file():
        try:
            findings = read_findings_rows(findings_path)
        except (OSError, csv.Error, UnicodeDecodeError):
            findings = None
    if findings is not None:
        published = _published(findings)
        yours = sum(row.get("kind") == Kind.USER_VARIANT.value for row in findings)
        variants = len(findings) - len(published) - yours
        lines = [
            f"costlab summary: {len(published)} published findings ({_findings_total(published) or 'none'}; "
            f"{findings_path})"
            + (f" and {variants} rows of costlab's own variants, not counted" if variants else "")
            + (f" and {yours} rows of your variants, not counted" if yours else "")
            + ", per study and evidence"
        ]
    else:
        lines = ["costlab summary: verdicts per study (published vs reproduced)"]
    fixes: list[str] = []  # one line each at the end: with no server it is the same for every study
    for study in names:
        study_lines = []
        table = results / study / PUBLISHED_TABLE
        engine_table = results / study / ENGINE_TABLE
        not_run = results / study / NOT_RUN_FILE
        if findings is not None:
            study_lines.extend(findings_texts(findings, study))
        else:
            if table.is_file():
                study_lines.append(_table_text(table))
            if engine_table.is_file():
                study_lines.append(f"{ENGINE_LABEL}: {_table_text(engine_table)}")
        if (results / study / VS_MONGOD_FILE).is_file():
            study_lines.append(vs_mongod_text(results / study / VS_MONGOD_FILE))
        if not_run.is_file():
            for part in not_run_parts(not_run):
                what = part.get("part") or study
                study_lines.append(f"not run: {what}: {part.get('reason') or 'no reason given'}")
                if part.get("fix") and part["fix"] not in fixes:
                    fixes.append(part["fix"])
        if not study_lines:
            study_lines.append(f"no {PUBLISHED_TABLE.as_posix()} yet" if findings is None else "no findings")
        for i, text in enumerate(study_lines):
            lines.append((f"  {study:<{width}}  " if i == 0 else " " * (width + 4)) + text)
    lines.extend(f"to run what was not run: {fix}" for fix in fixes)
    report = results / REPORT
    lines.append(f"report: {report}" if report.is_file() else f"report: not built ({report} is missing)")
    if log:
        logs = [str(p) for p in log] if isinstance(log, (list, tuple)) else [str(log)]
        if logs:
            lines.append(f"full log: {', '.join(logs)}; each job's log: {results / 'logs'}/")
    return lines


def print_summary(results_dir: str | Path = "results", studies: Iterable[str] | None = None,
                  log: Any = None, stream=None) -> None:
    stream = sys.stderr if stream is None else stream
    stream.write("\n".join(summary_lines(results_dir, studies, log)) + "\n")
    stream.flush()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Print the end-of-run summary for a results folder.")
    parser.add_argument("results", nargs="?", default="results")
    args = parser.parse_args(argv)
    print_summary(args.results, stream=sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
