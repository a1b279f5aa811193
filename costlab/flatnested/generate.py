"""Realistic fake values (faker, seeded) and the two layouts built from the very same values.

The values table has one column per leaf field, named by its flat path (`home_zip`); a flat
document uses those names, a structured one nests them as `home: {zip: ...}`. Every group is
seeded on its own, so the first G groups are identical whatever the widest shape is.
"""
from __future__ import annotations

from datetime import datetime
from operator import methodcaller
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
_faker = methodcaller   # _faker("email")(f) is f.email()


def _date(f: Faker) -> datetime:
    return f.date_time_between(start_date=DATE_START, end_date=DATE_END)


def _street(f: Faker) -> str:
    return f.street_name()


def _address(prefix: str) -> tuple[str, tuple[tuple[str, Gen], ...]]:
    return prefix, (("street", _street), ("number", lambda f: f.random_int(1, 9999)),
                    ("zip", _faker("postcode")), ("city", _faker("city")), ("country", _faker("country")))


# MAX_GROUPS (20) groups x 5 fields = the widest published shape (100 fields / 20x5). Order matters:
# a shape with G groups uses the first G. Names are what a person record could really hold.
GROUPS: tuple[tuple[str, tuple[tuple[str, Gen], ...]], ...] = (
    ("name", (("first", _faker("first_name")), ("middle", _faker("first_name")),
              ("last", _faker("last_name")), ("prefix", _faker("prefix")), ("suffix", _faker("suffix")))),
    _address("home"),
    _address("work"),
    ("job", (("title", _faker("job")), ("company", _faker("company")), ("phone", _faker("phone_number")),
             ("email", _faker("company_email")), ("since", _date))),
    ("card", (("number", _faker("credit_card_number")), ("provider", _faker("credit_card_provider")),
              ("expires", lambda f: f"{f.random_int(1, 12):02d}/{f.random_int(26, 35)}"),
              ("code", _faker("credit_card_security_code")), ("holder", _faker("name")))),
    ("bank", (("iban", _faker("iban")), ("swift", _faker("swift")), ("account", _faker("bban")),
              ("routing", _faker("aba")),
              ("balance", lambda f: round(f.pyfloat(left_digits=6, right_digits=2, positive=True), 2)))),
    ("contact", (("email", _faker("email")), ("phone", _faker("phone_number")),
                 ("mobile", _faker("phone_number")), ("website", _faker("url")),
                 ("username", _faker("user_name")))),
    ("device", (("ip", _faker("ipv4")), ("mac", _faker("mac_address")), ("agent", _faker("user_agent")),
                ("os", lambda f: f.random_element(("linux", "windows", "macos", "android", "ios"))),
                ("language", _faker("language_code")))),
    ("birth", (("date", _date), ("city", _faker("city")), ("state", _faker("state")),
               ("country", _faker("country")), ("weight", lambda f: f.random_int(2200, 4800)))),
    ("vehicle", (("plate", _faker("license_plate")), ("vin", _faker("vin")), ("color", _faker("color_name")),
                 ("year", lambda f: f.random_int(1995, 2025)),
                 ("mileage", lambda f: f.random_int(0, 300000)))),
    _address("shipping"),
    _address("billing"),
    ("emergency", (("name", _faker("name")),
                   ("relation", lambda f: f.random_element(("parent", "partner", "sibling", "friend",
                                                            "child"))),
                   ("phone", _faker("phone_number")), ("email", _faker("free_email")),
                   ("city", _faker("city")))),
    ("employer", (("name", _faker("company")), ("motto", _faker("catch_phrase")), ("ein", _faker("ein")),
                  ("phone", _faker("phone_number")), ("website", _faker("url")))),
    ("profile", (("bio", _faker("sentence")), ("color", _faker("safe_color_name")), ("created", _date),
                 ("active", _faker("pybool")), ("score", lambda f: f.random_int(0, 1000)))),
    ("social", (("handle", _faker("user_name")), ("url", _faker("url")),
                ("followers", lambda f: f.random_int(0, 100000)),
                ("following", lambda f: f.random_int(0, 5000)), ("verified", _faker("pybool")))),
    ("education", (("school", lambda f: f"{f.city()} University"),
                   ("degree", lambda f: f.random_element(("BSc", "BA", "MSc", "MA", "PhD", "MBA"))),
                   ("field", _faker("job")), ("start", _date), ("end", _date))),
    ("health", (("blood", lambda f: f.random_element(("A+", "A-", "B+", "B-", "AB+", "AB-", "O+", "O-"))),
                ("height", lambda f: f.random_int(150, 200)),
                ("weight", lambda f: round(f.pyfloat(min_value=45, max_value=130), 1)),
                ("insurance", _faker("bban")), ("doctor", _faker("name")))),
    ("preferences", (("currency", _faker("currency_code")), ("timezone", _faker("timezone")),
                     ("locale", _faker("locale")), ("newsletter", _faker("pybool")),
                     ("theme", lambda f: f.random_element(("light", "dark", "system"))))),
    ("login", (("username", _faker("user_name")), ("password", _faker("sha256")), ("last", _date),
               ("ip", _faker("ipv4_public")), ("attempts", lambda f: f.random_int(0, 5)))),
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
