"""A user's own app versions, declared in config (`appversions.variants`): the one place that builds
their declarations (docs/variants.md).

Each entry is `name -> fields`: either `base: <published version>` and the fields that differ, or
`layout`, `bucket` and `report` (and any other field) with no base. The fields are the declaration's
(costlab/appversions/registry.py, VersionDeclaration) under their config names:

    base                a published version whose declaration the variant starts from
    layout              a registered layout's name (layouts.py): the documents' shape
    bucket              day | month | quarter, or a bucket the layout file declares: what one document holds
    report              the Get Reports pipeline (registry.REPORTS)
    long_status_names   approved/noFunds/... instead of a/n/p/r
    item_name_format    DD | MMDD | YYYYMMDD (the dynamic layout's item names)
    totals              the Computed Pattern's totals in each document
    indexes             extra unique indexes besides _id: a list of key-field lists
    block_compressor    none | snappy | zlib | zstd: create_collection_options' WiredTiger configString
    compare_to          the version the report measures it beside (default: its base)
    layout_file         a Python file of yours defining a layout (a costlab.appversions.layouts.Layout
                        subclass with a `name`) and any bucket (a costlab.appversions.buckets.Bucket
                        subclass with a `name`): imported, and its layouts and buckets registered,
                        wherever the variants are; `layout` defaults to the layout it defines

Used by costlab.config.check_semantics (through the study's config_problem: `problem`, one line naming
the key, before any job), by rules/appversions.smk when the workflow is parsed and by every appversions
script (`register_variants`: registry.register, before the wildcard pattern and version lists are
built). A variant is then a version like any other: it must be listed in `appversions.versions` (and,
to be loaded or load tested, in `load_versions` / `loadtest.versions`), and so must its `compare_to`.

Standard library and registry.py only, except that a config declaring variants also imports layouts.py
to check each variant against its layout (`Layout.check`): the one place that knows what a layout holds.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Mapping

import costlab.appversions.ceilings as ceilings
import costlab.appversions.registry as registry
from costlab.appversions.registry import (
    BLOCK_COMPRESSORS,
    ITEM_NAME_FORMATS,
    PUBLISHED,
    PUBLISHED_NAMES,
    REPORTS,
    VersionDeclaration,
)
from costlab.declarations import (
    DeclarationError,
    Declarations,
    Entry,
    Field,
    FieldProblem,
    flag,
    listed,
    one_of,
    text,
    user_file,
)
from costlab.suggest import did_you_mean

KEY = "appversions.variants"
REQUIRED_WITHOUT_BASE = ("layout", "bucket", "report")


def _published_pairs() -> dict[str, dict[str, set]]:
    """What the published versions declare with each built-in layout: its reports, totals, long status
    names and item name formats. A built-in layout takes only these (its size formula and documents are
    written for them: the push layout's element is sized for a one-letter status, day layouts hold no
    totals); a layout of the user's own takes any."""
    pairs: dict[str, dict[str, set]] = {}
    for v in PUBLISHED:
        seen = pairs.setdefault(v.layout_name, {"report": set(), "totals": {False},
                                                "long_status_names": {False}, "item_name_format": set()})
        seen["report"].add(v.report)
        seen["totals"].add(v.totals)
        seen["long_status_names"].add(v.long_status_names)
        seen["item_name_format"].add(v.item_name_format)
    return pairs


PUBLISHED_PAIRS = _published_pairs()


def block_compressor_options(compressor: str) -> dict[str, Any]:
    """create_collection_options naming a block compressor (as appV6R4's zstd)."""
    return {"storageEngine": {"wiredTiger": {"configString": f"block_compressor={compressor}"}}}


def _base(value: Any) -> str:
    if value not in PUBLISHED_NAMES:
        raise FieldProblem(f"{value!r} is not a published app version (allowed: {listed(PUBLISHED_NAMES)})"
                           + did_you_mean(value, PUBLISHED_NAMES))
    return value


