"""Update statements applied to a record store the way mongod applies them (an unordered bulk upsert).

A statement is what the driver sends in an `update` command: `{q, u, multi: false, upsert: true}`
as BSON bytes. mongod (src/mongo/db/update/, src/mongo/db/exec/update_stage.cpp,
upsert_stage.cpp; facts carried over, code written here):

* finds the document by `q`: an `_id` equality is the IDHACK plan (the `_id` index); an equality on
  exactly a unique index's fields is an IXSCAN of that index; then it reads the record (FETCH);
* with a match, applies `u` to the stored document: modifier updates (`$inc`, `$push`) walk the
  fields in lexicographic order of their names (MongoDB 5.0+: "update operators process document
  fields with string-based names in lexicographic order") and append a field a path creates at the
  end of its parent; a pipeline (`[{$set}, {$unset}]`) is an aggregation over the one document,
  where `$set` replaces an existing field in place and appends a new one;
* with none, upserts: the new document holds `q`'s equality fields in the order of their paths
  (pathsupport::addEqualitiesToDoc walks `EqualityMatches`, a std::map by path, so `{key, date}`
  gives `date` before `key`), `u` applied to it, and `_id` first (generated when `q` has none);
* writes each statement as its own WriteUnitOfWork: an insert (record + every index entry), or the
  record's update through mongod's update rule (costlab.engine.records); index entries change only
  when an indexed value does (here none may: that is refused, not modelled).

Only what the studied statements use is implemented (`$inc`, `$push` of one value, `$set`/`$addFields`
and `$unset` stages with `$mergeObjects`, `$ifNull`, `$add`, `$reduce`, `$cond`, `$eq`,
`$concatArrays`, field paths and `$$this`/`$$value`); anything else is refused naming it.
"""
from __future__ import annotations

import copy
from functools import lru_cache
from typing import Any, Callable

import bson
from bson import ObjectId
from bson.codec_options import CodecOptions
from bson.raw_bson import RawBSONDocument

# Dates come back naive (they are UTC, and encode to the same bytes): a tz-aware decode made every
# date a timezone conversion, 5x the decode time of a bucket of dated items (235 against 46 us for 40).
# A statement's dates and a document's are decoded alike, so $eq compares them as mongod does.
CODEC = CodecOptions(tz_aware=False)


