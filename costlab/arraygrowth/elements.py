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
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from costlab.arraygrowth.names import FALLBACK_VARIANTS, PUBLISHED_WORKLOADS
from costlab.declarations import (
    Declarations,
    Entry,
    Field,
    FieldProblem,
    one_of,
    parsed_json,
    positive_integer,
    read_text,
    text,
    user_file,
)
from costlab.documentlimits import document_problem

KEY = "arraygrowth.elements"
UPDATES = ("push", "push_slice", "set_array", "insert")
DEFAULT_COMPARE_TO = "push"
INT32 = 2**31


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
        from bson import json_util  # noqa: PLC0415  heavy: bson; the rule files import this module (the registry loads arraygrowth)

        return {"element": json_util.dumps(self.value, json_options=json_util.CANONICAL_JSON_OPTIONS),
                "update": self.update, "slice": self.slice, "compare_to": self.compare_to}


def advanced(value: Any, i: int) -> Any:
    """`value` with every integer advanced by i, keeping its BSON width (an int32 wraps within int32, an
    int64 stays int64), and every date by i seconds; other values as they are."""
    from bson import Int64  # noqa: PLC0415  heavy: bson; the rule files import this module (the registry loads arraygrowth)

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


def _read_element(spec: Any) -> tuple[Any, str | None]:
    """(the element as BSON values, its file or None): the reader of an element's `element`."""
    from bson import json_util  # noqa: PLC0415  heavy: bson; the rule files import this module (the registry loads arraygrowth)
    from bson.errors import InvalidBSON  # noqa: PLC0415  heavy: bson; the rule files import this module (the registry loads arraygrowth)

    source = None
    if isinstance(spec, str):
        source = spec
        content = read_text(spec, user_file(spec, "a JSON object or a .json file's path", suffix=".json"))
        where = spec
    elif isinstance(spec, dict):
        try:
            content = json.dumps(spec)
        except (TypeError, ValueError) as err:
            raise FieldProblem(f"not valid JSON: {err}") from None
        where = "the element"
    else:
        raise FieldProblem(f"expected a JSON object or a .json file's path, got {type(spec).__name__} "
                           f"{spec!r}")
    raw = parsed_json(content, where, json.loads, "not valid JSON")
    if not isinstance(raw, dict):
        raise FieldProblem(f"{where} is not a JSON object (got a {type(raw).__name__}): an element is a "
                           'document, or one Extended JSON value such as {"$numberLong": "1"}')
    value = parsed_json(content, where, json_util.loads, "not valid Extended JSON",
                        (ValueError, TypeError, InvalidBSON))
    # pushed into a document: the element is at least one level below the top
    problem = document_problem({"e": value}, f"{where} (inside the document it is pushed into)")
    if problem:
        raise FieldProblem(problem)
    return value, source


FIELDS = (
    Field("element", _read_element, required="a JSON object, or the path of a .json file holding one"),
    Field("update", one_of(UPDATES), default="push"),
    Field("slice", positive_integer),
    Field("compare_to", text("a workload's name"), default=DEFAULT_COMPARE_TO),
)


def _taken(name: str) -> str | None:
    if name in PUBLISHED_WORKLOADS:
        return f"{name!r} is a published workload's name: give your element another name"
    if name in FALLBACK_VARIANTS:
        return f"{name!r} is a fallback variant's name (arraygrowth.fallback): give your element another name"
    return None


def _build(entry: Entry) -> ElementDeclaration:
    (value, source), update, slice_ = entry["element"], entry["update"], entry["slice"]
    if slice_ is not None and update != "push_slice":
        raise entry.fail("slice", f"only with update: push_slice (this element's update is {update})")
    if update == "push_slice" and slice_ is None:
        raise entry.fail("slice", "required with update: push_slice (the elements the array keeps)")
    if update == "insert" and isinstance(value, dict) and "_id" in value:
        raise entry.fail("element", "update: insert writes one document per element, each with its own _id: "
                                    "leave _id out of the element")
    return ElementDeclaration(entry.name, value, update, slice_, entry["compare_to"], source)


DECLARED: Declarations[ElementDeclaration] = Declarations(
    key=KEY, noun="element", fields=FIELDS, build=_build, taken=_taken,
    compared_with=lambda section: list(PUBLISHED_WORKLOADS), compared_words="not a workload")


def one_declaration(name: str, fields: Any) -> ElementDeclaration:
    """One element's declaration, read alone (a job given its own element's fields): its compare_to, when
    another element, is taken as declared (the config check has seen the whole section)."""
    return DECLARED.one(name, fields)


def declarations(section: dict) -> list[ElementDeclaration]:
    """The elements `section` (the config's arraygrowth section) declares, in its order; DeclarationError
    (one line naming the key) for the first that cannot be used."""
    return DECLARED.declarations(section)


def problem(section: dict) -> str | None:
    """The first declaration that cannot be used, or a workload that is neither published nor declared,
    as a one-line config error (None: all can)."""
    problem = DECLARED.problem(section)
    if problem:
        return problem
    declared = declared_names(section)
    for workload in section.get("workloads") or ():
        if workload not in PUBLISHED_WORKLOADS and workload not in declared:
            return (f"invalid config key arraygrowth.workloads: {workload!r} is not a workload (allowed: "
                    f"{', '.join([*PUBLISHED_WORKLOADS, *declared])}; an element of your own is declared in "
                    f"{KEY})")
    return None


def declared_names(section: dict) -> list[str]:
    return DECLARED.declared_names(section)


def server_elements(section: dict) -> list[str]:
    """The declared elements the config also measures on a server (listed in arraygrowth.workloads)."""
    declared = declared_names(section)
    return [w for w in section.get("workloads") or () if w in declared]


def element_files(section: dict) -> dict[str, str]:
    """{name: its .json file} as configured (unchecked): the rules make each an input of its jobs."""
    return DECLARED.files(section, "element")