def _index_keys(value: Any) -> tuple[tuple[str, ...], ...]:
    if not isinstance(value, list) or not all(
        isinstance(keys, list) and keys and all(isinstance(k, str) and k for k in keys) for keys in value
    ):
        raise FieldProblem(f"{value!r} is not a list of key-field lists (e.g. [[key, date]])")
    return tuple(tuple(keys) for keys in value)


def _block_compressor(value: Any) -> dict[str, Any]:
    return block_compressor_options(one_of(BLOCK_COMPRESSORS)(value))


# a config field whose VersionDeclaration attribute has another name; `base` and `layout_file` are the
# builder's, the others hold their attribute's value under its own name
RENAMED = {"layout": "layout_name", "indexes": "index_keys", "block_compressor": "create_collection_options"}
BUILDERS_OWN = ("base", "layout_file")
FIELDS = (
    Field("base", _base),
    Field("layout", text("a layout name")),
    Field("bucket", one_of(registry.bucket_names)),
    Field("report", one_of(REPORTS)),
    Field("long_status_names", flag),
    Field("item_name_format", one_of(ITEM_NAME_FORMATS, none_allowed=True)),
    Field("totals", flag),
    Field("indexes", _index_keys),
    Field("block_compressor", _block_compressor),
    Field("compare_to", text("a version's name")),
    # read first: the buckets it declares are what `bucket` may name
    Field("layout_file", lambda path: import_layout_file(path), first=True),
)


def _taken(name: str) -> str | None:
    if name in PUBLISHED_NAMES:
        return f"{name!r} is a published app version's name: give your variant another name"
    if name in _registered_by_code():
        return f"{name!r} is already a registered app version's name: give your variant another name"
    return None


def _registered_by_code() -> list[str]:
    """The registered versions' names but those an earlier read of a config registered (they are replaced)."""
    return [n for n in registry.version_names() if n not in _FROM_CONFIG]


def _build(entry: Entry) -> VersionDeclaration:
    name, given = entry.name, entry.given
    base_name = given.get("base")
    if base_name is not None:
        base = registry.declaration(base_name)
        values = {attr: getattr(base, attr) for attr in VersionDeclaration.__dataclass_fields__}
        values["compare_to"] = base_name
    else:
        missing = [f for f in REQUIRED_WITHOUT_BASE if f not in given
                   and not (f == "layout" and "layout_file" in given)]
        if missing:
            raise entry.fail(missing[0], f"required without a base (declare base: <a published version>, "
                                         f"or {', '.join(REQUIRED_WITHOUT_BASE)})")
        values = {"compare_to": None}
    if "layout_file" in given:
        defined = entry["layout_file"]   # its layouts' names
        if "layout" not in given and not (base_name is not None and not defined):   # a file of buckets only
            if len(defined) != 1:
                raise entry.fail("layout", f"{given['layout_file']} defines layouts {', '.join(defined)}: "
                                           "say which (layout: <its name>)")
            values["layout_name"] = defined[0]
    for field_name in given:
        if field_name not in BUILDERS_OWN:
            values[RENAMED.get(field_name, field_name)] = entry[field_name]
    values["name"] = name
    declared = VersionDeclaration(**values)
    _check_pairs(declared, given)
    return declared


