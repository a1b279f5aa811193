"""Progress bars that show on a terminal and stay silent in CI logs and Snakemake log files."""
from __future__ import annotations

import os
import sys
from typing import Iterable, TypeVar

from tqdm.auto import tqdm

T = TypeVar("T")
# Size when the terminal does not say: a pseudo-terminal without a size (script(1), ssh -t from
# a pipe, some IDE consoles) reports 0 x 0, and tqdm then draws nothing at all (0 rows hide every bar).
FALLBACK_COLUMNS = 100
FALLBACK_ROWS = 24


def interactive() -> bool:
    return sys.stderr.isatty() and not os.environ.get("CI")


def terminal_columns() -> int:
    """Columns of the terminal on stderr, COLUMNS when it reports none, else FALLBACK_COLUMNS."""
    try:
        columns = os.get_terminal_size(sys.stderr.fileno()).columns
    except (OSError, ValueError, AttributeError):
        columns = 0
    if columns > 0:
        return columns
    try:
        return int(os.environ.get("COLUMNS", "")) or FALLBACK_COLUMNS
    except ValueError:
        return FALLBACK_COLUMNS


def progress(iterable: Iterable[T] | None = None, total: int | None = None, desc: str = "",
             unit: str = "it") -> tqdm:
    """tqdm on a terminal; disabled (no output at all) elsewhere.

    The bar is removed when it ends (leave=False): the console keeps one line per job.
    """
    enabled = interactive()
    sized = enabled and _reports_columns()
    unsized = enabled and not sized
    return tqdm(iterable, total=total, desc=desc, unit=unit, disable=not enabled, mininterval=0.5,
                leave=False, dynamic_ncols=sized, ncols=terminal_columns() if unsized else None,
                nrows=FALLBACK_ROWS if unsized else None)


def _reports_columns() -> bool:
    try:
        return os.get_terminal_size(sys.stderr.fileno()).columns > 0
    except (OSError, ValueError, AttributeError):
        return False
