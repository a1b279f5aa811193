"""The findings table: every verdict row of every study, its evidence and tolerance; the page opens with it,
results/findings.csv holds the same rows, and the console summary counts them."""
from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import polars as pl
import pytest
from test_report import provenance, smoke_config

from costlab.registry import STUDY_NAMES
from costlab.report.collect import collect_sections
from costlab.report.findings import COLUMNS, findings_frame, read_findings, verdict_counts, write_findings
from costlab.report.page import build_report
from costlab.summary import summary_lines

ROOT = Path(__file__).resolve().parent.parent


def verdict_table(path: Path, rows: list[tuple[str, float | None, float | None, str]], kind: str,
                  tolerance: str | None = None, kinds: list[str] | None = None) -> None:
    """A verdict table (kinds: each row's `kind`; absent, the column is too: every row a published
    finding)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    frame = pl.DataFrame(
        {
            "finding": [r[0] for r in rows],
            "metric": [f"metric of {r[0]}" for r in rows],
            "unit": ["B"] * len(rows),
            "published": [r[1] for r in rows],
            "reproduced": [r[2] for r in rows],
            "ratio": [None if r[1] in (None, 0) or r[2] is None else r[2] / r[1] for r in rows],
            "verdict": [r[3] for r in rows],
            "server_kind": [kind] * len(rows),
        },
        schema_overrides={"published": pl.Float64, "reproduced": pl.Float64, "ratio": pl.Float64},
    )
    if tolerance is not None:
        frame = frame.with_columns(pl.lit(tolerance).alias("tolerance"))
    if kinds is not None:
        frame = frame.with_columns(pl.Series("kind", kinds))
    frame.write_csv(path)


@pytest.fixture
def tree(tmp_path) -> Path:
    """docsize measured on mongod 8.0.4 plus its engine lab and model; arraygrowth engine lab only with
    its mongod part not run; flatnested model only; uniqueidx not run at all."""
    results = tmp_path / "results"
    verdict_table(results / "docsize" / "tables" / "published_vs_reproduced.csv",
                  [("projection costs little in cache", 3.5, 3.1, "reproduced"),
                   ("whole documents cost more", 38.0, 9.0, "not reproduced")], "mongod")
    (results / "docsize" / "provenance").mkdir(parents=True)
    (results / "docsize" / "provenance" / "measure.json").write_text(
        json.dumps(
            provenance(
                "mongod",
                version="8.0.4",
                engine="wiredTiger",
                backend="docker",
                profile="standalone",
                cpu="c",
                job="m",
            )
        )
    )
    verdict_table(results / "docsize" / "engine" / "published_vs_engine.csv",
                  [("covered reads nothing", 0.005, 0.0, "reproduced")], "engine")
    (results / "docsize" / "engine" / "provenance.json").write_text(json.dumps(
        {"server_kind": "engine", "server": {"wiredtiger_version": "11.2.0"}}))
    verdict_table(results / "docsize" / "model" / "published_vs_model.csv",
                  [("a 1 KB order's size", 1037.0, 1024.0, "reproduced")], "model (no server)", "within ±2 %")
    verdict_table(results / "arraygrowth" / "engine" / "published_vs_engine.csv",
                  [(f"engine finding {i}", 100.0, 100.0 + i, "reproduced") for i in range(12)]
                  + [("bytes per write on a replica set", 512.0, 384.0, "not reproduced")], "engine")
    (results / "arraygrowth" / "not_run.json").write_text(json.dumps(
        {"part": "mongod", "reason": "no MongoDB server", "fix": "start a Docker engine"}))
    verdict_table(results / "flatnested" / "model" / "published_vs_model.csv",
                  [("structured is smaller", 24.0, 11.2, "reproduced")], "model (no server)", "saving > 0 %")
    (results / "uniqueidx").mkdir(parents=True)
    (results / "uniqueidx" / "not_run.json").write_text(json.dumps(
        {"part": "mongod", "reason": "no MongoDB server", "fix": "start a Docker engine"}))
    return results


def targets(results: Path) -> dict[str, list[str]]:
    """What each study registered: every file under its folder (as add_targets would name them)."""
    return {study: sorted(str(p) for p in (results / study).rglob("*") if p.is_file())
            for study in STUDY_NAMES
            if (results / study).is_dir()}


def test_findings_hold_every_verdict_row_with_its_evidence(tree):
    config = smoke_config()
    findings = findings_frame(collect_sections(tree, config, targets(tree), None), tree)
    assert findings.columns == COLUMNS
    by_study = {s: findings.filter(pl.col("study") == s) for s in ("docsize", "arraygrowth", "flatnested",
                                                                   "uniqueidx")}
    assert by_study["docsize"]["finding"].to_list() == [
        "projection costs little in cache",
        "whole documents cost more",
        "covered reads nothing",
        "a 1 KB order's size",
    ]
    assert by_study["docsize"]["evidence"].to_list() == ["mongod 8.0.4", "mongod 8.0.4",
                                                        "WiredTiger engine lab 11.2.0", "server-free model"]
    # every one of arraygrowth's 13 engine rows, then its mongod part that did not run
    assert by_study["arraygrowth"].height == 14
    assert by_study["arraygrowth"]["verdict"].to_list()[-2:] == ["not reproduced", "not run"]
    assert by_study["arraygrowth"]["reason"].to_list()[-2:] == [None, "no MongoDB server"]
    assert by_study["flatnested"]["tolerance"].to_list() == ["saving > 0 %"]
    assert by_study["uniqueidx"]["verdict"].to_list() == ["not run"]
    assert set(findings["kind"]) == {"published"}   # tables without a kind column: published findings
    assert "start a Docker engine" in by_study["uniqueidx"]["note"][0]
    assert verdict_counts(findings) == {"reproduced": 16, "not reproduced": 2, "not run": 2}
    docsize_model = by_study["docsize"].row(3, named=True)
    assert (docsize_model["published"], docsize_model["this_run"], docsize_model["tolerance"]) == \
        (1037.0, 1024.0, "within ±2 %")
    assert docsize_model["source"] == "docsize/model/published_vs_model.csv"


def test_a_server_run_with_model_rows_is_not_counted_twice(tree):
    """flatnested's server table holds the BSON model's rows itself: its model table adds none."""
    verdict_table(tree / "flatnested" / "tables" / "published_vs_reproduced.csv",
                  [("structured is smaller", 24.0, 11.2, "reproduced")], "server-free (BSON model)")
    findings = findings_frame(collect_sections(tree, smoke_config(), targets(tree), None), tree)
    flatnested = findings.filter(pl.col("study") == "flatnested")
    assert flatnested["finding"].to_list() == ["structured is smaller"]
    assert flatnested["evidence"].to_list() == ["server-free model"]


def test_findings_csv_round_trips_and_the_page_opens_with_it(tree):
    config = smoke_config()
    sections = collect_sections(tree, config, targets(tree), None)
    write_findings(findings_frame(sections, tree), tree / "findings.csv")
    written = read_findings(tree / "findings.csv")
    assert written.height == 20
    build_report(
        tree, tree / "report.html", config, study_targets=targets(tree), findings_path=tree / "findings.csv"
    )
    page = (tree / "report.html").read_text()
    findings_at = page.index('id="findings"')
    assert findings_at < page.index('<section class="study"')
    block = page[findings_at:page.index("</section>", findings_at)]
    rows = re.findall(r"<tr[^>]*><td><a href=\"#study-(\w+)\">", block)
    assert rows == written["study"].to_list()  # every row, in order, each linking to its study's section
    assert re.search(r'data-verdict="reproduced">16 reproduced<', block)
    assert re.search(r'data-verdict="not reproduced">2 not reproduced<', block)
    assert "within ±2 %" in block and "saving &gt; 0 %" in block
    assert "not stated" not in block
    assert "missing from its verdict table" in block  # a verdict table without a tolerance says so
    # the header says what ran: a mongod, the engine lab and the models
    ran = re.search(r'<p class="what-ran" id="what-ran">(.*?)</p>', page, re.S).group(1)
    assert "mongod 8.0.4" in ran and "engine lab" in ran and "models" in ran
    assert "no MongoDB server" not in ran


def test_header_says_when_no_server_ran(tree):
    import shutil

    shutil.rmtree(tree / "docsize" / "provenance")
    shutil.rmtree(tree / "docsize" / "tables")
    config = smoke_config()
    build_report(tree, tree / "report.html", config, study_targets=targets(tree))
    ran = re.search(
        r'<p class="what-ran" id="what-ran">(.*?)</p>', (tree / "report.html").read_text(), re.S
    ).group(1)
    assert "engine lab" in ran and ran.rstrip(" .").endswith("no MongoDB server")
    assert "mongod 8" not in ran


def test_long_verdict_tables_are_shown_whole_with_the_verdict_beside_the_finding(tree):
    """arraygrowth's 13 engine rows used to fold behind a summary (over 12 rows) or sit in a 520 px box."""
    config = smoke_config()
    build_report(tree, tree / "report.html", config, study_targets=targets(tree))
    page = (tree / "report.html").read_text()
    section = re.search(r'<section class="study" id="study-arraygrowth".*?</section>', page, re.S).group(0)
    engine_block = section[section.index("Published vs engine lab"):]
    table = engine_block[:engine_block.index("</table>")]
    assert "<details" not in table
    assert table.count("<tr>") == 14  # the header and all 13 rows
    header = re.findall(r"<th>(.*?)</th>", table)
    assert header[:2] == ["finding", "verdict"]
    assert "max-height:520px" not in page


