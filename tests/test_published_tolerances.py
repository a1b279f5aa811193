"""Tolerances stated in resources/published/: read and validated (costlab.published), and really used."""
from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
import pytest

from costlab.published import (
    PUBLISHED_DIR,
    RULE_KINDS,
    TOLERANCE_COLUMNS,
    ToleranceError,
    read_tolerances,
    study_tolerances,
)
from costlab.registry import BUILT_IN

# every study that declares a tolerances file among its published files
STUDIES_WITH_FILES = tuple(s.name for s in BUILT_IN if f"{s.name}_tolerances.csv" in s.published)
HEADER = ",".join(TOLERANCE_COLUMNS)


def _write(tmp_path: Path, *rows: str) -> Path:
    path = tmp_path / "x_tolerances.csv"
    path.write_text("\n".join((HEADER,) + rows) + "\n")
    return path


def test_every_tolerances_file_on_disk_is_a_studys():
    on_disk = {p.name.removesuffix("_tolerances.csv") for p in PUBLISHED_DIR.glob("*_tolerances.csv")}
    assert on_disk == set(STUDIES_WITH_FILES) and on_disk


@pytest.mark.parametrize("study", STUDIES_WITH_FILES)
def test_every_published_tolerances_file_validates_with_a_rationale(study):
    tolerances = study_tolerances(study)
    assert len(tolerances) >= 2
    for tolerance in tolerances.values():
        assert tolerance.rule in RULE_KINDS and len(tolerance.rationale) > 20
        for bound in RULE_KINDS[tolerance.rule]:
            assert getattr(tolerance, bound) is not None


@pytest.mark.parametrize("row, words", [
    ("a,between,1,,k,why", ["row 1", "(a)", "rule between needs a number in high"]),
    ("a,within,1,2,k,why", ["row 1", "rule 'within'", "between, at_least"]),
    ("a,at_least,one,,k,why", ["row 1", "low 'one' is not a number"]),
    ("a,between,3,2,k,why", ["row 1", "low 3 is above high 2"]),
    ("a,relative,,-0.1,,why", ["row 1", "high -0.1 is negative"]),
    ("a,at_most,,2,k,", ["row 1", "rationale is empty"]),
    (",at_most,,2,k,why", ["row 1", "finding_id is empty"]),
])
def test_a_malformed_row_fails_in_one_line_naming_file_row_and_value(tmp_path, row, words):
    path = _write(tmp_path, row)
    with pytest.raises(ToleranceError) as caught:
        read_tolerances(path)
    message = str(caught.value)
    assert "\n" not in message and str(path) in message
    for word in words:
        assert word in message, message


def test_a_duplicate_id_a_missing_column_and_a_missing_finding_are_named(tmp_path):
    with pytest.raises(ToleranceError, match=r"row 2: finding_id 'a' appears twice"):
        read_tolerances(_write(tmp_path, "a,at_most,,1,k,why", "a,at_most,,2,k,why"))
    bad = tmp_path / "y_tolerances.csv"
    bad.write_text("finding_id,rule,low,high\na,at_most,,1\n")
    with pytest.raises(ToleranceError, match=r"lacks column\(s\) what, rationale"):
        read_tolerances(bad)
    tolerances = read_tolerances(_write(tmp_path, "a,at_most,,1,k,why"))
    with pytest.raises(ToleranceError, match=r"has no tolerance for finding 'b' \(it has a\)"):
        tolerances["b"]


def test_each_rule_kind_tests_and_says_its_bounds(tmp_path):
    tolerances = read_tolerances(_write(
        tmp_path, "b,between,1,2,k,why", "l,at_least,5,,ratio,why", "m,at_most,,0.5,ratio,why",
        "a,above,0,,saving %,why", "w,below,,1,ratio,why", "r,ratio_within,0.8,1.25,,why",
        "p,relative,,0.05,,why", "d,absolute,,100,bytes,why"))
    cases = {
        "b": (None, 1.5, 2.5, "k in [1, 2]"),
        "l": (None, 5, 4.9, "ratio ≥ 5"),
        "m": (None, 0.5, 0.6, "ratio ≤ 0.5"),
        "a": (None, 0.1, 0, "saving % > 0"),
        "w": (None, 0.9, 1, "ratio < 1"),
        "r": (10, 12, 13, "this run / published in [0.8, 1.25]"),
        "p": (100, 104, 106, "within ±5 % of published"),
        "d": (50, 150, 151, "|this run - published| ≤ 100 bytes"),
    }
    for finding, (published, holds, fails, text) in cases.items():
        rule = tolerances[finding].holds(published)
        assert rule(holds) and not rule(fails) and str(rule) == text, finding


