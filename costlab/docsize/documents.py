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
lightly as before. What the jobs build from a declaration (templates, batches, sizes) is
costlab.docsize.document_data.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from costlab.paths import snakemake_path_problem
from costlab.repeats import reserved_name_problem

KEY = "docsize.documents"
FIELDS = ("sample", "projected", "grow", "compare_to")
ORDERS = "orders"   # compare_to's default: the article's orders of the same size
NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,39}$")
_PUBLISHED_DATASET = re.compile(r"^orders(_[1-9][0-9]*k(_tail|_split)?)?$")
FILLER = "history"          # the orders' filler field; another name when the sample has a `history`
KEY_TYPES = "a date or a number"
PROJECTED_TYPES = "a date, a number, a string or an ObjectId"


class DocumentError(ValueError):
    """A declaration that cannot be used, in one line naming the key."""


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


def _fail(name: str, field: str | None, problem: str) -> DocumentError:
    return DocumentError(f"invalid config key {KEY}.{name}" + (f".{field}" if field else "") + f": {problem}")


CHECKOUT = Path(__file__).resolve().parent.parent.parent   # costlab's files (config/documents/ticket.json)


def path_problem(path: str) -> str | None:
    """Why Snakemake cannot carry a file's path in a rule's input, or None (costlab.paths says which)."""

    return snakemake_path_problem(path)


def sample_path(path: str | Path) -> Path:
    """Where a declared sample is: a relative path from the working directory (where results/ is written),
    else from costlab's checkout (the examples it ships, so its configs read them from anywhere)."""
    given = Path(path)
    if given.is_absolute() or given.is_file():
        return given
    shipped = CHECKOUT / given
    return shipped if shipped.is_file() else given


def read_sample(path: str | Path, name: str = "?") -> dict:
    """The sample document (canonical or relaxed extended JSON, or plain JSON), or DocumentError."""
    from bson import json_util  # noqa: PLC0415  heavy: bson; the rule files import this module
    from bson.errors import InvalidBSON  # noqa: PLC0415  heavy: bson; the rule files import this module

    resolved = sample_path(path)
    if not resolved.is_file():
        raise _fail(name, "sample", f"{path} is not a file (a relative path is read from the working "
                                    f"directory, {Path.cwd()}, else from costlab's checkout, {CHECKOUT})")
    from costlab.documentlimits import MAX_BSON_BYTES, MAX_FILE_BYTES, MAX_NESTING, document_problem  # noqa: PLC0415  heavy: bson; the rule files import this module

    try:
        if resolved.stat().st_size > MAX_FILE_BYTES:
            raise _fail(name, "sample", f"{path} is {resolved.stat().st_size:,} bytes: a document mongod can "
                                        f"store is at most {MAX_BSON_BYTES:,} BSON bytes (16 MiB)")
        text = resolved.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise _fail(name, "sample", f"{path} cannot be read as UTF-8 text: {err}") from None
    try:
        document = json_util.loads(text)
    except (ValueError, TypeError, InvalidBSON) as err:
        detail = " ".join(str(err).split())[:160]
        raise _fail(name, "sample", f"{path} is not valid JSON or extended JSON: {detail}") from None
    except RecursionError:
        raise _fail(name, "sample", f"{path} nests more than {MAX_NESTING} levels of documents and arrays: "
                                    f"MongoDB allows at most {MAX_NESTING}") from None
    if not isinstance(document, dict):
        raise _fail(name, "sample", f"{path} holds a JSON {type(document).__name__}, not a single JSON "
                                    "object (one document: {...})")
    problem = document_problem(document, str(path))
    if problem:
        raise _fail(name, "sample", problem)
    return document


