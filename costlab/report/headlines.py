"""The page's answer first: the articles' headline claims judged by this run's findings, and what did not
hold.

The claims are declared once per study, in its resources/published/<study>_claims.csv (one of the files its
Study declares): three to six sentences (costlab's own words, naming the article), each with the findings it
rests on as patterns on the findings' `finding` column (shell-style: `*` any text, `?` one character;
several separated by ` | `).
A claim is judged by its findings' verdicts, counted by class (costlab.verdicts), never by their wording:
not reproduced when any of them is, else inconclusive when any is, else reproduced when any is, else not
comparable, else not run; a claim no finding of this run matches is "not in this run".

Only published findings count: a row whose `kind` (when findings.csv has that column) is not
`published` (costlab's variants beyond the article, a user's variants) never decides a claim and is not
listed under what did not hold.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path

import polars as pl

from costlab.published import PUBLISHED_DIR
from costlab.report.studies import STUDIES
from costlab.verdicts import COUNTED_KINDS, OTHER, Kind, verdict_class

CLAIMS_SUFFIX = "_claims.csv"   # resources/published/<study>_claims.csv, declared in the study's `published`
CLAIM_COLUMNS = ("claim", "findings")
PATTERN_SEPARATOR = " | "
PUBLISHED_KIND = Kind.PUBLISHED.value
# The order a claim's findings decide it: the first class any of them has.
DECIDING_ORDER = ("not reproduced", "inconclusive", "reproduced", "not comparable", "not run", OTHER)
NOT_HELD = ("not reproduced", "inconclusive")
REASON_ROWS = 3  # failing findings named in a claim's one-line reason


@dataclass(frozen=True)
class Claim:
    study: str
    claim: str
    patterns: tuple[str, ...]


def claims_file(study: str, published_dir: Path = PUBLISHED_DIR) -> Path | None:
    """The study's claims file, when its declaration lists one."""
    name = f"{study}{CLAIMS_SUFFIX}"
    return published_dir / name if name in STUDIES[study].published else None


def read_claims(path: str | Path, study: str) -> list[Claim]:
    """One study's declared claims; a row with no claim or no finding pattern is refused by its line."""
    path = Path(path)
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in CLAIM_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"{path} lacks column(s) {', '.join(missing)}; "
                             f"expected {', '.join(CLAIM_COLUMNS)}")
        claims = []
        for line, row in enumerate(reader, start=2):
            claim = (row["claim"] or "").strip()
            patterns = tuple(p.strip() for p in (row["findings"] or "").split(PATTERN_SEPARATOR.strip())
                             if p.strip())
            if not claim or not patterns:
                raise ValueError(f"{path}, line {line}: a claim needs its sentence and at least one finding "
                                 "pattern")
            claims.append(Claim(study, claim, patterns))
    return claims


def declared_claims(published_dir: Path = PUBLISHED_DIR) -> list[Claim]:
    """Every study's claims, in the registry's order (a study that declares no claims file has none)."""
    claims = []
    for study in STUDIES:
        path = claims_file(study, published_dir)
        if path is not None:
            claims += read_claims(path, study)
    return claims


def published_findings(findings: pl.DataFrame) -> pl.DataFrame:
    """The rows that are the articles' findings: all of them until findings.csv says each row's kind."""
    if "kind" not in findings.columns:
        return findings
    return findings.filter(pl.col("kind").fill_null(PUBLISHED_KIND).is_in(COUNTED_KINDS))


def beyond_articles(findings: pl.DataFrame) -> pl.DataFrame:
    """The rows that are not the articles' findings (costlab's variants, a user's): none without a kind
    column."""
    if "kind" not in findings.columns:
        return findings.clear()
    return findings.filter(~pl.col("kind").fill_null(PUBLISHED_KIND).is_in(COUNTED_KINDS))


def claim_rows(claim: Claim, findings: pl.DataFrame) -> pl.DataFrame:
    """The findings of the claim's study whose text matches one of its patterns."""
    rows = findings.filter(pl.col("study") == claim.study)
    texts = rows["finding"].fill_null("").to_list()
    keep = [any(fnmatchcase(text, pattern) for pattern in claim.patterns) for text in texts]
    return rows.filter(pl.Series(keep, dtype=pl.Boolean)) if rows.height else rows


def _value(value: float | None, unit: str | None) -> str:
    if value is None or value != value:
        return "—"
    text = f"{value:,.0f}" if value.is_integer() and abs(value) >= 1e4 else f"{value:.3g}"
    return f"{text} {unit}" if unit and unit not in ("1", "ratio") else text


def failing_reason(rows: list[dict]) -> str:
    """One line naming the findings that did not hold: this run's value against the published one and the
    rule."""
    parts = []
    for row in rows[:REASON_ROWS]:
        tolerance = f", {row['tolerance']}" if row.get("tolerance") else ""
        parts.append(
            f"{row['finding']}: {_value(row['this_run'], row['unit'])} against "
            f"{_value(row['published'], row['unit'])}{tolerance}"
        )
    more = len(rows) - REASON_ROWS
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


@dataclass
class ClaimVerdict:
    claim: Claim
    verdict: str  # a verdict class (costlab.verdicts) or "not in this run"
    counts: dict[str, int]  # the claim's findings per verdict class
    evidence: list[str]  # what judged it (the deciding findings' evidence)
    reason: str | None  # why it did not hold, or why it was not judged


def judge_claim(claim: Claim, findings: pl.DataFrame) -> ClaimVerdict:
    published = published_findings(findings)
    rows = claim_rows(claim, published).to_dicts()
    if not rows:
        # its findings come from a part of the study that could not run (no server): that row says why
        not_run = [
            r
            for r in published.filter(pl.col("study") == claim.study).to_dicts()
            if verdict_class(r["verdict"]) == "not run"
        ]
        if not_run:  # the fix is in that row and in the page's header
            first = not_run[0]
            said = f"{first['verdict']}: {first['reason']}" if first.get("reason") else first["verdict"]
            return ClaimVerdict(
                claim, "not run", {}, [], f"{said} (its findings are measured on a MongoDB server)"
            )
        return ClaimVerdict(claim, "not in this run", {}, [], "no finding of this run matches it")
    classes = [verdict_class(r["verdict"]) for r in rows]
    counts = {c: classes.count(c) for c in DECIDING_ORDER if c in classes}
    verdict = next((c for c in DECIDING_ORDER if c in counts), "not run")
    deciding = [r for r, c in zip(rows, classes) if c == verdict]
    evidence = list(dict.fromkeys(r["evidence"] for r in deciding if r["evidence"]))
    if verdict in NOT_HELD:
        reason = failing_reason(deciding)
    elif verdict in ("not comparable", "not run", OTHER):   # other: a cell holding no verdict (edited)
        first = deciding[0]
        reason = first.get("reason") or first["note"] or first["verdict"]
    else:
        reason = None
    return ClaimVerdict(claim, verdict, counts, evidence, reason)


def judge_claims(findings: pl.DataFrame, claims: list[Claim] | None = None) -> list[ClaimVerdict]:
    """Every declared claim, judged by `findings` (a study with no row: its claims are not in this run)."""
    claims = declared_claims() if claims is None else claims
    return [judge_claim(c, findings) for c in claims]


def did_not_hold(findings: pl.DataFrame) -> pl.DataFrame:
    """Every published finding this run did not reproduce or could not decide (inconclusive)."""
    published = published_findings(findings)
    classes = [verdict_class(v) for v in published["verdict"].to_list()]
    return (
        published.filter(pl.Series([c in NOT_HELD for c in classes], dtype=pl.Boolean))
        if published.height
        else published
    )
