"""Update statements applied to a record store the way mongod applies them (an unordered bulk upsert).

A statement is what the driver sends in an `update` command: `{q, u, multi: false, upsert: true,
arrayFilters}` as BSON bytes. mongod (src/mongo/db/update/, src/mongo/db/exec/update_stage.cpp,
upsert_stage.cpp; facts carried over, code written here):

* finds the document by `q`: an `_id` equality is the IDHACK plan (the `_id` index); an equality on
  a unique index's fields is an IXSCAN of that index; then it reads the record (FETCH) and matches the
  rest of `q` (costlab.engine.match), which also gives the positional `$` its index;
* with a match, applies `u` to the stored document:
  - modifiers (`$set`, `$unset`, `$setOnInsert`, `$inc`, `$mul`, `$min`, `$max`, `$rename`,
    `$currentDate`, `$push` with `$each`/`$slice`/`$sort`/`$position`, `$addToSet`, `$pop`, `$pull`,
    `$pullAll`; paths with `$`, `$[]` and `$[<id>]` with `arrayFilters`) walk their paths in
    lexicographic order of the field names, numeric names in numeric order (MongoDB 5.0+), replace an
    existing field in place and append a field a path creates at the end of its parent; two paths where
    one is the other's prefix conflict (refused, as mongod refuses them);
  - a pipeline (`$set`/`$addFields`, `$unset`, `$project`, `$replaceWith`/`$replaceRoot`, with the
    expressions of costlab.engine.expressions) is an aggregation over the one document; the result
    keeps the stored `_id`, first;
  - a replacement document replaces all but `_id`;
* with none, upserts: the new document holds `q`'s equality fields in the order of their paths
  (pathsupport::addEqualitiesToDoc walks `EqualityMatches`, a std::map by path, so `{key, date}`
  gives `date` before `key`), `u` applied to it (`$setOnInsert` only here), and `_id` first (generated
  when `q` has none);
* writes each statement as its own WriteUnitOfWork: an insert (record + every index entry), or the
  record's update through mongod's update rule (costlab.engine.records); index entries change only
  when an indexed value does (here none may: that is refused, not modelled).

Numbers keep mongod's widths: `$inc`/`$mul` of int32s stay int32 until they overflow (then int64; an
int64 overflow fails the update), a double makes a double. `$min`/`$max`/`$addToSet`/`$pull` compare by
mongod's BSON order (costlab.engine.values). What is not implemented is refused when the update is
compiled, naming it (`check_update` for a layout's statements before any job).
tests/test_engine_update_property.py runs random statements through this and through mongod 6.0.5 and
compares the documents byte for byte.
"""
from __future__ import annotations

import copy
import re
from datetime import datetime, timezone
from functools import cmp_to_key, lru_cache
from typing import Any, Callable

import bson
from bson import ObjectId, Timestamp
from bson.codec_options import CodecOptions
from bson.raw_bson import RawBSONDocument

from costlab.engine.expressions import compile_expression
from costlab.engine.match import matches, path_matches, value_matches
from costlab.engine.values import (
    INT32_MAX,
    INT32_MIN,
    MISSING,
    as_kind,
    compare,
    equal,
    integer_result,
    is_integral,
    number_kind,
    widest,
)

# Dates come back naive (they are UTC, and encode to the same bytes): a tz-aware decode made every
# date a timezone conversion, 5x the decode time of a bucket of dated items (235 against 46 us for 40).
# A statement's dates and a document's are decoded alike, so comparisons see them as mongod does.
CODEC = CodecOptions(tz_aware=False)


class UpdateError(ValueError):
    """An update mongod refuses too (a conflict, a type mongod cannot apply an operator to)."""


class NotImplementedInEngine(ValueError):
    """An update the engine lab does not implement (refused before any job: check_update)."""


# -- paths -----------------------------------------------------------------------------------------

_IDENTIFIER = re.compile(r"^\$\[([a-z][a-zA-Z0-9]*)?\]$")


def _split(path: str, operator: str) -> list[str]:
    if not isinstance(path, str) or not path:
        raise UpdateError(f"{operator}: an empty field name is not allowed")
    parts = path.split(".")
    if any(not part for part in parts):
        raise UpdateError(f"{operator}: the path {path!r} has an empty field name")
    if parts.count("$") > 1:
        raise UpdateError(f"{operator}: too many positional (i.e. '$') elements in {path!r}")
    for part in parts:
        if part.startswith("$") and part != "$" and not _IDENTIFIER.match(part):
            raise UpdateError(f"{operator}: the dollar ($) prefixed field {part!r} in {path!r} "
                              "is not allowed")
    return parts


def _numeric(part: str) -> int | None:
    return int(part) if part.isdigit() else None


def _part_order(a: str, b: str) -> int:
    """mongod's order of an update's field names: numeric names by number, others by their bytes."""
    na, nb = _numeric(a), _numeric(b)
    if na is not None and nb is not None and na != nb:
        return -1 if na < nb else 1
    ab, bb = a.encode(), b.encode()
    return (ab > bb) - (ab < bb)


def _path_order(a: list[str], b: list[str]) -> int:
    for x, y in zip(a, b):
        c = _part_order(x, y)
        if c:
            return c
    return (len(a) > len(b)) - (len(a) < len(b))


def _render(value: object) -> str:
    return repr(value) if not isinstance(value, dict) else "{" + ", ".join(
        f"{k}: {_render(v)}" for k, v in value.items()) + "}"


# -- modifier leaves: what each operator does to the value at its path --------------------------------

