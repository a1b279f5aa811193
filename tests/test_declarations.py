"""The one scaffold of what a user declares (costlab/declarations): its name rule, its fields, its file, its
one-line problems, compare_to, and the rows of its findings; and the three uses of it (appversions
variants, docsize documents, arraygrowth elements) held to the same rule. Every expected message is written
out here."""
from __future__ import annotations

import json
from pathlib import Path
from typing import NamedTuple

import pytest

import costlab.declarations as declarations
from costlab.appversions import registry, variants
from costlab.arraygrowth import elements
from costlab.declarations import (
    DeclarationError,
    Declarations,
    Entry,
    Field,
    flag,
    one_of,
    positive_integer,
    read_text,
    text,
    user_file,
)
from costlab.declarations.findings import beside, on_stand_in, server_kind_of
from costlab.docsize import documents
from costlab.finding import USER_VARIANT_REASON
from costlab.verdicts import NOT_MEASURED, Kind, Verdict

CHECKOUT = Path(__file__).resolve().parent.parent
TICKET = "config/documents/ticket.json"       # a sample costlab ships
ORDER_LIKE = "tests/fixtures/order_like.json"  # a JSON object in the checkout, read as an element
LONGEST = "n" + "x" * 62                       # 63 characters
TOO_LONG = "n" + "x" * 63                      # 64
NAME_RULE = "letters, digits, _ and -, starting with a letter (at most 63 characters)"


# ---- a toy use: what the scaffold does on its own ----------------------------------------------------

class Toy(NamedTuple):
    name: str
    colour: str
    size: int
    loud: bool
    compare_to: str


def _toy_build(entry: Entry) -> Toy:
    if entry["size"] > 10:
        raise entry.fail("size", f"{entry['size']} is more than 10")
    return Toy(entry.name, entry["colour"], entry["size"], entry["loud"], entry["compare_to"])


TOY = Declarations(
    key="toystudy.toys", noun="toy",
    fields=(Field("colour", one_of(("red", "green", "blue")), required="a colour: red, green or blue"),
            Field("size", positive_integer, default=1),
            Field("loud", flag, default=False),
            Field("compare_to", text("a toy's name"), default="ball")),
    build=_toy_build,
    taken=lambda name: f"{name!r} is costlab's own toy" if name == "ball" else None,
    compared_with=lambda section: ["ball"], compared_words="not a toy")


def _toy_problem(toys) -> str | None:
    return TOY.problem({"toys": toys})


def test_a_declaration_takes_its_fields_defaults_where_not_given():
    (toy,) = TOY.declarations({"toys": {"kite": {"colour": "red"}}})
    assert tuple(toy) == ("kite", "red", 1, False, "ball")
    (toy,) = TOY.declarations({"toys": {"kite": {"colour": "blue", "size": 3, "loud": True}}})
    assert tuple(toy) == ("kite", "blue", 3, True, "ball")
    assert TOY.declared_names({"toys": {"kite": {}, "yoyo": None}}) == ["kite", "yoyo"]
    assert TOY.declared_names({"toys": ["kite"]}) == [] and TOY.declared_names({}) == []


@pytest.mark.parametrize("toys, message", [
    ({TOO_LONG: {"colour": "red"}},
     f"invalid config key toystudy.toys.{TOO_LONG}: a toy's name is {NAME_RULE}"),
    ({"9lives": {"colour": "red"}}, f"invalid config key toystudy.toys.9lives: a toy's name is {NAME_RULE}"),
    ({"ki te": {"colour": "red"}}, f"invalid config key toystudy.toys.ki te: a toy's name is {NAME_RULE}"),
    ({"kite__rep2": {"colour": "red"}},
     "invalid config key toystudy.toys.kite__rep2: 'kite__rep2' holds '__', which costlab's own file names "
     "use to join their parts (appV4__rep2 is appV4's repeat 2): give it a name without '__'"),
    ({"ball": {"colour": "red"}}, "invalid config key toystudy.toys.ball: 'ball' is costlab's own toy"),
    ({"kite": "red"},
     "invalid config key toystudy.toys.kite: expected a mapping of fields (allowed: colour, size, loud, "
     "compare_to), got str"),
    ({"kite": {"colour": "red", "sise": 2}},
     "invalid config key toystudy.toys.kite.sise: unknown field (allowed: colour, size, loud, compare_to); "
     "did you mean 'size'?"),
    ({"kite": {"size": 2}},
     "invalid config key toystudy.toys.kite.colour: required: a colour: red, green or blue"),
    ({"kite": {"colour": "rde"}},
     "invalid config key toystudy.toys.kite.colour: 'rde' is not allowed (allowed: red, green, blue); "
     "did you mean 'red'?"),
    ({"kite": {"colour": "red", "loud": "yes"}},
     "invalid config key toystudy.toys.kite.loud: 'yes' is not allowed (allowed: true, false)"),
    ({"kite": {"colour": "red", "size": 0}},
     "invalid config key toystudy.toys.kite.size: 0 is not a positive integer"),
    ({"kite": {"colour": "red", "size": True}},
     "invalid config key toystudy.toys.kite.size: True is not a positive integer"),
    ({"kite": {"colour": "red", "size": 11}},
     "invalid config key toystudy.toys.kite.size: 11 is more than 10"),
    ({"kite": {"colour": "red", "compare_to": ""}},
     "invalid config key toystudy.toys.kite.compare_to: '' is not a toy's name"),
    ({"kite": {"colour": "red", "compare_to": "kite"}},
     "invalid config key toystudy.toys.kite.compare_to: a toy is compared with another, not itself"),
    ({"kite": {"colour": "red", "compare_to": "yoyo"}, "top": {"colour": "red"}},
     "invalid config key toystudy.toys.kite.compare_to: 'yoyo' is not a toy (allowed: ball, top)"),
])
def test_each_problem_is_one_line_naming_the_key_the_bad_value_and_what_is_allowed(toys, message):
    assert _toy_problem(toys) == message
    with pytest.raises(DeclarationError) as err:
        TOY.declarations({"toys": toys})
    assert str(err.value) == message


