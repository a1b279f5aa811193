"""The article's published numbers (resources/published/arraygrowth_*.csv)."""
from __future__ import annotations

from pathlib import Path

import polars as pl

from costlab.config import ROOT
from costlab.inputs import read_csv

PUBLISHED_DIR = ROOT / "resources" / "published"
LOG_BYTES_CSV = PUBLISHED_DIR / "arraygrowth_log_bytes.csv"
CURSOR_CALLS_CSV = PUBLISHED_DIR / "arraygrowth_cursor_calls.csv"


def read_published_log_bytes(path: str | Path = LOG_BYTES_CSV) -> pl.DataFrame:
    """experiment, profile, workload, n, log_bytes_text, bytes_per_op, log_bytes, wall_s, source."""
    return read_csv(path)


def read_published_cursor_calls(path: str | Path = CURSOR_CALLS_CSV) -> pl.DataFrame:
    """profile, workload, n, cursor_insert_calls, cursor_modify_calls, source."""
    return read_csv(path)
