"""Repeats: a measuring job run again as a job of its own (docs/uncertainty.md), server and engine-lab jobs
alike.

Two kinds of job repeat, each declared once here, with its count's key and its paths:

- `SERVER_REPEATS` (`<study>.repeats`): repeat 1 keeps the paths a single run always wrote; repeat r >= 2
  adds `__rep<r>` to the file's name (`raw/loadtest_appV1.parquet`, `raw/loadtest_appV1__rep2.parquet`).
- `ENGINE_REPEATS` (`engine.<study>.repeats`): every repeat is numbered, `rep<r>`, a file's or a folder's
  name (`engine/versions/appV1/rep1.json`, `engine/repeats/rep2/log_bytes.csv`).

A rule's `{rep}` wildcard holds the repeat's mark exactly where its paths have it (`''`, `__rep2`; `rep1`,
`rep2`), so `snakemake <one output>` builds that one repeat. The kind gives the wildcard's constraint and
values, the path of repeat r of a pattern, and the repeat a wildcard, a name or a path holds. The merges over
repeats are here too: `medians_over_repeats` (an engine job's rows, one per key and repeat) and
`over_repeat_findings` (the same findings judged in each repeat).

Standard library at the top: the rule files import this module while Snakemake parses them, so the merges
import polars and the findings themselves.
"""
from __future__ import annotations

import math
import numbers
import re
from dataclasses import dataclass
from pathlib import PurePath
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Sequence

if TYPE_CHECKING:
    import polars as pl

    from costlab.finding import Finding

COUNT_KEY = "repeats"        # the count's key in a study's section, for either kind
REPEATS_SEPARATOR = "; "     # each repeat's value of a column, in repeat order, in `<column>_repeats`
_NUMBER = "[1-9][0-9]*"      # a repeat's number in its mark: no sign, no leading zero


