"""The app versions, declared once, in published order: what every list of versions is built from.

A version is a declaration (this module's `VersionDeclaration`: plain data) over a layout object
(costlab/appversions/layouts.py: key fields, statement builder, BSON size formula, engine-lab
document), named by `layout`. `costlab.appversions.versions.get_version` joins the two into the
`AppVersion` the steps use.

Standard library only: the rules read this module when the workflow is parsed (the version
wildcard, the configured versions' check), and that must not import polars or pymongo
(tests/test_rule_imports.py). From here come:

- the order of versions everywhere (tables, figures: the report's palette gives colours only);
- the version wildcard of rules/appversions.smk (`wildcard_pattern`);
- which names `appversions.versions`, `load_versions` and `loadtest.versions` accept
  (`config_problem`, called by costlab.config.check_semantics).

Adding a version: one `VersionDeclaration` in `PUBLISHED` (or `register` at run time), and, for a
new document layout, one `Layout` subclass registered in layouts.py (docs/development.md).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Literal

from costlab.declarations import NAME_RE
from costlab.suggest import did_you_mean

# The built-in buckets; a layout file may declare more (costlab/appversions/buckets.py): any registered name.
Bucket = str
Report = Literal["match_group", "unwind", "reduce_array", "reduce_dynamic", "reduce_dynamic_single"]
BUCKETS: tuple[str, ...] = ("day", "month", "quarter")   # the built-in ones
# every bucket's name, the built-in ones first (buckets.register_bucket adds a layout file's)
_BUCKET_NAMES: list[str] = list(BUCKETS)
REPORTS: tuple[str, ...] = (
    "match_group",
    "unwind",
    "reduce_array",
    "reduce_dynamic",
    "reduce_dynamic_single",
)
ITEM_NAME_FORMATS: tuple[str, ...] = ("DD", "MMDD", "YYYYMMDD")
# mongod's collection block compressors (WiredTiger's configString block_compressor=...)
BLOCK_COMPRESSORS: tuple[str, ...] = ("none", "snappy", "zlib", "zstd")
STATUSES: tuple[str, ...] = ("approved", "noFunds", "pending", "rejected")
SHORT_NAMES: dict[str, str] = {"approved": "a", "noFunds": "n", "pending": "p", "rejected": "r"}
# A version's name is a collection name, a file name and a wildcard value: a declared name's rule
# (costlab.declarations.NAME_RE), the same for a published version and a user's variant.


@dataclass(frozen=True)
class VersionDeclaration:
    """One application version as data: its layout's name and the settings the layout reads."""

    name: str
    layout_name: str  # a layout registered in costlab/appversions/layouts.py
    bucket: Bucket  # what one document holds: a day, a month, a quarter (or a declared bucket) of events
    report: Report  # which Get Reports pipeline (costlab/appversions/versions.py builders)
    long_status_names: bool = False
    item_name_format: str | None = None  # dynamic items: DD, MMDD or YYYYMMDD
    totals: bool = False  # Computed Pattern: quarter totals in the document
    index_keys: tuple[tuple[str, ...], ...] = ()  # extra unique indexes besides _id
    create_collection_options: dict[str, Any] = field(default_factory=dict)
    # a user's variant (appversions.variants): the version it is measured beside in the report
    compare_to: str | None = None

    def __post_init__(self) -> None:
        problems = []
        if not isinstance(self.name, str) or not NAME_RE.match(self.name):
            problems.append(f"name {self.name!r} (letters, digits, _ and -, starting with a letter)")
        if self.bucket not in _BUCKET_NAMES:
            problems.append(f"bucket {self.bucket!r} (allowed: {', '.join(_BUCKET_NAMES)})")
        if self.report not in REPORTS:
            problems.append(f"report {self.report!r} (allowed: {', '.join(REPORTS)})")
        if self.item_name_format is not None and self.item_name_format not in ITEM_NAME_FORMATS:
            problems.append(
                f"item_name_format {self.item_name_format!r} (allowed: {', '.join(ITEM_NAME_FORMATS)})"
            )
        if problems:
            raise ValueError(f"app version {self.name!r}: invalid {'; '.join(problems)}")

    def status_field(self, status: str) -> str:
        """The field a status is counted in: its name, or its one-letter short name."""
        return status if self.long_status_names else SHORT_NAMES[status]


_ZSTD = {"storageEngine": {"wiredTiger": {"configString": "block_compressor=zstd"}}}