def test_the_name_rule_is_one_and_its_longest_name_passes():
    assert declarations.NAME_MAX == 63
    assert _toy_problem({LONGEST: {"colour": "red"}}) is None
    assert _toy_problem({"k": {"colour": "red"}, "K-2_x": {"colour": "red"}}) is None
    assert TOY.problem({"toys": ["kite"]}) == (
        "invalid config key toystudy.toys: expected a mapping of name -> fields")


def test_compare_to_names_the_studys_own_or_another_declaration():
    section = {"toys": {"kite": {"colour": "red", "compare_to": "top"}, "top": {"colour": "red"},
                        "yoyo": {"colour": "red", "compare_to": "ball"}}}
    assert [t.compare_to for t in TOY.declarations(section)] == ["top", "ball", "ball"]
    assert TOY.compare_pairs(section) == {"kite": "top", "top": "ball", "yoyo": "ball"}
    # a variant is compared with its base unless it says otherwise; without a base, with nothing
    assert variants.DECLARED.compare_pairs({"variants": {
        "v": {"base": "appV4"}, "w": {"layout": "push"}, "x": {"base": "appV4", "compare_to": "appV1"}}}) == {
        "v": "appV4", "x": "appV1"}


def test_one_declaration_read_alone_takes_its_compare_to_as_declared():
    assert tuple(TOY.one("kite", {"colour": "red", "compare_to": "top"})) == ("kite", "red", 1, False, "top")


def test_a_field_read_first_is_read_before_the_others():
    read: list[str] = []

    def reader(name):
        return lambda value: read.append(name) or value

    first = Declarations(key="s.things", noun="thing", build=lambda entry: entry.values,
                         fields=(Field("a", reader("a")), Field("b", reader("b")),
                                 Field("c", reader("c"), first=True)))
    entry = first.entry("t", {"a": 1, "b": 2, "c": 3}, {})
    assert read == ["c", "a", "b"] and list(entry.values) == ["a", "b", "c"]   # the declared order kept


# ---- the file a field names -----------------------------------------------------------------------------