def _kind(value: Any) -> str:
    """The type of a projected value, in the words of the messages: date, number, string, objectId, other."""

    from bson import Int64, ObjectId  # noqa: PLC0415  heavy: bson; the rule files import this module

    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, datetime):
        return "date"
    if isinstance(value, (int, float, Int64)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, ObjectId):
        return "objectId"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _declaration(name: Any, fields: Any, section_sizes: list[int]) -> DocumentDeclaration:
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise _fail(str(name), None, "a document's name is letters, digits, _ and -, starting with a letter "
                                     "(at most 40 characters)")

    if reserved_name_problem(name):
        raise _fail(name, None, reserved_name_problem(name))
    if _PUBLISHED_DATASET.match(name):
        raise _fail(name, None, f"{name!r} is a published dataset's name (orders, orders_<k>k, "
                                "orders_<k>k_tail, orders_<k>k_split): give your document another name")
    if not isinstance(fields, dict):
        raise _fail(name, None, "expected a mapping: {sample: <file>, projected: [field, ...], "
                                "grow: true|false}")
    for field in fields:
        if field not in FIELDS:
            raise _fail(name, str(field), f"unknown field (allowed: {', '.join(FIELDS)})")
    for field in ("sample", "projected"):
        if field not in fields:
            raise _fail(name, None, f"{field} is required (fields: {', '.join(FIELDS)})")
    sample = fields["sample"]
    if not isinstance(sample, str) or not sample:
        raise _fail(name, "sample", f"{sample!r} is not a file's path (e.g. documents/{name}.json)")
    projected = fields["projected"]
    if not isinstance(projected, list) or not all(isinstance(f, str) and f for f in projected):
        raise _fail(name, "projected", f"{projected!r} is not a list of field names "
                                       "(e.g. [createdAt, total])")
    if not projected:
        raise _fail(name, "projected", "empty: name the fields a list screen projects (the first is the "
                                       "window's key), e.g. [createdAt, total]")
    if len(set(projected)) != len(projected):
        raise _fail(name, "projected", f"{projected!r} names a field twice")
    grow = fields.get("grow", True)
    if not isinstance(grow, bool):
        raise _fail(name, "grow", f"{grow!r} is not allowed (allowed: true, false)")
    compare_to = fields.get("compare_to", ORDERS)
    if not isinstance(compare_to, str):
        raise _fail(name, "compare_to", f"{compare_to!r} is not a name (allowed: orders or another document)")
    declared = DocumentDeclaration(name, sample, tuple(projected), grow, compare_to)
    problem = path_problem(sample)
    if problem:
        raise _fail(name, "sample", problem)
    document = read_sample(sample, name)
    for field in projected:
        from costlab.documentlimits import indexed_name_problem  # noqa: PLC0415  heavy: bson; the rule files import this module

        if indexed_name_problem(field):
            raise _fail(name, "projected", indexed_name_problem(field))
        if field not in document:
            hint = " (a top-level field: nested paths are not indexed here)" if "." in field else ""
            raise _fail(name, "projected", f"{field!r} is not a field of the sample {sample}{hint} "
                                           f"(its fields: {', '.join(document)})")
        kind = _kind(document[field])
        if field == "_id":
            raise _fail(name, "projected", "'_id' is every document's own (the orders' ObjectIds): project "
                                           "the sample's other fields")
        if field == projected[0] and kind not in ("date", "number"):
            raise _fail(name, "projected", f"{field!r} is the window's key (the first projected field): "
                                           f"{KEY_TYPES}, not a {kind}")
        if kind not in ("date", "number", "string", "objectId"):
            raise _fail(name, "projected", f"{field!r} is a {kind}: a projected field is {PROJECTED_TYPES} "
                                           "(an array's index is multikey and covers nothing)")
    if grow:
        import bson  # noqa: PLC0415  heavy: bson; the rule files import this module

        own = len(bson.encode(document))
        from costlab.docsize.generate import target_doc_bytes  # noqa: PLC0415  heavy: numpy; the rule files import this module

        too_small = [s for s in section_sizes if target_doc_bytes(s) < own + 64]
        if too_small:
            size = too_small[0]
            raise _fail(name, "grow", f"the sample is {own:,} BSON bytes, too large to grow to {size} KB "
                                      f"({target_doc_bytes(size):,} B, docsize.sizes_kb): set grow: false to "
                                      f"measure it as it is, or leave {', '.join(map(str, too_small))} "
                                      "out of docsize.sizes_kb")
    return declared


def declarations(section: dict) -> list[DocumentDeclaration]:
    """The documents `section` (the config's docsize section) declares, in its order; DocumentError for the
    first that cannot be used (reads each sample file)."""
    documents = section.get("documents") or {}
    if not isinstance(documents, dict):
        raise DocumentError(f"invalid config key {KEY}: expected a mapping of name -> fields")
    sizes = [int(s) for s in section.get("sizes_kb") or ()]
    declared = [_declaration(name, fields, sizes) for name, fields in documents.items()]
    names = [d.name for d in declared]
    for d in declared:
        if d.compare_to == d.name:
            raise _fail(d.name, "compare_to", "a document is compared with the orders or another document, "
                                              "not itself")
        if d.compare_to != ORDERS and d.compare_to not in names:
            allowed = ", ".join([ORDERS, *[n for n in names if n != d.name]])
            raise _fail(d.name, "compare_to", f"{d.compare_to!r} is neither orders nor a declared document "
                                              f"(allowed: {allowed})")
    return declared


def problem(section: dict) -> str | None:
    """The first declared document that cannot be used, as a one-line config error (None: all can)."""
    if not section.get("documents"):
        return None
    try:
        declarations(section)
    except DocumentError as err:
        return str(err)
    return None


def declared_names(section: dict) -> list[str]:
    """The declared documents' names (no file read: the rules' wildcards)."""
    return [str(n) for n in (section.get("documents") or {})]


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