# The 14 versions of the articles, in published order (what each is: costlab/appversions/versions.py).
PUBLISHED: tuple[VersionDeclaration, ...] = (
    VersionDeclaration(
        "appV1",
        "embedded_id",
        "day",
        "match_group",
        long_status_names=True,
        index_keys=(("_id.key", "_id.date"),),
    ),
    VersionDeclaration(
        "appV2", "key_string", "day", "match_group", long_status_names=True, index_keys=(("key", "date"),)
    ),
    VersionDeclaration("appV3", "key_binary", "day", "match_group", index_keys=(("key", "date"),)),
    VersionDeclaration("appV4", "id_day", "day", "match_group"),
    VersionDeclaration("appV5R0", "push", "month", "unwind"),
    VersionDeclaration("appV5R1", "push", "quarter", "unwind"),
    VersionDeclaration("appV5R2", "array_daily", "quarter", "unwind"),
    VersionDeclaration("appV5R3", "array_daily", "quarter", "reduce_array"),
    VersionDeclaration("appV5R4", "array_daily", "quarter", "reduce_array", totals=True),
    VersionDeclaration("appV6R0", "dynamic", "month", "reduce_dynamic", item_name_format="DD"),
    VersionDeclaration("appV6R1", "dynamic", "quarter", "reduce_dynamic", item_name_format="MMDD"),
    VersionDeclaration(
        "appV6R2", "dynamic", "quarter", "reduce_dynamic", item_name_format="MMDD", totals=True
    ),
    VersionDeclaration("appV6R3", "dynamic", "quarter", "reduce_dynamic_single", item_name_format="YYYYMMDD"),
    VersionDeclaration(
        "appV6R4",
        "dynamic",
        "quarter",
        "reduce_dynamic_single",
        item_name_format="YYYYMMDD",
        create_collection_options=_ZSTD,
    ),
)
PUBLISHED_NAMES: tuple[str, ...] = tuple(v.name for v in PUBLISHED)

# name -> declaration, in registry order: the published versions, then those registered at run time.
_REGISTRY: dict[str, VersionDeclaration] = {v.name: v for v in PUBLISHED}


def bucket_names() -> list[str]:
    """Every bucket's name: the built-in ones, then those layout files declare (buckets.py)."""
    return list(_BUCKET_NAMES)


def register_bucket_name(name: str) -> None:
    """Called by buckets.register_bucket: `name` becomes a bucket a declaration may name."""
    if name not in _BUCKET_NAMES:
        _BUCKET_NAMES.append(name)


def unregister_bucket_name(name: str) -> None:
    if name in _BUCKET_NAMES and name not in BUCKETS:
        _BUCKET_NAMES.remove(name)


def register(declaration: VersionDeclaration) -> VersionDeclaration:
    """Add a version after the published ones; ValueError when its name is taken.

    Its layout is looked up when the version is used (versions.get_version), so a layout may be
    registered after the declaration.
    """
    if not isinstance(declaration, VersionDeclaration):
        raise TypeError(f"register takes a VersionDeclaration, got {type(declaration).__name__}")
    if declaration.name in _REGISTRY:
        raise ValueError(
            f"app version {declaration.name!r} is already registered; registered: {', '.join(_REGISTRY)}"
        )
    _REGISTRY[declaration.name] = declaration
    return declaration


def unregister(name: str) -> None:
    """Remove a version registered at run time (the published ones stay)."""
    if name in PUBLISHED_NAMES:
        raise ValueError(f"{name!r} is a published app version: it cannot be unregistered")
    _REGISTRY.pop(name, None)


def version_names() -> list[str]:
    """Every registered version's name, in registry order."""
    return list(_REGISTRY)


def declaration(name: str) -> VersionDeclaration:
    """The declaration of `name`; ValueError naming the registered versions otherwise."""
    try:
        return _REGISTRY[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown app version {name!r}; allowed: {', '.join(_REGISTRY)}") from None


def in_order(names: Iterable[str]) -> list[str]:
    """`names` (once each) in registry order; names not registered follow, in their given order
    (never dropped: a figure or table shows every version it was given)."""
    given = list(dict.fromkeys(names))
    known = set(given)
    return [n for n in _REGISTRY if n in known] + [n for n in given if n not in _REGISTRY]


def wildcard_pattern() -> str:
    """The `{version}` wildcard of the rules: exactly the registered names."""
    return "|".join(re.escape(name) for name in _REGISTRY)


def config_problem(study_config: dict, declared: Iterable[str] = ()) -> str | None:
    """The first configured version list naming an unregistered version, as a one-line config error.
    `declared`: names the config declares (appversions.variants), registered when the rules are read."""
    known = {**_REGISTRY, **dict.fromkeys(declared)}
    loadtest = study_config.get("loadtest") or {}
    for key, names in (
        ("appversions.versions", study_config.get("versions")),
        ("appversions.load_versions", study_config.get("load_versions")),
        ("appversions.loadtest.versions", loadtest.get("versions")),
    ):
        unknown = [n for n in names or () if n not in known]
        if unknown:
            return (
                f"invalid config key {key}: {', '.join(map(repr, unknown))} "
                f"{'is not an app version' if len(unknown) == 1 else 'are not app versions'} "
                f"(allowed: {', '.join(known)}; a version of your own is declared in appversions.variants)"
                + did_you_mean(unknown[0], known)
            )
    return None
