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
from datetime import datetime
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
    from bson import json_util  # noqa: PLC0415  heavy: bson; the rule files import this module (the registry loads docsize)
    from bson.errors import InvalidBSON  # noqa: PLC0415  heavy: bson; the rule files import this module (the registry loads docsize)

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
    from bson import Int64, ObjectId  # noqa: PLC0415  heavy: bson; the rule files import this module (the registry loads docsize)

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
        import bson  # noqa: PLC0415  heavy: bson; the rule files import this module (the registry loads docsize)

        from costlab.docsize.generate import target_doc_bytes  # noqa: PLC0415  heavy: numpy; the rule files import this module

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


def dataset_name(name: str, label: str) -> str:
    """The server dataset (and collection) of a declared document at one size: doc_<name>_<label>."""
    return f"doc_{name}_{label}"


