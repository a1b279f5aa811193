"""Repeats of an engine-lab job (issue #36, docs/uncertainty.md): how many a study's config asks, the keys
that plan the jobs rather than shape one (so another count reruns no measured repeat), and the merge of the
repeats' rows into one row per key with each numeric column's median and each repeat's value beside it.

Light imports at the top (the rule files import this module through the studies' params)."""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from costlab.engine.job_keys import engine_keys

# engine.<study> keys that choose the jobs (how many repeats), not what one repeat's job does: another value
# must not rerun the repeats already measured
ENGINE_PLAN_KEYS = ("repeats",)
# each repeat's value of a column, in repeat order, in `<column>_repeats`
REPEATS_SEPARATOR = "; "


def engine_repeats(config: Mapping[str, Any], study: str) -> int:
    """How many times the study's engine job runs (engine.<study>.repeats; 1 when absent)."""
    return int((config["engine"].get(study) or {}).get("repeats", 1))


def engine_repeat_keys(config: Mapping[str, Any], study: str) -> dict[str, Any]:
    """engine_keys(config, study) without ENGINE_PLAN_KEYS: what one repeat's engine job reads."""
    keys = engine_keys(config, study)
    section = {k: v for k, v in (keys.get(study) or {}).items() if k not in ENGINE_PLAN_KEYS}
    return {**keys, study: section}


def medians_over_repeats(per_repeat, keys: Sequence[str], repeated: Sequence[str],
                         lists: Mapping[str, str] | None = None):
    """Rows, one per (keys, rep), as one row per key: each numeric column the median over the key's repeats
    (with one repeat, the value itself; integer columns stay integers where every median is whole), every
    other column the first repeat's; then `repeats` (how many), `<column>_repeats` for `repeated` and
    `lists` (column -> name, e.g. {"seed": "seeds"}): each repeat's value, REPEATS_SEPARATOR-joined, in
    repeat order. Rows without a `rep` column are repeat 1."""
    import polars as pl  # noqa: PLC0415  heavy: polars; the rule files import this module

    if "rep" not in per_repeat.columns:
        per_repeat = per_repeat.with_columns(pl.lit(1).alias("rep"))
    lists = {c: name for c, name in (lists or {}).items() if c in per_repeat.columns}
    # stable: each key's repeats in order, the keys in their first repeat's order
    per_repeat = per_repeat.sort("rep", maintain_order=True)
    columns = [c for c in per_repeat.columns if c not in (*keys, "rep", *lists)]
    numeric = {c for c in columns if per_repeat.schema[c].is_numeric()}
    named = [pl.col(c).alias(f"{c}_repeats") for c in repeated]
    named += [pl.col(c).alias(name) for c, name in lists.items()]
    table = per_repeat.group_by(list(keys), maintain_order=True).agg(
        *[pl.col(c).median() if c in numeric else pl.col(c).first() for c in columns],
        pl.len().cast(pl.Int64).alias("repeats"), *named)
    for c in columns:
        dtype = per_repeat.schema[c]
        if dtype.is_integer() and (table[c].drop_nulls() % 1 == 0).all():
            table = table.with_columns(pl.col(c).cast(dtype))
    return table.with_columns(
        pl.col(name).list.eval(pl.element().cast(pl.Utf8)).list.join(REPEATS_SEPARATOR)
        for name in [f"{c}_repeats" for c in repeated] + list(lists.values()))


def repeat_values(row: Mapping[str, Any], column: str) -> list[float]:
    """Each repeat's value of `column` in a merged row (`<column>_repeats`), or the row's one value
    (a table written before repeats, or built without medians_over_repeats)."""
    text = row.get(f"{column}_repeats")
    if text is None or (isinstance(text, str) and not text.strip()):
        return [] if row.get(column) is None else [float(row[column])]
    if isinstance(text, (int, float)):   # one repeat read back from a CSV: a number, not text
        return [float(text)]
    return [float(value) for value in str(text).split(REPEATS_SEPARATOR.strip())]