@dataclass(frozen=True)
class RepeatKind:
    """How one kind of job repeats: where its count is in the config and how a repeat is marked in its paths
    (repeat r's mark is `mark_prefix` + r, except repeat 1's, `first_mark`)."""

    name: str                      # "server" or "engine": said in errors
    section: tuple[str, ...]       # the config keys above the study's section: () or ("engine",)
    first_mark: str                # repeat 1's mark: the paths from before repeats existed
    mark_prefix: str
    marks_folders: bool            # a mark may be a folder's name (engine), not only the end of a file's

    @property
    def constraint(self) -> str:
        """The {rep} wildcard's regex: exactly the marks of repeats 1, 2, ..."""
        first = f"{re.escape(self.first_mark)}|" if self.first_mark else ""
        numbered = f"{re.escape(self.mark_prefix)}([2-9]|[1-9][0-9]+)"
        return f"({first}{numbered})" if first else f"({numbered})?"

    def key(self, study: str) -> str:
        """The count's config key, as a user writes it: `docsize.repeats`, `engine.arraygrowth.repeats`."""
        return ".".join((*self.section, study, COUNT_KEY))

    def count(self, config: Mapping[str, Any], study: str) -> int:
        """How many times the study's jobs of this kind run (the key's value; 1 when absent)."""
        node: Any = config
        for part in self.section:
            node = node.get(part) or {}
        return self.count_in(node.get(study), study)

    def count_in(self, section: Mapping[str, Any] | None, study: str) -> int:
        """The count in the study's own section (`config[study]`, `config["engine"][study]`); 1 when
        absent."""
        value = (section or {}).get(COUNT_KEY)
        if value is None:
            return 1
        if isinstance(value, bool) or not re.fullmatch(_NUMBER, str(value).strip()):
            raise ValueError(f"{self.key(study)}: {value!r} is not a count of repeats; "
                             "expected a whole number from 1")
        return int(value)

    def without_count(self, section: Mapping[str, Any]) -> dict[str, Any]:
        """A study's section without the count: what one repeat's job reads, so another count reruns no
        repeat already measured."""
        return {k: v for k, v in section.items() if k != COUNT_KEY}

    def wildcard(self, rep: int) -> str:
        """The {rep} wildcard (the mark in the paths) of repeat `rep`, counted from 1."""
        if isinstance(rep, bool) or not isinstance(rep, numbers.Integral) or rep < 1:
            raise ValueError(f"repeat {rep!r}: repeats count from 1")
        return self.first_mark if rep == 1 else f"{self.mark_prefix}{int(rep)}"

    def wildcards(self, config: Mapping[str, Any], study: str) -> list[str]:
        """The {rep} wildcards of the study's repeats 1..count, in order."""
        return [self.wildcard(rep) for rep in range(1, self.count(config, study) + 1)]

    def repeat_of(self, wildcard: str) -> int:
        """The repeat a {rep} wildcard names."""
        if wildcard == self.first_mark:
            return 1
        found = re.fullmatch(re.escape(self.mark_prefix) + f"({_NUMBER})", wildcard)
        if found is None or int(found[1]) < 2:
            raise ValueError(f"{self.name} repeat wildcard {wildcard!r}: expected {self.first_mark!r} "
                             f"(repeat 1) or '{self.mark_prefix}<r>' with r >= 2")
        return int(found[1])

    def path(self, pattern: str, rep: int) -> str:
        """`pattern` (holding `{rep}` where the repeat's mark goes) for repeat `rep`; its other wildcards
        stay."""
        if "{rep}" not in pattern:
            raise ValueError(f"{pattern!r} has no {{rep}} wildcard: where should the repeat's mark go?")
        return pattern.replace("{rep}", self.wildcard(rep))

    def _split(self, name: str) -> tuple[str, int] | None:
        found = re.search(re.escape(self.mark_prefix) + f"({_NUMBER})$", name)
        if found is not None and int(found[1]) >= 2:   # repeat 1's mark is first_mark, never numbered
            return name[:found.start()], int(found[1])
        if self.first_mark and name.endswith(self.first_mark):
            return name.removesuffix(self.first_mark), 1
        return None

    def split_name(self, name: str) -> tuple[str, int]:
        """A name ending in a repeat's mark (`loadtest_appV1__rep2`, `rep1`) as (the name before the mark,
        the repeat). A server name without a mark is repeat 1's; an engine name without one is an error."""
        split = self._split(name)
        if split is not None:
            return split
        if not self.first_mark:
            return name, 1
        raise ValueError(f"{name!r} names no {self.name} repeat: expected it to end in "
                         f"'{self.mark_prefix}<r>'")

    def repeat_in(self, path: str | PurePath) -> int:
        """The repeat whose mark a path holds: at the end of its file's name, or (engine) of a folder's."""
        path = PurePath(path)
        if not self.marks_folders:
            return self.split_name(path.stem)[1]
        for name in (path.stem, *reversed(path.parent.parts)):
            split = self._split(name)
            if split is not None:
                return split[1]
        raise ValueError(f"{str(path)!r} holds no {self.name} repeat: expected a file or folder named "
                         f"'{self.mark_prefix}<r>'")

    def paths_by_repeat(self, paths: Iterable[str | PurePath]) -> list[list[str]]:
        """Paths as one list per repeat, in repeat order (1 first), each keeping the paths' order: the files
        of repeat 1, of repeat 2, ..."""
        groups: dict[int, list[str]] = {}
        for path in paths:
            groups.setdefault(self.repeat_in(path), []).append(str(path))
        return [groups[rep] for rep in sorted(groups)]

    def previous(self, wildcard: str) -> str | None:
        """The {rep} wildcard of the repeat before the one `wildcard` names (None for repeat 1)."""
        rep = self.repeat_of(wildcard)
        return None if rep == 1 else self.wildcard(rep - 1)

    def after_previous(self, pattern: str) -> Callable[[Any], list[str]]:
        """A rule's input function: for repeat r >= 2 (the job's {rep} wildcard), `pattern` formatted with the
        job's wildcards and repeat r-1's {rep}: the job waits for that file of the previous repeat; repeat 1
        waits for nothing."""
        def inputs(wildcards: Any) -> list[str]:
            previous = self.previous(wildcards.rep)
            if previous is None:
                return []
            return [pattern.format(**{**dict(wildcards.items()), "rep": previous})]
        return inputs


