"""Your own document in the docsize study: `docsize.documents` (docs/variants.md).

A declaration names a sample document of the user's (a JSON or extended-JSON file holding one object), the
fields a list screen projects (indexed together, as the article's {createdAt: 1, total: 1}), whether to grow
it to the configured `docsize.sizes_kb` with the orders' seeded filler (a `history` array of {at, note}
entries from the same text: costlab.docsize.generate) or keep it as it is, and what the report compares it
to (default: the article's orders of the same size).

Every document of the collection is the sample with the orders' values where a window query needs them:
`_id` is the order's ObjectId (first, as mongod stores it), the first projected field (the window's key) is
the order's createdAt (a date in the sample) or the order's position (a number), every other field keeps the
sample's value. A window of W orders is then W consecutive documents, as in the article; the engine lab
(costlab.docsize.engine) measures them with the orders' protocol.

This module imports bson only inside the functions that read a sample: a config without documents plans as
lightly as before.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from costlab.declarations import (
    Declarations,
    Entry,
    Field,
    FieldProblem,
    flag,
    parsed_json,
    read_text,
    text,
    user_file,
)
from costlab.documentlimits import document_problem, indexed_name_problem
from costlab.paths import user_file_path as sample_path  # noqa: F401  where a sample is (rules/docsize.smk)

KEY = "docsize.documents"
ORDERS = "orders"   # compare_to's default: the article's orders of the same size
_PUBLISHED_DATASET = re.compile(r"^orders(_[1-9][0-9]*k(_tail|_split)?)?$")
FILLER = "history"          # the orders' filler field; another name when the sample has a `history`
KEY_TYPES = "a date or a number"
PROJECTED_TYPES = "a date, a number, a string or an ObjectId"


@dataclass(frozen=True)
class DocumentDeclaration:
    name: str
    sample: str               # the path as written in the config (relative: the working directory)
    projected: tuple[str, ...]
    grow: bool
    compare_to: str           # ORDERS or another declared document

    @property
    def index_name(self) -> str:
        return "_".join(f"{field}_1" for field in self.projected)

    def collection(self, size_label: str) -> str:
        return f"costlab_docsize.doc_{self.name}_{size_label}"


def _sample(path: Any) -> dict:
    """The sample document a `sample` names (canonical or relaxed extended JSON, or plain JSON), or
    FieldProblem."""
    from bson import json_util
    from bson.errors import InvalidBSON

    content = read_text(path, user_file(path, "a file's path (e.g. documents/mine.json)"))
    document = parsed_json(content, path, json_util.loads, "not valid JSON or extended JSON",
                           (ValueError, TypeError, InvalidBSON))
    if not isinstance(document, dict):
        raise FieldProblem(f"{path} holds a JSON {type(document).__name__}, not a single JSON object "
                           "(one document: {...})")
    problem = document_problem(document, str(path))
    if problem:
        raise FieldProblem(problem)
    return document


def read_sample(path: str | Path, name: str = "?") -> dict:
    """The sample document of document `name` (as _sample), or DeclarationError naming its key."""
    try:
        return _sample(str(path))
    except FieldProblem as err:
        raise DECLARED.fail(name, "sample", str(err)) from None


def _kind(value: Any) -> str:
    """The type of a projected value, in the words of the messages: date, number, string, objectId, other."""
    from datetime import datetime

    from bson import Int64, ObjectId

    # bool first: a bool is an int
    kinds = ((bool, "boolean"), (datetime, "date"), ((int, float, Int64), "number"), (str, "string"),
             (ObjectId, "objectId"), (list, "array"), (dict, "object"))
    return next((word for types, word in kinds if isinstance(value, types)), type(value).__name__)


def _projected(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(f, str) and f for f in value):
        raise FieldProblem(f"{value!r} is not a list of field names (e.g. [createdAt, total])")
    if not value:
        raise FieldProblem("empty: name the fields a list screen projects (the first is the window's key), "
                           "e.g. [createdAt, total]")
    if len(set(value)) != len(value):
        raise FieldProblem(f"{value!r} names a field twice")
    for field in value:
        if indexed_name_problem(field):
            raise FieldProblem(indexed_name_problem(field))
    return tuple(value)


FIELDS = (
    Field("sample", text("a file's path (e.g. documents/mine.json)"),
          required="a JSON or extended-JSON file holding one document"),
    Field("projected", _projected, required="the fields a list screen projects, the first the window's key"),
    Field("grow", flag, default=True),
    Field("compare_to", text("a name (allowed: orders or another document)"), default=ORDERS),
)


def _taken(name: str) -> str | None:
    if _PUBLISHED_DATASET.match(name):
        return (f"{name!r} is a published dataset's name (orders, orders_<k>k, orders_<k>k_tail, "
                "orders_<k>k_split): give your document another name")
    return None


def _build(entry: Entry) -> DocumentDeclaration:
    name, sample, projected, grow = entry.name, entry["sample"], entry["projected"], entry["grow"]
    declared = DocumentDeclaration(name, sample, projected, grow, entry["compare_to"])
    document = read_sample(sample, name)
    for field in projected:
        if field not in document:
            hint = " (a top-level field: nested paths are not indexed here)" if "." in field else ""
            raise entry.fail("projected", f"{field!r} is not a field of the sample {sample}{hint} "
                                          f"(its fields: {', '.join(document)})")
        kind = _kind(document[field])
        if field == "_id":
            raise entry.fail("projected", "'_id' is every document's own (the orders' ObjectIds): project "
                                          "the sample's other fields")
        if field == projected[0] and kind not in ("date", "number"):
            raise entry.fail("projected", f"{field!r} is the window's key (the first projected field): "
                                          f"{KEY_TYPES}, not a {kind}")
        if kind not in ("date", "number", "string", "objectId"):
            raise entry.fail("projected", f"{field!r} is a {kind}: a projected field is {PROJECTED_TYPES} "
                                          "(an array's index is multikey and covers nothing)")
    if grow:
        import bson

        from costlab.docsize.generate import target_doc_bytes

        own = len(bson.encode(document))
        sizes = [int(s) for s in entry.section.get("sizes_kb") or ()]
        too_small = [s for s in sizes if target_doc_bytes(s) < own + 64]
        if too_small:
            size = too_small[0]
            raise entry.fail("grow", f"the sample is {own:,} BSON bytes, too large to grow to {size} KB "
                                     f"({target_doc_bytes(size):,} B, docsize.sizes_kb): set grow: false to "
                                     f"measure it as it is, or leave {', '.join(map(str, too_small))} "
                                     "out of docsize.sizes_kb")
    return declared


DECLARED: Declarations[DocumentDeclaration] = Declarations(
    key=KEY, noun="document", fields=FIELDS, build=_build, taken=_taken,
    compared_with=lambda section: [ORDERS], compared_words="neither orders nor a declared document")


def declarations(section: dict) -> list[DocumentDeclaration]:
    """The documents `section` (the config's docsize section) declares, in its order; DeclarationError for
    the first that cannot be used (reads each sample file)."""
    return DECLARED.declarations(section)


def problem(section: dict) -> str | None:
    """The first declared document that cannot be used, as a one-line config error (None: all can)."""
    return DECLARED.problem(section)


def declared_names(section: dict) -> list[str]:
    """The declared documents' names (no file read: the rules' wildcards)."""
    return DECLARED.declared_names(section)


def server_datasets(section: dict) -> list[str]:
    """Each declared document's datasets on a server, doc_<name>_<size> (no file read: the rules' targets)."""
    sizes = [f"{int(k)}k" for k in section.get("sizes_kb") or ()]
    return [dataset_name(str(name), label) for name, fields in (section.get("documents") or {}).items()
            for label in (sizes if (fields or {}).get("grow", True) else ["sample"])]


# ---- the documents -----------------------------------------------------------------------------------


def filler_name(document: dict) -> str:
    name = FILLER
    while name in document:
        name = "_" + name
    return name


def size_labels(declaration: DocumentDeclaration, sizes_kb: list[int]) -> list[str]:
    """The sizes a document is measured at: each configured size ('4k') when it grows, else 'sample'."""
    return [f"{int(s)}k" for s in sizes_kb] if declaration.grow else ["sample"]


def nearest_size_kb(document_bytes: int, sizes_kb: list[int]) -> int:
    """The configured size whose order is closest in BSON bytes (what a document kept as it is is compared
    with)."""
    from costlab.docsize.generate import target_doc_bytes

    return min((int(s) for s in sizes_kb), key=lambda s: (abs(target_doc_bytes(s) - document_bytes), s))


def measured_size_kb(declaration: DocumentDeclaration, document: dict, label: str,
                     sizes_kb: list[int]) -> int:
    """The size a document's label stands beside: its own ('4k' -> 4), or the nearest order's ('sample')."""
    import bson

    if label != "sample":
        return int(label[:-1])
    return nearest_size_kb(len(bson.encode(document)), sizes_kb)


def dataset_name(name: str, label: str) -> str:
    """The server dataset (and collection) of a declared document at one size: doc_<name>_<label>."""
    return f"doc_{name}_{label}"


def _element_offsets(encoded: bytes) -> dict[str, int]:
    """name -> offset of its value bytes, for a document's top-level elements."""
    from costlab.engine.bsonbytes import _FIXED_SIZES, _value_size

    offsets = {}
    i, end = 4, len(encoded) - 1
    while i < end:
        kind = encoded[i]
        name_end = encoded.index(b"\0", i + 1)
        value = name_end + 1
        offsets[encoded[i + 1:name_end].decode()] = value
        size = _FIXED_SIZES.get(kind)
        i = value + (size if size is not None else _value_size(encoded, kind, value))
    return offsets


