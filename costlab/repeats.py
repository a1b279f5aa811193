"""Repeats of a study's server measuring jobs (`<study>.repeats`, docs/uncertainty.md): the {rep} wildcard.

Repeat 1 of a measuring job keeps the paths a single run always wrote; repeat r >= 2 adds `__rep<r>` to
them. The rules' {rep} wildcard holds that suffix (empty for repeat 1), so `snakemake <one output>` builds
that one repeat. Standard library only: the rule files import it.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterable

REPEAT_RE = r"(__rep([2-9]|[1-9][0-9]+))?"   # the {rep} wildcard's constraint


def reserved_name_problem(name: str) -> str | None:
    """Why a name of yours (a variant, a document, an element) would collide with costlab's own file names,
    or None: they join their parts with `__` (`appV4__rep2` is appV4's repeat 2, `<run>__<dataset>` a docsize
    run), so a name holding `__` could be read as another job's."""
    if "__" in name:
        return (f"{name!r} holds '__', which costlab's own file names use to join their parts "
                "(appV4__rep2 is appV4's repeat 2): give it a name without '__'")
    return None


def repeats(config: dict, study: str) -> int:
    """`<study>.repeats`: how many times each of its measuring jobs runs (schema default 1)."""
    return int((config.get(study) or {}).get("repeats", 1))


def repeat_suffix(rep: int) -> str:
    """The {rep} wildcard of repeat `rep` (1-based): '' for repeat 1, '__rep<r>' for the others."""
    if isinstance(rep, bool) or int(rep) != rep or rep < 1:
        raise ValueError(f"repeat {rep!r}: repeats count from 1")
    return "" if rep == 1 else f"__rep{int(rep)}"


def repeat_of(suffix: str) -> int:
    """The repeat a {rep} wildcard names ('' is repeat 1)."""
    if not suffix:
        return 1
    if not suffix.startswith("__rep") or not suffix[5:].isdigit() or int(suffix[5:]) < 2:
        raise ValueError(f"repeat wildcard {suffix!r}: expected '' or '__rep<r>' with r >= 2")
    return int(suffix[5:])


def repeat_suffixes(count: int) -> list[str]:
    """The {rep} wildcards of repeats 1..count."""
    return [repeat_suffix(r) for r in range(1, int(count) + 1)]


def split_repeat(name: str) -> tuple[str, int]:
    """A name with its {rep} wildcard at the end ('appV1__rep2') as (the name without it, the repeat)."""
    base, sep, rep = name.rpartition("__rep")
    if sep and rep.isdigit() and int(rep) >= 2 and str(int(rep)) == rep:
        return base, int(rep)
    return name, 1


def previous_repeat(suffix: str) -> str | None:
    """The {rep} wildcard of the repeat before the one `suffix` names (None for repeat 1)."""
    rep = repeat_of(suffix)
    return None if rep == 1 else repeat_suffix(rep - 1)


def paths_by_repeat(paths: Iterable[str | Path]) -> list[list[str]]:
    """Paths whose names end in a {rep} wildcard (before the extension), one list per repeat in repeat
    order (1 first), each keeping the paths' order: the files of repeat 1, of repeat 2, ..."""
    groups: dict[int, list[str]] = {}
    for path in paths:
        groups.setdefault(split_repeat(Path(path).stem)[1], []).append(str(path))
    return [groups[rep] for rep in sorted(groups)]


def after_previous_repeat(pattern: str) -> Callable[[Any], list[str]]:
    """A rule's input function: for repeat r >= 2 (the job's {rep} wildcard), `pattern` formatted with the
    job's wildcards and repeat r-1's {rep}: the job waits for that file of the previous repeat; repeat 1
    waits for nothing."""
    def inputs(wildcards: Any) -> list[str]:
        previous = previous_repeat(wildcards.rep)
        return [] if previous is None else [pattern.format(**{**dict(wildcards.items()), "rep": previous})]
    return inputs
