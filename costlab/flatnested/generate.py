"""Realistic fake values (faker, seeded) and the two layouts built from the very same values.

The values table has one column per leaf field, named by its flat path (`home_zip`); a flat
document uses those names, a structured one nests them as `home: {zip: ...}`. Every group is
seeded on its own, so the first G groups are identical whatever the widest shape is.
"""
from __future__ import annotations

from datetime import datetime
from typing import Callable

import polars as pl
from faker import Faker

from costlab.flatnested.shapes import (
    FIELDS_PER_GROUP,
    MAX_FIELDS,  # noqa: F401 (re-exported)
    MAX_GROUPS,
    Shape,
)
from costlab.progress import progress

SEPARATOR = "_"
# Fixed bounds: faker's defaults for dates are relative to today, which would break determinism.
DATE_START, DATE_END = datetime(1990, 1, 1), datetime(2025, 12, 31)

Gen = Callable[[Faker], object]


def _date(f: Faker) -> datetime:
    return f.date_time_between(start_date=DATE_START, end_date=DATE_END)


def _street(f: Faker) -> str:
    return f.street_name()


def _address(prefix: str) -> tuple[str, tuple[tuple[str, Gen], ...]]:
    return prefix, (("street", _street), ("number", lambda f: f.random_int(1, 9999)),
                    ("zip", lambda f: f.postcode()), ("city", lambda f: f.city()),
                    ("country", lambda f: f.country()))


# MAX_GROUPS (20) groups x 5 fields = the widest published shape (100 fields / 20x5). Order matters:
# a shape with G groups uses the first G. Names are what a person record could really hold.
GROUPS: tuple[tuple[str, tuple[tuple[str, Gen], ...]], ...] = (
    (
        "name",
        (
            ("first", lambda f: f.first_name()),
            ("middle", lambda f: f.first_name()),
            ("last", lambda f: f.last_name()),
            ("prefix", lambda f: f.prefix()),
            ("suffix", lambda f: f.suffix()),
        ),
    ),
    _address("home"),
    _address("work"),
    (
        "job",
        (
            ("title", lambda f: f.job()),
            ("company", lambda f: f.company()),
            ("phone", lambda f: f.phone_number()),
            ("email", lambda f: f.company_email()),
            ("since", _date),
        ),
    ),
    (
        "card",
        (
            ("number", lambda f: f.credit_card_number()),
            ("provider", lambda f: f.credit_card_provider()),
            ("expires", lambda f: f"{f.random_int(1, 12):02d}/{f.random_int(26, 35)}"),
            ("code", lambda f: f.credit_card_security_code()),
            ("holder", lambda f: f.name()),
        ),
    ),
    (
        "bank",
        (
            ("iban", lambda f: f.iban()),
            ("swift", lambda f: f.swift()),
            ("account", lambda f: f.bban()),
            ("routing", lambda f: f.aba()),
            ("balance", lambda f: round(f.pyfloat(left_digits=6, right_digits=2, positive=True), 2)),
        ),
    ),
    (
        "contact",
        (
            ("email", lambda f: f.email()),
            ("phone", lambda f: f.phone_number()),
            ("mobile", lambda f: f.phone_number()),
            ("website", lambda f: f.url()),
            ("username", lambda f: f.user_name()),
        ),
    ),
    (
        "device",
        (
            ("ip", lambda f: f.ipv4()),
            ("mac", lambda f: f.mac_address()),
            ("agent", lambda f: f.user_agent()),
            ("os", lambda f: f.random_element(("linux", "windows", "macos", "android", "ios"))),
            ("language", lambda f: f.language_code()),
        ),
    ),
    (
        "birth",
        (
            ("date", _date),
            ("city", lambda f: f.city()),
            ("state", lambda f: f.state()),
            ("country", lambda f: f.country()),
            ("weight", lambda f: f.random_int(2200, 4800)),
        ),
    ),
    (
        "vehicle",
        (
            ("plate", lambda f: f.license_plate()),
            ("vin", lambda f: f.vin()),
            ("color", lambda f: f.color_name()),
            ("year", lambda f: f.random_int(1995, 2025)),
            ("mileage", lambda f: f.random_int(0, 300000)),
        ),
    ),
    _address("shipping"),
    _address("billing"),
    (
        "emergency",
        (
            ("name", lambda f: f.name()),
            ("relation", lambda f: f.random_element(("parent", "partner", "sibling", "friend", "child"))),
            ("phone", lambda f: f.phone_number()),
            ("email", lambda f: f.free_email()),
            ("city", lambda f: f.city()),
        ),
    ),
    (
        "employer",
        (
            ("name", lambda f: f.company()),
            ("motto", lambda f: f.catch_phrase()),
            ("ein", lambda f: f.ein()),
            ("phone", lambda f: f.phone_number()),
            ("website", lambda f: f.url()),
        ),
    ),
    (
        "profile",
        (
            ("bio", lambda f: f.sentence()),
            ("color", lambda f: f.safe_color_name()),
            ("created", _date),
            ("active", lambda f: f.pybool()),
            ("score", lambda f: f.random_int(0, 1000)),
        ),
    ),
    (
        "social",
        (
            ("handle", lambda f: f.user_name()),
            ("url", lambda f: f.url()),
            ("followers", lambda f: f.random_int(0, 100000)),
            ("following", lambda f: f.random_int(0, 5000)),
            ("verified", lambda f: f.pybool()),
        ),
    ),
    (
        "education",
        (
            ("school", lambda f: f"{f.city()} University"),
            ("degree", lambda f: f.random_element(("BSc", "BA", "MSc", "MA", "PhD", "MBA"))),
            ("field", lambda f: f.job()),
            ("start", _date),
            ("end", _date),
        ),
    ),
    (
        "health",
        (
            ("blood", lambda f: f.random_element(("A+", "A-", "B+", "B-", "AB+", "AB-", "O+", "O-"))),
            ("height", lambda f: f.random_int(150, 200)),
            ("weight", lambda f: round(f.pyfloat(min_value=45, max_value=130), 1)),
            ("insurance", lambda f: f.bban()),
            ("doctor", lambda f: f.name()),
        ),
    ),
    (
        "preferences",
        (
            ("currency", lambda f: f.currency_code()),
            ("timezone", lambda f: f.timezone()),
            ("locale", lambda f: f.locale()),
            ("newsletter", lambda f: f.pybool()),
            ("theme", lambda f: f.random_element(("light", "dark", "system"))),
        ),
    ),
    (
        "login",
        (
            ("username", lambda f: f.user_name()),
            ("password", lambda f: f.sha256()),
            ("last", _date),
            ("ip", lambda f: f.ipv4_public()),
            ("attempts", lambda f: f.random_int(0, 5)),
        ),
    ),
)
assert len(GROUPS) == MAX_GROUPS  # shapes.MAX_FIELDS, which the workflow plans with, counts on it
assert all(len(fields) == FIELDS_PER_GROUP for _, fields in GROUPS)
assert len({name for name, _ in GROUPS}) == len(GROUPS)


