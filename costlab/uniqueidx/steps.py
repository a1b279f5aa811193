"""The article's six steps. Each step rebuilds the collection state it needs, runs the article's
operations and records every operation's outcome as a short text:

    "inserted"                 insertOne succeeded
    "error 11000"              a write error with that server code (11000 duplicate key, 121 validation)
    "matched 1 modified 1"     updateOne's counts
    "accounts 2"               how many accounts the user document holds afterwards

A step passes when the observed outcomes equal the article's, fails when they differ (the
behaviour changed: a result, not a crash), and is `error` when it could not be executed at all
(a setup command or the connection failed).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from pymongo.collection import Collection
from pymongo.database import Database
from pymongo.errors import PyMongoError, WriteError

COLLECTION = "users"
INDEX_SPEC = [("accounts.bank", 1), ("accounts.number", 1)]
INDEX_V1 = {"name": "Unique Account", "unique": True}
INDEX_V2 = {
    "name": "Unique Account V2",
    "unique": True,
    "partialFilterExpression": {"accounts.bank": {"$exists": True}, "accounts.number": {"$exists": True}},
}
USER1 = {"_id": 1, "name": {"first": "john", "last": "smith"}}
USER2 = {"_id": 2, "name": {"first": "john", "last": "appleseed"}}
ACCOUNT1 = {"balance": 500, "bank": "abc", "number": "123"}
# Update filter guard: only a user whose accounts do not hold this bank/number pair matches.
BANK_FILTER = {"$not": {"$elemMatch": {"bank": ACCOUNT1["bank"], "number": ACCOUNT1["number"]}}}
# $expr validator: the accounts array is as long as the set of its {bank, number} pairs.
ACCOUNTS_VALIDATOR = {"$expr": {"$cond": {
    "if": {"$isArray": "$accounts"},
    "then": {"$eq": [{"$size": "$accounts"},
                     {"$size": {"$setIntersection": {"$map": {
                         "input": "$accounts", "in": {"bank": "$$this.bank", "number": "$$this.number"}}}}}]},
    "else": True}}}

Observation = tuple[str, str]   # (operation label, outcome text)


@dataclass(frozen=True)
class Outcome:
    """What one operation did: the comparable text, plus the server's error message (if any)."""
    text: str
    message: str = ""

    def __str__(self) -> str:
        return self.text


class SetupError(RuntimeError):
    """A command that prepares a step failed: the step could not be executed."""


def write_outcome(action: Callable[[], object]) -> Outcome:
    """Run one write; its outcome. Write errors are outcomes; anything else propagates."""
    try:
        result = action()
    except WriteError as err:   # DuplicateKeyError is a WriteError with code 11000
        return Outcome(f"error {err.code}", str((err.details or {}).get("errmsg") or err))
    matched = getattr(result, "matched_count", None)
    if matched is not None:
        return Outcome(f"matched {matched} modified {result.modified_count}")
    return Outcome("inserted")


def setup(action: Callable[[], object], what: str) -> None:
    try:
        action()
    except PyMongoError as err:
        raise SetupError(f"{what} failed: {err}") from err


def fresh_collection(db: Database, index_options: dict, validator: dict | None = None,
                     users: bool = False) -> Collection:
    """Drop users, recreate it (with validator), create the index, optionally insert both users."""
    setup(lambda: db.drop_collection(COLLECTION), "drop users")
    if validator is not None:
        setup(
            lambda: db.create_collection(COLLECTION, validator=validator), "createCollection with validator"
        )
    collection = db[COLLECTION]
    setup(
        lambda: collection.create_index(INDEX_SPEC, **index_options), f"createIndex {index_options['name']}"
    )
    if users:
        setup(lambda: collection.insert_many([USER1, USER2]), "insertMany user1, user2")
    return collection


def push(collection: Collection, user_id: int, guard: bool = False) -> Outcome:
    query: dict = {"_id": user_id} | ({"accounts": BANK_FILTER} if guard else {})
    return write_outcome(lambda: collection.update_one(query, {"$push": {"accounts": ACCOUNT1}}))


def accounts_of(collection: Collection, user_id: int) -> Outcome:
    doc = collection.find_one({"_id": user_id}) or {}
    return Outcome(f"accounts {len(doc.get('accounts', []))}")


