"""Every number the report shows can be verified: a table changed after its step wrote it (this
run's, or a compared tree's) is shown as "edited after the run" and never counted as a verdict;
bad compared trees are named, not tracebacks (docs/reliability.md). Small synthetic trees."""
from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from costlab.io import write_csv
from costlab.report.compare import load_runs, merged_published, notes
from costlab.report.page import build_report
from costlab.report.runs import CompareError, check_tree, manifest
from costlab.server.provenance import write_json_atomic
from costlab.summary import summary_lines

ROWS = [{"finding": "structured is faster", "metric": "time flat", "unit": "ms", "published": 487.0,
         "reproduced": 100.0, "ratio": 0.2, "verdict": "not reproduced", "server_kind": "mongod"},
        {"finding": "structured is faster", "metric": "improvement", "unit": "%", "published": 22.8,
         "reproduced": 20.0, "ratio": 0.9, "verdict": "reproduced", "server_kind": "mongod"}]
CONFIG = {"studies": ["flatnested"], "server": {"backend": "docker"}, "flatnested": {"documents": 500}}


def tree(root: Path) -> Path:
    """A results tree written as the workflow writes it (through atomic_path: digests recorded)."""
    results = root / "results"
    write_csv(pl.DataFrame(ROWS), results / "flatnested" / "tables" / "published_vs_reproduced.csv")
    write_json_atomic(results / "flatnested" / "provenance" / "measure.json",
                      {"job": "measure", "server": {"version": "8.0.4"}, "server_kind": "mongod",
                       "host": {"hostname": root.name}})
    write_json_atomic(results / "run.json", manifest(CONFIG, "docker"))
    return results


def edit_verdict(results: Path) -> Path:
    path = results / "flatnested" / "tables" / "published_vs_reproduced.csv"
    path.write_text(path.read_text().replace("not reproduced", "reproduced"))   # a hand edit, well formed
    return path


def test_an_edited_verdict_in_this_run_is_shown_as_edited_and_not_counted(tmp_path):
    results = tree(tmp_path / "a")
    assert "1 reproduced, 1 not reproduced" in "\n".join(summary_lines(results, ["flatnested"]))
    path = edit_verdict(results)
    summary = "\n".join(summary_lines(results, ["flatnested"]))
    assert "edited after the run: its verdicts are not counted" in summary and "2 reproduced" not in summary
    out = tmp_path / "report.html"
    shown = build_report(results, out, CONFIG, captions_dir=tmp_path, defaults=CONFIG)
    page = out.read_text()
    assert any("edited after the run" in p and str(path) in p for p in shown.problems)
    assert page.count("edited after the run") >= 3     # both rows' verdict cells and the problem line
    import re
    # the findings table and the study's (the headline claims judge claims, and no claim names these rows)
    rows_shown = re.sub(r'<section class="claims".*?</section>', "", page, flags=re.S)
    cells = re.findall(r'class="verdict[^"]*">([^<]*)<', rows_shown)
    assert len(cells) >= 2 and set(cells) == {"edited after the run"}


def test_an_edited_verdict_in_a_compared_tree_is_not_that_runs_measurement(tmp_path):
    this, other = tree(tmp_path / "a"), tree(tmp_path / "b")
    edit_verdict(other)
    runs = load_runs(this, [other])
    merged = merged_published("flatnested", runs, None)
    theirs = [c for c in merged.columns if c.startswith("verdict: b")][0]
    assert merged[theirs].to_list() == ["edited after the run"] * 2
    assert merged["verdict: this run: 8.0.4 on a"].to_list() == ["not reproduced", "reproduced"]
    assert any("edited after the run" in n and str(other) in n for n in notes("flatnested", runs))


def test_a_compared_tree_with_a_renamed_column_is_named_not_a_traceback(tmp_path):
    this, other = tree(tmp_path / "a"), tree(tmp_path / "b")
    path = other / "flatnested" / "tables" / "published_vs_reproduced.csv"
    pl.read_csv(path).rename({"reproduced": "reproduced_value"}).write_csv(path)
    (other / "flatnested" / "tables" / ".digests").joinpath(
        path.name + ".json"
    ).unlink()  # not an edit: another layout
    runs = load_runs(this, [other])
    merged = merged_published("flatnested", runs, None)
    assert set(merged[[c for c in merged.columns if c.startswith("verdict: b")][0]]) == {
        "invalid (see the notes above)"
    }
    assert any("lacks column(s) reproduced" in n and str(other) in n for n in notes("flatnested", runs))


@pytest.mark.parametrize(
    "record, named",
    [
        ({"format": 1, "config": "lol"}, "config holds str"),
        ({"format": 1, "config": {"server": "x"}}, "config.server"),
        ({"format": 1, "config": {"flatnested": [1]}}, "config.flatnested"),
    ],
)
def test_a_compared_run_json_of_the_wrong_shape_is_refused_at_planning(tmp_path, record, named):
    other = tree(tmp_path / "b")
    (other / "run.json").write_text(json.dumps(record))
    with pytest.raises(CompareError, match=named) as err:
        check_tree(other)
    assert str(other / "run.json") in str(err.value)


def test_compare_with_this_run_itself_or_an_over_long_path_is_named(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    tree(tmp_path)
    with pytest.raises(CompareError, match="this run's own results/"):
        check_tree("results")
    with pytest.raises(CompareError, match="this run's own results/"):
        check_tree(str(tmp_path))
    with pytest.raises(CompareError, match=r"100,000 characters\) cannot be used as a path") as err:
        check_tree("x" * 100_000)
    assert len(str(err.value)) < 400


def test_a_truncated_figure_png_is_noticed(tmp_path):
    from costlab.io import atomic_path
    from costlab.report.collect import figure_problem

    png = tmp_path / "results" / "flatnested" / "figures" / "time.png"
    import altair as alt

    from costlab.report.charts import save_chart
    save_chart(alt.Chart(pl.DataFrame({"x": [1, 2]})).mark_point().encode(x="x:Q"), png)
    assert figure_problem(png) is None
    data = png.read_bytes()
    png.write_bytes(data[: len(data) // 2])
    assert "edited after the run" in figure_problem(png)
    (png.parent / ".digests" / "time.png.json").unlink()        # no record: the PNG's own end is checked
    assert "not a whole PNG" in figure_problem(png)
    with atomic_path(png) as tmp:
        tmp.write_bytes(data)
    assert figure_problem(png) is None


def test_an_edited_findings_table_is_counted_as_edited(tmp_path):
    from costlab.report.findings import read_findings

    results = tree(tmp_path / "a")
    out = tmp_path / "report.html"
    build_report(results, out, CONFIG, captions_dir=tmp_path, defaults=CONFIG)   # findings collected here
    from costlab.report.collect import collect_sections
    from costlab.report.findings import findings_frame, write_findings

    findings_path = results / "findings.csv"
    write_findings(findings_frame(collect_sections(results, CONFIG, None, tmp_path), results), findings_path)
    assert "not reproduced" in "\n".join(summary_lines(results, ["flatnested"]))
    findings_path.write_text(findings_path.read_text().replace("not reproduced", "reproduced"))
    summary = "\n".join(summary_lines(results, ["flatnested"]))
    assert "edited after the run" in summary and "2 reproduced" not in summary
    assert set(read_findings(findings_path)["verdict"]) == {"edited after the run"}
