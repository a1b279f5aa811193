"""Tolerances stated in resources/published/, beside the published numbers they judge.

A finding that is one published row carries its tolerance in a column of that row (e.g.
`tolerance_pct` in docsize_collections.csv). A finding derived from several published rows (an
exponent fitted through three N, a ratio of two sizes), or one rule applied to many rows, has a row
in `resources/published/<study>_tolerances.csv`:

    finding_id, rule, low, high, what, rationale

`rule` is one of RULE_KINDS; `low`/`high` are the bounds that kind needs; `what` names the quantity
tested (its words appear in the tolerance text); `rationale` says why this tolerance (e.g. "the
article gives 2 significant digits"). The file is validated on read: a bad row stops the step with
one line naming the file, the row and the bad value. Standard library only.
"""
from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from costlab.verdicts import (
    Rule,
    above,
    absolute_within,
    at_least,
    at_most,
    below,
    between,
    ratio_within,
    relative_within,
)

PUBLISHED_DIR = Path(__file__).resolve().parents[1] / "resources" / "published"
TOLERANCE_COLUMNS = ("finding_id", "rule", "low", "high", "what", "rationale")
# rule kind -> the bounds it needs
RULE_KINDS: dict[str, tuple[str, ...]] = {
    "between": ("low", "high"),        # low <= value <= high
    "at_least": ("low",),              # value >= low
    "at_most": ("high",),              # value <= high
    "above": ("low",),                 # value > low
    "below": ("high",),                # value < high
    "ratio_within": ("low", "high"),   # low <= value / published <= high
    "relative": ("high",),             # |value / published - 1| <= high
    "absolute": ("high",),             # |value - published| <= high
}
NEEDS_PUBLISHED = ("ratio_within", "relative", "absolute")


class ToleranceError(RuntimeError):
    """A tolerances file that is missing, malformed or lacks a finding; the one-line message names it."""


@dataclass(frozen=True)
class Tolerance:
    """One row of a tolerances file: a rule kind, its bounds, and why."""

    finding_id: str
    rule: str
    low: float | None
    high: float | None
    what: str
    rationale: str
    source: str

    def holds(self, published: float | None = None) -> Rule:
        """The verdict's test (a costlab.verdicts.Rule: str() of it is the tolerance shown)."""
        what = self.what or "value"
        if self.rule == "between":
            return between(self.low, self.high, what)
        if self.rule == "at_least":
            return at_least(self.low, what)
        if self.rule == "at_most":
            return at_most(self.high, what)
        if self.rule == "above":
            return above(self.low, what)
        if self.rule == "below":
            return below(self.high, what)
        if self.rule == "ratio_within":
            return ratio_within(published, self.low, self.high)
        if self.rule == "relative":
            return relative_within(published, self.high)
        return absolute_within(published, self.high, self.what)

    @property
    def bound(self) -> float | None:
        """The number a rule with no published value compares with (at_least/above: low; at_most/below:
        high)."""
        if self.rule in ("at_least", "above"):
            return self.low
        if self.rule in ("at_most", "below"):
            return self.high
        return None


def tolerances_path(study: str, directory: str | Path = PUBLISHED_DIR) -> Path:
    return Path(directory) / f"{study}_tolerances.csv"


def _number(text: str | None, column: str, where: str) -> float | None:
    text = (text or "").strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        raise ToleranceError(f"{where}: {column} {text!r} is not a number") from None
    if not math.isfinite(value):
        raise ToleranceError(f"{where}: {column} {text!r} is not a finite number")
    return value


def _tolerance(record: dict, where: str, source: str) -> Tolerance:
    finding_id = (record.get("finding_id") or "").strip()
    rule = (record.get("rule") or "").strip()
    if not finding_id:
        raise ToleranceError(f"{where}: finding_id is empty")
    where = f"{where} ({finding_id})"
    if rule not in RULE_KINDS:
        raise ToleranceError(f"{where}: rule {rule!r} is not one of {', '.join(RULE_KINDS)}")
    low, high = _number(record.get("low"), "low", where), _number(record.get("high"), "high", where)
    bounds = {"low": low, "high": high}
    for column in RULE_KINDS[rule]:
        if bounds[column] is None:
            raise ToleranceError(f"{where}: rule {rule} needs a number in {column} (it is empty)")
    if rule in ("between", "ratio_within") and low > high:
        raise ToleranceError(f"{where}: low {low:g} is above high {high:g}")
    if rule in ("relative", "absolute") and high < 0:
        raise ToleranceError(f"{where}: high {high:g} is negative (allowed: a distance, 0 or more)")
    rationale = (record.get("rationale") or "").strip()
    if not rationale:
        raise ToleranceError(f"{where}: rationale is empty (say why this tolerance)")
    return Tolerance(finding_id, rule, low, high, (record.get("what") or "").strip(), rationale, source)


class Tolerances(Mapping[str, Tolerance]):
    """A study's tolerances by finding id; a missing id fails naming the file and what it has."""

    def __init__(self, rows: dict[str, Tolerance], path: Path) -> None:
        self._rows, self.path = rows, path

    def __getitem__(self, finding_id: str) -> Tolerance:
        try:
            return self._rows[finding_id]
        except KeyError:
            raise ToleranceError(
                f"costlab: {self.path} has no tolerance for finding {finding_id!r} "
                f"(it has {', '.join(self._rows)}); add a row, see docs/published.md"
            ) from None

    def __iter__(self):
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)


def read_tolerances(path: str | Path) -> Tolerances:
    """Every row of a <study>_tolerances.csv, validated (ToleranceError: one line, file, row, bad value)."""
    path = Path(path)
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            lines = [line for line in handle if not line.lstrip().startswith("#")]
    except OSError as err:
        raise ToleranceError(f"costlab: cannot read tolerances {path}: {err.strerror or err}; "
                             f"restore it: git checkout -- {path}") from None
    reader = csv.DictReader(lines)
    missing = [c for c in TOLERANCE_COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        raise ToleranceError(f"costlab: {path} lacks column(s) {', '.join(missing)}; "
                             f"expected {', '.join(TOLERANCE_COLUMNS)}")
    rows: dict[str, Tolerance] = {}
    for number, record in enumerate(reader, start=1):
        tolerance = _tolerance(record, f"costlab: {path} row {number}", str(path))
        if tolerance.finding_id in rows:
            raise ToleranceError(
                f"costlab: {path} row {number}: finding_id {tolerance.finding_id!r} appears twice"
            )
        rows[tolerance.finding_id] = tolerance
    return Tolerances(rows, path)


def study_tolerances(study: str, directory: str | Path = PUBLISHED_DIR) -> Tolerances:
    """resources/published/<study>_tolerances.csv (or the same file in another directory)."""
    return read_tolerances(tolerances_path(study, directory))


def tolerances_or_published(tolerances: Tolerances | None, study: str) -> Tolerances:
    """The tolerances a caller passed (a step reads its file from its input), else the study's own file."""
    return tolerances if tolerances is not None else study_tolerances(study)


__all__ = ["PUBLISHED_DIR", "RULE_KINDS", "Tolerance", "ToleranceError", "Tolerances", "read_tolerances",
           "study_tolerances", "tolerances_or_published", "tolerances_path"]
