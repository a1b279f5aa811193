"""Random update statements (seeded) for the engine lab's update compiler against mongod
(tests/test_engine_update_property.py): documents of a few fields of every common BSON type, and
statements over every modifier, positional paths with arrayFilters, upserts and pipeline updates with
their expressions. Each statement is small enough to read in a failure message."""
from __future__ import annotations

import random
from datetime import datetime
from typing import Any

from bson import Binary, Int64, ObjectId

NAMES = ["a", "b", "c", "n", "s"]
OTHER = [float("nan"), -0.0, ObjectId(b"costlab-ab12"), b"\x00\x01", Binary(b"\x07", 4), [1, [2, 3]], "é",
         "Z"]
DATE_PARTS = ["$year", "$month", "$dayOfMonth", "$hour", "$minute", "$second", "$millisecond", "$dayOfWeek",
              "$dayOfYear", "$week"]
DATES = [datetime(2024, 1, 1), datetime(2024, 2, 29, 13, 5, 7, 250000), datetime(2023, 12, 31, 23, 59)]


class Statements:
    """One seeded stream of (document or None, q, u, arrayFilters or None, upsert)."""

    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)

    # -- values ----------------------------------------------------------------------------------
    def number(self) -> Any:
        r = self.r
        return r.choice([
            lambda: r.randint(-3, 5), lambda: r.choice([2**31 - 2, -(2**31) + 1, 2**31 - 1]),
            lambda: Int64(r.randint(-3, 5)), lambda: Int64(r.choice([2**63 - 2, -(2**62)])),
            lambda: r.choice([0.5, -1.5, 2.0, 1.0, 0.0, 1e300]),
        ])()

    def scalar(self) -> Any:
        r = self.r
        return r.choice([
            self.number, self.number, lambda: r.choice(["x", "y", "ab", ""]), lambda: r.choice([True, False]),
            lambda: None, lambda: r.choice(DATES), lambda: r.choice(OTHER),
        ])()

    def element(self) -> Any:
        if self.r.random() < 0.5:
            return {"k": self.r.randint(0, 3), "v": self.r.choice(["x", "y"])}
        return self.scalar()

    def array(self) -> list:
        return [self.element() for _ in range(self.r.randint(0, 4))]

    def value(self, depth: int = 0) -> Any:
        roll = self.r.random()
        if roll < 0.15 and depth < 2:
            return self.array()
        if roll < 0.25 and depth < 2:
            return {"x": self.scalar(), "y": self.value(depth + 1)}
        return self.scalar()

    def document(self, _id: int) -> dict:
        doc: dict = {"_id": _id}
        names = self.r.sample(NAMES, self.r.randint(1, len(NAMES)))
        for name in names:
            doc[name] = self.value()
        if self.r.random() < 0.7:
            doc["arr"] = self.array()
        if self.r.random() < 0.5:
            doc["d"] = self.r.choice(DATES)
        if self.r.random() < 0.5:
            doc["o"] = {"x": self.scalar(), "y": self.scalar()}
        return doc

    # -- modifier updates ----------------------------------------------------------------------
    def path(self) -> str:
        return self.r.choice(["a", "b", "c", "n", "s", "o.x", "o.y", "o.z", "new", "new.deep", "arr.0",
                              "arr.1.k", "arr.5", "z9", "10", "9", "a.b"])

    def modifier(self, operator: str) -> tuple[str, Any]:
        r = self.r
        path = self.path()
        if operator in ("$set", "$setOnInsert", "$min", "$max"):
            return path, self.value()
        if operator == "$unset":
            return path, ""
        if operator in ("$inc", "$mul"):
            return path, self.number()
        if operator == "$rename":
            return r.choice(["a", "b", "o.x", "arr", "s"]), r.choice(["r", "o.r", "c", "q.w"])
        if operator == "$currentDate":
            return r.choice(["t", "o.t", "a"]), r.choice([True, {"$type": "date"}, {"$type": "timestamp"}])
        array_path = r.choice(["arr", "arr", "a", "new", "o.y"])
        if operator == "$push":
            if r.random() < 0.5:
                return array_path, self.element()
            spec: dict = {"$each": [self.element() for _ in range(r.randint(0, 3))]}
            if r.random() < 0.5:
                spec["$slice"] = r.choice([0, 1, 2, -1, -2, 5])
            if r.random() < 0.4:
                spec["$sort"] = r.choice([1, -1, {"k": 1}, {"k": -1, "v": 1}])
            if r.random() < 0.4:
                spec["$position"] = r.choice([0, 1, -1, 9])
            return array_path, spec
        if operator == "$addToSet":
            if r.random() < 0.5:
                return array_path, self.element()
            return array_path, {"$each": [self.element() for _ in range(r.randint(0, 3))]}
        if operator == "$pop":
            return array_path, r.choice([1, -1])
        if operator == "$pull":
            return array_path, r.choice([self.scalar(), {"$gte": r.randint(0, 3)}, {"k": r.randint(0, 3)},
                                         {"$in": [self.scalar(), self.scalar()]}])
        if operator == "$pullAll":
            return array_path, [self.element() for _ in range(r.randint(1, 3))]
        raise AssertionError(operator)

    MODIFIERS = ["$set", "$set", "$unset", "$setOnInsert", "$inc", "$inc", "$mul", "$min", "$max",
                 "$rename", "$currentDate", "$push", "$push", "$addToSet", "$pop", "$pull", "$pullAll"]

    def modifiers(self) -> dict:
        update: dict = {}
        for _ in range(self.r.randint(1, 3)):
            operator = self.r.choice(self.MODIFIERS)
            path, argument = self.modifier(operator)
            update.setdefault(operator, {})[path] = argument
        return update

    def positional(self) -> tuple[dict, dict, list | None]:
        """(extra query, update, arrayFilters) over `arr` with `$`, `$[]` or `$[e]`."""
        r = self.r
        kind = r.choice(["$", "$[]", "$[e]"])
        sub = r.choice(["", ".k", ".v"])
        operator = r.choice(["$set", "$inc", "$unset", "$min", "$mul"])
        argument = self.number() if operator in ("$inc", "$mul") else "" if operator == "$unset" \
            else self.element()
        update = {operator: {f"arr.{kind}{sub}": argument}}
        query, filters = {}, None
        if kind == "$":
            query = r.choice([{"arr.k": r.randint(0, 3)}, {"arr": self.scalar()},
                              {"arr": {"$elemMatch": {"k": {"$gte": r.randint(0, 3)}}}}])
        if kind == "$[e]":
            filters = [r.choice([{"e.k": r.randint(0, 3)}, {"e": {"$gte": r.randint(0, 3)}},
                                 {"e.k": {"$in": [0, 2]}}, {"e": self.scalar()}])]
        return query, update, filters

    # -- pipelines ---------------------------------------------------------------------------------
    def field(self) -> str:
        return self.r.choice(["$a", "$b", "$n", "$o", "$o.x", "$arr", "$arr.k", "$missing", "$d"])

    def expression(self, depth: int = 0) -> Any:
        r = self.r
        if depth >= 2 or r.random() < 0.3:
            return r.choice([self.field, lambda: {"$literal": self.value()}, self.number,
                             lambda: r.choice(["x", "y"]), lambda: "$$REMOVE" if r.random() < 0.2 else 1])()
        e = lambda: self.expression(depth + 1)  # noqa: E731
        return r.choice([
            lambda: {"$literal": self.value()},
            lambda: {"$cond": [{r.choice(["$eq", "$lt", "$gte", "$ne"]): [e(), e()]}, e(), e()]},
            lambda: {"$cond": {"if": e(), "then": e(), "else": e()}},
            lambda: {"$ifNull": [e(), e()]},
            lambda: {"$ifNull": ["$missing", "$a", e()]},
            lambda: {"$concatArrays": [r.choice(["$arr", [1, 2], {"$literal": self.array()}]),
                                       r.choice(["$arr", [e()], {"$literal": []}])]},
            lambda: {"$mergeObjects": [r.choice(["$o", {"z": e()}, {"$literal": {"x": 1}}]),
                                       r.choice(["$o", {"x": e(), "w": 2}, "$missing"])]},
            lambda: {"$map": {"input": r.choice(["$arr", [1, 2.5], "$missing"]), "as": "it",
                              "in": r.choice(["$$it", {"$add": [r.choice(["$$it", "$$it.k"]), 1]},
                                              {"$ifNull": ["$$it.k", "$$it"]}])}},
            lambda: {"$filter": {"input": r.choice(["$arr", [1, 2, 3]]),
                                 "cond": {r.choice(["$gt", "$lte"]): [r.choice(["$$this", "$$this.k"]),
                                                                       r.randint(0, 2)]}}},
            lambda: {"$reduce": {"input": r.choice(["$arr", [1, 2, 3]]), "initialValue": r.choice([0, []]),
                                 "in": r.choice([{"$add": ["$$value", 1]},
                                                 {"$concatArrays": ["$$value", ["$$this"]]}])}},
            lambda: {"$size": r.choice(["$arr", [1, 2], "$a"])},
            lambda: {"$arrayElemAt": [r.choice(["$arr", [1, 2, 3]]), r.choice([0, 1, -1, 7, Int64(1)])]},
            lambda: {r.choice(["$add", "$multiply"]): [r.choice([self.number(), "$n", "$a"]),
                                                        r.choice([self.number(), "$b", e()])]},
            lambda: {"$add": [r.choice(["$d", {"$literal": DATES[0]}]),
                              r.choice([1000, Int64(86400000), "$n"])]},
            lambda: {"$subtract": [r.choice([self.number(), "$n", "$d"]),
                                   r.choice([self.number(), "$d", "$a"])]},
            lambda: {"$divide": [r.choice([self.number(), "$n"]), r.choice([self.number(), 4, "$b"])]},
            lambda: {r.choice(["$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$cmp"]): [e(), e()]},
            lambda: {r.choice(DATE_PARTS): r.choice(["$d", {"date": "$d"}, {"$literal": DATES[1]}])},
            lambda: {"$and": [e(), e()]},
            lambda: {"$or": [e(), e()]},
            lambda: {"$not": [e()]},
            lambda: {"$in": [e(), r.choice([[1, "x", None], "$arr"])]},
            lambda: [e(), e()],
            lambda: {"x": e(), "y": e()},
        ])()

    def stage(self) -> dict:
        r = self.r
        kind = r.choice(["$set", "$set", "$addFields", "$unset", "$project", "$replaceWith", "$replaceRoot"])
        if kind in ("$set", "$addFields"):
            spec = {}
            for _ in range(r.randint(1, 3)):
                spec[r.choice(["a", "b", "new", "o.z", "arr.k", "t", "o"])] = self.expression()
            if r.random() < 0.2:
                spec["nested"] = {"p": self.expression(1), "q": {"$literal": 1}}
            return {kind: spec}
        if kind == "$unset":
            return {"$unset": r.choice(["a", ["b", "o.x"], ["arr.k"], "missing", ["_id"]])}
        if kind == "$project":
            return {"$project": r.choice([
                {"a": 1, "o.x": 1}, {"a": 0, "arr": 0}, {"_id": 0, "b": 1},
                {"b": 1, "sum": self.expression()},
                {"o": {"x": 1}, "arr.k": 1}, {"arr": 1, "n": True},
            ])}
        newroot = r.choice([{"$mergeObjects": ["$$ROOT", {"w": self.expression(1)}]}, "$o",
                            {"x": self.expression(1), "_id": "$_id"}, {"only": 1}])
        return {"$replaceWith": newroot} if kind == "$replaceWith" else {"$replaceRoot": {"newRoot": newroot}}

    def pipeline(self) -> list:
        return [self.stage() for _ in range(self.r.randint(1, 3))]

    # -- statements ------------------------------------------------------------------------------
    def statement(self, _id: int) -> tuple[dict | None, dict, Any, list | None, bool]:
        """(stored document or None, q, u, arrayFilters, upsert)."""
        r = self.r
        kind = r.choice(["modifiers", "modifiers", "modifiers", "positional", "pipeline", "pipeline",
                         "upsert", "upsert_pipeline"])
        query: dict = {"_id": _id}
        if kind == "modifiers":
            return self.document(_id), query, self.modifiers(), None, r.random() < 0.3
        if kind == "positional":
            extra, update, filters = self.positional()
            return self.document(_id), {**query, **extra}, update, filters, False
        if kind == "pipeline":
            return self.document(_id), query, self.pipeline(), None, r.random() < 0.3
        if r.random() < 0.5:
            query[r.choice(["a", "o.x", "key"])] = self.scalar()
        if r.random() < 0.3:
            query["date"] = {"$eq": r.choice(DATES)}
        if r.random() < 0.2:
            query["n"] = {"$gt": 1}
        update = self.modifiers() if kind == "upsert" else self.pipeline()
        if kind == "upsert" and r.random() < 0.6:
            update.setdefault("$setOnInsert", {})[r.choice(["created", "o.c", "a"])] = self.value()
        return None, query, update, None, True
