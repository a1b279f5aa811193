"""What a user declares in config: one scaffold for appversions.variants, docsize.documents and
arraygrowth.elements (docs/variants.md).

A declaration is `name -> fields` under one config key. This module owns what every one of them has:

- its **name**: one pattern and one length limit (NAME_RE), and costlab's reserved names
  (costlab.repeats.reserved_name_problem); a use adds the names that are not the user's to take;
- its **fields**, each declared once (`Field`: how its value is read, its default, whether it is required),
  with the error naming the bad value and what is allowed;
- its **file**, when a field names one (`user_file`, `read_text`): found from the working directory, else
  from costlab's checkout (the examples it ships), and read as UTF-8 text no larger than mongod could store;
- its **problems**: one line each, `invalid config key <key>.<name>[.<field>]: <problem>`, as
  DeclarationError; its **declared names**; and what each is **compared to** (`compare_to`: a name of the
  study's own, or another declared name, never itself);
- the scaffolding of its findings: costlab.declarations.findings.

A use (costlab/appversions/variants.py, costlab/docsize/documents.py, costlab/arraygrowth/elements.py) is one
`Declarations` holding its fields and its builder. Standard library only at import: the studies' faces
import their uses to plan. Shared: no study is imported here.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Generic, Iterable, Mapping, Protocol, TypeVar

from costlab.documentlimits import MAX_BSON_BYTES, MAX_FILE_BYTES, MAX_NESTING
from costlab.paths import CHECKOUT, snakemake_path_problem, user_file_path
from costlab.repeats import reserved_name_problem
from costlab.suggest import did_you_mean

# A declared name becomes a collection's name, a dataset's folder, file names and a Snakemake wildcard's
# value: letters, digits, _ and -. At most 63 characters, as an app version's name always was (a variant is
# one): the longest namespace costlab builds from a name, costlab_<study>_<run>_<hash> (at most 38) + "." +
# "doc_" + name + "_" + a size (at most 7), is then 113 bytes, within mongod's 255 for a collection's
# namespace (MongoDB 4.4 and later; a database name, its other limit, is never a declared name).
NAME_MAX = 63
NAME_RE = re.compile(rf"^[A-Za-z][A-Za-z0-9_-]{{0,{NAME_MAX - 1}}}$")
NAME_ALLOWED = f"letters, digits, _ and -, starting with a letter (at most {NAME_MAX} characters)"


class DeclarationError(ValueError):
    """A declaration that cannot be used; the message is one line naming its config key."""


class FieldProblem(ValueError):
    """What is wrong with one field's value, in words that follow its key (raised by a field's reader)."""


def listed(values: Iterable[Any]) -> str:
    return ", ".join(str(v) for v in values)


# ---- fields ---------------------------------------------------------------------------------------------

def as_given(value: Any) -> Any:
    return value


@dataclass(frozen=True)
class Field:
    """One field of a declaration: its config name, how its value is read (the value a declaration holds,
    or FieldProblem saying why not), its value when not given, and, when it must be given, what it holds.
    A field read `first` registers names the others may take (a variant's layout file, its buckets)."""
    name: str
    read: Callable[[Any], Any] = as_given
    default: Any = None
    required: str | None = None
    first: bool = False


def one_of(allowed: Iterable[Any] | Callable[[], Iterable[Any]], none_allowed: bool = False
           ) -> Callable[[Any], Any]:
    """A reader taking one of `allowed` (a callable: asked at each read, a list that grows at run time)."""
    def read(value: Any) -> Any:
        if value is None and none_allowed:
            return None
        choices = list(allowed() if callable(allowed) else allowed)
        if value not in choices:
            raise FieldProblem(f"{value!r} is not allowed (allowed: {listed(choices)})"
                               + did_you_mean(value, choices))
        return value
    return read


def flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise FieldProblem(f"{value!r} is not allowed (allowed: true, false)")
    return value


def positive_integer(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise FieldProblem(f"{value!r} is not a positive integer")
    return value


def text(what: str) -> Callable[[Any], str]:
    """A reader taking a non-empty string; `what` names it in the error ("a layout name")."""
    def read(value: Any) -> str:
        if not isinstance(value, str) or not value:
            raise FieldProblem(f"{value!r} is not {what}")
        return value
    return read


# ---- the file a field names ------------------------------------------------------------------------------

def user_file(path: Any, what: str, suffix: str | None = None) -> Path:
    """Where the file of yours that `path` (a field's value) names is: from the working directory (where
    results/ is written), else from costlab's checkout; FieldProblem when it cannot be one (`what`: what the
    value should be, "a Python file's path (e.g. variants/mine.py)")."""
    if not isinstance(path, str) or not path or (suffix is not None and not path.endswith(suffix)):
        raise FieldProblem(f"{path!r} is not {what}")
    problem = snakemake_path_problem(path)
    if problem:
        raise FieldProblem(problem)
    resolved = user_file_path(path)
    if not resolved.is_file():
        raise FieldProblem(f"{path} is not a file (a relative path is read from the working directory, "
                           f"{Path.cwd()}, else from costlab's checkout, {CHECKOUT})")
    return resolved


def read_text(path: str, resolved: Path) -> str:
    """The text of a document's file (`path` as configured, found at `resolved`): UTF-8, and no larger than
    the JSON of a document mongod can store; FieldProblem otherwise."""
    try:
        size = resolved.stat().st_size
        if size > MAX_FILE_BYTES:
            raise FieldProblem(f"{path} is {size:,} bytes: a document mongod can store is at most "
                               f"{MAX_BSON_BYTES:,} BSON bytes (16 MiB)")
        return resolved.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise FieldProblem(f"{path} cannot be read as UTF-8 text: {err}") from None


def parsed_json(text: str, where: str, loads: Callable[[str], Any], invalid: str,
                errors: tuple[type[Exception], ...] = (ValueError, TypeError)) -> Any:
    """`text` (`where`: how the messages name it) read by `loads` (json's, or bson.json_util's for Extended
    JSON); FieldProblem "<where> is <invalid>: <the reader's words>" on one of `errors`, or past MongoDB's
    nesting limit (a JSON reader recurses: 5,000 levels is a RecursionError, said in one line)."""
    try:
        return loads(text)
    except errors as err:
        detail = " ".join(str(err).split())[:160] or type(err).__name__
        raise FieldProblem(f"{where} is {invalid}: {detail}") from None
    except RecursionError:
        raise FieldProblem(f"{where} nests more than {MAX_NESTING} levels of documents and arrays: "
                           f"MongoDB allows at most {MAX_NESTING}") from None


# ---- a declaration, read ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Entry:
    """One declaration as its builder gets it: its name, its fields as given and as read (a field not given
    holds its default), and the config section it is declared in."""
    name: str
    given: Mapping[str, Any]
    values: Mapping[str, Any]
    section: Mapping[str, Any]
    key: str

    def __getitem__(self, field_name: str) -> Any:
        return self.values[field_name]

    def fail(self, field_name: str | None, problem: str) -> DeclarationError:
        return failure(self.key, self.name, field_name, problem)


def failure(key: str, name: str, field_name: str | None, problem: str) -> DeclarationError:
    """The one-line error of a declaration (`field_name` None: of the declaration as a whole)."""
    return DeclarationError(f"invalid config key {key}.{name}" + (f".{field_name}" if field_name else "")
                            + f": {problem}")


def _article(noun: str) -> str:
    return f"{'an' if noun[:1] in 'aeiou' else 'a'} {noun}"


class Declared(Protocol):
    """What a use's builder makes: a declaration with its name and what it is compared to (None: nothing)."""
    name: str
    compare_to: str | None


T = TypeVar("T", bound=Declared)


@dataclass(frozen=True)
class Declarations(Generic[T]):
    """What a user declares under one config key (`study.subkey`): `fields` in the order errors list them,
    `build` the declaration of an Entry (raising entry.fail(...)), `taken` why a name belongs to costlab
    (a published version, workload or dataset), and what a declaration is compared to: `compared_with` the
    study's own names of a section, `compared_words` what a name outside them is not ("not a workload"),
    `default_compare_to` its compare_to when the fields say none (None: the compare_to field's default).
    `after` checks the declarations of a section together (what a use needs beyond names and compare_to)."""
    key: str
    noun: str
    fields: tuple[Field, ...]
    build: Callable[[Entry], T]
    taken: Callable[[str], str | None] = lambda name: None
    compared_with: Callable[[Mapping[str, Any]], list[str]] = lambda section: []
    compared_words: str = "not a name it can be compared to"
    default_compare_to: Callable[[Mapping[str, Any]], str | None] | None = None
    after: Callable[[list[T], Mapping[str, Any]], None] = lambda declared, section: None
    field_names: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "field_names", tuple(f.name for f in self.fields))

    @property
    def subkey(self) -> str:
        return self.key.rpartition(".")[2]

    def fail(self, name: str, field_name: str | None, problem: str) -> DeclarationError:
        return failure(self.key, name, field_name, problem)

    def _mapping(self, section: Mapping[str, Any]) -> Mapping[str, Any]:
        declared = section.get(self.subkey) or {}
        if not isinstance(declared, Mapping):
            raise DeclarationError(f"invalid config key {self.key}: expected a mapping of name -> fields")
        return declared

    def declared_names(self, section: Mapping[str, Any]) -> list[str]:
        """The names `section` declares (unchecked, no file read: the rules' wildcards)."""
        declared = section.get(self.subkey) or {}
        return [str(n) for n in declared] if isinstance(declared, Mapping) else []

    def name_problem(self, name: Any) -> str | None:
        """Why `name` cannot name a declaration, or None."""
        if not isinstance(name, str) or not NAME_RE.match(name):
            return f"{_article(self.noun)}'s name is {NAME_ALLOWED}"
        return reserved_name_problem(name) or self.taken(name)

    def entry(self, name: Any, given: Any, section: Mapping[str, Any]) -> Entry:
        """One declaration's fields read (DeclarationError for the first that cannot be)."""
        problem = self.name_problem(name)
        if problem:
            raise self.fail(str(name), None, problem)
        if not isinstance(given, Mapping):
            raise self.fail(name, None, f"expected a mapping of fields (allowed: "
                                        f"{listed(self.field_names)}), got {type(given).__name__}")
        unknown = [f for f in given if f not in self.field_names]
        if unknown:
            raise self.fail(name, str(unknown[0]), f"unknown field (allowed: {listed(self.field_names)})"
                                                   + did_you_mean(unknown[0], self.field_names))
        values = {}
        for declared in sorted(self.fields, key=lambda f: not f.first):   # stable: else in their order
            if declared.name not in given:
                if declared.required is not None:
                    raise self.fail(name, declared.name, f"required: {declared.required}")
                values[declared.name] = declared.default
                continue
            try:
                values[declared.name] = declared.read(given[declared.name])
            except FieldProblem as err:
                raise self.fail(name, declared.name, str(err)) from None
        return Entry(name, given, {f: values[f] for f in self.field_names}, section, self.key)

    def one(self, name: str, given: Any, section: Mapping[str, Any] | None = None) -> T:
        """One declaration read alone (a job given its own fields): its compare_to is taken as declared (the
        config check has seen the whole section)."""
        return self.build(self.entry(name, given, section or {}))

    def declarations(self, section: Mapping[str, Any]) -> list[T]:
        """The declarations `section` (the study's config section) holds, in its order; DeclarationError (one
        line naming the key) for the first that cannot be used."""
        declared = [self.build(self.entry(name, given, section))
                    for name, given in self._mapping(section).items()]
        names = [d.name for d in declared]
        for d in declared:
            self._check_compare_to(d.name, d.compare_to, names, section)
        self.after(declared, section)
        return declared

    def _check_compare_to(self, name: str, compare_to: str | None, names: list[str],
                          section: Mapping[str, Any]) -> None:
        if compare_to is None:
            return
        if compare_to == name:
            raise self.fail(name, "compare_to", f"{_article(self.noun)} is compared with another, not itself")
        allowed = [*self.compared_with(section), *[n for n in names if n != name]]
        if compare_to not in allowed:
            raise self.fail(name, "compare_to", f"{compare_to!r} is {self.compared_words} (allowed: "
                                                f"{listed(allowed)})" + did_you_mean(compare_to, allowed))

    def problem(self, section: Mapping[str, Any]) -> str | None:
        """The first declaration that cannot be used, as a one-line config error (None: all can)."""
        try:
            self.declarations(section)
        except DeclarationError as err:
            return str(err)
        return None

    def compare_pairs(self, section: Mapping[str, Any]) -> dict[str, str]:
        """{name: what it is compared to} as configured (unchecked, no file read); a declaration compared
        with nothing is left out."""
        declared = section.get(self.subkey) or {}
        defaults = {f.name: f.default for f in self.fields}
        pairs = {}
        for name, given in declared.items() if isinstance(declared, Mapping) else ():
            given = given if isinstance(given, Mapping) else {}
            other = given.get("compare_to") or (self.default_compare_to(given) if self.default_compare_to
                                                else defaults.get("compare_to"))
            if other:
                pairs[str(name)] = str(other)
        return pairs

    def files(self, section: Mapping[str, Any], field_name: str) -> dict[str, str]:
        """{name: the file its `field_name` names, where it is found} as configured (unchecked): the rules
        make each an input of its jobs."""
        declared = section.get(self.subkey) or {}
        if not isinstance(declared, Mapping):
            return {}
        return {str(n): str(user_file_path(given[field_name])) for n, given in declared.items()
                if isinstance(given, Mapping) and isinstance(given.get(field_name), str)}


__all__ = ["NAME_ALLOWED", "NAME_MAX", "NAME_RE", "DeclarationError", "Declarations", "Declared", "Entry",
           "Field", "FieldProblem", "as_given", "failure", "flag", "listed", "one_of", "parsed_json",
           "positive_integer", "read_text", "text", "user_file"]
