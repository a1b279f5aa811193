"""Aggregation expressions, as an update pipeline's stages evaluate them on one document (mongod's
src/mongo/db/pipeline/expression.cpp; facts carried over, code written here).

Each expression compiles once into a closure over `variables` (ROOT, CURRENT, this, value, the names
$map/$filter bind): the $reduce of appV5R2-R4 runs its `in` once per array element of every statement.

Numbers keep mongod's widths: int32 op int32 stays int32 until it overflows (then int64, then double),
a double makes a double, `$divide` gives a double. A null or missing argument makes null where mongod
does. Comparisons use the BSON order (costlab.engine.values), missing below null.
"""
from __future__ import annotations

import math
from datetime import datetime, timedelta
from typing import Any, Callable

from bson import Int64

from costlab.engine.values import (
    MISSING,
    compare,
    integer_result,
    is_integral,
    nullish,
    number_kind,
    widest,
)

Compiled = Callable[[dict], Any]


def _args(spec: object) -> list:
    return spec if isinstance(spec, list) else [spec]


def _compiled_args(spec: object, name: str, count: int | None = None) -> list[Compiled]:
    args = _args(spec)
    if count is not None and len(args) != count:
        raise ValueError(f"{name} takes {count} arguments, got {len(args)}")
    return [compile_expression(arg) for arg in args]


def _truthy(value: object) -> bool:
    if value is None or value is MISSING or value is False:
        return False
    if number_kind(value) is not None and value == 0:
        return False
    return True


def _path(value: object, parts: list[str]) -> object:
    """A field path's value as $-paths read it: through an array, the values of its elements' fields
    (an array of them; elements without the field left out)."""
    for i, part in enumerate(parts):
        if isinstance(value, dict):
            value = value.get(part, MISSING)
        elif isinstance(value, list):
            return _array_path(value, parts[i:])
        else:
            return MISSING
    return value


def _array_path(values: list, parts: list[str]) -> list:
    out = []
    for element in values:
        if isinstance(element, dict):
            found = _path(element, parts)
            if found is not MISSING:
                out.append(found)
        elif isinstance(element, list):
            out.append(_array_path(element, parts))
    return out


def _field_path(parts: list[str]) -> Callable[[object], object]:
    if len(parts) == 1:
        (part,) = parts
        return lambda value: value.get(part, MISSING) if type(value) is dict else _path(value, parts)
    return lambda value: _path(value, parts)


# -- operators ---------------------------------------------------------------------------------

def _literal(spec):
    return lambda variables: spec


def _merge_objects(spec):
    parts = _compiled_args(spec, "$mergeObjects")

    def run(variables):
        merged: dict = {}
        for part in parts:
            value = part(variables)
            if nullish(value):
                continue
            if not isinstance(value, dict):
                raise ValueError(f"$mergeObjects needs documents, got {value!r}")
            for name, field in value.items():   # an existing name keeps its place, a new one is appended
                if field is not MISSING:
                    merged[name] = field
        return merged
    return run


def _if_null(spec):
    *candidates, fallback = _compiled_args(spec, "$ifNull")
    if not candidates:
        raise ValueError("$ifNull needs at least 2 arguments")

    def run(variables):
        for candidate in candidates:
            value = candidate(variables)
            if not nullish(value):
                return value
        return fallback(variables)
    return run


def _sum(values: list, name: str) -> object:
    """$add's sum: exact while every operand is an integer, a double from the first double on; one date
    makes a date (milliseconds added)."""
    date = None
    kind, total = "int", 0
    for value in values:
        if nullish(value):
            return None
        if isinstance(value, datetime):
            if date is not None:
                raise ValueError(f"{name} only supports a single date")
            date = value
            continue
        k = number_kind(value)
        if k is None:
            raise ValueError(f"{name} only supports numeric or date types, got {value!r}")
        if k == "decimal":
            raise ValueError(f"{name} of a Decimal128 is not implemented in the engine lab")
        kind = widest(kind, k)
        if kind == "double":
            total = float(total) + float(value)
        else:
            total += value
            if integer_result(total, "long") is None:
                kind, total = "double", float(total)
    if date is not None:
        if kind == "double" and not math.isfinite(total):
            raise ValueError(f"{date} + {total} ms is beyond the dates the engine lab holds")
        return _shifted(date, int(round(total) if kind == "double" else total))
    return _number(total, kind)