class _Missing:
    """A field that is not there (not null): expression objects leave such fields out."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING = _Missing()


def _nullish(value: object) -> bool:
    return value is None or value is MISSING


# -- aggregation expressions -----------------------------------------------------------------

def _path(value: object, parts: list[str]) -> object:
    for part in parts:
        if not isinstance(value, dict):
            return MISSING
        value = value.get(part, MISSING)
    return value


def _args(spec: object) -> list:
    return spec if isinstance(spec, list) else [spec]


# Each operator compiles its arguments once per statement into closures over `variables` (ROOT, this,
# value, ...): the $reduce of appV5R2-R4 runs its `in` once per array element of every statement.

def _merge_objects(spec):
    parts = [compile_expression(arg) for arg in _args(spec)]

    def run(variables):
        merged: dict = {}
        for part in parts:
            value = part(variables)
            if _nullish(value):
                continue
            if not isinstance(value, dict):
                raise ValueError(f"$mergeObjects needs documents, got {value!r}")
            merged.update(value)   # an existing name keeps its place, a new one is appended
        return merged
    return run


def _if_null(spec):
    *candidates, fallback = [compile_expression(arg) for arg in _args(spec)]

    def run(variables):
        for candidate in candidates:
            value = candidate(variables)
            if not _nullish(value):
                return value
        return fallback(variables)
    return run


def _add(spec):
    parts = [compile_expression(arg) for arg in _args(spec)]

    def run(variables):
        total = 0
        for part in parts:
            value = part(variables)
            if _nullish(value):
                return None
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ValueError(f"$add only adds numbers here, got {value!r}")
            total += value
        return total
    return run


def _reduce(spec):
    items_of, initial, step = (compile_expression(spec[k]) for k in ("input", "initialValue", "in"))

    def run(variables):
        items = items_of(variables)
        if _nullish(items):
            return None
        if not isinstance(items, list):
            raise ValueError(f"$reduce input must be an array, got {items!r}")
        scope = dict(variables)
        value = initial(variables)
        for item in items:
            scope["this"], scope["value"] = item, value
            value = step(scope)
        return value
    return run


def _cond(spec):
    if isinstance(spec, dict):
        spec = [spec["if"], spec["then"], spec["else"]]
    condition, then, otherwise = (compile_expression(arg) for arg in spec)

    def run(variables):
        chosen = condition(variables)
        if chosen is None or chosen is MISSING or chosen is False or chosen == 0:
            return otherwise(variables)
        return then(variables)

    return run


def _eq(spec):
    left_of, right_of = (compile_expression(arg) for arg in spec)

    def run(variables):
        left, right = left_of(variables), right_of(variables)
        if left is MISSING or right is MISSING:
            return left is right
        if isinstance(left, bool) != isinstance(right, bool):   # BSON: a boolean is never a number
            return False
        return left == right
    return run


def _concat_arrays(spec):
    parts = [compile_expression(arg) for arg in _args(spec)]

    def run(variables):
        joined: list = []
        for part in parts:
            value = part(variables)
            if type(value) is not list:
                if value is None or value is MISSING:
                    return None
                if not isinstance(value, list):
                    raise ValueError(f"$concatArrays needs arrays, got {value!r}")
            joined += value
        return joined
    return run


OPERATORS: dict[str, Callable[[Any], Callable[[dict], object]]] = {
    "$mergeObjects": _merge_objects, "$ifNull": _if_null, "$add": _add, "$reduce": _reduce,
    "$cond": _cond, "$eq": _eq, "$concatArrays": _concat_arrays,
}


def _field_path(parts: list[str]) -> Callable[[object], object]:
    """A path into a value (MISSING where any part is absent); a one-part path without the loop, since
    the $reduce of appV5R2-R4 reads `$$this.date` and `$$value.items` once per array element."""
    if len(parts) == 1:
        (part,) = parts
        return lambda value: value.get(part, MISSING) if type(value) is dict else _path(value, parts)
    return lambda value: _path(value, parts)


def compile_expression(expression: object) -> Callable[[dict], object]:
    """An aggregation expression as a function of its variables (ROOT is the document)."""
    if isinstance(expression, str) and expression.startswith("$"):
        if expression.startswith("$$"):
            name, *parts = expression[2:].split(".")
            path = _field_path(parts) if parts else None

            def variable(variables):
                try:
                    value = variables[name]
                except KeyError:
                    raise ValueError(f"unknown variable $${name}") from None
                return value if path is None else path(value)
            return variable
        path = _field_path(expression[1:].split("."))
        return lambda variables: path(variables["ROOT"])
    if isinstance(expression, dict):
        if len(expression) == 1:
            (name, spec), = expression.items()
            if name.startswith("$"):
                if name not in OPERATORS:
                    raise ValueError(f"expression operator {name} is not implemented in the engine lab")
                return OPERATORS[name](spec)
        fields = [(name, compile_expression(value)) for name, value in expression.items()]

        def build(variables):
            built = {}
            for name, field in fields:
                value = field(variables)
                if value is not MISSING:
                    built[name] = value
            return built
        return build
    if isinstance(expression, list):
        items = [compile_expression(item) for item in expression]
        if len(items) == 1:
            (item,) = items
            return lambda variables: [item(variables)]
        return lambda variables: [item(variables) for item in items]
    return lambda variables: expression


# -- updates -----------------------------------------------------------------------------------

def _sorted_paths(spec: dict) -> list[tuple[list[str], object]]:
    return sorted(((path.split("."), value) for path, value in spec.items()), key=lambda item: item[0])


def _parent(document: dict, parts: list[str], create: bool = True) -> dict:
    for part in parts[:-1]:
        child = document.get(part, MISSING)
        if child is MISSING:
            child = document[part] = {}
        elif not isinstance(child, dict):
            raise ValueError(f"cannot create field {'.'.join(parts)!r} in a non-document {child!r}")
        document = child
    return document


def _inc(spec: dict) -> Callable[[dict], None]:
    paths = _sorted_paths(spec)

    def run(document: dict) -> None:
        for parts, amount in paths:
            parent = _parent(document, parts)
            current = parent.get(parts[-1], MISSING)
            if current is MISSING:
                parent[parts[-1]] = amount
            elif isinstance(current, bool) or not isinstance(current, (int, float)):
                raise ValueError(f"$inc of non-numeric field {'.'.join(parts)!r} ({current!r})")
            else:
                parent[parts[-1]] = current + amount
    return run


def _push(spec: dict) -> Callable[[dict], None]:
    paths = _sorted_paths(spec)
    for _parts, value in paths:
        if isinstance(value, dict) and any(k.startswith("$") for k in value):
            raise ValueError(f"$push modifiers ({', '.join(value)}) are not implemented in the engine lab")

    def run(document: dict) -> None:
        for parts, value in paths:
            parent = _parent(document, parts)
            current = parent.get(parts[-1], MISSING)
            # a compiled update is shared by every statement sending it: each document gets its own copy
            pushed = copy.deepcopy(value) if isinstance(value, (dict, list)) else value
            if current is MISSING:
                parent[parts[-1]] = [pushed]
            elif not isinstance(current, list):
                raise ValueError(f"$push to non-array field {'.'.join(parts)!r}")
            else:
                current.append(pushed)
    return run


MODIFIERS: dict[str, Callable[[dict], Callable[[dict], None]]] = {"$inc": _inc, "$push": _push}


def _set_stage(name: str, spec: dict) -> Callable[[dict], None]:
    for field in spec:
        if "." in field:
            raise ValueError(f"{name} of a dotted path ({field!r}) is not implemented in the engine lab")
    fields = [(field, compile_expression(expression)) for field, expression in spec.items()]

    def run(document: dict) -> None:
        variables = {"ROOT": document, "CURRENT": document}
        values = [(field, expression(variables)) for field, expression in fields]   # all read, then set
        for field, value in values:
            if value is MISSING:
                document.pop(field, None)
            else:
                document[field] = value
    return run


def _unset_stage(spec: object) -> Callable[[dict], None]:
    fields = _args(spec)

    def run(document: dict) -> None:
        for field in fields:
            document.pop(field, None)
    return run


def compile_update(update: dict | list) -> Callable[[dict], dict]:
    """The update `u` (modifiers or a pipeline) as a function changing a document in place and
    returning it; anything not implemented is refused here, naming it."""
    steps: list[Callable[[dict], None]] = []
    if isinstance(update, list):
        for stage in update:
            (name, spec), = stage.items()
            if name in ("$set", "$addFields"):
                steps.append(_set_stage(name, spec))
            elif name == "$unset":
                steps.append(_unset_stage(spec))
            else:
                raise ValueError(f"update pipeline stage {name} is not implemented in the engine lab")
    else:
        for name, spec in update.items():
            if name not in MODIFIERS:
                raise ValueError(
                    f"update operator {name} is not implemented in the engine lab"
                    if name.startswith("$")
                    else "replacement updates are not implemented in the engine lab"
                )
            steps.append(MODIFIERS[name](spec))

    def run(document: dict) -> dict:
        for step in steps:
            step(document)
        return document
    return run


def apply_update(document: dict, update: dict | list) -> dict:
    """`document` (changed in place and returned) after the update `u` (modifiers or a pipeline)."""
    return compile_update(update)(document)


@lru_cache(maxsize=4096)
def _compiled(update_bson: bytes | tuple[bytes, ...]) -> Callable[[dict], dict]:
    """The compiled update of a statement's `u`, by its BSON bytes (a pipeline: its stages' bytes).
    A layout's statements repeat their `u` for every event of the same day and status, mostly close
    together in load order: compiling appV5R2's pipeline was a quarter of its statement's CPU. 4,096
    entries hit 87.4 % of appV5R2's 100,078 statements (16,384: 87.8 %, at 250 MB more peak memory)."""
    if isinstance(update_bson, tuple):
        return compile_update([bson.decode(stage, CODEC) for stage in update_bson])
    return compile_update(bson.decode(update_bson, CODEC))


