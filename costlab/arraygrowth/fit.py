"""Power-law fit y = c * N^k on a log-log scale, with R^2 of the log-log line.

fit_power_law refuses (FitError) rather than guess: a missing value is a counter the server
did not report, never a zero, and zero/negative values have no logarithm.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np


class FitError(ValueError):
    """The data cannot be fitted; the message says why and which values are at fault."""


@dataclass(frozen=True)
class PowerLawFit:
    exponent: float       # k in y = c * N^k
    coefficient: float    # c
    r_squared: float      # of log(y) on log(N); NaN when all y are equal (no variance to explain)
    points: int

    def predict(self, n: float | np.ndarray) -> float | np.ndarray:
        return self.coefficient * np.asarray(n, dtype=float) ** self.exponent


def _as_float(values: Sequence[float | None]) -> np.ndarray:
    return np.array([np.nan if v is None else v for v in values], dtype=float)


def fit_power_law(n: Sequence[float], y: Sequence[float | None], label: str = "y") -> PowerLawFit:
    """Least-squares line through (log N, log y). Raises FitError on missing or non-positive data."""
    n_values, y_values = _as_float(n), _as_float(y)
    if n_values.shape != y_values.shape:
        raise FitError(f"cannot fit {label}: {n_values.size} N values but {y_values.size} {label} values")
    missing = ~np.isfinite(y_values)
    if n_values.size and missing.all():
        raise FitError(f"{label} not reported by this server (all {n_values.size} values missing, "
                       f"N={_fmt(n_values)}); a missing counter is not fitted as zero")
    if missing.any():
        raise FitError(f"cannot fit {label}: {int(missing.sum())} of {n_values.size} values missing "
                       f"at N={_fmt(n_values[missing])}; a missing counter is not fitted as zero")
    if not np.isfinite(n_values).all() or (n_values <= 0).any():
        raise FitError(f"cannot fit {label}: N must be positive numbers on a log scale, got {_fmt(n_values)}")
    if (y_values <= 0).any():
        bad = y_values <= 0
        raise FitError(f"cannot fit {label} on a log-log scale: values must be > 0, got "
                       f"{_fmt(y_values[bad])} at N={_fmt(n_values[bad])}")
    if np.unique(n_values).size < 2:
        raise FitError(f"cannot fit {label}: need at least 2 distinct N, got N={_fmt(n_values)}")
    log_n, log_y = np.log(n_values), np.log(y_values)
    slope, intercept = np.polyfit(log_n, log_y, 1)
    residual = log_y - (slope * log_n + intercept)
    total = log_y - log_y.mean()
    ss_total = float(total @ total)
    r_squared = 1.0 - float(residual @ residual) / ss_total if ss_total > 0 else float("nan")
    return PowerLawFit(exponent=float(slope), coefficient=float(np.exp(intercept)),
                       r_squared=r_squared, points=int(n_values.size))


def _fmt(values: np.ndarray) -> str:
    return ", ".join(f"{v:g}" for v in values)
