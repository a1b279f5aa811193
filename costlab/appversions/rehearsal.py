"""A version's layout rehearsed before any job: a few events through its statements and the engine lab's
update compiler, and its size formula checked against the documents they build.

A layout owns three things that must agree (costlab/appversions/layouts.py): the statement of each
event (`upsert_ops`), the BSON size formula the model uses (`day_document_bytes` /
`bucket_document_bytes`) and, where it has one, the engine lab's final document (`engine_groups`).
Nothing else would tell when they do not: a size formula a byte off per field passes every job and
skews every number. So, for each variant the config declares, when the workflow's rules are read
(rules/appversions.smk: `rehearse_config`, after the config check and the variants' registration), so
that `snakemake` / `make all` / `make dryrun` stop before any job, in one line:

1. its statements for `rehearsal_events()` (two keys, days across a month and a quarter boundary, every
   status, several events a day) are compiled by costlab.engine.update, which refuses an operator,
   stage or expression the engine lab lacks, naming it;
2. they are applied in order, as mongod would (an in-memory collection: the document the query
   matches, else the upsert), and each document's size is bson.encode's;
3. the model's size of each document (costlab.appversions.model.document_sizes) and the engine lab's
   final documents are compared with those sizes: a difference is refused, with both numbers.

Light to import (the rules import it): polars, bson and the model are imported only when a config
declares variants.
"""
from __future__ import annotations

from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    import polars as pl

# Two keys; days across a month end (Jan 31 - Feb 1) and a quarter end (Mar 31 - Apr 1), two years
# (a bucket of a year or of a week sees several too); each status more than once; days with several events.
_KEYS = ("0A" * 32, "B1" * 32)
_DAYS = ((2023, 1, 30), (2023, 1, 31), (2023, 2, 1), (2023, 3, 31), (2023, 4, 1), (2024, 1, 2))


def rehearsal_events() -> "pl.DataFrame":
    """The events a layout is rehearsed with, in load order (key, date, status)."""
    import polars as pl

    from costlab.appversions.events import EVENT_SCHEMA, STATUSES

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
    import bson
    from bson import ObjectId

    from costlab.engine.match import matches
    from costlab.engine.update import CODEC, compile_update, upsert_document

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
    import bson

    from costlab.appversions.model import document_sizes
    from costlab.appversions.versions import prepared_columns

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


def _engine_lab_sizes(version, events: "pl.DataFrame", prepared_columns: Callable) -> list[int] | None:
    import bson

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


def rehearse_config(config: dict[str, Any]) -> None:
    """Rehearse every variant the config declares (registered already: register_variants); ConfigError
    in one line naming the variant's config key otherwise."""
    from costlab.appversions.variants import declared_names
    from costlab.config import ConfigError

    section = config.get("appversions") or {}
    names = declared_names(section)
    if not names:
        return
    from costlab.appversions.versions import get_version

    for name in names:
        fields = (section.get("variants") or {}).get(name) or {}
        field = "layout_file" if isinstance(fields, dict) and fields.get("layout_file") else "layout"
        try:
            rehearse(get_version(name), field)
        except ValueError as err:
            raise ConfigError(f"invalid config key appversions.variants.{name}.{field}: {err}") from None


__all__ = ["rehearse", "rehearsal_events", "rehearse_config"]