def _check_pairs(declared: VersionDeclaration, fields: Mapping[str, Any]) -> None:
    """What a built-in layout cannot hold (PUBLISHED_PAIRS), named by the field that asks for it."""
    pairs = PUBLISHED_PAIRS.get(declared.layout_name)
    if pairs is None:
        return
    layout = declared.layout_name

    def blame(*candidates: str) -> str:
        return next((f for f in candidates if f in fields), candidates[-1])

    def fail(field_name: str, problem: str) -> DeclarationError:
        return DECLARED.fail(declared.name, field_name, problem)

    if declared.report not in pairs["report"]:
        raise fail(blame("report", "layout"),
                   f"report {declared.report!r} does not read layout {layout!r}'s documents "
                   f"(allowed with it: {listed(sorted(pairs['report']))})")
    if declared.report == "reduce_dynamic_single" and declared.item_name_format != "YYYYMMDD":
        raise fail(blame("item_name_format", "report"),
                   "report 'reduce_dynamic_single' compares item names with dates: it needs "
                   f"item_name_format YYYYMMDD, not {declared.item_name_format!r}")
    for field_name in ("totals", "long_status_names"):
        if getattr(declared, field_name) not in pairs[field_name]:
            words = field_name.replace("_", " ")
            raise fail(blame(field_name, "layout"),
                       f"layout {layout!r} does not write {words} (allowed with it: false)")
    formats = pairs["item_name_format"]
    if declared.item_name_format is not None and None in formats and len(formats) == 1:
        raise fail(blame("item_name_format", "layout"),
                   f"layout {layout!r} has no item names (allowed with it: null)")


def _listed_and_held(declared: list[VersionDeclaration], section: Mapping[str, Any]) -> None:
    """Each variant, and what it is compared to, is among appversions.versions; each layout holds its
    variant (Layout.check)."""
    configured = list(section.get("versions") or ())
    for d in declared:
        if d.name not in configured:
            raise DECLARED.fail(d.name, None, f"declared but not in appversions.versions: add {d.name!r} "
                                              "there to measure it, or remove its declaration")
        if d.compare_to is not None and d.compare_to not in configured:
            raise DECLARED.fail(d.name, "compare_to", f"{d.compare_to!r} is not in appversions.versions: the "
                                                      "variant is measured beside it, add it there")
    if declared:
        _check_layouts(declared)


DECLARED: Declarations[VersionDeclaration] = Declarations(
    key=KEY, noun="variant", fields=FIELDS, build=_build, taken=_taken,
    compared_with=lambda section: _registered_by_code(), compared_words="not an app version",
    default_compare_to=lambda given: given.get("base"), after=_listed_and_held)


# resolved path -> the layout names it defines (a file is imported once per process)
_LAYOUT_FILES: dict[str, list[str]] = {}
# resolved path -> the bucket names it declares (costlab/appversions/buckets.py)
_FILE_BUCKETS: dict[str, list[str]] = {}


# The child that imports a layout file first: it says "ok" on its last line only when the import returned.
_TRIAL = """
import importlib.util, sys
spec = importlib.util.spec_from_file_location("costlab_user_layout_trial", sys.argv[1])
module = importlib.util.module_from_spec(spec)
try:
    spec.loader.exec_module(module)
except BaseException as err:
    text = str(err).splitlines()[0] if str(err) else ""
    print(f"\\ncostlab-trial: raised {type(err).__name__}: {text}"[:400])
    sys.exit(3)
print("\\ncostlab-trial: ok")
"""


def trial_import_problem(path: Any, timeout_s: float | None = None) -> str | None:
    """Import a file of yours in a child process with a time limit (ceilings.LAYOUT_IMPORT_S): None when
    the import returns, else what it did instead, to follow "importing <file> " (raised, exited, ran past
    the limit).
    A file that calls sys.exit() or loops forever at import can then neither end nor hang the run."""

    limit = ceilings.LAYOUT_IMPORT_S if timeout_s is None else timeout_s
    try:
        child = subprocess.run([sys.executable, "-c", _TRIAL, str(path)], capture_output=True, text=True,
                               timeout=limit, stdin=subprocess.DEVNULL, errors="replace")
    except subprocess.TimeoutExpired:
        return f"did not return within {limit:g} s (a loop at import?): refused"
    last = (child.stdout.strip().splitlines() or [""])[-1]
    if child.returncode == 0 and last == "costlab-trial: ok":
        return None
    if last.startswith("costlab-trial: raised"):
        return f"failed: {last.removeprefix('costlab-trial: raised ')}"
    said = (child.stderr.strip().splitlines() or child.stdout.strip().splitlines() or [""])[-1][:200]
    return (f"ended the process (exit code {child.returncode})"
            + (f": {said}" if said else "") + "; a layout file must only define classes")


