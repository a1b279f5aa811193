"""A layout rehearsed (costlab.appversions.rehearsal says what and why): its statements applied as mongod
applies them, the documents' BSON sizes against the model's formula and the engine lab's documents.

Heavy (polars, bson, the model, the engine lab's update compiler): costlab.appversions.rehearsal, which the
rule files import, imports this module only when a config declares variants.
"""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Callable

import bson
import polars as pl
from bson import ObjectId

from costlab.appversions.events import EVENT_SCHEMA, STATUSES
from costlab.appversions.model import document_sizes
from costlab.appversions.versions import get_version, prepared_columns
from costlab.config import ConfigError
from costlab.engine.match import matches
from costlab.engine.update import CODEC, compile_update, upsert_document

# Two keys; days across a month end (Jan 31 - Feb 1) and a quarter end (Mar 31 - Apr 1), two years
# (a bucket of a year or of a week sees several too); each status more than once; days with several events.
_KEYS = ("0A" * 32, "B1" * 32)
_DAYS = ((2023, 1, 30), (2023, 1, 31), (2023, 2, 1), (2023, 3, 31), (2023, 4, 1), (2024, 1, 2))


def rehearsal_events() -> pl.DataFrame:
    """The events a layout is rehearsed with, in load order (key, date, status)."""
    rows = []
    i = 0
    for day_index, (y, m, d) in enumerate(_DAYS):
        for key_index, key in enumerate(_KEYS):
            for _ in range(1 + (day_index + key_index) % 3):
                rows.append((key, datetime(y, m, d, tzinfo=timezone.utc), STATUSES[i % len(STATUSES)]))
                i += 1
    return pl.DataFrame(rows, schema=EVENT_SCHEMA, orient="row")


def _applied(statements: list) -> list[dict]:
    """The documents the statements leave, applied one by one as mongod applies them."""
    documents: list[dict] = []
    counter = iter(range(1, 1 << 24))

    def new_id() -> ObjectId:
        return ObjectId(next(counter).to_bytes(12, "big"))

    for op in statements:
        # the statement as the driver sends it (dates, binaries and ints as mongod receives them)
        filters = getattr(op, "_array_filters", None) or []
        sent = bson.decode(bson.encode({"q": op._filter, "u": op._doc, "f": filters}), CODEC)
        update = compile_update(sent["u"], sent["f"] or None)
        for i, document in enumerate(documents):
            matched, position = matches(document, sent["q"])
            if matched:
                documents[i] = update(document, position=position)
                break
        else:
            if op._upsert:
                documents.append(upsert_document(sent["q"], update, new_id))
    return documents


def rehearse(version, field: str = "layout") -> None:
    """ValueError in one line, naming the layout and `field` (the config key), when the version's
    statements use what the engine lab lacks or its size formula disagrees with the documents they
    build. `version`: an AppVersion."""
    layout = version.layout
    where = f"layout {layout.name!r} ({field})"
    events = rehearsal_events()
    try:
        statements = version.bulk_upsert_ops(events)
    except Exception as err:  # noqa: BLE001  the user's code: any error, said in one line
        raise ValueError(f"{where}: building its statements failed: {type(err).__name__}: "
                         f"{_line(err)}") from None
    try:
        built = _applied(statements)
    except Exception as err:  # noqa: BLE001  a statement of the user's: any error, said in one line
        raise ValueError(f"{where}: its statement cannot run in the engine lab: {_line(err)}") from None
    actual = sorted(len(bson.encode(document)) for document in built)
    try:
        model = sorted(int(size) for size in document_sizes(version, events).to_list())
    except NotImplementedError as err:
        raise ValueError(f"{where}: no size formula: {_line(err)}") from None
    except Exception as err:  # noqa: BLE001  the user's formula: any error, said in one line
        raise ValueError(f"{where}: its size formula failed: {type(err).__name__}: {_line(err)}") from None
    _compare(where, "its size formula", model, actual, built)
    try:
        engine = _engine_lab_sizes(version, events, prepared_columns)
    except Exception as err:  # noqa: BLE001  the user's engine-lab document: any error, in one line
        raise ValueError(f"{where}: its engine-lab documents (engine_groups) failed: {type(err).__name__}: "
                         f"{_line(err)}") from None
    if engine is not None:
        _compare(where, "its engine-lab documents (engine_groups)", sorted(engine), actual, built)


def _engine_lab_sizes(version, events: pl.DataFrame, prepared_columns: Callable) -> list[int] | None:
    prepared = prepared_columns(version, events).with_row_index("row")
    try:
        groups = list(version.layout.engine_groups(version, prepared))
    except NotImplementedError:
        return None
    return [len(bson.encode(build(len(rows))[0])) for rows, build in groups]


def _compare(where: str, what: str, sizes: list[int], actual: list[int], built: list[dict]) -> None:
    if sizes == actual:
        return
    if len(sizes) != len(actual):
        raise ValueError(f"{where}: {what} gives {len(sizes)} documents for the rehearsal's events, its "
                         f"statements build {len(actual)} (bson.encode)")
    differ = next(i for i, (a, b) in enumerate(zip(sizes, actual)) if a != b)
    raise ValueError(
        f"{where}: {what} gives {_mean(sizes):.2f} B a document, the documents its statements build "
        f"{_mean(actual):.2f} B (bson.encode; e.g. {sizes[differ]} B against {actual[differ]} B): make the "
        f"formula count the fields the statements write ({', '.join(_fields(built))})"
    )


def _mean(values: list[int]) -> float:
    return sum(values) / len(values) if values else 0.0


def _fields(documents: list[dict]) -> list[str]:
    names: dict[str, None] = {}
    for document in documents[:1]:
        for name in document:
            names[name] = None
    return list(names)


def _line(err: BaseException) -> str:
    text = str(err).splitlines()[0] if str(err) else ""
    return text


def rehearse_variants(section: dict[str, Any], names: list[str]) -> None:
    """Rehearse the named variants of the appversions section; ConfigError in one line naming the variant's
    config key otherwise."""
    for name in names:
        fields = (section.get("variants") or {}).get(name) or {}
        field = "layout_file" if isinstance(fields, dict) and fields.get("layout_file") else "layout"
        try:
            rehearse(get_version(name), field)
        except ValueError as err:
            raise ConfigError(f"invalid config key appversions.variants.{name}.{field}: {err}") from None


__all__ = ["rehearse", "rehearsal_events", "rehearse_variants"]