def _shifted(date: datetime, millis: int) -> datetime:
    try:
        return date + timedelta(milliseconds=millis)
    except OverflowError:
        raise ValueError(f"{date} + {millis} ms is beyond the dates the engine lab holds "
                         "(years 1-9999)") from None


def _number(total: int | float, kind: str) -> object:
    if kind == "double":
        return float(total)
    result = integer_result(total, kind)
    return float(total) if result is None else result


def _add(spec):
    parts = _compiled_args(spec, "$add")
    return lambda variables: _sum([part(variables) for part in parts], "$add")


def _multiply(spec):
    parts = _compiled_args(spec, "$multiply")

    def run(variables):
        kind, total = "int", 1
        for value in (part(variables) for part in parts):
            if nullish(value):
                return None
            k = number_kind(value)
            if k is None or k == "decimal":
                raise ValueError(f"$multiply only supports numeric types, got {value!r}")
            kind = widest(kind, k)
            if kind == "double":
                total = float(total) * float(value)
            else:
                total *= value
                if integer_result(total, "long") is None:
                    kind, total = "double", float(total)
        return _number(total, kind)
    return run


def _binary(name: str, compute: Callable[[object, object], object]):
    """An operator of two arguments: null (or missing) when either is, else compute(left, right)."""
    def build(spec):
        left_of, right_of = _compiled_args(spec, name, 2)

        def run(variables):
            left, right = left_of(variables), right_of(variables)
            return None if nullish(left) or nullish(right) else compute(left, right)
        return run
    return build