def _key_slot(value: Any) -> tuple[str, Any]:
    """(the template's slot for the window key, a placeholder of its BSON type)."""
    from datetime import datetime, timezone

    from bson import Int64

    if isinstance(value, datetime):
        return "createdAt", datetime(1970, 1, 1, tzinfo=timezone.utc)
    if isinstance(value, Int64) or (isinstance(value, int) and not -(1 << 31) <= value < (1 << 31)):
        return "position_int64", Int64(0)
    if isinstance(value, int):
        return "position_int32", 0
    return "position_double", 0.0


def document_template(declaration: DocumentDeclaration, document: dict, size_kb: int | None, seed: int):
    """The template (costlab.docsize.generate.Template) of the declared document: `_id` first, the sample's
    fields with the window key's slot, and, at `size_kb`, the orders' filler that makes it exactly
    target_doc_bytes(size_kb) (None: the sample as it is)."""
    import bson
    import numpy as np
    from bson import ObjectId

    from costlab.docsize.generate import Template, _history_lengths, _write_history, _Writer, target_doc_bytes

    key = declaration.projected[0]
    slot, placeholder = _key_slot(document[key])
    fields = {"_id": ObjectId(bytes(12)), **{k: v for k, v in document.items() if k != "_id"}}
    fields[key] = placeholder
    filler = filler_name(fields)
    lengths: list[int] = []
    if size_kb is not None:
        empty = len(bson.encode({**fields, filler: []}))
        lengths = _history_lengths(target_doc_bytes(size_kb) - empty, seed, size_kb)
    prefix = bson.encode(fields)
    offsets = _element_offsets(prefix)
    writer = _Writer()
    writer.buf = bytearray(prefix[:-1])
    writer.slots = {"_id": offsets["_id"], slot: offsets[key]}
    at_offsets: list[int] = []
    note_offsets: list[int] = []
    if size_kb is not None:
        _write_history(writer, filler, lengths, at_offsets, note_offsets)
    writer.buf += b"\0"
    writer.buf[0:4] = len(writer.buf).to_bytes(4, "little")
    note_lengths = np.array(lengths, dtype=np.int64)
    gaps_rng = np.random.default_rng([seed, size_kb or 0, 3])
    at_gaps_ms = np.cumsum(gaps_rng.integers(1, 240, size=len(lengths))) * 60_000
    text_offsets = (np.concatenate([[0], np.cumsum(note_lengths)[:-1]]).astype(np.int64) if lengths
                    else note_lengths)
    return Template(np.frombuffer(bytes(writer.buf), dtype=np.uint8), dict(writer.slots),
                    np.array(at_offsets, dtype=np.int64), np.array(note_offsets, dtype=np.int64),
                    note_lengths, text_offsets, at_gaps_ms)