REMOVE: Any = object()   # the leaf removes the field (an array element becomes null)
KEEP: Any = object()     # the leaf leaves the value as it is


def _copy(value: object) -> object:
    """A compiled update is shared by every statement sending it: each document gets its own copy (of its
    documents and arrays; BSON's other values are not changed in place)."""
    kind = type(value)
    if kind is dict:
        return {k: _copy(v) for k, v in value.items()}
    if kind is list:
        return [_copy(v) for v in value]
    return copy.deepcopy(value) if isinstance(value, (dict, list)) else value


def _arithmetic(operator: str, amount: object) -> Callable[[object, str], object]:
    kind = number_kind(amount)
    if kind is None:
        raise UpdateError(f"cannot {operator[1:]} with non-numeric argument: {{{_render(amount)}}}")
    if kind == "decimal":
        raise NotImplementedInEngine(f"{operator} of a Decimal128 is not implemented in the engine lab")

    def leaf(current: object, path: str) -> object:
        if type(current) is int and type(amount) is int and operator == "$inc":
            total = current + amount   # int32 + int32, the studied counters: int32 while it fits
            if INT32_MIN <= total <= INT32_MAX:
                return total if total != current else KEEP
        if current is MISSING:
            if operator == "$inc":
                return amount
            return 0.0 * amount if kind == "double" else as_kind(0, kind)   # -0.0 for a negative double
        current_kind = number_kind(current)
        if current_kind is None:
            raise UpdateError(f"cannot apply {operator} to a value of non-numeric type: {path}: {current!r}")
        if current_kind == "decimal":
            raise NotImplementedInEngine(f"{operator} of a Decimal128 is not implemented in the engine lab")
        result_kind = widest(kind, current_kind)
        if result_kind == "double":
            value = float(current) + float(amount) if operator == "$inc" else float(current) * float(amount)
        else:
            exact = int(current) + int(amount) if operator == "$inc" else int(current) * int(amount)
            value = integer_result(exact, result_kind)
            if value is None:
                raise UpdateError(f"Failed to apply {operator} operations to current value ({current!r})")
        # the same type and value (0.0 and -0.0 alike, NaN and NaN): a no-op, the stored bytes stay
        if result_kind == current_kind and (value == current or (value != value and current != current)):
            return KEEP
        return value
    return leaf


def _set(value: object) -> Callable[[object, str], object]:
    return lambda current, path: _copy(value)


def _unset(_value: object) -> Callable[[object, str], object]:
    return lambda current, path: REMOVE if current is not MISSING else KEEP


def _extreme(operator: str, value: object) -> Callable[[object, str], object]:
    wanted = -1 if operator == "$min" else 1

    def leaf(current: object, path: str) -> object:
        if current is MISSING or compare(value, current) == wanted:
            return _copy(value)
        return KEEP
    return leaf


