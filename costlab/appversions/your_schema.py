"""Your app versions' absolute costs beside their compare_to: the report's "Your schema" (costlab.yourschema).

Per variant declared in `appversions.variants` and listed in `appversions.versions`: documents and BSON
bytes per event (the server-free model, model/stats.csv), storage and index bytes per event (the engine lab,
engine/storage.csv; collStats where the variant was loaded into a server, tables/collection_stats.csv), and
what storage and index come to in a year: at `appversions.events_per_year`, and for `appversions.your_keys`
keys at the events per key of this run's workload. Each beside its compare_to (default: its base) as a ratio
with the ratio's interval (the engine lab's over its repeats; the model counts, it does not sample).
"""
from __future__ import annotations

from pathlib import Path

import polars as pl

from costlab.appversions.events import users_for
from costlab.appversions.variant_findings import per_event
from costlab.appversions.variants import DECLARED
from costlab.repeats import repeat_values
from costlab.yourschema import EXACT, ONE_RUN, CostRow, Point, SchemaFigure, YourSchema, ratio_over_repeats

ENGINE = "engine lab"
MODEL = "model"


def compare_pairs(section: dict) -> dict[str, str]:
    """{variant: its compare_to} of the variants `section` declares and lists in its versions (a variant
    without a base or compare_to is compared with nothing and left out)."""

    listed = set(section.get("versions") or ())
    return {name: other for name, other in DECLARED.compare_pairs(section).items() if name in listed}


def _rows_by_version(path: Path) -> dict[str, dict]:
    if not path.is_file():
        return {}

    frame = per_event(pl.read_csv(path, infer_schema_length=10000))
    return {str(r["version"]): r for r in frame.iter_rows(named=True)} if "version" in frame.columns else {}


def _number(row: dict | None, column: str) -> float | None:
    value = None if row is None else row.get(column)
    return None if value is None or value != value else float(value)


def _total(row: dict | None) -> float | None:
    a, b = _number(row, "storage_bytes_per_event"), _number(row, "index_bytes_per_event")
    return None if a is None or b is None else a + b


def _engine_interval(mine: dict, theirs: dict, columns: tuple[str, ...]) -> str:
    """The ratio's interval over the engine lab's repeats (each repeat the same events seed for both)."""

    def per_event(row: dict) -> list[float]:
        parts = [repeat_values(row, c.replace("_per_event", "")) for c in columns]
        events = _number(row, "events") or 0
        if not events or any(len(p) != len(parts[0]) for p in parts):
            return []
        return [sum(values) / events for values in zip(*parts)]

    a, b = per_event(mine), per_event(theirs)
    return ratio_over_repeats(a, b) if a and b else ONE_RUN


def your_schema(study_dir: Path, config: dict) -> YourSchema | None:
    section = config.get("appversions") or {}
    pairs = compare_pairs(section)
    if not pairs:
        return None

    model = _rows_by_version(study_dir / "model" / "stats.csv")
    engine = _rows_by_version(study_dir / "engine" / "storage.csv")
    server = _rows_by_version(study_dir / "tables" / "collection_stats.csv")
    per_year = int(section.get("events_per_year") or 0)
    keys = section.get("your_keys")
    per_key = per_year / users_for(per_year) if per_year else None
    rows: list[CostRow] = []
    for name, other in pairs.items():
        def row(measure, evidence, unit, a, b, interval, mine=name, theirs=other):
            rows.append(CostRow(mine, theirs, measure, evidence, unit, a, b, interval))

        m, mo = model.get(name), model.get(other)
        if m is not None:
            row("documents per event", MODEL, "documents/event", _number(m, "documents_per_event"),
                _number(mo, "documents_per_event"), EXACT)
            row("BSON bytes per event", MODEL, "B/event", _number(m, "data_bytes_per_event"),
                _number(mo, "data_bytes_per_event"), EXACT)
        e, eo = engine.get(name), engine.get(other)
        if e is not None:
            for measure, column in (("storage per event", "storage_bytes_per_event"),
                                    ("index per event", "index_bytes_per_event")):
                row(measure, ENGINE, "B/event", _number(e, column), _number(eo, column),
                    _engine_interval(e, eo or {}, (column,)) if eo else ONE_RUN)
        s, so = server.get(name), server.get(other)
        if s is not None:
            kind = str(s.get("server_kind") or "mongod")
            evidence = (
                "collStats (stand-in: not MongoDB's sizes)" if kind == "stand-in" else f"collStats ({kind})"
            )
            for measure, column in (("storage per event", "storage_bytes_per_event"),
                                    ("index per event", "index_bytes_per_event")):
                row(measure, evidence, "B/event", _number(s, column), _number(so, column),
                    "one load: no interval")
        # a year of it: the engine lab's storage + index (else the model's BSON bytes) per event, times events
        if e is not None:
            total, total_other, evidence = _total(e), _total(eo), ENGINE
            interval = _engine_interval(e, eo, ("storage_bytes_per_event", "index_bytes_per_event")) \
                if eo else ONE_RUN
        else:
            total, total_other, evidence = (_number(m, "data_bytes_per_event"),
                                            _number(mo, "data_bytes_per_event"), MODEL)
            interval = EXACT
        if per_year and total is not None:
            row(f"storage + index a year at {per_year:,} events a year", evidence, "B/year",
                total * per_year, None if total_other is None else total_other * per_year, interval)
        if keys and per_key and total is not None:
            row(f"storage + index a year for {int(keys):,} keys ({per_key:.0f} events a key)", evidence,
                "B/year", total * per_key * int(keys),
                None if total_other is None else total_other * per_key * int(keys), interval)
    engine_scale = ((config.get("engine") or {}).get("appversions") or {}).get("events_per_year")
    scale = (f"model at {per_year:,} events a year"
             + (f", engine lab at {int(engine_scale):,}" if engine_scale and engine else "")
             + ("" if keys else "; set appversions.your_keys to size it for your number of keys"))
    return YourSchema("appversions", scale, tuple(rows), _figure(engine, pairs))


def _figure(engine: dict[str, dict], pairs: dict[str, str]) -> SchemaFigure | None:
    points = []
    for version, row in engine.items():
        for part, column in (("storage", "storage_bytes_per_event"), ("index", "index_bytes_per_event")):
            value = _number(row, column)
            if value is not None:
                points.append(Point(version if version in pairs else "published versions", version, value,
                                    version in pairs, part))
    if not any(p.yours for p in points):
        return None
    return SchemaFigure(
        "Storage and index per event: your versions beside the published ones (engine lab)",
        "WiredTiger engine lab; your versions in colour, after the published ones", "version",
        "bytes per event", "O", tuple(points), facet_title="part")