# contents whose import returned in a child (by SHA-256): the pre-check's trial spares the Snakefile's
VETTED_DIR = Path(".snakemake") / "costlab" / "layout_files_vetted"


def _vetted_import_problem(path: Path) -> str | None:
    """trial_import_problem, once per content of the file in this working directory."""

    marker = VETTED_DIR / hashlib.sha256(path.read_bytes()).hexdigest()
    if marker.is_file():
        return None
    problem = trial_import_problem(path)
    if problem is None:
        try:
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.write_text(f"{path}\n")
        except OSError:
            pass   # a read-only working directory: the next run tries again
    return problem


def load_layout_file(name: str, path: Any) -> list[str]:
    """Import variant `name`'s layout file and register what it defines (import_layout_file); the names of
    its layouts, or DeclarationError in one line naming the variant's layout_file."""
    try:
        return import_layout_file(path)
    except FieldProblem as err:
        raise DECLARED.fail(name, "layout_file", str(err)) from None


def import_layout_file(path: Any) -> list[str]:
    """Import a layout file (relative to the working directory, where results/ is written, else to costlab's
    checkout) and register every Layout and Bucket subclass with a `name` it defines; the names of its
    layouts, or FieldProblem saying why not (the reader of a variant's layout_file)."""
    resolved = user_file(path, "a Python file's path (e.g. variants/mine.py)", suffix=".py").resolve()
    if str(resolved) in _LAYOUT_FILES:
        return _LAYOUT_FILES[str(resolved)]
    problem = _vetted_import_problem(resolved)   # first in a child process, with a time limit
    if problem:
        raise FieldProblem(f"importing {path} {problem}")
    from costlab.appversions.layouts import PUBLISHED_LAYOUTS, Layout, register_layout  # noqa: PLC0415  heavy: numpy, polars, pymongo; the rule files import this module

    module_name = f"costlab_user_layout_{len(_LAYOUT_FILES)}_{resolved.stem}"
    spec = importlib.util.spec_from_file_location(module_name, resolved)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException as err:  # noqa: BLE001  the user's code: any error, sys.exit too, said in one line
        del sys.modules[module_name]
        said = str(err).splitlines()[0] if str(err) else ""
        raise FieldProblem(f"importing {path} failed: {type(err).__name__}: {said}") from None
    from costlab.appversions.buckets import BUILT_IN, Bucket, register_bucket  # noqa: PLC0415  heavy: numpy, polars; the rule files import this module

    declared = [obj for obj in vars(module).values()
                if isinstance(obj, type) and obj.__module__ == module_name and getattr(obj, "name", "")]
    for cls in (c for c in declared if issubclass(c, Bucket)):   # its buckets first: its layouts may use them
        if cls.name in BUILT_IN:
            raise FieldProblem(f"{path}: bucket name {cls.name!r} is a built-in bucket's: "
                               "give yours another name")
        try:
            register_bucket(cls())
        except Exception as err:  # noqa: BLE001  the user's bucket: any error, in one line
            raise FieldProblem(f"{path}: {err}") from None
        _FILE_BUCKETS.setdefault(str(resolved), []).append(cls.name)
    classes = [c for c in declared if issubclass(c, Layout)]
    if not classes and not _FILE_BUCKETS.get(str(resolved)):
        raise FieldProblem(f"{path} defines no layout and no bucket (a subclass of "
                           "costlab.appversions.layouts.Layout or costlab.appversions.buckets.Bucket with a "
                           "name)")
    names = []
    for cls in classes:
        if cls.name in PUBLISHED_LAYOUTS:
            raise FieldProblem(f"{path}: layout name {cls.name!r} is a built-in layout's: "
                               "give yours another name")
        try:
            register_layout(cls())
        except Exception as err:  # noqa: BLE001
            raise FieldProblem(f"{path}: layout {cls.name!r}: {err}") from None
        names.append(cls.name)
    _LAYOUT_FILES[str(resolved)] = names
    return names