def _current_date(spec: object) -> Callable[[object, str], object]:
    if isinstance(spec, bool):
        kind = "date"
    elif isinstance(spec, dict) and set(spec) == {"$type"} and spec["$type"] in ("date", "timestamp"):
        kind = spec["$type"]
    else:
        raise UpdateError(f"$currentDate takes true or {{$type: 'date' | 'timestamp'}}, got {spec!r}")

    def leaf(current: object, path: str) -> object:
        now = datetime.now(timezone.utc).replace(tzinfo=None)
        now = now.replace(microsecond=now.microsecond // 1000 * 1000)
        return now if kind == "date" else Timestamp(int(now.replace(tzinfo=timezone.utc).timestamp()), 1)
    return leaf


def _array_leaf(operator: str, change: Callable[[list], list | None], create: Callable[[], object]):
    """A leaf on an array: `create()` where the field is missing (KEEP: nothing), `change(copy)` where
    it is an array (None: no change), refused on anything else."""
    def leaf(current: object, path: str) -> object:
        if current is MISSING:
            return create()
        if not isinstance(current, list):
            raise UpdateError(f"The field '{path}' must be an array but is of another type in {operator}")
        changed = change(current)
        return KEEP if changed is None else changed
    return leaf


def _sort_key(spec: object) -> Callable[[object], Any]:
    if isinstance(spec, dict):
        if not spec:
            raise UpdateError("$sort pattern must not be empty")
        fields = []
        for name, direction in spec.items():
            if direction not in (1, -1) or isinstance(direction, bool):
                raise UpdateError(f"$sort directions must be 1 or -1, got {name}: {direction!r}")
            if not name or name.startswith("$") or "" in name.split("."):
                raise UpdateError(f"$sort field {name!r} is not valid")
            fields.append((name.split("."), direction))

        def by_fields(a: object, b: object) -> int:
            for parts, direction in fields:
                c = compare(_sort_value(a, parts), _sort_value(b, parts))
                if c:
                    return c * direction
            return 0
        return cmp_to_key(by_fields)
    if spec not in (1, -1) or isinstance(spec, bool):
        raise UpdateError(f"$sort must be 1, -1 or a document of fields, got {spec!r}")
    return cmp_to_key(lambda a, b: compare(a, b) * spec)


def _sort_value(element: object, parts: list[str]) -> object:
    value = element
    for part in parts:
        if not isinstance(value, dict):
            return None
        value = value.get(part, MISSING)
    return None if value is MISSING else value


def _push(spec: object) -> Callable[[object, str], object]:
    if isinstance(spec, dict) and "$each" in spec:
        unknown = set(spec) - {"$each", "$slice", "$sort", "$position"}
        if unknown:
            raise UpdateError(f"unrecognized clause in $push: {sorted(unknown)[0]}")
        each = spec["$each"]
        if not isinstance(each, list):
            raise UpdateError(f"the argument to $each in $push must be an array, got {each!r}")
        slice_ = spec.get("$slice")
        if slice_ is not None and not is_integral(slice_):
            raise UpdateError(f"the value for $slice must be an integer, got {slice_!r}")
        position = spec.get("$position")
        if position is not None and not is_integral(position):
            raise UpdateError(f"the value for $position must be an integer, got {position!r}")
        key = _sort_key(spec["$sort"]) if "$sort" in spec else None
    elif isinstance(spec, dict) and any(name.startswith("$") for name in spec):
        raise UpdateError(f"$push modifiers need $each, got {sorted(spec)}")
    else:
        each, slice_, position, key = [spec], None, None, None

    def change(items: list) -> list:
        added = [_copy(v) for v in each]
        if position is None and key is None and slice_ is None:
            items.extend(added)   # in place: a modifier changes the document it is given
            return items
        items = list(items)
        if position is None:
            items += added
        else:
            at = int(position)
            at = max(len(items) + at, 0) if at < 0 else min(at, len(items))
            items[at:at] = added
        if key is not None:
            items.sort(key=key)
        if slice_ is not None:
            n = int(slice_)
            items = items[:n] if n >= 0 else items[len(items) + n:] if -n < len(items) else items
        return items
    return _array_leaf("$push", change, lambda: change([]))


def _add_to_set(spec: object) -> Callable[[object, str], object]:
    if isinstance(spec, dict) and "$each" in spec:
        if set(spec) != {"$each"}:
            raise UpdateError(f"$addToSet takes only $each, got {sorted(spec)}")
        each = spec["$each"]
        if not isinstance(each, list):
            raise UpdateError(f"the argument to $each in $addToSet must be an array, got {each!r}")
    else:
        each = [spec]

    def change(items: list) -> list | None:
        added = []
        for value in each:
            if not any(equal(value, item) for item in items) and not any(equal(value, a) for a in added):
                added.append(_copy(value))
        return items + added if added else None
    return _array_leaf("$addToSet", change, lambda: change([]) or [])


def _pop(spec: object) -> Callable[[object, str], object]:
    if number_kind(spec) is None or spec not in (1, -1):
        raise UpdateError(f"$pop expects 1 or -1, found: {spec!r}")

    def change(items: list) -> list | None:
        if not items:
            return None
        return items[:-1] if spec == 1 else items[1:]
    return _array_leaf("$pop", change, lambda: KEEP)


def _pull(condition: object) -> Callable[[object, str], object]:
    def change(items: list) -> list | None:
        kept = [item for item in items if not value_matches(item, condition)]
        return kept if len(kept) != len(items) else None
    return _array_leaf("$pull", change, lambda: KEEP)


def _pull_all(values: object) -> Callable[[object, str], object]:
    if not isinstance(values, list):
        raise UpdateError(f"$pullAll requires an array argument but was given {values!r}")

    def change(items: list) -> list | None:
        kept = [item for item in items if not any(equal(item, value) for value in values)]
        return kept if len(kept) != len(items) else None
    return _array_leaf("$pullAll", change, lambda: KEEP)


# operator -> (leaf builder, creates the path where it is missing)
LEAVES: dict[str, tuple[Callable[[object], Callable[[object, str], object]], bool]] = {
    "$set": (_set, True),
    "$setOnInsert": (_set, True),
    "$unset": (_unset, False),
    "$inc": (lambda amount: _arithmetic("$inc", amount), True),
    "$mul": (lambda amount: _arithmetic("$mul", amount), True),
    "$min": (lambda value: _extreme("$min", value), True),
    "$max": (lambda value: _extreme("$max", value), True),
    "$currentDate": (_current_date, True),
    "$push": (_push, True),
    "$addToSet": (_add_to_set, True),
    "$pop": (_pop, False),
    "$pull": (_pull, False),
    "$pullAll": (_pull_all, False),
}
MODIFIER_OPERATORS: tuple[str, ...] = (*LEAVES, "$rename")


# -- walking a path ----------------------------------------------------------------------------------

class _Context:
    """What one application of an update knows: the positional `$` index, the arrayFilters, insert or not."""

    def __init__(self, position: int | None, filters: dict[str, list[tuple[str, object]]], inserting: bool):
        self.position, self.filters, self.inserting = position, filters, inserting


def _get(container: object, part: str) -> object:
    if isinstance(container, dict):
        return container.get(part, MISSING)
    if isinstance(container, list):
        index = _numeric(part)
        return container[index] if index is not None and index < len(container) else MISSING
    return MISSING


def _put(container: dict | list, part: str, value: object) -> None:
    if isinstance(container, dict):
        container[part] = value
        return
    index = _numeric(part)
    if index >= len(container):
        container.extend([None] * (index + 1 - len(container)))
    container[index] = value


def _remove(container: dict | list, part: str) -> None:
    if isinstance(container, dict):
        container.pop(part, None)
    else:
        container[_numeric(part)] = None


def _element_matches(filters: list[tuple[str, object]], element: object) -> bool:
    return all(path_matches(element, subpath, condition) for subpath, condition in filters)


def _walk(container: dict | list, parts: list[str], done: list[str], leaf, creates: bool,
          ctx: _Context) -> None:
    """Apply `leaf` at `parts` below `container` (`done`: the path walked so far, for messages)."""
    part, rest = parts[0], parts[1:]
    if part == "$":
        if ctx.position is None:
            raise UpdateError("The positional operator did not find the match needed from the query.")
        part = str(ctx.position)
    if isinstance(container, list) and _numeric(part) is None:
        if creates:
            raise UpdateError(f"Cannot create field '{part}' in element {{{done[-1]}: {_render(container)}}}")
        return
    here = done + [part]
    current = _get(container, part)
    if not rest:
        value = leaf(current, ".".join(here))
        if value is REMOVE:
            _remove(container, part)
        elif value is not KEEP:
            _put(container, part, value)
        return
    nxt = rest[0]
    if nxt.startswith("$["):
        if current is MISSING:
            raise UpdateError(f"The path '{'.'.join(here)}' must exist in the document in order to apply "
                              "array updates.")
        if not isinstance(current, list):
            raise UpdateError(f"Cannot apply array updates to non-array element {part}: {_render(current)}")
        identifier = nxt[2:-1]
        for index, element in enumerate(current):
            if identifier and not _element_matches(ctx.filters[identifier], element):
                continue
            if len(rest) == 1:
                value = leaf(element, ".".join(here + [str(index)]))
                if value is REMOVE:
                    current[index] = None
                elif value is not KEEP:
                    current[index] = value
            elif isinstance(element, (dict, list)):
                _walk(element, rest[1:], here + [str(index)], leaf, creates, ctx)
            elif creates:
                raise UpdateError(f"Cannot create field '{rest[1]}' in element "
                                  f"{{{index}: {_render(element)}}}")
        return
    if current is MISSING:
        if not creates:
            return
        value = leaf(MISSING, ".".join(parts))
        if value is KEEP or value is REMOVE:
            return
        for name in reversed(rest):
            if name == "$" or name.startswith("$["):
                raise UpdateError(f"The path '{'.'.join(here)}' must exist in the document in order to apply "
                                  "array updates.")
            value = {name: value}
        _put(container, part, value)
        return
    if isinstance(current, (dict, list)):
        _walk(current, rest, here, leaf, creates, ctx)
    elif creates:
        raise UpdateError(f"Cannot create field '{nxt}' in element {{{part}: {_render(current)}}}")


def _resolve(document: dict, parts: list[str]) -> tuple[dict | None, object]:
    """(parent document, value) of a $rename path: documents only, not array elements."""
    container: object = document
    for part in parts[:-1]:
        if not isinstance(container, dict):
            return None, MISSING
        container = container.get(part, MISSING)
    if isinstance(container, list):
        raise UpdateError(f"The source field cannot be an array element, '{'.'.join(parts)}' in doc with "
                          f"{parts[0]} being an array")
    if not isinstance(container, dict):
        return None, MISSING
    return container, container.get(parts[-1], MISSING)


def _rename(source: list[str], target: list[str]) -> Callable[[dict, _Context], None]:
    def run(document: dict, ctx: _Context) -> None:
        parent, value = _resolve(document, source)
        if value is MISSING:
            return
        container: object = document
        for part in target[:-1]:
            if isinstance(container, list):
                raise UpdateError(f"The destination field cannot be an array element, '{'.'.join(target)}'")
            if not isinstance(container, dict):
                break
            container = container.get(part, MISSING)
        if isinstance(container, list):
            raise UpdateError(f"The destination field cannot be an array element, '{'.'.join(target)}'")
        _walk(document, target, [], lambda current, path: value, True, ctx)
        parent.pop(source[-1], None)
    return run


# -- modifier updates --------------------------------------------------------------------------------

def _conflict(a: list[str], b: list[str]) -> bool:
    n = min(len(a), len(b))
    return a[:n] == b[:n]


def _modifiers(update: dict, array_filters: list | None) -> Callable[[dict, _Context], None]:
    steps: list[tuple[list[str], str, Callable[[dict, _Context], None]]] = []
    paths: list[tuple[list[str], str]] = []
    for operator, spec in update.items():
        if not operator.startswith("$"):
            raise UpdateError(f"an update document mixes operators and fields: {operator!r}")
        if operator not in MODIFIER_OPERATORS:
            raise NotImplementedInEngine(f"update operator {operator} is not implemented in the engine lab")
        if not isinstance(spec, dict):
            raise UpdateError(f"modifiers operate on fields but we found type {type(spec).__name__} instead: "
                              f"{{{operator}: {spec!r}}}")
        for path, argument in spec.items():
            parts = _split(path, operator)
            if operator == "$rename":
                if not isinstance(argument, str):
                    raise UpdateError(f"the 'to' field for $rename must be a string: {path}: {argument!r}")
                target = _split(argument, operator)
                if any(p.startswith("$") for p in parts + target):
                    raise UpdateError(f"the source and target of $rename may not be dynamic array fields: "
                                      f"{path}")
                if _conflict(parts, target):
                    raise UpdateError(f"the source and target field for $rename must not be on the same "
                                      f"path: {path}: {argument!r}")
                paths += [(parts, path), (target, argument)]
                steps.append((target, operator, _rename(parts, target)))
                continue
            build, creates = LEAVES[operator]
            leaf = build(argument)
            paths.append((parts, path))
            if operator == "$setOnInsert":
                steps.append((parts, operator, _on_insert(parts, leaf)))
            else:
                steps.append((parts, operator, _leaf_step(parts, leaf, creates)))
    for i, (a, a_name) in enumerate(paths):
        for b, b_name in paths[i + 1:]:
            if _conflict(a, b):
                shorter = a_name if len(a) <= len(b) else b_name
                raise UpdateError(f"Updating the path '{b_name}' would create a conflict at '{shorter}'")
    used = {p[2:-1] for parts, _ in paths for p in parts if p.startswith("$[") and p != "$[]"}
    filters = _array_filters(array_filters or [], used)
    steps.sort(key=cmp_to_key(lambda x, y: _path_order(x[0], y[0])))
    runs = [run for _, _, run in steps]

    def run(document: dict, ctx: _Context) -> None:
        ctx.filters = filters
        for step in runs:
            step(document, ctx)
    return run


def _leaf_step(parts: list[str], leaf, creates: bool) -> Callable[[dict, _Context], None]:
    positional = "$" in parts
    if not any(part.startswith("$") for part in parts):
        # a path of field names only (every published layout's): walked without the general walker while
        # it meets documents, which is 2x cheaper for the $inc of appV1-appV4 and appV6
        *parents, last = parts
        path = ".".join(parts)

        def simple(document: dict, ctx: _Context) -> None:
            container = document
            for i, part in enumerate(parents):
                child = container.get(part, MISSING)
                if type(child) is dict:
                    container = child
                    continue
                if child is MISSING:   # the rest of the path is created (or, for $unset/$pop..., nothing)
                    if creates:
                        value = leaf(MISSING, path)
                        if value is not KEEP and value is not REMOVE:
                            for name in reversed(parts[i + 1:]):
                                value = {name: value}
                            container[part] = value
                    return
                _walk(document, parts, [], leaf, creates, ctx)
                return
            value = leaf(container.get(last, MISSING), path)
            if value is REMOVE:
                container.pop(last, None)
            elif value is not KEEP:
                container[last] = value
        return simple

    def run(document: dict, ctx: _Context) -> None:
        if positional and ctx.position is None:
            raise UpdateError("The positional operator did not find the match needed from the query.")
        _walk(document, parts, [], leaf, creates, ctx)
    return run


def _on_insert(parts: list[str], leaf) -> Callable[[dict, _Context], None]:
    step = _leaf_step(parts, leaf, True)

    def run(document: dict, ctx: _Context) -> None:
        if ctx.inserting:
            step(document, ctx)
    return run


def _array_filters(array_filters: list, used: set[str]) -> dict[str, list[tuple[str, object]]]:
    filters: dict[str, list[tuple[str, object]]] = {}
    for spec in array_filters:
        if not isinstance(spec, dict) or not spec:
            raise UpdateError(f"an array filter must be a non-empty document, got {spec!r}")
        names = {path.split(".")[0] for path in spec}
        if len(names) != 1:
            raise UpdateError(f"an array filter names one identifier, got {sorted(names)}")
        (name,) = names
        if name in filters:
            raise UpdateError(f"found multiple array filters with the same top-level field name {name}")
        filters[name] = [(path.partition(".")[2], condition) for path, condition in spec.items()]
    for name in used - set(filters):
        raise UpdateError(f"No array filter found for identifier '{name}'")
    for name in set(filters) - used:
        raise UpdateError(f"The array filter for identifier '{name}' was not used in the update")
    return filters


# -- pipeline updates ----------------------------------------------------------------------------------

def _subtree(spec: dict, stage: str) -> dict:
    """$set/$addFields fields as a tree: dotted names and nested objects become nested dicts whose
    leaves are compiled expressions."""
    tree: dict = {}
    for name, expression in spec.items():
        parts = name.split(".")
        if not name or "" in parts or name.startswith("$"):
            raise UpdateError(f"{stage}: invalid field name {name!r}")
        node = tree
        for part in parts[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise UpdateError(f"{stage}: Invalid {stage} :: path collision at {name}")
            node = child
        last = parts[-1]
        if isinstance(expression, dict) and not expression:
            raise UpdateError(f"Invalid {stage} :: an empty object is not a valid value. Found empty object "
                              f"at path {name}")
        if isinstance(expression, dict) and not next(iter(expression)).startswith("$"):
            sub = _subtree(expression, stage)
            if last in node and not isinstance(node[last], dict):
                raise UpdateError(f"Invalid {stage} :: path collision at {name}")
            node.setdefault(last, {}).update(sub)
        else:
            if last in node:
                raise UpdateError(f"Invalid {stage} :: path collision at {name}")
            node[last] = compile_expression(expression)
    return tree


def _add_fields(target: object, tree: dict, variables: dict) -> dict:
    """The fields of `tree` (nested: subdocuments merged into, arrays mapped) added to the document
    `target`. An expression is evaluated where its value is set, on the stage's input document (ROOT):
    under an array, once per element, and not at all for an empty array (as mongod does)."""
    document = dict(target) if isinstance(target, dict) else {}
    for name, node in tree.items():
        if isinstance(node, dict):
            document[name] = _add_into(document.get(name, MISSING), node, variables)
        else:
            document[name] = node(variables)   # MISSING stays as a tombstone: its slot keeps its place
    return document


def _add_into(existing: object, tree: dict, variables: dict) -> object:
    if isinstance(existing, list):
        return [_add_into(element, tree, variables) for element in existing]
    return _add_fields(existing, tree, variables)


def _set_stage(name: str, spec: object) -> Callable[[dict], dict]:
    if not isinstance(spec, dict) or not spec:
        raise UpdateError(f"{name} specification must be a non-empty object, got {spec!r}")
    tree = _subtree(spec, name)

    def run(document: dict) -> dict:
        return _add_fields(document, tree, {"ROOT": document, "CURRENT": document})
    return run


def _unset_paths(spec: object, stage: str) -> list[list[str]]:
    fields = spec if isinstance(spec, list) else [spec]
    if not fields or any(not isinstance(f, str) or not f or f.startswith("$") or "" in f.split(".")
                         for f in fields):
        raise UpdateError(f"{stage} specification must be a field path or an array of field paths, "
                          f"got {spec!r}")
    return [f.split(".") for f in fields]


def _exclude(value: object, parts: list[str]) -> object:
    """`value` without the field at `parts` (through arrays: from each document element). The field
    is left as a tombstone: mongod's pipeline documents keep a removed field's slot, and a later stage
    setting it again puts it back there."""
    if isinstance(value, list):
        return [_exclude(element, parts) for element in value]
    if not isinstance(value, dict):
        return value
    out = dict(value)
    if len(parts) == 1:
        if parts[0] in out:
            out[parts[0]] = MISSING
    elif isinstance(value.get(parts[0]), (dict, list)):
        out[parts[0]] = _exclude(value[parts[0]], parts[1:])
    return out


def strip(value: object) -> object:
    """`value` without its tombstones (MISSING fields), as mongod serialises a pipeline's document."""
    if isinstance(value, dict):
        return {k: strip(v) for k, v in value.items() if v is not MISSING}
    if isinstance(value, list):
        return [strip(v) for v in value]
    return value


def _unset_stage(spec: object) -> Callable[[dict], dict]:
    paths = _unset_paths(spec, "$unset")

    def run(document: dict) -> dict:
        for parts in paths:
            document = _exclude(document, parts)
        return document
    return run


def _is_flag(value: object) -> bool:
    return isinstance(value, bool) or number_kind(value) in ("int", "long", "double")


def _flatten(spec: dict, prefix: str = "") -> dict:
    """A projection's nested specs (`{o: {x: 1}}`) as dotted paths (`{"o.x": 1}`); expressions stay."""
    flat: dict = {}
    for name, value in spec.items():
        if isinstance(value, dict) and value and not next(iter(value)).startswith("$"):
            flat.update(_flatten(value, f"{prefix}{name}."))
        else:
            flat[prefix + name] = value
    return flat


def _project_stage(spec: object) -> Callable[[dict], dict]:
    if not isinstance(spec, dict) or not spec:
        raise UpdateError(f"$project specification must be a non-empty object, got {spec!r}")
    spec = _flatten(spec)
    flags = {name: bool(value) for name, value in spec.items() if _is_flag(value)}
    computed = {name: value for name, value in spec.items() if not _is_flag(value)}
    excluded = [name for name, on in flags.items() if not on]
    if excluded and ([n for n, on in flags.items() if on] or computed):
        if excluded != ["_id"]:
            raise UpdateError("Invalid $project :: cannot do exclusion in inclusion projection")
    if not [n for n, on in flags.items() if on] and not computed:
        paths = [name.split(".") for name in excluded]

        def exclusion(document: dict) -> dict:
            for parts in paths:
                document = _exclude(document, parts)
            return document
        return exclusion
    include_id = flags.get("_id", True)
    tree: dict = {}
    for name, on in flags.items():
        if on:
            node = tree
            parts = name.split(".")
            for part in parts[:-1]:
                node = node.setdefault(part, {})
            node[parts[-1]] = True
    if include_id and "_id" not in tree:
        tree = {"_id": True, **tree}
    computed_tree = _subtree(computed, "$project") if computed else {}

    def keep(value: object, node: dict) -> object:
        if isinstance(value, list):
            return [kept for element in value
                    if (kept := keep(element, node)) is not MISSING]
        if not isinstance(value, dict):
            return MISSING
        out = {}
        for name, child in value.items():
            if name in node and child is not MISSING:
                if node[name] is True:
                    out[name] = child
                else:
                    kept = keep(child, node[name])
                    if kept is not MISSING:
                        out[name] = kept
        return out

    def run(document: dict) -> dict:
        out = keep(document, tree)
        if computed_tree:
            out = _add_fields(out, computed_tree, {"ROOT": document, "CURRENT": document})
        if not include_id:
            out.pop("_id", None)
        return out
    return run


def _replace_stage(name: str, spec: object) -> Callable[[dict], dict]:
    if name == "$replaceRoot":
        if not isinstance(spec, dict) or set(spec) != {"newRoot"}:
            raise UpdateError(f"$replaceRoot takes {{newRoot: <expression>}}, got {spec!r}")
        spec = spec["newRoot"]
    expression = compile_expression(spec)

    def run(document: dict) -> dict:
        value = expression({"ROOT": document, "CURRENT": document})
        if not isinstance(value, dict):
            raise UpdateError(f"'newRoot' expression must evaluate to an object, but resulting value was: "
                              f"{value!r}")
        return value
    return run


PIPELINE_STAGES: tuple[str, ...] = (
    "$set", "$addFields", "$unset", "$project", "$replaceWith", "$replaceRoot",
)


def _pipeline(stages: list) -> Callable[[dict, _Context], dict]:
    steps: list[Callable[[dict], dict]] = []
    for stage in stages:
        if not isinstance(stage, dict) or len(stage) != 1:
            raise UpdateError(f"a pipeline stage specification object must contain exactly one field, "
                              f"got {stage!r}")
        (name, spec), = stage.items()
        if name in ("$set", "$addFields"):
            steps.append(_set_stage(name, spec))
        elif name == "$unset":
            steps.append(_unset_stage(spec))
        elif name == "$project":
            steps.append(_project_stage(spec))
        elif name in ("$replaceWith", "$replaceRoot"):
            steps.append(_replace_stage(name, spec))
        else:
            raise NotImplementedInEngine(f"update pipeline stage {name} is not implemented in the engine lab")

    deep = _deep_tombstones(stages)

    def run(document: dict, ctx: _Context) -> dict:
        result = document
        for step in steps:
            result = step(result)
        if deep:
            result = strip(result)
        elif any(value is MISSING for value in result.values()):
            result = {k: v for k, v in result.items() if v is not MISSING}
        return _keep_id(document, result)
    return run


def _mentions_root(value: object) -> bool:
    if isinstance(value, str):
        return value.startswith(("$$ROOT", "$$CURRENT"))
    if isinstance(value, dict):
        return any(_mentions_root(v) for v in value.values())
    if isinstance(value, list):
        return any(_mentions_root(v) for v in value)
    return False


def _deep_tombstones(stages: list) -> bool:
    """Whether a pipeline can leave a tombstone below the document's top level (a dotted or nested field
    set or removed, or $$ROOT / $$CURRENT embedding the document in a field): then the whole result is
    stripped of them, else its top level only (appV5R2's pipeline: the statement's cost)."""
    if _mentions_root(stages):
        return True
    for stage in stages:
        (name, spec), = stage.items()
        if name in ("$set", "$addFields") and isinstance(spec, dict):
            if any("." in field or (isinstance(value, dict) and value
                                    and not next(iter(value)).startswith("$"))
                   for field, value in spec.items()):
                return True
        elif name == "$unset":
            if any("." in field for field in (spec if isinstance(spec, list) else [spec])):
                return True
        elif name == "$project" and isinstance(spec, dict):
            if any("." in field for field in _flatten(spec)):
                return True
    return False


def _keep_id(before: dict, after: dict) -> dict:
    """The stored `_id` first: kept where the result lacks it, refused where it differs."""
    if "_id" in before:
        if after and after.get("_id") is before["_id"] and next(iter(after)) == "_id":
            return after   # the stored _id, first: nothing to check or move
        if "_id" in after and not (equal(after["_id"], before["_id"]) and
                                   bson.encode({"v": after["_id"]}) == bson.encode({"v": before["_id"]})):
            raise UpdateError("After applying the update, the (immutable) field '_id' was found to have "
                              "been altered")
        rest = {k: v for k, v in after.items() if k != "_id"}
        return {"_id": before["_id"], **rest}
    if "_id" in after:
        return {"_id": after["_id"], **{k: v for k, v in after.items() if k != "_id"}}
    return after


def _replacement(update: dict) -> Callable[[dict, _Context], dict]:
    for name in update:
        if "." in name:
            raise UpdateError(f"the replacement document has a dotted field name {name!r}")

    def run(document: dict, ctx: _Context) -> dict:
        return _keep_id(document, _copy(update))
    return run


# -- compiled updates ----------------------------------------------------------------------------------

class CompiledUpdate:
    """An update `u` (modifiers, a pipeline or a replacement) compiled once; calling it changes a
    document (in place where it can) and returns the document after the update."""

    def __init__(self, update: dict | list, array_filters: list | None = None) -> None:
        if isinstance(update, list):
            self.kind = "pipeline"
            if array_filters:
                raise UpdateError("arrayFilters may not be specified for pipeline-style updates")
            self._run = _pipeline(update)
        elif isinstance(update, dict) and update and all(name.startswith("$") for name in update):
            self.kind = "modifiers"
            modifiers = _modifiers(update, array_filters)
            touches_id = any(path.split(".")[0] == "_id" or (operator == "$rename" and
                                                             str(target).split(".")[0] == "_id")
                             for operator, spec in update.items() if isinstance(spec, dict)
                             for path, target in spec.items())

            def run(document: dict, ctx: _Context) -> dict:
                if not touches_id:
                    modifiers(document, ctx)
                    return document
                before_id = document.get("_id", MISSING)
                modifiers(document, ctx)
                if before_id is not MISSING and not ctx.inserting and (
                        bson.encode({"v": document.get("_id")}) != bson.encode({"v": before_id})):
                    raise UpdateError("Performing an update on the path '_id' would modify the immutable "
                                      "field '_id'")
                return document
            self._run = run
        elif isinstance(update, dict):
            self.kind = "replacement"
            if array_filters:
                raise UpdateError("arrayFilters may not be specified for replacement-style updates")
            if any(name.startswith("$") for name in update):
                raise UpdateError(f"an update document mixes operators and fields: {sorted(update)}")
            self._run = _replacement(update)
        else:
            raise UpdateError(f"an update is a document or a pipeline, got {update!r}")

    def __call__(self, document: dict, *, position: int | None = None, inserting: bool = False) -> dict:
        return self._run(document, _Context(position, {}, inserting))


def compile_update(update: dict | list, array_filters: list | None = None) -> CompiledUpdate:
    """The update `u` (modifiers, a pipeline, a replacement) as a function changing a document and
    returning it; anything not implemented is refused here, naming it (NotImplementedInEngine), and
    what mongod refuses when parsing too (UpdateError)."""
    return CompiledUpdate(update, array_filters)


def check_update(update: dict | list, array_filters: list | None = None) -> None:
    """ValueError naming the operator, stage or expression the engine lab does not implement."""
    compile_update(update, array_filters)


def apply_update(document: dict, update: dict | list, *, array_filters: list | None = None,
                 position: int | None = None) -> dict:
    """`document` after the update `u` (modifiers or a pipeline); changed in place where it can be."""
    return compile_update(update, array_filters)(document, position=position)


@lru_cache(maxsize=4096)
def _compiled(update_bson: bytes | tuple[bytes, ...],
              filters_bson: tuple[bytes, ...] | None = None) -> CompiledUpdate:
    """The compiled update of a statement's `u`, by its BSON bytes (a pipeline: its stages' bytes).
    A layout's statements repeat their `u` for every event of the same day and status, mostly close
    together in load order: compiling appV5R2's pipeline was a quarter of its statement's CPU. 4,096
    entries hit 87.4 % of appV5R2's 100,078 statements (16,384: 87.8 %, at 250 MB more peak memory)."""
    filters = [bson.decode(f, CODEC) for f in filters_bson] if filters_bson else None
    if isinstance(update_bson, tuple):
        return compile_update([bson.decode(stage, CODEC) for stage in update_bson], filters)
    return compile_update(bson.decode(update_bson, CODEC), filters)


def _equalities(query: dict, into: list[tuple[list[str], object]]) -> None:
    for name, value in query.items():
        if name == "$and":
            for sub in value:
                _equalities(sub, into)
            continue
        if name.startswith("$"):
            continue
        if isinstance(value, dict) and value and next(iter(value)).startswith("$"):
            if "$eq" in value:
                into.append((name.split("."), value["$eq"]))
            continue
        into.append((name.split("."), value))


def upsert_document(query: dict, update: dict | list | CompiledUpdate,
                    new_id: Callable[[], ObjectId], array_filters: list | None = None) -> dict:
    """The document an upsert inserts: `query`'s equality fields, `update` applied, `_id` first."""
    apply = update if isinstance(update, CompiledUpdate) else compile_update(update, array_filters)
    return _upserted(query, apply, new_id)


def _upserted(query: dict, apply: CompiledUpdate, new_id: Callable[[], ObjectId]) -> dict:
    document: dict = {}
    if apply.kind != "replacement" and all(
            "." not in name and not name.startswith("$") and not name.isdigit()
            and not (type(value) is dict and value and next(iter(value)).startswith("$"))
            for name, value in query.items()):
        # top-level equalities only (every published layout's query): in the order of their names
        for name in sorted(query):
            document[name] = _copy(query[name])
    elif apply.kind == "replacement":
        if "_id" in query and not isinstance(query["_id"], dict):
            document["_id"] = query["_id"]
    else:
        equalities: list[tuple[list[str], object]] = []
        _equalities(query, equalities)
        equalities.sort(key=cmp_to_key(lambda x, y: _path_order(x[0], y[0])))
        for i, (parts, _) in enumerate(equalities):
            for other, _ in equalities[i + 1:]:
                if _conflict(parts, other):
                    raise UpdateError(f"cannot infer query fields to set, path '{'.'.join(parts)}' is "
                                      "matched twice")
        for parts, value in equalities:
            _walk(document, parts, [], lambda current, path, value=value: _copy(value), True,
                  _Context(None, {}, True))
    document = apply(document, inserting=True)
    _id = document.pop("_id") if "_id" in document else new_id()
    return {"_id": _id, **document}


# -- statements on a collection -----------------------------------------------------------------

def _path(document: object, parts: list[str]) -> object:
    for part in parts:
        if not isinstance(document, dict):
            return MISSING
        document = document.get(part, MISSING)
    return document


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
    """The record id matching `query`'s equalities through the index mongod would use (a unique index
    on some of its equality fields), or None; the rest of `query` is matched on the document read."""
    equalities = {name: value for name, value in query.items()
                  if not name.startswith("$") and not (isinstance(value, dict) and value
                                                       and next(iter(value)).startswith("$"))}
    for index in collection.indexes.values():
        if set(index.fields) <= set(equalities):
            return index.find(tuple(equalities[name] for name in index.fields))
    raise ValueError(
        f"no index on {sorted(query)} in {collection.ns}: a collection scan is not modelled"
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
    filters = spec.get("arrayFilters")
    filters_bson = tuple(f.raw for f in filters) if filters else None
    update = _compiled(tuple(stage.raw for stage in update) if isinstance(update, list) else update.raw,
                       filters_bson)
    # one WriteUnitOfWork per statement; on a replica set it commits at its timestamp (Deployment.write)
    with collection.deployment.write() as stamps:
        record_id = find_record(collection, query)
        position = None
        if record_id is not None:
            old = collection.records.read(record_id)
            document = bson.decode(old, CODEC)
            matched, position = matches(document, query)
            if not matched:
                raise ValueError(f"{collection.ns}: the index finds a document the rest of the query does "
                                 "not match; an upsert would duplicate its key (not modelled)")
        if record_id is None:
            if not spec.get("upsert"):
                return "no match"
            document = _upserted(query, update, new_id)
            collection._insert_one(index_keys(collection, document), bson.encode(document),
                                   stamps[0] if stamps else None)
            return "insert"
        before = index_keys(collection, document)
        document = update(document, position=position)
        if index_keys(collection, document) != before:
            raise ValueError(f"{collection.ns}: an update changing an indexed value is not modelled")
        if collection.oplog_writer is not None:
            raise ValueError("applying update statements on a replica set (oplog diffs) is not modelled")
        return collection.records.update(record_id, bson.encode(document), old)


__all__ = [
    "apply_update",
    "check_update",
    "CompiledUpdate",
    "UpdateError",
    "NotImplementedInEngine",
    "MODIFIER_OPERATORS",
    "PIPELINE_STAGES",
    "compile_update",
    "upsert_document",
    "apply_statement",
    "find_record",
    "ObjectIds",
    "MISSING",
]