def test_summary_counts_the_findings_csv(tree):
    config = smoke_config()
    write_findings(
        findings_frame(collect_sections(tree, config, targets(tree), None), tree), tree / "findings.csv"
    )
    (tree / "report.html").write_text("<html></html>")
    lines = summary_lines(tree, ["docsize", "arraygrowth", "flatnested", "uniqueidx"])
    text = "\n".join(lines)
    with (tree / "findings.csv").open(newline="") as handle:
        total = sum(1 for _ in csv.DictReader(handle))
    assert lines[0].startswith(
        f"costlab summary: {total} published findings (16 reproduced, 2 not reproduced, 2 not run;"
    )
    assert "  docsize      mongod 8.0.4: 1 reproduced, 1 not reproduced\n" in text + "\n"
    assert "WiredTiger engine lab 11.2.0 (not a mongod run): 1 reproduced" in text
    assert "server-free model: 1 reproduced" in text
    assert "  arraygrowth  WiredTiger engine lab (not a mongod run): 12 reproduced, 1 not reproduced" in text
    assert "not run: mongod: no MongoDB server" in text
    assert text.count("to run what was not run: start a Docker engine") == 1


def test_variants_are_shown_but_never_counted_and_page_summary_and_csv_agree(tree):
    """A costlab variant row (the engine lab's cold-per-shape protocol) is in findings.csv, on the page and in
    the summary, marked, and counted in none of their published counts; the three counts agree."""
    verdict_table(
        tree / "docsize" / "engine" / "published_vs_engine.csv",
        [
            ("covered reads nothing", 0.005, 0.0, "reproduced"),
            ("64 KB, small_cache_cold_per_shape, whole: bytes read", 100.0, 300.0, "not reproduced"),
            ("64 KB, small_cache_cold_per_shape, covered: bytes read", 0.0, 0.0, "reproduced"),
        ],
        "engine",
        kinds=["published", "costlab variant", "costlab variant"],
    )
    config = smoke_config()
    write_findings(
        findings_frame(collect_sections(tree, config, targets(tree), None), tree), tree / "findings.csv"
    )
    written = read_findings(tree / "findings.csv")
    assert written.filter(pl.col("kind") == "costlab variant")["verdict"].to_list() == ["not reproduced",
                                                                                         "reproduced"]
    # 22 rows: the tree's 20 published ones (16 reproduced, 2 not reproduced, 2 not run) and the 2 variants
    assert written.height == 22
    assert verdict_counts(written) == {"reproduced": 16, "not reproduced": 2, "not run": 2}
    build_report(
        tree, tree / "report.html", config, study_targets=targets(tree), findings_path=tree / "findings.csv"
    )
    page = (tree / "report.html").read_text()
    block = page[page.index('id="findings"'):page.index("</section>", page.index('id="findings"'))]
    chips = dict((name, int(n)) for name, n in re.findall(r'data-verdict="([a-z ]+)">(\d+) ', block))
    assert chips == {"reproduced": 16, "not reproduced": 2, "not run": 2}
    assert "20 published findings in all" in block
    assert re.search(r'id="variant-counts">Not counted above: 2 rows .*1 not reproduced, 1 reproduced|'
                     r'id="variant-counts">Not counted above: 2 rows .*1 reproduced, 1 not reproduced', block)
    assert block.count('<tr data-kind="costlab variant" ') == 2
    (tree / "report.html").write_text("<html></html>")
    lines = summary_lines(tree, ["docsize", "arraygrowth", "flatnested", "uniqueidx"])
    assert lines[0].startswith(
        "costlab summary: 20 published findings (16 reproduced, 2 not reproduced, 2 not run;"
    )
    assert "and 2 rows of costlab's own variants, not counted" in lines[0]
    text = "\n".join(lines)
    assert "WiredTiger engine lab 11.2.0 (not a mongod run): 1 reproduced\n" in text
    assert "costlab's variants beyond the article (not counted): 1 reproduced, 1 not reproduced" in text


