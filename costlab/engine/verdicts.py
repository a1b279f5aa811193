"""Published vs engine lab: how an engine-lab verdict row is written, for every study's engine verdicts
(costlab/<study>/engine_verdicts.py, appversions' in costlab/appversions/engine.py).

Each table has the report's published-vs-reproduced columns (finding, metric, unit, published,
reproduced, ratio, verdict, server_kind) plus `note`; server_kind is `engine`. Verdicts judge
the finding with the same thresholds as the mongod path; absolute numbers get a tolerance. Every
threshold is read from resources/published/<study>_tolerances.csv (costlab.published).
"""
from __future__ import annotations

from pathlib import Path

import polars as pl

from costlab.engine.provenance import SERVER_KIND
from costlab.finding import Finding, judged, verdict_table
from costlab.io import write_csv
from costlab.verdicts import Kind


def engine_row(
    finding, metric, unit, published, reproduced, holds, note=None, kind: Kind = Kind.PUBLISHED
) -> Finding:
    """holds: a costlab.verdicts.Rule (its words are the row's tolerance) or a bare function."""
    return judged(
        finding, metric, unit, published, reproduced, holds, server_kind=SERVER_KIND, note=note, kind=kind
    )


def engine_frame(rows: list[Finding]) -> pl.DataFrame:
    return verdict_table(rows, rounded=True)


def write(frame: pl.DataFrame, path: str | Path) -> None:
    write_csv(frame, path)