SERVER_REPEATS = RepeatKind("server", (), first_mark="", mark_prefix="__rep", marks_folders=False)
ENGINE_REPEATS = RepeatKind("engine", ("engine",), first_mark="rep1", mark_prefix="rep", marks_folders=True)


def reserved_name_problem(name: str) -> str | None:
    """Why a name of yours (a variant, a document, an element) would collide with costlab's own file names,
    or None: they join their parts with `__` (`appV4__rep2` is appV4's repeat 2, `<run>__<dataset>` a docsize
    run), so a name holding `__` could be read as another job's."""
    if "__" in name:
        example = SERVER_REPEATS.path("appV4{rep}", 2)
        return (f"{name!r} holds '__', which costlab's own file names use to join their parts "
                f"({example} is appV4's repeat 2): give it a name without '__'")
    return None


def medians_over_repeats(per_repeat: pl.DataFrame, keys: Sequence[str], repeated: Sequence[str],
                         lists: Mapping[str, str] | None = None) -> pl.DataFrame:
    """Rows, one per (keys, rep), as one row per key: each numeric column the median over the key's repeats
    (with one repeat, the value itself; integer columns stay integers where every median is whole), every
    other column the first repeat's; then `repeats` (how many), `<column>_repeats` for `repeated` and
    `lists` (column -> name, e.g. {"seed": "seeds"}): each repeat's value, REPEATS_SEPARATOR-joined, in
    repeat order. Rows without a `rep` column are repeat 1."""
    import polars as pl  # noqa: PLC0415  here, not at the top: the rule files import this module while parsing

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


def over_repeat_findings(per_repeat: Sequence[Sequence[Finding]]) -> list[Finding]:
    """The same findings measured in each repeat (one list per repeat, the rows in the same order) as one
    row each: its value the median over the repeats, judged by the median's interval over them
    (costlab.intervals.over_repeats; interval_verdict against the row's rule's band). A value the same in
    every repeat has the zero-width interval [x, x] and its verdict says "the same in all N repeats". A
    repeat that failed or gave NaN/inf is left out and counted ("median of 4 of 5 repeats"), never replaced
    by another repeat's row; every repeat failed: the first repeat's row (not run). A row not comparable or
    not run (in the first repeat with a value) keeps that verdict and its reason, with the median and the
    interval in words; a row with no rule keeps that repeat's row."""
    # here, not at the top: the rule files import this module while parsing (these import numpy and polars)
    from costlab.finding import interval_verdict, samples_text  # noqa: PLC0415  heavy: bson, numpy, polars; the rule files import this module
    from costlab.intervals import over_repeats  # noqa: PLC0415  heavy: bson, numpy; the rule files import this module
    from costlab.verdicts import Verdict, is_missing, judge  # noqa: PLC0415  heavy: bson; the rule files import this module

    if not per_repeat:
        return []
    lengths = {len(rows) for rows in per_repeat}
    if len(lengths) != 1:
        raise ValueError(f"over_repeat_findings: repeats with {sorted(lengths)} rows; each needs the same")
    merged = []
    for rows in zip(*per_repeat):
        names = {(r.finding, r.metric) for r in rows}
        if len(names) != 1:
            raise ValueError(f"over_repeat_findings: the repeats' rows differ: {sorted(map(str, names))}")
        values = [None if is_missing(r.reproduced) else r.reproduced for r in rows]
        measured = [r for r, v in zip(rows, values) if v is not None and math.isfinite(v)]
        if not measured:
            merged.append(rows[0] if len(rows) == 1 else rows[0].with_(
                interval=over_repeats([math.nan] * len(rows)).describe()))
            continue
        first = measured[0]
        interval = over_repeats(values)
        if first.verdict in (Verdict.NOT_COMPARABLE, Verdict.NOT_RUN):
            merged.append(first.with_(reproduced=interval.estimate, interval=interval.describe(),
                                      samples=samples_text(interval.values), risk=None))
            continue
        if first.rule is None:   # judged by a rule it does not carry: as that repeat judged it
            merged.append(first)
            continue
        verdict, reason = judge(interval.estimate, first.rule)
        point = first.with_(reproduced=interval.estimate, verdict=verdict, reason=reason)
        merged.append(interval_verdict(point, interval, first.rule))
    return merged
