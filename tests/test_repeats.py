"""costlab.repeats, the one repeats module (issue #44 item 1): the count's key, the {rep} wildcard, the paths
of a repeat and reading a repeat back, for server and engine-lab jobs alike. Every expected path is written
out here: repeat 1 keeps the paths a run had before repeats existed, so a user at the defaults reruns
nothing."""
from __future__ import annotations

import re

import polars as pl
import pytest
from snakemake.iocontainers import Wildcards

from costlab.config import ROOT
from costlab.repeats import (
    ENGINE_REPEATS,
    REPEATS_SEPARATOR,
    SERVER_REPEATS,
    medians_over_repeats,
    repeat_values,
    reserved_name_problem,
)


def test_each_kind_reads_its_own_key():
    config = {"docsize": {"repeats": 3}, "engine": {"docsize": {"repeats": 5}, "arraygrowth": {}}}
    assert SERVER_REPEATS.key("docsize") == "docsize.repeats"
    assert ENGINE_REPEATS.key("arraygrowth") == "engine.arraygrowth.repeats"
    assert SERVER_REPEATS.count(config, "docsize") == 3
    assert ENGINE_REPEATS.count(config, "docsize") == 5
    # absent: one run, the count a config had before repeats existed
    assert ENGINE_REPEATS.count(config, "arraygrowth") == 1
    assert SERVER_REPEATS.count(config, "flatnested") == 1
    assert ENGINE_REPEATS.count({}, "appversions") == 1
    assert ENGINE_REPEATS.count_in({"repeats": 4, "ns": [1]}, "docsize") == 4


@pytest.mark.parametrize("value", [0, -2, "two", 2.5, True, "02"])
def test_a_bad_count_names_its_key_and_what_is_allowed(value):
    with pytest.raises(ValueError, match=rf"^engine\.arraygrowth\.repeats: {re.escape(repr(value))} is not a "
                                         "count of repeats; expected a whole number from 1$"):
        ENGINE_REPEATS.count({"engine": {"arraygrowth": {"repeats": value}}}, "arraygrowth")
    with pytest.raises(ValueError, match=r"^flatnested\.repeats: "):
        SERVER_REPEATS.count({"flatnested": {"repeats": value}}, "flatnested")


def test_the_wildcards_values():
    three = {"docsize": {"repeats": 3}, "engine": {"appversions": {"repeats": 3}}}
    assert SERVER_REPEATS.wildcards(three, "docsize") == ["", "__rep2", "__rep3"]
    assert ENGINE_REPEATS.wildcards(three, "appversions") == ["rep1", "rep2", "rep3"]
    assert SERVER_REPEATS.wildcards({}, "docsize") == [""]
    assert ENGINE_REPEATS.wildcards({}, "appversions") == ["rep1"]
    assert [ENGINE_REPEATS.repeat_of(w) for w in ("rep1", "rep2", "rep10")] == [1, 2, 10]
    assert [SERVER_REPEATS.repeat_of(w) for w in ("", "__rep2", "__rep10")] == [1, 2, 10]
    with pytest.raises(ValueError, match="repeats count from 1"):
        ENGINE_REPEATS.wildcard(0)
    with pytest.raises(ValueError, match="repeats count from 1"):
        SERVER_REPEATS.wildcard(True)
    # the engine's wildcard was a bare number before: refused, with what it takes
    with pytest.raises(ValueError, match=r"wildcard '1': expected 'rep1' \(repeat 1\) or 'rep<r>'"):
        ENGINE_REPEATS.repeat_of("1")
    for bad in ("rep0", "rep01", "", "__rep2"):
        with pytest.raises(ValueError, match="engine repeat wildcard"):
            ENGINE_REPEATS.repeat_of(bad)


def test_the_wildcards_constraint_takes_exactly_the_marks():
    # the server's constraint is the one its rules always had
    assert SERVER_REPEATS.constraint == r"(__rep([2-9]|[1-9][0-9]+))?"
    for kind, good, bad in (
        (SERVER_REPEATS, ["", "__rep2", "__rep9", "__rep10", "__rep50"],
         ["__rep1", "__rep0", "__rep02", "rep2", "2"]),
        (ENGINE_REPEATS, ["rep1", "rep2", "rep10", "rep50"], ["", "rep0", "rep01", "1", "__rep2", "rep"]),
    ):
        assert [w for w in good if re.fullmatch(kind.constraint, w)] == good, kind.name
        assert [w for w in bad if re.fullmatch(kind.constraint, w)] == [], kind.name