def step1(db: Database) -> list[tuple[str, Outcome]]:
    users = fresh_collection(db, INDEX_V1)
    return [("insert user1", write_outcome(lambda: users.insert_one(dict(USER1)))),
            ("insert user2", write_outcome(lambda: users.insert_one(dict(USER2))))]


def step2(db: Database) -> list[tuple[str, Outcome]]:
    users = fresh_collection(db, INDEX_V2)
    return [("insert user1", write_outcome(lambda: users.insert_one(dict(USER1)))),
            ("insert user2", write_outcome(lambda: users.insert_one(dict(USER2))))]


def step3(db: Database) -> list[tuple[str, Outcome]]:
    users = fresh_collection(db, INDEX_V2, users=True)
    return [("push account1 to user1", push(users, 1)), ("push account1 to user2", push(users, 2))]


def step4(db: Database) -> list[tuple[str, Outcome]]:
    users = fresh_collection(db, INDEX_V2, users=True)
    return [("push account1 to user1", push(users, 1)), ("push account1 to user1 again", push(users, 1)),
            ("user1 afterwards", accounts_of(users, 1))]


def step5(db: Database) -> list[tuple[str, Outcome]]:
    users = fresh_collection(db, INDEX_V2, users=True)
    return [("guarded push to user1", push(users, 1, guard=True)),
            ("guarded push to user1 again", push(users, 1, guard=True)),
            ("user1 afterwards", accounts_of(users, 1))]


def step6(db: Database) -> list[tuple[str, Outcome]]:
    users = fresh_collection(db, INDEX_V2, validator=ACCOUNTS_VALIDATOR, users=True)
    return [("push account1 to user1", push(users, 1)), ("push account1 to user1 again", push(users, 1))]


@dataclass(frozen=True)
class Step:
    number: int
    title: str
    description: str                      # what the article does and says happens
    expected: tuple[Observation, ...]     # the article's outcomes, in order
    run: Callable[[Database], list[tuple[str, Outcome]]]


STEPS: tuple[Step, ...] = (
    Step(
        1,
        "unique compound multikey index, users without accounts",
        "Unique index on accounts.bank + accounts.number; two users without accounts: the second insert "
        "fails with E11000 because both index as {null, null}.",
        (("insert user1", "inserted"), ("insert user2", "error 11000")),
        step1,
    ),
    Step(
        2,
        "partial unique index, users without accounts",
        "Same index with partialFilterExpression $exists on both fields: documents without accounts are "
        "not indexed, both users insert.",
        (("insert user1", "inserted"), ("insert user2", "inserted")),
        step2,
    ),
    Step(
        3,
        "same account for two users",
        "Push the same account to user1 then to user2: the second push fails with E11000.",
        (("push account1 to user1", "matched 1 modified 1"), ("push account1 to user2", "error 11000")),
        step3,
    ),
    Step(
        4,
        "same account twice in one user",
        "Push the same account to user1 twice: both succeed, the index keeps one entry per document and "
        "key, so the duplicate inside one array is not caught; user1 ends with 2 accounts.",
        (
            ("push account1 to user1", "matched 1 modified 1"),
            ("push account1 to user1 again", "matched 1 modified 1"),
            ("user1 afterwards", "accounts 2"),
        ),
        step4,
    ),
    Step(
        5,
        "$not $elemMatch update guard",
        "Filter the push with accounts: {$not: {$elemMatch: {bank, number}}}: the second push matches 0 "
        "documents (no error); user1 keeps 1 account.",
        (
            ("guarded push to user1", "matched 1 modified 1"),
            ("guarded push to user1 again", "matched 0 modified 0"),
            ("user1 afterwards", "accounts 1"),
        ),
        step5,
    ),
    Step(
        6,
        "$expr validator: accounts unique by bank and number",
        "Collection validator: $size of accounts equals $size of $setIntersection of the mapped "
        "{bank, number} pairs; the duplicate push fails with Document failed validation (code 121).",
        (("push account1 to user1", "matched 1 modified 1"), ("push account1 to user1 again", "error 121")),
        step6,
    ),
)
STEP_NUMBERS = tuple(step.number for step in STEPS)


def select_steps(numbers: list[int]) -> list[Step]:
    unknown = sorted(set(numbers) - set(STEP_NUMBERS))
    if unknown:
        raise ValueError(f"unknown uniqueidx steps {unknown}; allowed: {', '.join(map(str, STEP_NUMBERS))}")
    return [step for step in STEPS if step.number in set(numbers)]
