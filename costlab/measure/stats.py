"""Summaries of raw timing rows (median, p95, ...), computed by polars."""
from __future__ import annotations

from typing import Sequence

import polars as pl

DEFAULT_QUANTILES = (0.5, 0.9, 0.95, 0.99)


def summarize(raw: pl.DataFrame, by: Sequence[str], value: str,
              quantiles: Sequence[float] = DEFAULT_QUANTILES) -> pl.DataFrame:
    """One row per group: count, mean, and the quantiles of `value` (nulls ignored)."""
    aggs = [pl.col(value).count().alias("n"), pl.col(value).mean().alias(f"{value}_mean")]
    aggs += [pl.col(value).quantile(q, interpolation="linear").alias(f"{value}_p{round(q * 100)}")
             for q in quantiles]
    return raw.group_by(list(by), maintain_order=True).agg(aggs)
