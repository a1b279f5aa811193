"""The engine lab's run-to-run spread, measured once per scale and kept, and the verdicts it cannot support.

Identical engine runs (the same events, the same settings) do not store the same bytes: WiredTiger's
eviction and checkpoint threads run on the machine's clock, so at a small scale a collection of a dozen
4 KB pages is stored in 12 pages one run and 15 the next (appV6R0 at the smoke scale: 49,152-61,440 B,
storage / data 0.354-0.442 against the band [0.225, 0.399], so the verdict flipped between identical runs).

A study's spread is measured once per scale (`python -m costlab.appversions.spread`, which writes
resources/engine_spread/<study>.csv with the command that measured it: each run's value of each version
at that scale) and kept. A finding judged on one run at a scale whose kept runs disagree about its verdict
(some inside the tolerance band, some outside) is not given a verdict: it reads "inconclusive: this scale
is too small to decide (runs vary by ...)", naming a measured scale whose runs agree, where there is one.
The verdict then depends only on the scale, never on which way this run's coin fell. A scale never
measured keeps the point verdict.
"""
from __future__ import annotations

import csv
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Mapping

SPREAD_DIR = Path(__file__).resolve().parent.parent.parent / "resources" / "engine_spread"
SEPARATOR = "; "
COLUMNS = ("scale", "version", "column", "runs", "values", "storage_values", "events_per_year", "measured_at",
           "command")


def spread_path(study: str) -> Path:
    return SPREAD_DIR / f"{study}.csv"


@dataclass(frozen=True)
class Spread:
    """Each kept run's value of one finding at one scale (and, for the words, its stored bytes)."""
    scale: str
    version: str
    column: str
    values: tuple[float, ...]
    storage_values: tuple[float, ...]
    events_per_year: int | None

    @property
    def low(self) -> float:
        return min(self.values)

    @property
    def high(self) -> float:
        return max(self.values)

    def words(self) -> str:
        """'storage 49,152-61,440 B, ratio 0.354-0.442 in 5 identical runs'."""
        parts = []
        if self.storage_values:
            parts.append(f"storage {min(self.storage_values):,.0f}-{max(self.storage_values):,.0f} B")
        parts.append(f"ratio {self.low:.3g}-{self.high:.3g}")
        return ", ".join(parts) + f" in {len(self.values)} identical runs"

    def decides(self, rule: Callable[[float], bool]) -> bool:
        """Whether the kept runs all give the same verdict under `rule`."""
        return len({bool(rule(v)) for v in self.values}) == 1


def scale_key(row: Mapping) -> str:
    """A run's scale, from what its row says it grew: the same key for identical runs, another for any
    setting that changes what is stored."""
    keys = ("topology", "grown_by", "events", "slice_days", "cache_mb", "load_workers", "load_rate")
    return ",".join(f"{k}={row.get(k)}" for k in keys)


def _floats(text: str | None) -> tuple[float, ...]:
    return tuple(float(v) for v in str(text or "").split(SEPARATOR.strip()) if v.strip())


def read_spreads(path: str | Path) -> dict[tuple[str, str, str], Spread]:
    """(scale, version, column) -> Spread from a kept spread file (none: an empty mapping)."""
    path = Path(path)
    if not path.is_file():
        return {}
    spreads = {}
    with path.open(newline="") as handle:
        for row in csv.DictReader(handle):
            spread = Spread(row["scale"], row["version"], row["column"], _floats(row["values"]),
                            _floats(row.get("storage_values")),
                            int(row["events_per_year"]) if row.get("events_per_year") else None)
            if spread.values:
                spreads[(spread.scale, spread.version, spread.column)] = spread
    return spreads


def write_spreads(rows: Iterable[dict], path: str | Path) -> None:
    """Keep `rows` (COLUMNS) in `path`, replacing the rows of the same (scale, version, column). A file of
    resources/ (its history is git's), written whole or not at all."""

    path = Path(path)
    kept = {}
    if path.is_file():
        with path.open(newline="") as handle:
            kept = {(r["scale"], r["version"], r["column"]): r for r in csv.DictReader(handle)}
    for row in rows:
        kept[(row["scale"], row["version"], row["column"])] = {c: row.get(c, "") for c in COLUMNS}
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(kept[k] for k in sorted(kept))
    os.replace(tmp, path)


TOO_SMALL = "this scale is too small to decide"


def undecided_reason(spreads: Mapping[tuple[str, str, str], Spread], scale: str, version: str, column: str,
                     rule: Callable[[float], bool], scale_key_name: str) -> str | None:
    """The reason a one-run verdict is not given (the kept runs at this scale disagree under `rule`), naming
    a measured scale whose runs agree where there is one; None when the kept runs agree or none were kept."""
    here = spreads.get((scale, version, column))
    if here is None or here.decides(rule):
        return None
    deciding = sorted((s for (sc, v, c), s in spreads.items()
                       if v == version and c == column and sc != scale and s.decides(rule)
                       and (s.events_per_year or 0) > (here.events_per_year or 0)),
                      key=lambda s: s.events_per_year or 0)
    would = (f"{scale_key_name}: {deciding[0].events_per_year} decides it (there: {deciding[0].words()})"
             if deciding else f"a larger {scale_key_name} would (no larger scale measured here)")
    return f"{TOO_SMALL} (runs vary by {here.words()}); {would}"
