"""Progress bars that show on a terminal and stay silent in CI logs and Snakemake log files."""
from __future__ import annotations

import os
import sys
from typing import Iterable, TypeVar

from tqdm.auto import tqdm

T = TypeVar("T")


def interactive() -> bool:
    return sys.stderr.isatty() and not os.environ.get("CI")


def progress(iterable: Iterable[T] | None = None, total: int | None = None, desc: str = "",
             unit: str = "it") -> tqdm:
    """tqdm on a terminal; disabled (no output at all) elsewhere."""
    return tqdm(iterable, total=total, desc=desc, unit=unit, disable=not interactive(),
                mininterval=0.5, dynamic_ncols=True)
