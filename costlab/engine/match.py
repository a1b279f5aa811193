"""Query predicates on one document, as mongod matches them: what `$pull` conditions, `arrayFilters` and
the positional `$` need (src/mongo/db/matcher/; facts carried over, code written here).

A path walks into arrays implicitly (`a.b` reads `b` of every document element of `a`), and a predicate
on a path holding an array is tried on the array and on each of its elements. Comparisons ($gt, $lt, ...)
only match values of the comparison value's own type bracket; `null` matches a missing field.
Supported: equality, $eq, $ne, $gt, $gte, $lt, $lte, $in, $nin, $exists, $elemMatch, $size, $and, $or,
$nor; anything else is refused naming it.
"""
from __future__ import annotations

from typing import Iterator

from costlab.engine.values import MISSING, canonical_type, compare, equal

COMPARISONS = {"$gt": lambda c: c > 0, "$gte": lambda c: c >= 0, "$lt": lambda c: c < 0,
               "$lte": lambda c: c <= 0}


def _candidates(value: object, parts: list[str], position: int | None) -> Iterator[tuple[object, int | None]]:
    """(value at the path, index of the first array walked through or None), as the matcher sees them."""
    if not parts:
        yield value, position
        if isinstance(value, list):
            for i, element in enumerate(value):
                yield element, i if position is None else position
        return
    part, rest = parts[0], parts[1:]
    if isinstance(value, dict):
        yield from _candidates(value.get(part, MISSING), rest, position)
    elif isinstance(value, list):
        if part.isdigit() and int(part) < len(value):
            yield from _candidates(value[int(part)], rest, position)
        found = False
        for i, element in enumerate(value):
            if isinstance(element, dict):
                found = True
                yield from _candidates(element.get(part, MISSING), rest, i if position is None else position)
        if not found and not value:
            yield MISSING, position
    else:
        yield MISSING, position


def _is_operator_object(condition: object) -> bool:
    return isinstance(condition, dict) and bool(condition) and next(iter(condition)).startswith("$")


def _equals(value: object, target: object) -> bool:
    if target is None:
        return value is None or value is MISSING
    return value is not MISSING and equal(value, target)


def _value_matches(value: object, operator: str, argument: object) -> bool:
    """One operator on one candidate value (not on an array's elements: the caller offers those)."""
    if operator == "$eq":
        return _equals(value, argument)
    if operator in COMPARISONS:
        if argument is None:
            return operator in ("$gte", "$lte") and (value is None or value is MISSING)
        if value is MISSING or canonical_type(value) != canonical_type(argument):
            return False
        return COMPARISONS[operator](compare(value, argument))
    if operator == "$in":
        if not isinstance(argument, list):
            raise ValueError(f"$in needs an array, got {argument!r}")
        return any(_equals(value, target) for target in argument)
    raise ValueError(f"query operator {operator} is not implemented in the engine lab")


def _path_matches(document: object, path: str, condition: object) -> tuple[bool, int | None]:
    parts = path.split(".") if path else []
    if not _is_operator_object(condition):
        condition = {"$eq": condition}
    position = None
    for operator, argument in condition.items():
        if operator in ("$ne", "$nin"):
            positive = "$eq" if operator == "$ne" else "$in"
            if any(_value_matches(v, positive, argument) for v, _ in _candidates(document, parts, None)):
                return False, None
            continue
        if operator == "$exists":
            exists = any(v is not MISSING for v, _ in _candidates(document, parts, None))
            if exists != bool(argument):
                return False, None
            continue
        if operator == "$elemMatch":
            found = _elem_match(document, parts, argument)
            if found is None:
                return False, None
            position = found if position is None else position
            continue
        if operator == "$size":
            if not any(isinstance(v, list) and len(v) == argument
                       for v, _ in _walk_no_elements(document, parts)):
                return False, None
            continue
        for value, at in _candidates(document, parts, None):
            if _value_matches(value, operator, argument):
                position = at if position is None else position
                break
        else:
            return False, None
    return True, position


def _walk_no_elements(document: object, parts: list[str]):
    """Candidates without the last array's elements (what $size and $elemMatch look at)."""
    for value, at in _candidates(document, parts, None):
        yield value, at
        if isinstance(value, list):
            break


def _elem_match(document: object, parts: list[str], spec: dict) -> int | None:
    for value, _ in _walk_no_elements(document, parts):
        if not isinstance(value, list):
            continue
        for i, element in enumerate(value):
            if _is_operator_object(spec):
                ok = all(_value_matches(element, op, arg) for op, arg in spec.items())
            else:
                ok = isinstance(element, dict) and matches(element, spec)[0]
            if ok:
                return i
    return None


def matches(document: object, query: dict) -> tuple[bool, int | None]:
    """(does `document` match `query`, the positional `$` index the match found or None)."""
    position = None
    for path, condition in query.items():
        if path in ("$and", "$or", "$nor"):
            results = [matches(document, sub) for sub in condition]
            if path == "$and":
                ok = all(r[0] for r in results)
            elif path == "$or":
                ok = any(r[0] for r in results)
            else:
                ok = not any(r[0] for r in results)
            found = next((r[1] for r in results if r[0] and r[1] is not None), None)
        elif path.startswith("$"):
            raise ValueError(f"query operator {path} is not implemented in the engine lab")
        else:
            ok, found = _path_matches(document, path, condition)
        if not ok:
            return False, None
        position = found if position is None else position
    return True, position


def value_matches(value: object, condition: object) -> bool:
    """`condition` of a $pull or an arrayFilter on one array element: operators on the element itself,
    or a query on it as a document."""
    if _is_operator_object(condition):
        return _path_matches(value, "", condition)[0]
    if isinstance(condition, dict):
        return isinstance(value, dict) and matches(value, condition)[0]
    return _equals(value, condition)


def path_matches(document: object, path: str, condition: object) -> bool:
    """One predicate `{path: condition}` on `document` (a scalar too: an arrayFilter's element)."""
    return _path_matches(document, path, condition)[0]


__all__ = ["matches", "value_matches", "path_matches"]