def upsert_document(query: dict, update: dict | list, new_id: Callable[[], ObjectId]) -> dict:
    """The document an upsert inserts: `query`'s equality fields, `update` applied, `_id` first."""
    return _upserted(query, compile_update(update), new_id)


def _upserted(query: dict, apply: Callable[[dict], dict], new_id: Callable[[], ObjectId]) -> dict:
    document: dict = {}
    for name, value in sorted(query.items()):   # pathsupport's EqualityMatches: a std::map by path
        if name.startswith("$") or (isinstance(value, dict) and any(k.startswith("$") for k in value)):
            raise ValueError(f"only equality queries are upserted in the engine lab, got {name}: {value!r}")
        parts = name.split(".")
        _parent(document, parts)[parts[-1]] = value
    apply(document)
    _id = document.pop("_id") if "_id" in document else new_id()
    return {"_id": _id, **document}


# -- statements on a collection -----------------------------------------------------------------

def field_value(document: dict, name: str) -> object:
    value = _path(document, name.split("."))
    if value is MISSING:
        raise ValueError(f"indexed field {name!r} missing from the document (not modelled)")
    return value


def index_keys(collection, document: dict) -> dict:
    """{field: value} of every field the collection's indexes key on (dotted paths resolved)."""
    return {
        name: field_value(document, name) for index in collection.indexes.values() for name in index.fields
    }


