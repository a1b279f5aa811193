"""The rows of a user's declaration beside what it is compared to: kind "user variant", never judged.

Every use of costlab.declarations (appversions/variant_findings.py, arraygrowth/element_findings.py,
docsize/document_findings.py) measures its declarations and what they are compared to, and writes one row
per measure: the declaration's value over the compared one's, as a ratio. No article published a number for
a user's variant, so no row is judged: a row with a reason (the stand-in's numbers, a compared value of 0) is
`not comparable` for that reason; without one, a missing value is `not run` and a measured one `not
comparable` with USER_VARIANT_REASON. They are never counted among the published findings
(costlab.verdicts.COUNTED_KINDS); the report shows them in "Your variants".
"""
from __future__ import annotations

from typing import Any, Iterable

from costlab.finding import NOT_JUDGED, STAND_IN, USER_VARIANT_REASON, Finding
from costlab.verdicts import NOT_MEASURED, Kind, Verdict, is_missing


def measured(value: Any) -> float | None:
    """A table cell as a number, None where nothing was measured (null or NaN)."""
    return None if is_missing(value) else float(value)


def ratio(mine: float | None, theirs: float | None) -> float | None:
    """The declaration's value over the compared one's; None when either is missing or the compared is 0."""
    return mine / theirs if mine is not None and theirs else None


def server_kind_of(kinds: Iterable[str | None]) -> str | None:
    """A row's evidence kind from its two sides' ("mongod 6.0.5", "mongod 6.0.5/stand-in"), or None."""
    return "/".join(sorted({k for k in kinds if k})) or None


def on_stand_in(server_kind: str | None) -> bool:
    """Whether a side of the row was measured on the stand-in (its numbers are not MongoDB's)."""
    return bool(server_kind) and STAND_IN in server_kind


def beside(finding: str, metric: str, mine: float | None, theirs: float | None, *, server_kind: str | None,
           note: str, reason: str | None = None) -> Finding:
    """One row of a user's declaration: `mine` over `theirs` as a ratio. With a `reason` it is not comparable
    for that reason; without one, not run when the ratio is missing, else not comparable as a user's
    variant."""
    value = ratio(mine, theirs)
    if reason is not None:
        verdict = Verdict.NOT_COMPARABLE
    elif value is None:
        verdict, reason = Verdict.NOT_RUN, NOT_MEASURED
    else:
        verdict, reason = Verdict.NOT_COMPARABLE, USER_VARIANT_REASON
    return Finding(finding, metric, "ratio", None, value, verdict, reason=reason, tolerance=NOT_JUDGED,
                   server_kind=server_kind, note=note, kind=Kind.USER_VARIANT)


__all__ = ["beside", "measured", "on_stand_in", "ratio", "server_kind_of"]
