"""A user's own array elements, declared in config (`arraygrowth.elements`): the one place that reads them
(docs/variants.md).

Each entry is `name -> fields`:

    element     the element: a JSON object (Extended JSON: {"$numberLong": "1784106933"} is the article's
                own int64 timestamp, {"$date": ...} a date), inline in the config or the path of a .json
                file holding one (relative to the working directory, where results/ is written)
    update      how each write adds it: push ($push one element, the article's), push_slice ($push with
                $slice: -slice, a capped array), set_array ($set of the whole array, the application
                rewriting it) or insert (one document per write holding the element)
    slice       push_slice only: the elements the array keeps
    compare_to  what the report sets it beside, at the same profile and N: push (default: the article's
                $push), insert, or another declared element

Every write pushes the element with its integers (and dates) advanced by the write's index, as the article's
timestamps advance by one: no two writes carry the same bytes (a compressed journal would flatter a repeated
element), and every write the same number of bytes. `{"$numberLong": "1784106933"}` is then the article's
element, byte for byte.

Every declared element runs in the engine lab (costlab.arraygrowth.engine.element_sweep); one also listed in
`arraygrowth.workloads` runs on a server too, as a workload of its own (costlab.arraygrowth.workloads).
Used by costlab.config.check_semantics (through the study's config_problem: one line naming the key, before
any job) and by rules/arraygrowth.smk. Standard library at import; bson when an element is read.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from costlab.arraygrowth.names import FALLBACK_VARIANTS, PUBLISHED_WORKLOADS
from costlab.paths import snakemake_path_problem
from costlab.repeats import reserved_name_problem

KEY = "arraygrowth.elements"
FIELDS = ("element", "update", "slice", "compare_to")
UPDATES = ("push", "push_slice", "set_array", "insert")
NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,62}$")
DEFAULT_COMPARE_TO = "push"
INT32 = 2**31


class ElementError(ValueError):
    """A declaration that cannot be used; the message is one line naming the config key."""


@dataclass(frozen=True)
class ElementDeclaration:
    name: str
    value: Any               # the element as BSON values (bson.json_util's reading of the JSON)
    update: str
    slice: int | None
    compare_to: str
    source: str | None       # the .json file it was read from, or None (inline)

    def at(self, i: int) -> Any:
        """The element the i-th write adds (integers and dates advanced by i)."""
        return advanced(self.value, i)

    def describe(self) -> dict:
        """What a rerun depends on (a job parameter): the element as canonical Extended JSON."""
        from bson import json_util  # noqa: PLC0415  heavy: bson; the rule files import this module

        return {"element": json_util.dumps(self.value, json_options=json_util.CANONICAL_JSON_OPTIONS),
                "update": self.update, "slice": self.slice, "compare_to": self.compare_to}


def _fail(name: str, field: str | None, problem: str) -> ElementError:
    where = f"{KEY}.{name}" + (f".{field}" if field else "")
    return ElementError(f"invalid config key {where}: {problem}")


def advanced(value: Any, i: int) -> Any:
    """`value` with every integer advanced by i, keeping its BSON width (an int32 wraps within int32, an
    int64 stays int64), and every date by i seconds; other values as they are."""

    from bson import Int64  # noqa: PLC0415  heavy: bson; the rule files import this module

    if isinstance(value, bool):
        return value
    if isinstance(value, Int64):
        return Int64(int(value) + i)
    if isinstance(value, int):
        if -INT32 <= value < INT32:
            return (value + i + INT32) % (2 * INT32) - INT32
        return value + i
    if isinstance(value, datetime):
        return value + timedelta(seconds=i)
    if isinstance(value, dict):
        return {k: advanced(v, i) for k, v in value.items()}
    if isinstance(value, list):
        return [advanced(v, i) for v in value]
    return value


def _read_element(name: str, spec: Any) -> tuple[Any, str | None]:
    """(the element as BSON values, its file or None), or ElementError naming the key."""
    from bson import json_util  # noqa: PLC0415  heavy: bson; the rule files import this module
    from bson.errors import InvalidBSON  # noqa: PLC0415  heavy: bson; the rule files import this module

    source = None
    if isinstance(spec, str):
        source = spec
        path = Path(spec)
        if not spec.endswith(".json"):
            raise _fail(name, "element", f"{spec!r} is neither a JSON object nor a .json file's path")
        from costlab.documentlimits import MAX_BSON_BYTES, MAX_FILE_BYTES  # noqa: PLC0415  heavy: bson; the rule files import this module

        if snakemake_path_problem(spec):
            raise _fail(name, "element", snakemake_path_problem(spec))
        if not path.is_file():
            raise _fail(name, "element", f"{spec} is not a file (a relative path is read from the working "
                                         f"directory, {Path.cwd()})")
        if path.stat().st_size > MAX_FILE_BYTES:
            raise _fail(name, "element", f"{spec} is {path.stat().st_size:,} bytes: a document mongod can "
                                         f"store is at most {MAX_BSON_BYTES:,} BSON bytes (16 MiB)")
        text = path.read_text(encoding="utf-8", errors="replace")
        where = spec
    elif isinstance(spec, dict):
        try:
            text = json.dumps(spec)
        except (TypeError, ValueError) as err:
            raise _fail(name, "element", f"not valid JSON: {err}") from None
        where = "the element"
    else:
        raise _fail(name, "element", f"expected a JSON object or a .json file's path, got "
                                     f"{type(spec).__name__} {spec!r}")
    from costlab.documentlimits import MAX_NESTING, document_problem  # noqa: PLC0415  heavy: bson; the rule files import this module

    try:
        raw = json.loads(text)
    except ValueError as err:
        raise _fail(name, "element", f"{where} is not valid JSON: {err}") from None
    except RecursionError:
        raise _fail(name, "element", f"{where} nests more than {MAX_NESTING} levels of documents and arrays: "
                                     f"MongoDB allows at most {MAX_NESTING}") from None
    if not isinstance(raw, dict):
        raise _fail(name, "element", f"{where} is not a JSON object (got a {type(raw).__name__}): an element "
                                     'is a document, or one Extended JSON value such as {"$numberLong": "1"}')
    try:
        value = json_util.loads(text)
    except (ValueError, TypeError, InvalidBSON) as err:
        said = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise _fail(name, "element", f"{where} is not valid Extended JSON: {said}") from None
    # pushed into a document: the element is at least one level below the top
    problem = document_problem({"e": value}, f"{where} (inside the document it is pushed into)")
    if problem:
        raise _fail(name, "element", problem)
    return value, source


def _declaration(name: Any, fields: Any, names: list[str]) -> ElementDeclaration:
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise _fail(str(name), None, "an element's name is letters, digits, _ and -, starting with a letter "
                                     "(at most 63 characters)")

    if reserved_name_problem(name):
        raise _fail(name, None, reserved_name_problem(name))
    if name in PUBLISHED_WORKLOADS:
        raise _fail(name, None, f"{name!r} is a published workload's name: give your element another name")
    if name in FALLBACK_VARIANTS:
        raise _fail(name, None, f"{name!r} is a fallback variant's name (arraygrowth.fallback): give your "
                                "element another name")
    if not isinstance(fields, dict):
        raise _fail(name, None, f"expected a mapping of fields (allowed: {', '.join(FIELDS)}), "
                                f"got {type(fields).__name__}")
    unknown = [f for f in fields if f not in FIELDS]
    if unknown:
        raise _fail(name, str(unknown[0]), f"unknown field (allowed: {', '.join(FIELDS)})")
    if "element" not in fields:
        raise _fail(name, "element", "required: a JSON object, or the path of a .json file holding one")
    value, source = _read_element(name, fields["element"])
    update = fields.get("update", "push")
    if update not in UPDATES:
        raise _fail(name, "update", f"{update!r} is not allowed (allowed: {', '.join(UPDATES)})")
    slice_ = fields.get("slice")
    if slice_ is not None and update != "push_slice":
        raise _fail(name, "slice", f"only with update: push_slice (this element's update is {update})")
    if update == "push_slice":
        if slice_ is None:
            raise _fail(name, "slice", "required with update: push_slice (the elements the array keeps)")
        if isinstance(slice_, bool) or not isinstance(slice_, int) or slice_ < 1:
            raise _fail(name, "slice", f"{slice_!r} is not a positive integer")
    if update == "insert" and isinstance(value, dict) and "_id" in value:
        raise _fail(name, "element", "update: insert writes one document per element, each with its own "
                                     "_id: leave _id out of the element")
    compare_to = fields.get("compare_to", DEFAULT_COMPARE_TO)
    allowed = [*PUBLISHED_WORKLOADS, *[n for n in names if n != name]]
    if compare_to not in allowed:
        raise _fail(name, "compare_to", f"{compare_to!r} is not a workload (allowed: {', '.join(allowed)})")
    return ElementDeclaration(name, value, update, slice_, compare_to, source)


def one_declaration(name: str, fields: Any) -> ElementDeclaration:
    """One element's declaration, read alone (a job given its own element's fields): its compare_to, when
    another element, is taken as declared (the config check has seen the whole section)."""
    compare_to = fields.get("compare_to") if isinstance(fields, dict) else None
    return _declaration(name, fields, [name, *([str(compare_to)] if compare_to else [])])


def declarations(section: dict) -> list[ElementDeclaration]:
    """The elements `section` (the config's arraygrowth section) declares, in its order; ElementError (one
    line naming the key) for the first that cannot be used."""
    elements = section.get("elements") or {}
    if not isinstance(elements, dict):
        raise ElementError(f"invalid config key {KEY}: expected a mapping of name -> fields")
    names = [str(n) for n in elements]
    return [_declaration(name, fields, names) for name, fields in elements.items()]


def problem(section: dict) -> str | None:
    """The first declaration that cannot be used, or a workload that is neither published nor declared,
    as a one-line config error (None: all can)."""
    try:
        declarations(section)
    except ElementError as err:
        return str(err)
    declared = declared_names(section)
    for workload in section.get("workloads") or ():
        if workload not in PUBLISHED_WORKLOADS and workload not in declared:
            return (f"invalid config key arraygrowth.workloads: {workload!r} is not a workload (allowed: "
                    f"{', '.join([*PUBLISHED_WORKLOADS, *declared])}; an element of your own is declared in "
                    f"{KEY})")
    return None


def declared_names(section: dict) -> list[str]:
    elements = section.get("elements") or {}
    return [str(n) for n in elements] if isinstance(elements, dict) else []


def server_elements(section: dict) -> list[str]:
    """The declared elements the config also measures on a server (listed in arraygrowth.workloads)."""
    declared = declared_names(section)
    return [w for w in section.get("workloads") or () if w in declared]


def element_files(section: dict) -> dict[str, str]:
    """{name: its .json file} as configured (unchecked): the rules make each an input of its jobs."""
    elements = section.get("elements") or {}
    if not isinstance(elements, dict):
        return {}
    return {str(n): f["element"] for n, f in elements.items()
            if isinstance(f, dict) and isinstance(f.get("element"), str)}