def group_fields(groups: int) -> list[tuple[str, list[str]]]:
    """(group name, its field names) for the first `groups` groups."""
    return [(name, [field for field, _ in fields]) for name, fields in GROUPS[:groups]]


def flat_name(group: str, field: str) -> str:
    return f"{group}{SEPARATOR}{field}"


def generate_values(documents: int, groups: int, seed: int) -> pl.DataFrame:
    """`documents` rows of fake values for the first `groups` groups; columns are flat names, plus `_id`.

    Deterministic for a given (documents, seed) and faker version (pinned). Datetimes are kept at
    millisecond precision, which is what BSON stores.
    """
    if documents < 1:
        raise ValueError(f"flatnested documents must be >= 1, got {documents!r}")
    if not 1 <= groups <= len(GROUPS):
        raise ValueError(f"flatnested groups must be between 1 and {len(GROUPS)}, got {groups!r}")
    columns: dict[str, pl.Series] = {"_id": pl.Series("_id", range(documents), dtype=pl.Int64)}
    for index, (group, fields) in enumerate(progress(GROUPS[:groups], desc="fake values", unit="group")):
        faker = Faker("en_US")
        faker.seed_instance(seed * 1000 + index)
        for field, gen in fields:
            name = flat_name(group, field)
            series = pl.Series(name, [gen(faker) for _ in range(documents)])
            if series.dtype == pl.Datetime:
                series = series.cast(pl.Datetime("ms"))
            columns[name] = series
    return pl.DataFrame(columns)


def documents_for(values: pl.DataFrame, shape: Shape) -> list[dict]:
    """The documents of `shape` built from `values` (the first shape.groups groups), in _id order."""
    layout = group_fields(shape.groups)
    flat_names = [flat_name(group, field) for group, fields in layout for field in fields]
    missing = [name for name in flat_names if name not in values.columns]
    if missing:
        raise ValueError(f"values table lacks columns {missing[:3]}... needed by shape {shape.name}; "
                         f"regenerate it with at least {shape.groups} groups")
    rows = values.select(["_id", *flat_names]).rows()
    if shape.layout == "flat":
        return [dict(zip(["_id", *flat_names], row)) for row in rows]
    docs = []
    for row in rows:
        doc: dict = {"_id": row[0]}
        start = 1
        for group, fields in layout:
            doc[group] = dict(zip(fields, row[start:start + len(fields)]))
            start += len(fields)
        docs.append(doc)
    return docs