def forget_layout_files() -> None:
    """Unregister the layouts imported from layout files (the next read imports them again)."""
    from costlab.appversions.buckets import unregister_bucket  # noqa: PLC0415  heavy: numpy, polars; the rule files import this module
    from costlab.appversions.layouts import unregister_layout  # noqa: PLC0415  heavy: numpy, polars, pymongo; the rule files import this module

    for names in _LAYOUT_FILES.values():
        for layout in names:
            unregister_layout(layout)
    _LAYOUT_FILES.clear()
    for names in _FILE_BUCKETS.values():
        for bucket in names:
            unregister_bucket(bucket)
    _FILE_BUCKETS.clear()


def layout_files(section: dict) -> dict[str, str]:
    """{variant: its layout file} as configured (unchecked): the rules make each an input of its jobs."""
    return DECLARED.files(section, "layout_file")


def _check_layouts(declared: list[VersionDeclaration]) -> None:
    """Each variant's layout exists and holds its declaration (Layout.check: the layout's own rule). The
    workflow then rehearses it when the rules are read, before any job (costlab.appversions.rehearsal)."""
    from costlab.appversions.layouts import layout_named  # noqa: PLC0415  heavy: numpy, polars, pymongo; the rule files import this module

    for d in declared:
        try:
            layout = layout_named(d.layout_name)
        except ValueError as err:
            from costlab.appversions.layouts import registered_layouts  # noqa: PLC0415  heavy: numpy, polars, pymongo; the rule files import this module

            suggestion = did_you_mean(d.layout_name, registered_layouts())
            raise DECLARED.fail(d.name, "layout", str(err) + suggestion) from None
        try:
            layout.check(d)
        except ValueError as err:
            raise DECLARED.fail(d.name, "bucket" if "bucket" in str(err) else "layout", str(err)) from None


def declarations(section: dict) -> list[VersionDeclaration]:
    """The variants `section` (the config's appversions section) declares, in its order; DeclarationError
    (one line naming the key) for the first that cannot be used. Registers nothing."""
    return DECLARED.declarations(section)


def problem(section: dict) -> str | None:
    """The first variant that cannot be used, as a one-line config error (None: all can)."""
    return DECLARED.problem(section)


def declared_names(section: dict) -> list[str]:
    """The names `section` declares as variants (unchecked)."""
    return DECLARED.declared_names(section)


# the variants registered from a config by this process (a later config replaces them)
_FROM_CONFIG: dict[str, VersionDeclaration] = {}
# What register_variants registered, for the processes this one starts: the load and load-test workers
# are spawned interpreters that get only a version's name (costlab.appversions.versions.get_version
# registers these when it meets a name it does not know).
ENV = "COSTLAB_APPVERSIONS_VARIANTS"


def register_variants(config: dict) -> list[str]:
    """Register the variants the config declares (config: the whole config, or its appversions
    section), replacing those an earlier config registered in this process; their names."""
    section = (config.get("appversions", config) if isinstance(config, dict) else None) or {}
    declared = declarations(section)
    for name in list(_FROM_CONFIG):
        registry.unregister(name)
        del _FROM_CONFIG[name]
    for d in declared:
        _FROM_CONFIG[d.name] = registry.register(d)
    if declared:
        os.environ[ENV] = json.dumps({"versions": list(section.get("versions") or ()),
                                      "variants": section.get("variants") or {}})
    else:
        os.environ.pop(ENV, None)
    return [d.name for d in declared]


def register_from_environment() -> list[str]:
    """In a process started by one that registered variants (a spawned worker): register the same."""
    text = os.environ.get(ENV)
    return register_variants({"appversions": json.loads(text)}) if text else []