def test_model_checks_are_judged_by_the_published_tolerance(tmp_path):
    """docsize's tolerance sits beside the published size: tighten it and the 1 KB order is not reproduced."""
    from costlab.docsize.model import published_vs_model

    published = ROOT / "resources" / "published" / "docsize_collections.csv"
    datasets = pl.DataFrame(
        {
            "variant": ["base", "base", "spread"],
            "collection": ["orders_1k", "orders_4k", "x"],
            "size_kb": [1, 4, 1],
            "documents": [10, 10, 10],
            "avg_doc_bytes": [1024.0, 4096.0, 1.0],
            "published_avg_doc_bytes": [1037, 4105, 1037],
            "data_bytes": [10000, 40960, 10],
        }
    )
    sizes = pl.col("finding").str.contains("mean BSON size")
    rows = published_vs_model(datasets, published)
    assert rows.filter(sizes)["verdict"].to_list() == [
        "reproduced",
        "reproduced",
    ]  # 1.25 %, 0.22 % off: within ±2 %
    assert rows["tolerance"].to_list() == ["within ±2 %"] * 4
    # the data size (the article's MB at its 50,000 orders) is judged only at the article's count
    data = rows.filter(~sizes)
    assert data["published"].to_list() == [52e6, 205e6] and (data["verdict"] == "not comparable").all()
    assert data["reason"].str.starts_with("at this scale: 10 documents here").all()
    at_count = published_vs_model(
        datasets.with_columns(pl.col("data_bytes") * 5000, pl.lit(50_000).alias("documents")),
        published,
        50_000,
    ).filter(~sizes)
    assert at_count["verdict"].to_list() == [
        "not reproduced",
        "reproduced",
    ]  # 50 MB vs 52 (3.8 % off), 204.8 vs 205
    tight = tmp_path / "collections.csv"
    tight.write_text(published.read_text().replace(",1037,52,22,2,", ",1037,52,22,1,"))
    assert published_vs_model(datasets, tight).filter(sizes)["verdict"].to_list() == [
        "not reproduced",
        "reproduced",
    ]