def _copy_with(tmp_path: Path, study: str, finding_id: str, replacement: str) -> Path:
    """A copy of resources/published where one tolerance row is replaced."""
    copy = tmp_path / "published"
    shutil.copytree(PUBLISHED_DIR, copy)
    path = copy / f"{study}_tolerances.csv"
    lines = path.read_text().splitlines()
    hits = [i for i, line in enumerate(lines) if line.startswith(f"{finding_id},")]
    assert len(hits) == 1
    lines[hits[0]] = f"{finding_id},{replacement}"
    path.write_text("\n".join(lines) + "\n")
    return copy


def test_changing_an_engine_tolerance_in_a_copy_changes_the_verdict(tmp_path):
    """docsize engine cells: 70 MB whole documents vs 60 MB published (1.17) hold in 0.8-1.25, not in
    0.9-1.1."""
    from costlab.docsize.engine_verdicts import docsize_cells

    reads = pl.DataFrame({"run": ["small_cache"], "size_kb": [64], "cache_mb": [51], "shape": ["whole"],
                          "bytes_read_into_cache_mean": [70e6], "bytes_read_into_cache_median": [70e6]})
    published = pl.DataFrame({"run": ["small_cache"], "size_kb": [64], "shape": ["whole"],
                              "metric": ["bytes_read_into_cache"], "value": [60e6]})
    as_published = docsize_cells(reads, published, 1000).row(0, named=True)
    narrow = study_tolerances("docsize", _copy_with(tmp_path, "docsize", "engine_bytes_read",
                                                    "ratio_within,0.9,1.1,,test"))
    narrowed = docsize_cells(reads, published, 1000, narrow).row(0, named=True)
    assert as_published["verdict"] == "reproduced" and narrowed["verdict"] == "not reproduced"
    assert as_published["tolerance"] == "this run / published in [0.8, 1.25]"
    assert narrowed["tolerance"] == "this run / published in [0.9, 1.1]"


def test_changing_a_server_path_tolerance_in_a_copy_changes_the_verdict(tmp_path):
    """arraygrowth: the standalone $push exponent (2.0 here) holds in [1.7, 2.3], not in [2.1, 2.3]."""
    from costlab.arraygrowth.published import read_published_cursor_calls, read_published_log_bytes
    from costlab.arraygrowth.tables import fits_by_pair, published_vs_reproduced

    ns = [1000, 2000, 4000]
    raw = pl.DataFrame({"profile": ["standalone"] * 3, "workload": ["push"] * 3, "n": ns, "operations": ns,
                        "log_bytes": [30.0 * n * n for n in ns], "cursor_insert_calls": ns,
                        "cursor_modify_calls": [0] * 3, "server_kind": ["mongod"] * 3})
    args = (raw, fits_by_pair(raw), read_published_log_bytes(), read_published_cursor_calls())

    def quadratic(frame: pl.DataFrame) -> dict:
        return frame.filter(pl.col("finding").str.contains("quadratically")).row(0, named=True)

    before = quadratic(published_vs_reproduced(*args))
    copy = _copy_with(tmp_path, "arraygrowth", "quadratic_exponent", "between,2.1,2.3,k,test")
    after = quadratic(published_vs_reproduced(*args, study_tolerances("arraygrowth", copy)))
    assert (before["verdict"], before["tolerance"]) == ("reproduced", "k in [1.7, 2.3]")
    assert (after["verdict"], after["tolerance"]) == ("not reproduced", "k in [2.1, 2.3]")


def test_the_model_tolerance_is_published_and_the_config_key_overrides_it(tmp_path):
    """appversions model rows: within the published 1.5 %, or within appversions.model_tolerance when set."""
    from costlab.appversions.tables import published_vs_model

    published = pl.DataFrame({"version": ["appV1"], "published_documents_per_event": [0.72],
                              "published_avg_doc_bytes": [119.0]})
    model = pl.DataFrame(
        {"version": ["appV1"], "events": [1000], "documents": [720], "avg_doc_bytes": [121.0]}
    )
    size = lambda frame: frame.filter(pl.col("metric") == "avg_doc_bytes").row(0, named=True)  # noqa: E731
    as_published = size(published_vs_model(model, published))        # 121 / 119 = 1.017: off by 1.7 %
    override = size(published_vs_model(model, published, 0.02))
    copy = _copy_with(tmp_path, "appversions", "model", "relative,,0.03,,test")
    from_copy = size(published_vs_model(model, published, tolerances=study_tolerances("appversions", copy)))
    assert (as_published["verdict"], as_published["tolerance"]) == (
        "not reproduced",
        "within ±1.5 % of published",
    )
    assert (override["verdict"], override["tolerance"]) == (
        "reproduced", "within ±2 % of published (appversions.model_tolerance override)")
    assert (from_copy["verdict"], from_copy["tolerance"]) == ("reproduced", "within ±3 % of published")