def find_record(collection, query: dict) -> int | None:
    """The record id matching an equality `query` through the index mongod would use, or None."""
    for index in collection.indexes.values():
        if set(index.fields) == set(query):
            return index.find(tuple(query[name] for name in index.fields))
    raise ValueError(
        f"no index on exactly {sorted(query)} in {collection.ns}: a collection scan is not modelled"
    )


class ObjectIds:
    """ObjectIds as mongod generates them for upserts: a 4-byte time, 5 bytes fixed per process, a
    3-byte counter. The time here advances a second every `per_second` upserts (deterministic)."""

    def __init__(self, start: int = 0x5E0BE100, per_second: int = 1_000) -> None:   # 2020-01-01
        self.start, self.per_second, self.count = start, per_second, 0

    def __call__(self) -> ObjectId:
        seconds = self.start + self.count // self.per_second
        oid = ObjectId(
            seconds.to_bytes(4, "big") + b"\x63\x6f\x73\x74\x6c" + (self.count & 0xFFFFFF).to_bytes(3, "big")
        )
        self.count += 1
        return oid


def apply_statement(collection, statement: bytes, new_id: Callable[[], ObjectId]) -> str:
    """One update statement (BSON bytes) as its own transaction; returns 'insert' or the record-store
    path of the update ('modify', 'reserve', 'update')."""
    spec = RawBSONDocument(statement)   # the top level only: `u` is compiled once per distinct value
    if spec.get("multi"):
        raise ValueError("multi updates are not modelled in the engine lab")
    query, update = bson.decode(spec["q"].raw, CODEC), spec["u"]
    update = _compiled(tuple(stage.raw for stage in update) if isinstance(update, list) else update.raw)
    # one WriteUnitOfWork per statement; on a replica set it commits at its timestamp (Deployment.write)
    with collection.deployment.write() as stamps:
        record_id = find_record(collection, query)
        if record_id is None:
            if not spec.get("upsert"):
                return "no match"
            document = _upserted(query, update, new_id)
            collection._insert_one(index_keys(collection, document), bson.encode(document),
                                   stamps[0] if stamps else None)
            return "insert"
        old = collection.records.read(record_id)
        document = bson.decode(old, CODEC)
        before = index_keys(collection, document)
        update(document)
        if index_keys(collection, document) != before:
            raise ValueError(f"{collection.ns}: an update changing an indexed value is not modelled")
        if collection.oplog_writer is not None:
            raise ValueError("applying update statements on a replica set (oplog diffs) is not modelled")
        return collection.records.update(record_id, bson.encode(document), old)


__all__ = [
    "apply_update",
    "compile_update",
    "upsert_document",
    "apply_statement",
    "find_record",
    "ObjectIds",
    "MISSING",
]