def key_value(document: dict, key: str, position: int):
    """The window key's value of the order at `position` (what the template's slot holds)."""
    from datetime import timedelta

    from bson import Int64

    from costlab.docsize.generate import EPOCH_MS, MINUTE_MS
    slot, placeholder = _key_slot(document[key])
    if slot == "createdAt":
        return placeholder + timedelta(milliseconds=EPOCH_MS + position * MINUTE_MS)
    if slot == "position_int64":
        return Int64(position)
    return position if slot == "position_int32" else float(position)


def batches(declaration: DocumentDeclaration, document: dict, size_kb: int | None, documents: int, seed: int,
            customers: int | None = None, batch_docs: int = 1024):
    """(index key dicts, encoded documents) per batch, in window-key order: what a load inserts."""
    from bson import ObjectId

    from costlab.docsize.generate import order_fields, template_batches

    tpl = document_template(declaration, document, size_kb, seed)
    ids = order_fields(documents, seed, customers).ids
    key = declaration.projected[0]
    constant = {f: document[f] for f in declaration.projected[1:]}
    stream = sum(declaration.name.encode()) + 1000 * (size_kb or 0)
    position = 0
    for encoded in template_batches(tpl, documents, seed, stream=stream, customers=customers,
                                    batch_docs=batch_docs):
        keys = []
        for k in range(len(encoded)):
            keys.append({"_id": ObjectId(ids[position + k].tobytes()),
                         key: key_value(document, key, position + k), **constant})
        position += len(encoded)
        yield keys, encoded