def _difference(left, right):
    if isinstance(left, datetime):
        if isinstance(right, datetime):
            return Int64((left - right) // timedelta(milliseconds=1))
        if number_kind(right) in ("int", "long", "double"):
            if isinstance(right, float) and not math.isfinite(right):
                raise ValueError(f"{left} - {right} ms is beyond the dates the engine lab holds")
            return _shifted(left, -int(round(right) if isinstance(right, float) else right))
    kl, kr = number_kind(left), number_kind(right)
    if kl in (None, "decimal") or kr in (None, "decimal"):
        raise ValueError(f"$subtract only supports numeric or date types, got {left!r} and {right!r}")
    kind = widest(kl, kr)
    if kind == "double":
        return float(left) - float(right)
    return _number(left - right, kind)


def _quotient(left, right):
    if number_kind(left) in (None, "decimal") or number_kind(right) in (None, "decimal"):
        raise ValueError(f"$divide only supports numeric types, got {left!r} and {right!r}")
    if right == 0:
        raise ValueError("can't $divide by zero")
    return float(left) / float(right)


_subtract = _binary("$subtract", _difference)
_divide = _binary("$divide", _quotient)


def _comparison(test: Callable[[int], bool]):
    def build(spec):
        left_of, right_of = _compiled_args(spec, "comparison", 2)
        return lambda variables: test(compare(left_of(variables), right_of(variables)))
    return build


def _cmp(spec):
    left_of, right_of = _compiled_args(spec, "$cmp", 2)
    return lambda variables: compare(left_of(variables), right_of(variables))


def _and(spec):
    parts = _compiled_args(spec, "$and")
    return lambda variables: all(_truthy(part(variables)) for part in parts)


def _or(spec):
    parts = _compiled_args(spec, "$or")
    return lambda variables: any(_truthy(part(variables)) for part in parts)


def _not(spec):
    (part,) = _compiled_args(spec, "$not", 1)
    return lambda variables: not _truthy(part(variables))


def _cond(spec):
    if isinstance(spec, dict):
        unknown = set(spec) - {"if", "then", "else"}
        if unknown or len(spec) != 3:
            raise ValueError(f"$cond takes if, then and else, got {sorted(spec)}")
        spec = [spec["if"], spec["then"], spec["else"]]
    condition, then, otherwise = _compiled_args(spec, "$cond", 3)
    return lambda variables: then(variables) if _truthy(condition(variables)) else otherwise(variables)


def _concat_arrays(spec):
    parts = _compiled_args(spec, "$concatArrays")

    def run(variables):
        joined: list = []
        for part in parts:
            value = part(variables)
            if type(value) is not list:
                if nullish(value):
                    return None
                raise ValueError(f"$concatArrays only supports arrays, got {value!r}")
            joined += value
        return joined
    return run


def _size(spec):
    (part,) = _compiled_args(spec, "$size", 1)

    def run(variables):
        value = part(variables)
        if not isinstance(value, list):
            raise ValueError(f"the argument to $size must be an array, got {value!r}")
        return len(value)
    return run


def _array_elem_at(spec):
    array_of, index_of = _compiled_args(spec, "$arrayElemAt", 2)

    def run(variables):
        array, index = array_of(variables), index_of(variables)
        if nullish(array) or nullish(index):
            return None
        if not isinstance(array, list):
            raise ValueError(f"$arrayElemAt's first argument must be an array, got {array!r}")
        if not is_integral(index):
            raise ValueError(f"$arrayElemAt's second argument must be an integer, got {index!r}")
        index = int(index)
        if -len(array) <= index < len(array):
            return array[index]
        return MISSING
    return run


def _in(spec):
    value_of, array_of = _compiled_args(spec, "$in", 2)

    def run(variables):
        value, array = value_of(variables), array_of(variables)
        if not isinstance(array, list):
            raise ValueError(f"$in requires an array as a second argument, got {array!r}")
        return any(compare(value, item) == 0 for item in array)
    return run


def _bind(spec: dict, name: str, needed: tuple[str, ...], optional: tuple[str, ...]) -> dict:
    unknown = set(spec) - set(needed) - set(optional)
    missing = set(needed) - set(spec)
    if unknown or missing:
        raise ValueError(f"{name} takes {', '.join(needed + optional)}; got {sorted(spec)}")
    return spec


def _array(items: object, must: str) -> list | None:
    """An array operator's input: None for null or missing, the list itself, else ValueError `must`."""
    if nullish(items):
        return None
    if not isinstance(items, list):
        raise ValueError(f"{must}, got {items!r}")
    return items


def _map(spec):
    _bind(spec, "$map", ("input", "in"), ("as",))
    items_of, each = compile_expression(spec["input"]), compile_expression(spec["in"])
    name = spec.get("as", "this")

    def run(variables):
        items = _array(items_of(variables), "input to $map must be an array")
        if items is None:
            return None
        scope = dict(variables)
        out = []
        for item in items:
            scope[name] = item
            value = each(scope)
            out.append(None if value is MISSING else value)
        return out
    return run


def _filter(spec):
    _bind(spec, "$filter", ("input", "cond"), ("as", "limit"))
    items_of, keep = compile_expression(spec["input"]), compile_expression(spec["cond"])
    limit_of = compile_expression(spec["limit"]) if "limit" in spec else None
    name = spec.get("as", "this")

    def run(variables):
        items = _array(items_of(variables), "input to $filter must be an array")
        if items is None:
            return None
        limit = None
        if limit_of is not None:
            limit = limit_of(variables)
            if not nullish(limit):
                if not is_integral(limit) or limit < 1:
                    raise ValueError(f"$filter's limit must be a positive integer, got {limit!r}")
                limit = int(limit)
            else:
                limit = None
        scope = dict(variables)
        out = []
        for item in items:
            scope[name] = item
            if _truthy(keep(scope)):
                out.append(item)
                if limit is not None and len(out) >= limit:
                    break
        return out
    return run


def _reduce(spec):
    _bind(spec, "$reduce", ("input", "initialValue", "in"), ())
    items_of, initial, step = (compile_expression(spec[k]) for k in ("input", "initialValue", "in"))

    def run(variables):
        items = _array(items_of(variables), "$reduce input must be an array")
        if items is None:
            return None
        scope = dict(variables)
        value = initial(variables)
        for item in items:
            scope["this"], scope["value"] = item, value
            value = step(scope)
        return value
    return run


def _date_part(name: str, part: Callable[[datetime], int]):
    def build(spec):
        if isinstance(spec, dict) and "date" in spec:
            if set(spec) - {"date"}:
                raise ValueError(f"{name} with a timezone is not implemented in the engine lab")
            spec = spec["date"]
        (date_of,) = _compiled_args(spec, name, 1)

        def run(variables):
            value = date_of(variables)
            if nullish(value):
                return None
            if not isinstance(value, datetime):
                raise ValueError(f"{name} needs a date, got {value!r}")
            return part(value.replace(tzinfo=None) if value.tzinfo else value)
        return run
    return build


def _week(value: datetime) -> int:
    """Week of the year, 0-53: weeks begin on Sunday, days before the first Sunday are week 0."""
    return int(value.strftime("%U"))


OPERATORS: dict[str, Callable[[Any], Compiled]] = {
    "$literal": _literal,
    "$mergeObjects": _merge_objects,
    "$ifNull": _if_null,
    "$add": _add,
    "$subtract": _subtract,
    "$multiply": _multiply,
    "$divide": _divide,
    "$eq": _comparison(lambda c: c == 0),
    "$ne": _comparison(lambda c: c != 0),
    "$gt": _comparison(lambda c: c > 0),
    "$gte": _comparison(lambda c: c >= 0),
    "$lt": _comparison(lambda c: c < 0),
    "$lte": _comparison(lambda c: c <= 0),
    "$cmp": _cmp,
    "$and": _and,
    "$or": _or,
    "$not": _not,
    "$cond": _cond,
    "$concatArrays": _concat_arrays,
    "$size": _size,
    "$arrayElemAt": _array_elem_at,
    "$in": _in,
    "$map": _map,
    "$filter": _filter,
    "$reduce": _reduce,
    "$year": _date_part("$year", lambda d: d.year),
    "$month": _date_part("$month", lambda d: d.month),
    "$dayOfMonth": _date_part("$dayOfMonth", lambda d: d.day),
    "$hour": _date_part("$hour", lambda d: d.hour),
    "$minute": _date_part("$minute", lambda d: d.minute),
    "$second": _date_part("$second", lambda d: d.second),
    "$millisecond": _date_part("$millisecond", lambda d: d.microsecond // 1000),
    "$dayOfWeek": _date_part("$dayOfWeek", lambda d: d.isoweekday() % 7 + 1),
    "$dayOfYear": _date_part("$dayOfYear", lambda d: d.timetuple().tm_yday),
    "$week": _date_part("$week", _week),
}


def compile_expression(expression: object) -> Compiled:
    """An aggregation expression as a function of its variables (ROOT is the document); an operator the
    engine lab lacks is refused here, naming it."""
    if isinstance(expression, str) and expression.startswith("$"):
        if expression.startswith("$$"):
            name, *parts = expression[2:].split(".")
            if name == "REMOVE":
                return lambda variables: MISSING
            path = _field_path(parts) if parts else None

            def variable(variables):
                try:
                    value = variables[name]
                except KeyError:
                    raise ValueError(f"use of undefined variable: {name}") from None
                return value if path is None else path(value)
            return variable
        path = _field_path(expression[1:].split("."))
        return lambda variables: path(variables["CURRENT"])
    if isinstance(expression, dict):
        if len(expression) == 1:
            (name, spec), = expression.items()
            if name.startswith("$"):
                if name not in OPERATORS:
                    raise ValueError(f"expression operator {name} is not implemented in the engine lab")
                return OPERATORS[name](spec)
        for name in expression:
            if name.startswith("$") or "." in name:
                raise ValueError(f"field name {name!r} in an expression object: a $-prefixed or dotted name "
                                 "is not a valid field name")
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
        return lambda variables: [None if (v := item(variables)) is MISSING else v for item in items]
    return lambda variables: expression


__all__ = ["compile_expression", "OPERATORS", "MISSING"]