# the rules' patterns and what each repeat's path is, written out
RULE_PATHS = [
    (SERVER_REPEATS, "results/docsize/raw/{run}__{dataset}{rep}.parquet",
     {1: "results/docsize/raw/{run}__{dataset}.parquet",
      2: "results/docsize/raw/{run}__{dataset}__rep2.parquet"}),
    (SERVER_REPEATS, "results/flatnested/raw/{shape}{rep}.parquet",
     {1: "results/flatnested/raw/{shape}.parquet", 3: "results/flatnested/raw/{shape}__rep3.parquet"}),
    (SERVER_REPEATS, "results/appversions/data/{version}{rep}",
     {1: "results/appversions/data/{version}", 12: "results/appversions/data/{version}__rep12"}),
    (ENGINE_REPEATS, "results/appversions/engine/versions/{version}/{rep}.json",
     {1: "results/appversions/engine/versions/{version}/rep1.json",
      2: "results/appversions/engine/versions/{version}/rep2.json"}),
    (ENGINE_REPEATS, "results/arraygrowth/engine/repeats/{rep}/log_bytes.csv",
     {1: "results/arraygrowth/engine/repeats/rep1/log_bytes.csv",
      2: "results/arraygrowth/engine/repeats/rep2/log_bytes.csv"}),
    (ENGINE_REPEATS, "results/logs/arraygrowth_engine_{rep}.log",
     {1: "results/logs/arraygrowth_engine_rep1.log", 2: "results/logs/arraygrowth_engine_rep2.log"}),
]


@pytest.mark.parametrize("kind, pattern, paths", RULE_PATHS)
def test_the_path_of_a_repeat_and_its_repeat_read_back(kind, pattern, paths):
    for rep, path in paths.items():
        assert kind.path(pattern, rep) == path
        assert kind.repeat_in(path.format(run="same_window", dataset="orders_1k", shape="flat_10",
                                          version="appV1")) == rep


def test_a_pattern_without_the_wildcard_is_refused():
    with pytest.raises(ValueError, match=r"'results/x\.csv' has no \{rep\} wildcard"):
        SERVER_REPEATS.path("results/x.csv", 2)


def test_names_and_paths_grouped_by_repeat():
    assert ENGINE_REPEATS.split_name("rep2") == ("", 2)
    assert ENGINE_REPEATS.split_name("rep1") == ("", 1)
    assert ENGINE_REPEATS.split_name("appV1_rep12") == ("appV1_", 12)
    with pytest.raises(ValueError, match="'storage' names no engine repeat"):
        ENGINE_REPEATS.split_name("storage")
    with pytest.raises(ValueError, match="holds no engine repeat"):
        ENGINE_REPEATS.repeat_in("results/arraygrowth/engine/log_bytes.csv")
    engine = ["e/repeats/rep2/log_bytes.csv", "e/versions/appV1/rep1.json", "e/repeats/rep10/fallback.csv",
              "e/repeats/rep1/log_bytes.csv"]
    assert ENGINE_REPEATS.paths_by_repeat(engine) == [
        ["e/versions/appV1/rep1.json", "e/repeats/rep1/log_bytes.csv"],
        ["e/repeats/rep2/log_bytes.csv"], ["e/repeats/rep10/fallback.csv"]]
    server = ["raw/lt_appV1__rep3.parquet", "raw/lt_appV1.parquet", "raw/lt_appV4__rep2.parquet"]
    assert SERVER_REPEATS.paths_by_repeat(server) == [
        ["raw/lt_appV1.parquet"], ["raw/lt_appV4__rep2.parquet"], ["raw/lt_appV1__rep3.parquet"]]
    assert SERVER_REPEATS.paths_by_repeat([]) == []


def test_a_repeat_waits_for_the_previous_one():
    after = SERVER_REPEATS.after_previous("results/appversions/raw/loadtest_{version}{rep}.parquet")
    assert after(Wildcards(fromdict={"version": "appV6R3", "rep": ""})) == []
    assert after(Wildcards(fromdict={"version": "appV6R3", "rep": "__rep2"})) == [
        "results/appversions/raw/loadtest_appV6R3.parquet"]
    assert after(Wildcards(fromdict={"version": "appV6R3", "rep": "__rep3"})) == [
        "results/appversions/raw/loadtest_appV6R3__rep2.parquet"]
    assert [ENGINE_REPEATS.previous(w) for w in ("rep1", "rep2", "rep3")] == [None, "rep1", "rep2"]