def test_flatnested_model_judges_the_direction_of_the_saving():
    from costlab.flatnested.model import published_vs_model

    sample = pl.read_csv(ROOT / "resources" / "published" / "flatnested_sample_sizes.csv")
    sizes = pl.DataFrame({"shape": ["flat_10", "structured_2x5", "flat_25", "structured_5x5"],
                          "layout": ["flat", "structured", "flat", "structured"], "fields": [10, 10, 25, 25],
                          "documents": [5, 5, 5, 5], "data_bytes": [1000, 900, 1000, 1100]})
    rows = published_vs_model(sizes, sample)
    example = rows.row(-1, named=True)   # the article's example document: a row saying why it is not judged
    assert example["finding"] == "the article's example user document: 403 B flat, 307 B structured"
    assert example["verdict"] == "not comparable"
    assert example["reason"].startswith("that document is not generated here")
    rows = rows.head(-1)
    assert rows["reproduced"].to_list() == [10.0, -10.0]
    assert rows["verdict"].to_list() == ["reproduced", "not reproduced"]
    assert rows["published"].to_list() == [24.0, 24.0]
    assert rows["tolerance"].to_list() == ["saving % > 0"] * 2   # flatnested_tolerances.csv, size_saving


def test_smoke_tree_findings_hold_every_studys_verdict_rows(smoke_all):
    """The session's smoke tree: results/findings.csv has one row per row of every verdict table."""
    results = smoke_all.results()
    findings = read_findings(results / "findings.csv")
    for study in STUDY_NAMES:
        mine = findings.filter(pl.col("study") == study)
        for table in ("tables/published_vs_reproduced.csv", "engine/published_vs_engine.csv"):
            path = results / study / table
            if path.exists():
                source = mine.filter(pl.col("source") == f"{study}/{table}")
                assert source.height == pl.read_csv(path, infer_schema_length=0).height, (study, table)
                assert (
                    source["verdict"].to_list()
                    == pl.read_csv(path, infer_schema_length=0)["verdict"].to_list()
                )
    page = (results / "report.html").read_text()
    at = page.index('id="findings"')
    block = page[at:page.index("</section>", at)]   # the audit table (the variants' own section follows it)
    # the audit holds the published findings and costlab's variants; the user's are in "Your schema" and
    # "Your variants: every row" (smoke.yaml declares some: 69 of its 297 rows)
    audited = findings.filter(pl.col("kind") != "user variant")
    assert 0 < audited.height < findings.height
    assert len(re.findall(r"<tr[^>]*><td><a href=\"#study-", block)) == audited.height