def test_a_file_is_found_in_the_working_directory_else_in_costlabs_checkout(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert user_file(TICKET, "a file's path") == CHECKOUT / TICKET
    (tmp_path / "config" / "documents").mkdir(parents=True)
    (tmp_path / TICKET).write_text("{}")
    assert user_file(TICKET, "a file's path") == Path(TICKET)    # the working directory's first
    with pytest.raises(declarations.FieldProblem) as err:
        user_file("nowhere/x.json", "a file's path")
    assert str(err.value) == (f"nowhere/x.json is not a file (a relative path is read from the working "
                              f"directory, {tmp_path}, else from costlab's checkout, {CHECKOUT})")
    with pytest.raises(declarations.FieldProblem, match=r"^'x\.txt' is not a \.json file's path$"):
        user_file("x.txt", "a .json file's path", suffix=".json")
    with pytest.raises(declarations.FieldProblem, match=r"^'a\{b\}\.json' holds \{ \}, which Snakemake "):
        user_file("a{b}.json", "a file's path")


def test_a_files_text_is_utf8_and_no_larger_than_a_document_mongod_stores(tmp_path, monkeypatch):
    path = tmp_path / "doc.json"
    path.write_bytes(b'{"a": "\xff"}')
    with pytest.raises(declarations.FieldProblem) as err:
        read_text("doc.json", path)
    assert str(err.value).startswith("doc.json cannot be read as UTF-8 text: 'utf-8' codec can't decode byte "
                                     "0xff")
    path.write_text('{"a": "xx"}')   # 11 bytes
    assert read_text("doc.json", path) == '{"a": "xx"}'
    monkeypatch.setattr(declarations, "MAX_FILE_BYTES", 10)
    with pytest.raises(declarations.FieldProblem) as err:
        read_text("doc.json", path)
    assert str(err.value) == ("doc.json is 11 bytes: a document mongod can store is at most 16,777,216 BSON "
                              "bytes (16 MiB)")


def test_a_files_json_is_read_in_one_line_whatever_goes_wrong():
    assert declarations.parsed_json('{"a": [1]}', "x.json", json.loads, "not valid JSON") == {"a": [1]}
    with pytest.raises(declarations.FieldProblem) as err:
        declarations.parsed_json('{"a": ', "x.json", json.loads, "not valid JSON")
    assert str(err.value) == "x.json is not valid JSON: Expecting value: line 1 column 7 (char 6)"
    with pytest.raises(declarations.FieldProblem) as err:
        declarations.parsed_json("[" * 5000 + "]" * 5000, "x.json", json.loads, "not valid JSON")
    assert str(err.value) == ("x.json nests more than 100 levels of documents and arrays: MongoDB allows at "
                              "most 100")


def test_a_fields_files_are_where_they_are_found(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    section = {"things": {"a": {"f": "examples/variants/week.py"}, "b": {"f": {"inline": 1}}, "c": None}}
    first = Declarations(key="s.things", noun="thing", fields=(Field("f"),), build=lambda entry: entry)
    assert first.files(section, "f") == {"a": str(CHECKOUT / "examples/variants/week.py")}


# ---- the three uses: one name rule, one error class, one file rule -----------------------------------

def _variant(name: str) -> dict:
    return {"versions": [*registry.PUBLISHED_NAMES, name], "variants": {name: {"base": "appV4"}}}


def _document(name: str) -> dict:
    return {"documents": {name: {"sample": TICKET, "projected": ["openedAt"], "grow": False}}}


def _element(name: str) -> dict:
    return {"elements": {name: {"element": {"$numberLong": "1"}}}}


USES = [(variants, _variant, "appversions.variants", "a variant"),
        (documents, _document, "docsize.documents", "a document"),
        (elements, _element, "arraygrowth.elements", "an element")]


@pytest.mark.parametrize("use, section, key, noun", USES, ids=[key for _, _, key, _ in USES])
def test_every_use_takes_a_name_of_63_characters_and_refuses_64(use, section, key, noun):
    assert use.problem(section(LONGEST)) is None
    assert [d.name for d in use.declarations(section(LONGEST))] == [LONGEST]
    assert use.problem(section(TOO_LONG)) == (
        f"invalid config key {key}.{TOO_LONG}: {noun}'s name is {NAME_RULE}")
    with pytest.raises(DeclarationError):
        use.declarations(section(TOO_LONG))
    assert use.DECLARED.declared_names(section(TOO_LONG)) == [TOO_LONG]


def test_a_document_of_63_characters_names_its_collections_within_mongods_namespace():
    (declared,) = documents.declarations(_document(LONGEST))
    database = "costlab_docsize_" + "r" * 20 + "_" + "h" * 8     # the longest: 20-character run id
    namespace = f"{database}.{documents.dataset_name(declared.name, '1024k')}"
    assert len(namespace.encode()) == 45 + 1 + 4 + 63 + 6 <= 255


def test_an_element_file_is_found_in_costlabs_checkout_as_a_sample_is(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    section = {"elements": {"order": {"element": ORDER_LIKE}}}
    (declared,) = elements.declarations(section)
    assert declared.source == ORDER_LIKE and declared.value["total"] == 54.6
    assert elements.element_files(section) == {"order": str(CHECKOUT / ORDER_LIKE)}
    assert documents.read_sample(TICKET)["priority"] == 2


# ---- findings -------------------------------------------------------------------------------------------

def _row(mine, theirs, reason=None):
    return beside("kite beside ball: size", "size kite/ball", mine, theirs, server_kind="engine", note="n",
                  reason=reason)


def test_a_row_is_a_ratio_never_judged():
    row = _row(3.0, 2.0)
    assert (row.reproduced, row.verdict, row.reason, row.kind) == (1.5, Verdict.NOT_COMPARABLE,
                                                                   USER_VARIANT_REASON, Kind.USER_VARIANT)
    assert (row.published, row.unit, row.tolerance) == (None, "ratio", "none: not judged (see the verdict)")
    for mine, theirs in ((None, 2.0), (3.0, None), (3.0, 0.0)):
        row = _row(mine, theirs)
        assert (row.reproduced, row.verdict, row.reason) == (None, Verdict.NOT_RUN, NOT_MEASURED)
    row = _row(None, 2.0, reason="stand-in")   # a reason wins over a missing value
    assert (row.reproduced, row.verdict, row.reason) == (None, Verdict.NOT_COMPARABLE, "stand-in")
    row = _row(3.0, 2.0, reason="stand-in")
    assert (row.reproduced, row.verdict, row.reason) == (1.5, Verdict.NOT_COMPARABLE, "stand-in")


def test_a_rows_server_kind_joins_its_two_sides():
    assert server_kind_of(["mongod 6.0.5", None, "stand-in", "mongod 6.0.5", ""]) == "mongod 6.0.5/stand-in"
    assert server_kind_of([None, None]) is None
    assert on_stand_in("mongod 6.0.5/stand-in") and not on_stand_in("mongod 6.0.5") and not on_stand_in(None)
