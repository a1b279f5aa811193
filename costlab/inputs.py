"""Reading a step's inputs: a file that cannot be read, lacks columns or rows, holds a cut row or
values of the wrong type or range, or was changed after the step that wrote it (its content
digest, costlab/digests.py), stops the step with the file's name and the command that rebuilds it
(not a reader's message about bytes).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import polars as pl

from costlab.digests import EDITED_TEXT, edited_reason, rebuild_command


class InputError(RuntimeError):
    """An input file is unreadable or incomplete; the message names it and how to rebuild it."""


def _fail(path: str | Path, problem: str) -> InputError:
    return InputError(f"costlab: input {path} {problem}; rebuild it: {rebuild_command(path)}")


def _require_columns(frame: pl.DataFrame, columns: Sequence[str], path: str | Path) -> pl.DataFrame:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise _fail(path, f"lacks columns {missing} (has {frame.columns})")
    return frame


def _require_unedited(path: str | Path) -> None:
    reason = edited_reason(path)
    if reason:
        raise _fail(path, f"was {EDITED_TEXT}: {reason.split(' (', 1)[1].rstrip(')')}")


def _require_types(frame: pl.DataFrame, numeric: Sequence[str], minimum: Mapping[str, float],
                   path: str | Path) -> pl.DataFrame:
    """Numeric columns hold numbers in every row (a cut row leaves a null or a string) within range."""
    _require_columns(frame, list(numeric) + [c for c in minimum if c not in numeric], path)
    for column in numeric:
        dtype = frame.schema[column]
        if not dtype.is_numeric():
            raise _fail(path, f"column {column} holds {dtype} values, not numbers")
        nulls = frame[column].null_count()
        if nulls:
            rows = frame.with_row_index("_row").filter(pl.col(column).is_null())["_row"].to_list()
            raise _fail(
                path,
                f"column {column} is empty in {nulls} row(s) (data rows {[r + 1 for r in rows[:5]]}): "
                "a cut or garbled row",
            )
    for column, bound in minimum.items():
        below = frame.filter(pl.col(column) < bound)
        if below.height:
            raise _fail(path, f"column {column} holds {below[column][0]} (allowed: at least {bound})")
    return frame


def _require_whole_last_row(path: str | Path) -> None:
    """A CSV costlab wrote ends with a newline; one cut mid-row does not."""
    if rebuild_command(path).startswith("git "):
        return
    try:
        with open(path, "rb") as handle:
            handle.seek(0, 2)
            if handle.tell() == 0:
                return
            handle.seek(-1, 2)
            last = handle.read(1)
    except OSError:
        return
    if last != b"\n":
        raise _fail(path, "ends in the middle of a row (cut short)")


def _read_table(path: str | Path, kind: str, read: Callable[[str | Path], pl.DataFrame]) -> pl.DataFrame:
    """read(path), or InputError naming the file: missing, or not readable as `kind` (with the error)."""
    try:
        return read(path)
    except FileNotFoundError:
        raise _fail(path, "is missing") from None
    except (pl.exceptions.PolarsError, OSError) as err:
        raise _fail(
            path, f"cannot be read as {kind} ({type(err).__name__}: {str(err).splitlines()[0][:160]})"
        ) from None


def read_parquet(path: str | Path, columns: Sequence[str] = (), numeric: Sequence[str] = (),
                 minimum: Mapping[str, float] | None = None) -> pl.DataFrame:
    """The file's rows, or InputError naming it (truncated, not parquet, missing columns, edited)."""
    _require_unedited(path)
    frame = _read_table(path, "parquet", pl.read_parquet)
    return _require_types(_require_columns(frame, columns, path), numeric, minimum or {}, path)


def read_csv(path: str | Path, columns: Sequence[str] = (), numeric: Sequence[str] = (),
             minimum: Mapping[str, float] | None = None, **options) -> pl.DataFrame:
    """The file's rows, or InputError naming it (unparsable, empty, cut, edited, missing columns, a
    `numeric` column with a non-number or an empty cell, a value below its `minimum`)."""
    _require_unedited(path)
    if Path(path).is_file():
        _require_whole_last_row(path)
    frame = _read_table(path, "CSV", lambda p: pl.read_csv(p, **options))
    return _require_types(_require_columns(frame, columns, path), numeric, minimum or {}, path)


def read_json(path: str | Path, keys: Sequence[str] = (), kind: type = dict) -> Any:
    """The file's JSON value (a `kind`, with `keys` if a mapping), or InputError naming it."""
    _require_unedited(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise _fail(path, "is missing") from None
    except (OSError, UnicodeDecodeError) as err:
        raise _fail(path, f"cannot be read ({type(err).__name__}: {err})") from None
    try:
        value = json.loads(text)
    except ValueError as err:
        raise _fail(path, f"is not valid JSON ({err})") from None
    if not isinstance(value, kind):
        raise _fail(path, f"holds a JSON {type(value).__name__}, not a {kind.__name__}")
    missing = [k for k in keys if k not in value] if isinstance(value, dict) else []
    if missing:
        raise _fail(path, f"lacks keys {missing}")
    return value


def require_values(frame: pl.DataFrame, column: str, wanted: Iterable, path: str | Path) -> None:
    """Every value in `wanted` has a row in frame[column], or InputError listing those without."""
    _require_columns(frame, [column], path)
    present = set(frame[column].to_list())
    missing = [value for value in wanted if value not in present]
    if missing:
        raise _fail(path, f"has no rows for {column} {missing} ({len(present)} present)")