def test_smoke_tree_every_judged_finding_states_its_tolerance(smoke_all):
    """Every row of results/findings.csv with a verdict (reproduced / not reproduced) carries the tolerance it
    was judged by, from every evidence kind the smoke run has (stand-in, engine lab, model); the page never
    says
    "not stated", and a rule's row with no single published number shows the rule as its published side."""
    from costlab.verdicts import verdict_class

    results = smoke_all.results()
    findings = read_findings(results / "findings.csv")
    judged = findings.filter(pl.col("verdict").map_elements(verdict_class, return_dtype=pl.Utf8)
                             .is_in(["reproduced", "not reproduced"]))
    assert judged.height > 50 and judged["tolerance"].null_count() == 0
    assert (judged["tolerance"].str.len_chars() > 3).all()
    everything = findings.filter(pl.col("verdict") != "not run")
    assert everything["tolerance"].null_count() == 0, everything.filter(pl.col("tolerance").is_null())[
        "finding"
    ]
    assert set(everything["study"]) == set(STUDY_NAMES)
    page = (results / "report.html").read_text()
    block = page[page.index('id="findings"'):page.index("</section>", page.index('id="findings"'))]
    assert "not stated" not in block and "missing from its verdict table" not in block
    if judged[
        "published"
    ].null_count():  # in a cell that wraps (a numeric cell does not: it widened the table)
        assert re.search(r'<td class="rule"[^>]*>no single published number; the rule:', block)


def test_smoke_tree_every_row_holds_a_verdict_member_and_the_counts_agree(smoke_all):
    """Every row of the smoke tree's findings.csv holds a Verdict member and a Kind; the page's chips, the
    console summary and findings.csv's published rows (counted here with the csv module) agree."""
    from collections import Counter

    from costlab.verdicts import Kind, Verdict

    results = smoke_all.results()
    with (results / "findings.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert {row["verdict"] for row in rows} <= {v.value for v in Verdict}
    assert {row["kind"] for row in rows} <= {k.value for k in Kind}
    expected = Counter(row["verdict"] for row in rows if row["kind"] == "published")
    page = (results / "report.html").read_text()
    block = page[page.index('id="findings"'):page.index("</section>", page.index('id="findings"'))]
    chips = {name: int(n) for name, n in re.findall(r'data-verdict="([a-z ]+)">(\d+) ', block)}
    assert chips == dict(expected)
    assert f"{sum(expected.values())} published findings in all" in block
    first = summary_lines(results)[0]
    total = ", ".join(f"{expected[v.value]} {v.value}" for v in Verdict if expected[v.value])
    assert first.startswith(f"costlab summary: {sum(expected.values())} published findings ({total};")
