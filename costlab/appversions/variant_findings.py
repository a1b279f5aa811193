"""A user's variants beside the versions they are compared to: rows of kind "user variant".

Each variant declared in `appversions.variants` (costlab/appversions/variants.py) carries `compare_to`
(default: its base). For each evidence that measured both, one row per measure: the variant's value
over the compared version's, as a ratio (storage per event, index per event, documents per event;
data bytes per event from the model). No article published a number for a user's variant, so no row
is judged: its verdict is `not comparable` with the reason USER_VARIANT_REASON (the stand-in's rows:
`stand-in`), or `not run` when either value is missing. They are never counted among the published
findings (costlab.verdicts.COUNTED_KINDS); the report shows them in "Your variants".
"""
from __future__ import annotations

from typing import Iterable

import polars as pl

from costlab.appversions import registry
from costlab.declarations.findings import beside, measured, on_stand_in, server_kind_of
from costlab.finding import STAND_IN, Finding

# measure -> (its words, the unit of each version's value)
MEASURES = {
    "documents_per_event": ("documents per event", "documents/event"),
    "data_bytes_per_event": ("data bytes per event", "B/event"),
    "storage_bytes_per_event": ("storage per event", "B/event"),
    "index_bytes_per_event": ("index per event", "B/event"),
}
MODEL_MEASURES = ("documents_per_event", "data_bytes_per_event")
ENGINE_MEASURES = ("storage_bytes_per_event", "index_bytes_per_event", "documents_per_event")
SERVER_MEASURES = ("storage_bytes_per_event", "index_bytes_per_event", "documents_per_event")
MODEL_KIND = "model (no server)"


def compare_pairs(names: Iterable[str]) -> dict[str, str]:
    """{variant: the version it is compared to} of the registered versions among `names` that declare one
    (registry: the config's variants, registered in this process by variants.register_variants)."""
    pairs = {}
    for name in names:
        if name in registry.version_names():
            other = registry.declaration(name).compare_to
            if other:
                pairs[name] = other
    return pairs


def per_event(frame: pl.DataFrame) -> pl.DataFrame:
    """`frame` (model stats, engine storage or collStats rows) with the per-event columns it lacks,
    from its totals (documents, data_bytes, storage_bytes, index_bytes over events)."""
    extra = []
    for measure in MEASURES:
        total = measure.removesuffix("_per_event")
        if measure not in frame.columns and total in frame.columns and "events" in frame.columns:
            extra.append((pl.col(total) / pl.col("events")).alias(measure))
    return frame.with_columns(extra) if extra else frame


def variant_rows(frame: pl.DataFrame, measures: Iterable[str], evidence: str,
                 server_kind: str | None = None, pairs: dict[str, str] | None = None) -> list[Finding]:
    """Per variant in `frame` whose compared version is there too: one row per measure (the ratio
    variant / compared). server_kind: the rows' evidence kind (None: each row's `server_kind` column)."""
    frame = per_event(frame)
    pairs = compare_pairs(frame["version"].to_list()) if pairs is None else pairs
    by_version = {r["version"]: r for r in frame.iter_rows(named=True)}
    rows = []
    for variant, other in pairs.items():
        if variant not in by_version:
            continue
        mine, theirs = by_version[variant], by_version.get(other) or {}
        kind = server_kind or server_kind_of([mine.get("server_kind"), theirs.get("server_kind")])
        for measure in measures:
            words, unit = MEASURES[measure]
            a, b = measured(mine.get(measure)), measured(theirs.get(measure))
            note = (f"{variant}: {'—' if a is None else f'{a:.4g}'} {unit}; "
                    f"{other}: {'—' if b is None else f'{b:.4g}'} {unit}")
            # a measured ratio on the stand-in is not comparable for that; a missing one is not run
            stand_in = on_stand_in(kind) and a is not None and bool(b)
            rows.append(beside(f"{variant} beside {other}: {words} ({evidence})",
                               f"{measure} {variant}/{other}", a, b, server_kind=kind, note=note,
                               reason=STAND_IN if stand_in else None))
    return rows


def model_variant_rows(model_stats: pl.DataFrame, pairs: dict[str, str] | None = None) -> list[Finding]:
    """The server-free model's rows (model/stats.csv: documents and data bytes per event)."""
    return variant_rows(model_stats, MODEL_MEASURES, "model", MODEL_KIND, pairs)


def engine_variant_rows(storage: pl.DataFrame, pairs: dict[str, str] | None = None) -> list[Finding]:
    """The engine lab's rows (engine/storage.csv: storage, index and documents per event)."""
    return variant_rows(storage, ENGINE_MEASURES, "engine lab", "engine", pairs)


def server_variant_rows(collection_stats: pl.DataFrame, pairs: dict[str, str] | None = None) -> list[Finding]:
    """collStats' rows (tables/collection_stats.csv), each with its server's kind (mongod or stand-in)."""
    return variant_rows(collection_stats, SERVER_MEASURES, "collStats", None, pairs)