def test_one_repeats_job_reads_its_section_without_the_count():
    section = {"ns": [200, 400], "repeats": 5, "fallback": True}
    assert ENGINE_REPEATS.without_count(section) == {"ns": [200, 400], "fallback": True}
    assert section["repeats"] == 5   # the config itself untouched


def test_medians_over_repeats_with_each_repeats_value_beside():
    per_repeat = pl.DataFrame({"version": ["a", "b", "a", "b", "a", "b"], "rep": [1, 1, 2, 2, 3, 3],
                               "bytes": [10, 7, 30, 7, 20, 8], "label": ["x", "y", "z", "y", "z", "y"],
                               "seed": [1, 1, 5, 5, 9, 9]})
    table = medians_over_repeats(per_repeat, ["version"], ["bytes"], {"seed": "seeds"})
    assert table.to_dicts() == [
        {"version": "a", "bytes": 20, "label": "x", "repeats": 3, "bytes_repeats": "10; 30; 20",
         "seeds": "1; 5; 9"},
        {"version": "b", "bytes": 7, "label": "y", "repeats": 3, "bytes_repeats": "7; 7; 8",
         "seeds": "1; 5; 9"},
    ]
    assert table.schema["bytes"] == per_repeat.schema["bytes"]   # whole medians stay integers
    assert repeat_values(table.row(0, named=True), "bytes") == [10.0, 30.0, 20.0]
    assert REPEATS_SEPARATOR == "; "
    # a table from before repeats: its one value
    assert repeat_values({"bytes": 4}, "bytes") == [4.0]
    assert repeat_values({"bytes": 4, "bytes_repeats": 4}, "bytes") == [4.0]


def test_a_name_of_yours_must_not_read_as_a_repeat():
    assert reserved_name_problem("appV4_month") is None
    problem = reserved_name_problem("appV4__rep2")
    assert problem is not None and "appV4__rep2 is appV4's repeat 2" in problem


def test_repeat_one_keeps_todays_paths_in_the_smoke_plan(smoke_plan):
    """The plan of `all` on the smoke config (repeats at their default, 1) writes repeat 1's files where a run
    before repeats wrote them: a user at the defaults reruns nothing."""
    assert smoke_plan.returncode == 0, smoke_plan.stderr[-3000:]
    plan = smoke_plan.stdout + smoke_plan.stderr
    for path in ("results/docsize/raw/same_window__orders_1k.parquet",
                 "results/docsize/provenance/small_cache__orders_4k.json",
                 "results/flatnested/raw/flat_10.parquet",
                 "results/appversions/data/appV6R3",
                 "results/appversions/raw/loadtest_appV6R4.parquet",
                 "results/appversions/engine/versions/appV1/rep1.json",
                 "results/arraygrowth/engine/repeats/rep1/log_bytes.csv",
                 "results/logs/arraygrowth_engine_rep1.log"):
        assert re.search(rf"(?<![\w/]){re.escape(path)}(?![\w.])", plan), path
    assert "__rep" not in plan and "/rep2" not in plan


def test_no_second_spelling_of_a_repeat():
    """The rules, scripts and package spell a repeat's mark, its wildcard's constraint and its count only
    through costlab.repeats."""
    spellings = re.compile(r"__rep(?!r)|rep\{+rep\}+|^\s*rep=r?[\"']|\bengine_repeats\(|"
                           r"REPEAT_RE|repeat_suffix")
    found = []
    sources = [ROOT / "Snakefile", *sorted((ROOT / "rules").glob("*.smk")),
               *sorted((ROOT / "scripts").glob("*.py")), *sorted((ROOT / "costlab").rglob("*.py"))]
    for path in sources:
        if path == ROOT / "costlab" / "repeats.py":
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            # a {rep} wildcard is read back by the module alone (int() of it was the engine's own spelling)
            if spellings.search(line) or ("wildcards.rep" in line and "REPEATS." not in line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert found == []
    assert not (ROOT / "costlab" / "engine" / "repeats.py").exists()
