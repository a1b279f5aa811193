"""Reading a step's inputs: a file that cannot be read, or lacks columns or rows, stops the step
with the file's name and the command that rebuilds it (not a reader's message about bytes).
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable, Sequence

import polars as pl


class InputError(RuntimeError):
    """An input file is unreadable or incomplete; the message names it and how to rebuild it."""


def rebuild_command(path: str | Path) -> str:
    """How to get `path` back: files in resources/ come from git, results from their rule."""
    text = Path(path).as_posix()
    if text.startswith("resources/") or "/resources/" in text:
        return f"git checkout -- {text}"
    return f"snakemake --force {text}"


def _fail(path: str | Path, problem: str) -> InputError:
    return InputError(f"costlab: input {path} {problem}; rebuild it: {rebuild_command(path)}")


def _require_columns(frame: pl.DataFrame, columns: Sequence[str], path: str | Path) -> pl.DataFrame:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise _fail(path, f"lacks columns {missing} (has {frame.columns})")
    return frame


def read_parquet(path: str | Path, columns: Sequence[str] = ()) -> pl.DataFrame:
    """The file's rows, or InputError naming it (truncated, not parquet, missing columns)."""
    try:
        frame = pl.read_parquet(path)
    except FileNotFoundError:
        raise _fail(path, "is missing") from None
    except (pl.exceptions.PolarsError, OSError) as err:
        raise _fail(path, f"cannot be read as parquet ({type(err).__name__}: {str(err).splitlines()[0][:160]})") from None
    return _require_columns(frame, columns, path)


def read_csv(path: str | Path, columns: Sequence[str] = (), **options) -> pl.DataFrame:
    """The file's rows, or InputError naming it (unparsable, empty, missing columns)."""
    try:
        frame = pl.read_csv(path, **options)
    except FileNotFoundError:
        raise _fail(path, "is missing") from None
    except (pl.exceptions.PolarsError, OSError) as err:
        raise _fail(path, f"cannot be read as CSV ({type(err).__name__}: {str(err).splitlines()[0][:160]})") from None
    return _require_columns(frame, columns, path)


def require_values(frame: pl.DataFrame, column: str, wanted: Iterable, path: str | Path) -> None:
    """Every value in `wanted` has a row in frame[column], or InputError listing those without."""
    _require_columns(frame, [column], path)
    present = set(frame[column].to_list())
    missing = [value for value in wanted if value not in present]
    if missing:
        raise _fail(path, f"has no rows for {column} {missing} ({len(present)} present)")
